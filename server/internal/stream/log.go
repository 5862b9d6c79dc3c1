package stream

import (
	"encoding/json"
	"sync"
	"time"
)

// Log is the event log of one run. The run appends; any number of readers follow it from any
// position without slowing the run: a reader that falls behind reads the log later, it never
// holds a buffer the run must fill.
type Log struct {
	mu        sync.Mutex
	events    []Event
	first     int64 // Seq of events[0] minus 1 (events before it were loaded from the database)
	done      bool
	doneAt    time.Time
	wake      chan struct{} // closed on the first append after a reader took it, and on close
	watched   bool          // a reader took wake (since): the next append closes it
	resumable bool
	// size is the bytes of the events' data; hub, while the log is in it, the hub whose total
	// counts them.
	size int64
	hub  *Hub
	// runID names the log's run (set by the hub).
	runID string
	// wmu serialises the writing of this log's events to the database and the bus, so that they
	// are written and published in order; durable is the Seq of the last event written (and
	// published).
	wmu     sync.Mutex
	durable int64
	// output is what the server answers a waiter of the run's output once the run has ended;
	// makeOutput, when set, makes it at the first call of Result.
	output     any
	makeOutput func() any
	// stopMirror, when set, stops the goroutine that fills this log from another process's
	// events (see StartMirror).
	stopMirror func()
}

// NewLog returns an empty log that belongs to no hub.
func NewLog() *Log { return &Log{wake: make(chan struct{})} }

// Closed returns a closed log, in no hub, that holds events (numbered from 1): a finished run's,
// read from the database.
func Closed(events []Event) *Log {
	l := NewLog()
	l.events = events
	l.Close()
	return l
}

// RunID returns the ID of the log's run (empty for a log made by NewLog or Closed).
func (l *Log) RunID() string { return l.runID }

// Resumable reports whether the log's events are written to the database, so that a reader can
// resume from any of them after the log is gone.
func (l *Log) Resumable() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.resumable
}

// SetResumable sets whether the log's events are written to the database.
func (l *Log) SetResumable(r bool) {
	l.mu.Lock()
	l.resumable = r
	l.mu.Unlock()
}

// Append appends an event and returns it, numbered.
func (l *Log) Append(event string, data json.RawMessage) Event {
	return l.AppendTail(event, data, nil)
}

// AppendTail appends an event whose data is head followed by tail (see Event.Tail).
func (l *Log) AppendTail(event string, head, tail json.RawMessage) Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	ev := Event{Seq: l.first + int64(len(l.events)) + 1, Event: event, Data: head, Tail: tail}
	l.events = append(l.events, ev)
	// The tail is shared by the tokens of a message; counting it for each overstates a little.
	n := int64(len(event) + len(head) + len(tail))
	l.size += n
	if l.hub != nil {
		l.hub.bytes.Add(n)
	}
	if l.watched {
		// Only a channel a reader holds needs closing: a log nobody follows makes none.
		close(l.wake)
		l.wake = make(chan struct{})
		l.watched = false
	}
	return ev
}

// Restore replaces the log's events with those the database kept of its run, all of them
// written. With fromFirst the events are the run's from the first (the log followed the run
// from another process, and may have numbered events differently before).
func (l *Log) Restore(evs []Event, fromFirst bool) {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	var n int64
	for _, ev := range evs {
		n += int64(len(ev.Event) + len(ev.Data) + len(ev.Tail))
	}
	if l.hub != nil {
		l.hub.bytes.Add(n - l.size)
	}
	l.events, l.size = evs, n
	if fromFirst {
		l.first = 0
	}
	if len(evs) > 0 {
		l.durable = evs[len(evs)-1].Seq
	} else {
		l.durable = 0
	}
}

// SetOutput sets what Result returns.
func (l *Log) SetOutput(v any) {
	l.mu.Lock()
	l.output, l.makeOutput = v, nil
	l.mu.Unlock()
}

// SetOutputFunc sets the output to what make returns, made when it is first asked for: most
// runs' outputs (a streamed run's) are never read.
func (l *Log) SetOutputFunc(make func() any) {
	l.mu.Lock()
	l.output, l.makeOutput = nil, make
	l.mu.Unlock()
}

// Result returns the run's output (see SetOutput, SetOutputFunc), or nil.
func (l *Log) Result() any {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.makeOutput != nil {
		l.output, l.makeOutput = l.makeOutput(), nil
	}
	return l.output
}

// Close ends the log: its readers see it done. The hub keeps it for its retention.
func (l *Log) Close() {
	l.mu.Lock()
	if l.done {
		l.mu.Unlock()
		return
	}
	l.done, l.doneAt = true, time.Now()
	close(l.wake)
	l.wake = make(chan struct{})
	l.watched = false
	h := l.hub
	l.mu.Unlock()
	if h != nil {
		h.trim()
	}
}

// Since returns the events after seq, whether the log is closed, and a channel closed on the
// next change.
func (l *Log) Since(seq int64) ([]Event, bool, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := seq - l.first
	if i < 0 {
		i = 0
	}
	var out []Event
	if i < int64(len(l.events)) {
		out = l.events[i:len(l.events):len(l.events)]
	}
	l.watched = true
	return out, l.done, l.wake
}

// Last returns the Seq of the log's last event (0 for none).
func (l *Log) Last() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.first + int64(len(l.events))
}

// LockWrites takes the lock that orders the writing of the log's events (Unwritten, Durable,
// SetDurable); UnlockWrites lets it go.
func (l *Log) LockWrites() { l.wmu.Lock() }

// UnlockWrites lets go of the lock LockWrites took.
func (l *Log) UnlockWrites() { l.wmu.Unlock() }

// Unwritten returns the events after the durable mark; the caller holds the write lock.
func (l *Log) Unwritten() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := l.durable - l.first
	if i < 0 {
		i = 0
	}
	if i >= int64(len(l.events)) {
		return nil
	}
	return l.events[i:len(l.events):len(l.events)]
}

// Durable returns the Seq of the last event written; the caller holds the write lock.
func (l *Log) Durable() int64 { return l.durable }

// SetDurable marks the events up to seq written; the caller holds the write lock.
func (l *Log) SetDurable(seq int64) { l.durable = seq }

// StartMirror marks the log as following its run from another process (resumable: that process
// writes the events), stop being what ends the following (see TakeMirror).
func (l *Log) StartMirror(stop func()) {
	l.mu.Lock()
	l.resumable = true
	l.stopMirror = stop
	l.mu.Unlock()
}

// TakeMirror stops a log's mirroring, for the process that is about to execute the run, and
// reports whether the log was a mirror.
func (l *Log) TakeMirror() bool {
	l.mu.Lock()
	stop := l.stopMirror
	l.stopMirror = nil
	l.mu.Unlock()
	if stop != nil {
		stop()
	}
	return stop != nil
}
