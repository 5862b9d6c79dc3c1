package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"slices"

	"github.com/google/uuid"
	"github.com/trellis-go/trellis/server/internal/stream"
)

// Runs is the in-process run API an application's own routes use (a chat WebSocket, a REST
// route that starts a job): the same machinery as the Agent Protocol's run routes, so runs
// started here are queued, leased, limited and budgeted like any other, their streams are
// resumable from any replica, and a run cut off by a crash is taken up again when a server
// starts. Every method acts for a principal, whose tenant owns the threads and runs.
//
// An app gets one in AppDeps.Runs; it is usable once the server has started (from the app's
// handlers, not from Build).
type Runs struct{ s *Server }

// RunRequest is what Start runs: the fields of POST /threads/{thread_id}/runs.
type RunRequest struct {
	// AssistantID is an assistant's ID or a graph ID. Required.
	AssistantID string
	// ThreadID is the thread to run on; it is created (for the principal's tenant) if it does
	// not exist. Empty runs on a new thread.
	ThreadID string
	// Input is the graph's input (any value that encodes to the JSON the API takes), or nil
	// with Command.
	Input any
	// Command resumes or steers a paused run.
	Command *RunCommand
	// Config, Context and Metadata are as in the API.
	Config, Context, Metadata map[string]any
	// StreamMode lists the stream modes Follow sees; empty means values.
	StreamMode []string
	// StreamSubgraphs adds the events of subgraphs.
	StreamSubgraphs bool
	// MultitaskStrategy is reject (the default), interrupt, rollback or enqueue.
	MultitaskStrategy string
	// InterruptBefore and InterruptAfter name nodes to pause at.
	InterruptBefore, InterruptAfter []string
	// Priority orders the run among those waiting for a slot; empty means normal.
	Priority Priority
}

// RunEvent is one event of a run's stream, as the API's SSE stream sends it: Event is the
// stream mode (with "|" and the namespace for a subgraph's), or metadata, error or end; Data is
// its JSON.
type RunEvent struct {
	Seq   int64
	Event string
	Data  json.RawMessage
}

// NewThreadID returns a thread ID of the shape the API gives (a UUID). Derive one from a key of
// your own with ThreadIDFor.
func NewThreadID() string { return uuid.NewString() }

// ThreadIDFor returns the thread ID that stands for key (a chat session's ID, say): the same
// key gives the same ID on every server, and different apps' keys do not collide.
func ThreadIDFor(app, key string) string {
	return uuid.NewSHA1(appThreadSpace, []byte(app+"\x00"+key)).String()
}

var appThreadSpace = uuid.MustParse("5a0c51c2-48a5-4bd3-9a7e-1f6c3f0e2d11")

// Start creates a run and returns it: pending in the queue, or running. It fails as POST
// /threads/{thread_id}/runs would (an *APIError: unknown assistant, a busy thread with the
// reject strategy, bad input, the tenant's run limits).
func (rs *Runs) Start(ctx context.Context, p Principal, req RunRequest) (*Run, error) {
	run, _, err := rs.start(ctx, p, req)
	return run, err
}

func (rs *Runs) start(ctx context.Context, p Principal, req RunRequest) (*Run, *stream.Log, error) {
	if rs == nil || rs.s == nil || rs.s.runs == nil {
		return nil, nil, errors.New("server: the run API is used before the server has started: call it from the app's handlers, not from Build")
	}
	if p.Tenant == "" {
		return nil, nil, errors.New("server: a run needs a principal with a tenant")
	}
	if ok, wait := rs.s.limits.allow(p.Tenant); !ok {
		return nil, nil, rs.s.limits.rateError(p.Tenant, wait)
	}
	rc := &runCreate{AssistantID: req.AssistantID, Command: req.Command, Config: req.Config, Context: req.Context,
		Metadata: req.Metadata, StreamSubgraphs: req.StreamSubgraphs, StreamResumable: true,
		MultitaskStrategy: req.MultitaskStrategy, IfNotExists: "create", Priority: string(req.Priority)}
	var err error
	if req.Input != nil {
		if rc.Input, err = json.Marshal(req.Input); err != nil {
			return nil, nil, badRequest("give an input that encodes to JSON", "the input does not encode: %v", err)
		}
	}
	for _, f := range []struct {
		dst *json.RawMessage
		v   []string
	}{{&rc.StreamMode, req.StreamMode}, {&rc.InterruptBefore, req.InterruptBefore}, {&rc.InterruptAfter, req.InterruptAfter}} {
		if len(f.v) > 0 {
			*f.dst, _ = json.Marshal(f.v)
		}
	}
	if err := checkJSON(rc.Input); err != nil {
		return nil, nil, err
	}
	if err := rs.s.checkRunInputFor(ctx, p.Tenant, rc); err != nil {
		return nil, nil, err
	}
	tid := req.ThreadID
	if tid == "" {
		tid = NewThreadID()
	}
	return rs.s.runs.create(ctx, p, tid, rc)
}

// Stream starts a run and follows its stream from the start: Start then Follow.
func (rs *Runs) Stream(ctx context.Context, p Principal, req RunRequest) (*Run, iter.Seq2[RunEvent, error], error) {
	run, l, err := rs.start(ctx, p, req)
	if err != nil {
		return nil, nil, err
	}
	return run, rs.follow(ctx, p, run, l, 0), nil
}

// Follow yields a run's events after seq after (0 for all) until the run's stream ends, from
// this replica's memory, another replica's (through the bus), or the database for a finished
// run. It counts as one of the tenant's open streams while it runs; a tenant over its limit gets
// the error as the only item. Breaking out of the loop stops following, not the run.
func (rs *Runs) Follow(ctx context.Context, p Principal, threadID, runID string, after int64) iter.Seq2[RunEvent, error] {
	run, err := rs.Get(ctx, p, threadID, runID)
	if err != nil {
		return func(yield func(RunEvent, error) bool) { yield(RunEvent{}, err) }
	}
	return rs.follow(ctx, p, run, nil, after)
}

func (rs *Runs) follow(ctx context.Context, p Principal, run *Run, l *stream.Log, after int64) iter.Seq2[RunEvent, error] {
	return func(yield func(RunEvent, error) bool) {
		done, err := rs.s.limits.openStream(p.Tenant)
		if err != nil {
			yield(RunEvent{}, err)
			return
		}
		defer done()
		if l == nil {
			l = rs.s.followLog(ctx, run)
		}
		for {
			evs, closed, wake := l.Since(after)
			for _, ev := range evs {
				after = ev.Seq
				if !yield(RunEvent{Seq: ev.Seq, Event: ev.Event, Data: ev.WholeData()}, nil) {
					return
				}
			}
			if len(evs) > 0 {
				continue
			}
			if closed {
				return
			}
			select {
			case <-wake:
			case <-ctx.Done():
				yield(RunEvent{}, ctx.Err())
				return
			}
		}
	}
}

// Get returns a run of the principal's tenant, with its progress (live when this process
// executes it).
func (rs *Runs) Get(ctx context.Context, p Principal, threadID, runID string) (*Run, error) {
	if err := checkIDs(threadID, runID); err != nil {
		return nil, err
	}
	run, err := rs.s.meta.getRun(ctx, p.Tenant, threadID, runID)
	if err == nil {
		rs.s.runs.live(run)
	}
	return run, err
}

// List returns a thread's runs, newest first.
func (rs *Runs) List(ctx context.Context, p Principal, threadID string, limit int) ([]*Run, error) {
	if err := checkIDs(threadID); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 10
	}
	runs, err := rs.s.meta.listRuns(ctx, p.Tenant, threadID, "", limit, 0)
	if err == nil {
		rs.s.runs.live(runs...)
	}
	return runs, err
}

// Wait blocks until the run ends and returns the thread's values as POST /runs/wait answers
// them (with __interrupt__ when it paused), encoded.
func (rs *Runs) Wait(ctx context.Context, p Principal, threadID, runID string) (json.RawMessage, error) {
	run, err := rs.Get(ctx, p, threadID, runID)
	if err != nil {
		return nil, err
	}
	l := rs.s.hub.Get(run.RunID)
	if l == nil && rs.s.bus != nil && (run.Status == RunPending || run.Status == RunRunning) {
		l = rs.s.mirror(run)
	}
	if l != nil {
		rs.s.runs.WaitFor(run.RunID)
		defer rs.s.runs.Unwait(run.RunID)
		if !rs.s.waitDone(ctx, l) {
			return nil, ctx.Err()
		}
	}
	return json.Marshal(rs.s.runs.waitOutput(ctx, run, l))
}

// Cancel stops a run (on whichever replica executes it). With rollback the run is deleted and
// the thread's state restored; otherwise the run ends interrupted.
func (rs *Runs) Cancel(ctx context.Context, p Principal, threadID, runID string, rollback bool) error {
	if err := checkIDs(threadID, runID); err != nil {
		return err
	}
	action := errCancelInterrupt
	if rollback {
		action = errCancelRollback
	}
	return rs.s.runs.cancel(ctx, p.Tenant, threadID, runID, action, false)
}

// State returns a thread's current values as GET /threads/{thread_id}/state gives them
// ("values", "next", "tasks", ...), encoded; a thread that does not exist is an *APIError 404.
func (rs *Runs) State(ctx context.Context, p Principal, threadID string) (json.RawMessage, error) {
	if err := checkIDs(threadID); err != nil {
		return nil, err
	}
	r, err := http.NewRequestWithContext(withPrincipal(ctx, p), http.MethodGet, "/threads/"+threadID+"/state", nil)
	if err != nil {
		return nil, err
	}
	r.SetPathValue("tid", threadID)
	w := &captureWriter{header: http.Header{}}
	rs.s.handleStateGet(w, r)
	if w.code >= 400 {
		var body struct{ Detail, Hint string }
		_ = json.Unmarshal(w.body, &body)
		if body.Detail == "" {
			body.Detail = fmt.Sprintf("thread %s: state unavailable", threadID)
		}
		return nil, &APIError{Status: w.code, Message: body.Detail, Hint: body.Hint}
	}
	return w.body, nil
}

// captureWriter keeps a handler's answer in memory.
type captureWriter struct {
	header http.Header
	code   int
	body   []byte
}

func (w *captureWriter) Header() http.Header { return w.header }
func (w *captureWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}
func (w *captureWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = 200
	}
	w.body = append(w.body, b...)
	return len(b), nil
}

// checkIDs refuses IDs the database cannot hold, as the API does at its door.
func checkIDs(ids ...string) error {
	for _, id := range ids {
		if slices.Contains([]byte(id), 0) || len(id) > 256 {
			return badRequest("send the ID the API gave", "an ID has a NUL byte or is over 256 bytes")
		}
	}
	return nil
}
