package server

// GET /threads/{id}/stream (the SDK's threads.joinStream): the stream of a thread, as
// LangGraph's Agent Server gives it. It stays open until the client leaves and follows the
// thread's runs one after the other, those running when it is joined and every run created
// after; between runs it waits. Three thread stream modes select what it carries:
//
//   - run_modes (the default): every event of the runs (their metadata, values, updates, ...,
//     errors), each run closed by a metadata event {"status": "run_done", "run_id": ...} where
//     its own stream ends;
//   - lifecycle: only the runs' start (their first metadata event, with run_id and attempt) and
//     their run_done events;
//   - state_update: a state_update event {"state": <thread state>, "thread_id": ...} each time
//     the thread's state is updated through the API (POST /threads/{id}/state).
//
// Event IDs are "<run_id>:<seq>"; sent back in Last-Event-ID they resume the stream after that
// event: the rest of that run, then the runs created after it. Last-Event-ID "-" replays the
// thread's runs from the oldest kept. state_update events carry no ID: they are delivered live
// only, to the streams open in the process that updated the state.

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// threadStreamModes are LangGraph's thread stream modes.
var threadStreamModes = []string{"run_modes", "lifecycle", "state_update"}

// threadFeed tells the thread streams open in this process what happens on their threads: a
// run created, or the state updated through the API.
type threadFeed struct {
	mu   sync.Mutex
	subs map[string]map[*threadSub]struct{}
}

// threadSub is one open thread stream's subscription.
type threadSub struct {
	wake   chan struct{} // holds a token when something happened
	mu     sync.Mutex
	states []json.RawMessage // state_update payloads not yet written
}

func threadFeedKey(tenant, threadID string) string { return tenant + "\x00" + threadID }

// subscribe registers a stream of the tenant's thread; the function returned ends it.
func (f *threadFeed) subscribe(tenant, threadID string) (*threadSub, func()) {
	key := threadFeedKey(tenant, threadID)
	sub := &threadSub{wake: make(chan struct{}, 1)}
	f.mu.Lock()
	if f.subs == nil {
		f.subs = map[string]map[*threadSub]struct{}{}
	}
	if f.subs[key] == nil {
		f.subs[key] = map[*threadSub]struct{}{}
	}
	f.subs[key][sub] = struct{}{}
	f.mu.Unlock()
	return sub, func() {
		f.mu.Lock()
		delete(f.subs[key], sub)
		if len(f.subs[key]) == 0 {
			delete(f.subs, key)
		}
		f.mu.Unlock()
	}
}

// maxPendingStates bounds the state updates a stream that does not read keeps; older ones go.
const maxPendingStates = 64

// notify wakes the thread's streams; state, when set, is a state_update payload for them.
func (f *threadFeed) notify(tenant, threadID string, state json.RawMessage) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for sub := range f.subs[threadFeedKey(tenant, threadID)] {
		if state != nil {
			sub.mu.Lock()
			if len(sub.states) == maxPendingStates {
				sub.states = sub.states[1:]
			}
			sub.states = append(sub.states, state)
			sub.mu.Unlock()
		}
		select {
		case sub.wake <- struct{}{}:
		default:
		}
	}
}

func (sub *threadSub) takeStates() []json.RawMessage {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	s := sub.states
	sub.states = nil
	return s
}

// parseThreadStreamModes reads the thread stream modes of a request: stream_mode (as the JS
// SDK sends it) or stream_modes (as the Python SDK does), repeated, comma-separated or as a JSON
// list;
// run_modes when none.
func parseThreadStreamModes(q map[string][]string) ([]string, error) {
	var modes []string
	for _, key := range []string{"stream_mode", "stream_modes"} {
		for _, m := range parseModesParam(q[key]) {
			if !slices.Contains(threadStreamModes, m) {
				return nil, badRequest("a thread's stream modes are "+strings.Join(threadStreamModes, ", ")+" (the run's own modes are chosen when the run is created)",
					"unknown thread stream_mode %q", m)
			}
			if !slices.Contains(modes, m) {
				modes = append(modes, m)
			}
		}
	}
	if len(modes) == 0 {
		modes = []string{"run_modes"}
	}
	return modes, nil
}

// threadCursor is where a thread stream resumes: after event seq of run runID (seq -1: after
// the whole run), or, with all, from the thread's oldest run kept.
type threadCursor struct {
	runID string
	seq   int64
	all   bool
}

func parseThreadCursor(v string) (*threadCursor, error) {
	switch v {
	case "", "-1":
		return nil, nil
	case "-", "0":
		return &threadCursor{all: true}, nil
	}
	i := strings.LastIndexByte(v, ':')
	if i <= 0 {
		return nil, badRequest("send the ID of the last event received (<run_id>:<seq>), or - to replay the thread's runs", "header Last-Event-ID is %q", v)
	}
	c := &threadCursor{runID: v[:i], seq: -1}
	if tail := v[i+1:]; tail != "done" {
		n, err := strconv.ParseInt(tail, 10, 64)
		if err != nil || n < 0 {
			return nil, badRequest("send the ID of the last event received (<run_id>:<seq>), or - to replay the thread's runs", "header Last-Event-ID is %q", v)
		}
		c.seq = n
	}
	return c, nil
}

// threadStreamWanted reports whether an event of a run goes to a thread stream of modes.
func threadStreamWanted(modes []string, event string, data func() json.RawMessage) bool {
	if slices.Contains(modes, "run_modes") {
		return true
	}
	if !slices.Contains(modes, "lifecycle") || event != "metadata" {
		return false
	}
	var md struct {
		RunID   string `json:"run_id"`
		Attempt *int   `json:"attempt"`
		Status  string `json:"status"`
	}
	if json.Unmarshal(data(), &md) != nil {
		return false
	}
	return md.Status == "run_done" || (md.RunID != "" && md.Attempt != nil)
}

// handleThreadStream answers GET /threads/{id}/stream (see the top of this file).
func (s *Server) handleThreadStream(w http.ResponseWriter, r *http.Request) {
	t, err := s.thread(r)
	if err != nil {
		writeError(w, err)
		return
	}
	modes, err := parseThreadStreamModes(r.URL.Query())
	if err != nil {
		writeError(w, err)
		return
	}
	cursor, err := parseThreadCursor(r.Header.Get("Last-Event-ID"))
	if err != nil {
		writeError(w, err)
		return
	}
	ctx := r.Context()
	ts := &threadStream{s: s, t: t, modes: modes, seen: map[string]bool{}, since: time.Now()}
	if cursor != nil {
		switch {
		case cursor.all:
			ts.since = time.Time{}
		default:
			run, err := s.meta.getRun(ctx, t.tenant, t.ThreadID, cursor.runID)
			if err != nil {
				writeError(w, err)
				return
			}
			ts.since = run.CreatedAt
			ts.first, ts.firstAfter = run, cursor.seq
		}
	}
	done, err := s.limits.openStream(principal(r).Tenant)
	if err != nil {
		writeError(w, err)
		return
	}
	defer done()
	sub, unsub := s.feed.subscribe(t.tenant, t.ThreadID)
	defer unsub()
	ts.serve(w, r, sub)
}

// threadStream is one open GET /threads/{id}/stream.
type threadStream struct {
	s     *Server
	t     *Thread
	modes []string
	// seen are the runs followed already; since: runs created from then on are followed even
	// when they have ended (those active are followed whenever they were created).
	seen  map[string]bool
	since time.Time
	// first, when set, is the run to follow first, after its event firstAfter (-1: all of it
	// was received).
	first      *Run
	firstAfter int64
	buf        []byte
}

func (ts *threadStream) serve(w http.ResponseWriter, r *http.Request, sub *threadSub) {
	s := ts.s
	ctx := r.Context()
	flusher, _ := w.(http.Flusher)
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("Location", "/threads/"+ts.t.ThreadID+"/stream")
	w.WriteHeader(http.StatusOK)
	if flusher != nil {
		flusher.Flush()
	}
	s.metrics.streams.Inc()
	defer s.metrics.streams.Dec()
	write := func() bool {
		if len(ts.buf) == 0 {
			return true
		}
		_ = rc.SetWriteDeadline(time.Now().Add(s.cfg.StreamWriteTimeout))
		_, err := w.Write(ts.buf)
		ts.buf = ts.buf[:0]
		if err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	if ts.first != nil {
		ts.seen[ts.first.RunID] = true
		if ts.firstAfter >= 0 && !ts.follow(ctx, write, sub, tick, ts.first, ts.firstAfter) {
			return
		}
	}
	for ctx.Err() == nil {
		ts.appendStates(sub)
		if !write() {
			return
		}
		run, err := ts.next(ctx)
		if err != nil && ctx.Err() == nil {
			s.log.Warn("thread stream: cannot list the thread's runs", "thread_id", ts.t.ThreadID, "err", err)
		}
		if run != nil {
			ts.seen[run.RunID] = true
			if !ts.follow(ctx, write, sub, tick, run, 0) {
				return
			}
			continue
		}
		select {
		case <-sub.wake:
		case <-tick.C:
			// A run created in another replica is found here.
			ts.buf = append(ts.buf, ": heartbeat\n\n"...)
		case <-ctx.Done():
			return
		}
	}
}

// next returns the oldest run of the thread to follow now: one not followed yet that is active
// or was created since the stream began; nil when there is none.
func (ts *threadStream) next(ctx context.Context) (*Run, error) {
	runs, err := ts.s.meta.listRuns(ctx, ts.t.tenant, ts.t.ThreadID, "", 100, 0)
	if err != nil {
		return nil, err
	}
	var pick *Run
	for _, run := range runs { // newest first
		if ts.seen[run.RunID] || !ownerSeesRun(ctx, run) {
			continue
		}
		if run.Status == RunPending || run.Status == RunRunning || !run.CreatedAt.Before(ts.since) {
			pick = run
		}
	}
	return pick, nil
}

// follow writes a run's events after seq after, then its run_done event; false when the client
// has gone.
func (ts *threadStream) follow(ctx context.Context, write func() bool, sub *threadSub, tick *time.Ticker, run *Run, after int64) bool {
	l := ts.s.followLog(ctx, run)
	for {
		evs, done, wake := l.Since(after)
		for _, ev := range evs {
			after = ev.Seq
			if ev.Event == "end" { // the run's own end: run_done stands for it here
				continue
			}
			if !threadStreamWanted(ts.modes, ev.Event, func() json.RawMessage { return ev.AppendData(nil) }) {
				continue
			}
			ts.buf = append(ts.buf, "id: "...)
			ts.buf = append(ts.buf, run.RunID...)
			ts.buf = append(ts.buf, ':')
			ts.buf = strconv.AppendInt(ts.buf, ev.Seq, 10)
			ts.buf = append(ts.buf, "\nevent: "...)
			ts.buf = append(ts.buf, ev.Event...)
			ts.buf = append(ts.buf, "\ndata: "...)
			ts.buf = ev.AppendData(ts.buf)
			ts.buf = append(ts.buf, "\n\n"...)
		}
		ts.appendStates(sub)
		if !write() {
			return false
		}
		if len(evs) > 0 {
			continue
		}
		if done {
			break
		}
		select {
		case <-wake:
		case <-sub.wake:
			// A state update (written at the top of the loop) or a new run (looked for once this
			// one has ended).
		case <-tick.C:
			ts.buf = append(ts.buf, ": heartbeat\n\n"...)
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			return false
		}
	}
	doneData, _ := json.Marshal(map[string]any{"status": "run_done", "run_id": run.RunID})
	if threadStreamWanted(ts.modes, "metadata", func() json.RawMessage { return doneData }) {
		ts.buf = append(ts.buf, "id: "+run.RunID+":done\nevent: metadata\ndata: "...)
		ts.buf = append(ts.buf, doneData...)
		ts.buf = append(ts.buf, "\n\n"...)
	}
	return write()
}

// appendStates adds the state updates the subscription holds, when the stream wants them.
func (ts *threadStream) appendStates(sub *threadSub) {
	states := sub.takeStates()
	if !slices.Contains(ts.modes, "state_update") {
		return
	}
	for _, st := range states {
		ts.buf = append(ts.buf, "event: state_update\ndata: "...)
		ts.buf = append(ts.buf, st...)
		ts.buf = append(ts.buf, "\n\n"...)
	}
}

// stateUpdated tells the thread's streams of a state update made through the API.
func (s *Server) stateUpdated(t *Thread, st *ThreadState) {
	data, err := json.Marshal(map[string]any{"state": st, "thread_id": t.ThreadID})
	if err != nil {
		s.log.Warn("thread stream: cannot encode a state update", "thread_id", t.ThreadID, "err", err)
		return
	}
	s.feed.notify(t.tenant, t.ThreadID, data)
}
