package server

import (
	"encoding/json"
	"strings"
	"sync"
	"time"
)

// streamEvent is one event of a run's stream, numbered from 1 in the order the run produced it.
// The number is the SSE id, so a client that reconnects with Last-Event-ID n gets events n+1 on.
type streamEvent struct {
	Seq   int64           `json:"id"`
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data"`
}

// mode returns the stream mode an event belongs to: its name without a subgraph namespace, and
// "messages" for messages/partial and friends.
func (e streamEvent) mode() string {
	name := e.Event
	if i := strings.IndexByte(name, '|'); i >= 0 {
		name = name[:i]
	}
	if i := strings.IndexByte(name, '/'); i >= 0 {
		name = name[:i]
	}
	return name
}

// runLog is the event log of one run. The run appends; any number of readers follow it from
// any position without slowing the run: a reader that falls behind reads the log later, it never
// holds a buffer the run must fill.
type runLog struct {
	mu        sync.Mutex
	events    []streamEvent
	first     int64 // Seq of events[0] minus 1 (events before it were loaded from the database)
	done      bool
	doneAt    time.Time
	wake      chan struct{} // closed on every append and on close
	resumable bool
	// output is what wait and join answer once the run has ended (see runner.waitOutput).
	output any
	// stopMirror, when set, stops the goroutine that fills this log from another replica's
	// events (see Server.mirror).
	stopMirror func()
}

func newRunLog() *runLog { return &runLog{wake: make(chan struct{})} }

func (l *runLog) append(event string, data json.RawMessage) streamEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	ev := streamEvent{Seq: l.first + int64(len(l.events)) + 1, Event: event, Data: data}
	l.events = append(l.events, ev)
	close(l.wake)
	l.wake = make(chan struct{})
	return ev
}

func (l *runLog) setOutput(v any) {
	l.mu.Lock()
	l.output = v
	l.mu.Unlock()
}

func (l *runLog) result() any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.output
}

func (l *runLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return
	}
	l.done, l.doneAt = true, time.Now()
	close(l.wake)
	l.wake = make(chan struct{})
}

// since returns the events after seq, whether the log is closed, and a channel closed on the
// next change.
func (l *runLog) since(seq int64) ([]streamEvent, bool, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := seq - l.first
	if i < 0 {
		i = 0
	}
	var out []streamEvent
	if i < int64(len(l.events)) {
		out = l.events[i:len(l.events):len(l.events)]
	}
	return out, l.done, l.wake
}

func (l *runLog) last() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.first + int64(len(l.events))
}

// hub holds the logs of runs that are executing or finished recently.
type hub struct {
	mu        sync.Mutex
	logs      map[string]*runLog
	retention time.Duration
}

func newHub(retention time.Duration) *hub {
	return &hub{logs: map[string]*runLog{}, retention: retention}
}

// open returns the run's log, creating it.
func (h *hub) open(runID string) *runLog {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sweepLocked()
	l := h.logs[runID]
	if l == nil {
		l = newRunLog()
		h.logs[runID] = l
	}
	return l
}

// openMirror returns the run's log, and whether it was created by this call.
func (h *hub) openMirror(runID string) (*runLog, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sweepLocked()
	if l := h.logs[runID]; l != nil {
		return l, false
	}
	l := newRunLog()
	h.logs[runID] = l
	return l, true
}

// takeMirror stops a log's mirroring, for the process that is about to execute the run.
func (l *runLog) takeMirror() bool {
	l.mu.Lock()
	stop := l.stopMirror
	l.stopMirror = nil
	l.mu.Unlock()
	if stop != nil {
		stop()
	}
	return stop != nil
}

func (h *hub) get(runID string) *runLog {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.logs[runID]
}

func (h *hub) drop(runID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.logs, runID)
}

func (h *hub) sweepLocked() {
	now := time.Now()
	for id, l := range h.logs {
		l.mu.Lock()
		old := l.done && now.Sub(l.doneAt) > h.retention
		l.mu.Unlock()
		if old {
			delete(h.logs, id)
		}
	}
}
