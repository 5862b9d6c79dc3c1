package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trellis-go/trellis/server/internal/stream"
)

// heartbeat is how often an idle SSE stream sends a comment, so proxies keep it open and
// clients that reconnect on idleness (LangGraph's SDK, which sizes its idle window from their
// cadence) do not; 5 s, as the LangGraph Platform sends them (a var for tests).
var heartbeat = 5 * time.Second

func runPath(run *Run) string {
	if run.Kwargs != nil && run.Kwargs.Temporary {
		return "/runs/" + run.RunID
	}
	return "/threads/" + run.ThreadID + "/runs/" + run.RunID
}

// createFromRequest creates the run a request asks for; wait counts the request as a waiter
// for the run's output (the caller then calls s.runs.Unwait).
func (s *Server) createFromRequest(w http.ResponseWriter, r *http.Request, wait bool) (*Run, *stream.Log, *runCreate, bool) {
	var req runCreate
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return nil, nil, nil, false
	}
	if err := s.checkRunInputFor(r.Context(), principal(r).Tenant, &req); err != nil {
		writeError(w, err)
		return nil, nil, nil, false
	}
	req.wait = wait
	run, l, err := s.runs.create(r.Context(), principal(r), r.PathValue("tid"), &req)
	if err != nil {
		writeError(w, err)
		return nil, nil, nil, false
	}
	w.Header().Set("Content-Location", runPath(run))
	return run, l, &req, true
}

func (s *Server) handleRunCreate(w http.ResponseWriter, r *http.Request) {
	run, _, _, ok := s.createFromRequest(w, r, false)
	if !ok {
		return
	}
	writeJSON(w, 200, run)
}

func (s *Server) handleRunStream(w http.ResponseWriter, r *http.Request) {
	done, err := s.limits.openStream(principal(r).Tenant)
	if err != nil {
		writeError(w, err)
		return
	}
	defer done()
	run, l, req, ok := s.createFromRequest(w, r, false)
	if !ok {
		return
	}
	s.streamSSE(w, r, run, l, 0, nil, req.OnDisconnect == "cancel")
}

func (s *Server) handleRunWait(w http.ResponseWriter, r *http.Request) {
	run, l, req, ok := s.createFromRequest(w, r, true)
	if !ok {
		return
	}
	defer s.runs.Unwait(run.RunID)
	if !s.waitDone(r.Context(), l) {
		if req.OnDisconnect == "cancel" {
			_ = s.runs.cancel(context.WithoutCancel(r.Context()), run.tenant, run.ThreadID, run.RunID, errCancelInterrupt, false)
		}
		return
	}
	writeJSON(w, 200, s.runs.waitOutput(r.Context(), run, l))
}

// waitDone blocks until the log is closed or ctx ends; it reports whether the log closed.
func (s *Server) waitDone(ctx context.Context, l *stream.Log) bool {
	for {
		_, done, wake := l.Since(1 << 62)
		if done {
			return true
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return false
		}
	}
}

func (s *Server) runOf(r *http.Request) (*Run, error) {
	tid := r.PathValue("tid")
	if _, err := s.thread(r); tid != "" && err != nil {
		return nil, err
	}
	return s.meta.getRun(r.Context(), principal(r).Tenant, tid, r.PathValue("rid"))
}

func (s *Server) handleRunList(w http.ResponseWriter, r *http.Request) {
	t, err := s.thread(r)
	if err != nil {
		writeError(w, err)
		return
	}
	q := r.URL.Query()
	limit, offset := 10, 0
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit <= 0 || limit > 1000 {
			writeError(w, badRequest("use a number from 1 to 1000", "query parameter \"limit\" is %q", v))
			return
		}
	}
	if v := q.Get("offset"); v != "" {
		if offset, err = strconv.Atoi(v); err != nil || offset < 0 {
			writeError(w, badRequest("use a non-negative number", "query parameter \"offset\" is %q", v))
			return
		}
	}
	sel, err := runSelect(r)
	if err != nil {
		writeError(w, err)
		return
	}
	runs, err := s.meta.listRuns(r.Context(), t.tenant, t.ThreadID, q.Get("status"), limit, offset)
	if err != nil {
		writeError(w, err)
		return
	}
	s.runs.live(runs...)
	if len(sel) > 0 {
		writeJSON(w, 200, selectFields(runs, sel))
		return
	}
	writeJSON(w, 200, runs)
}

func (s *Server) handleRunGet(w http.ResponseWriter, r *http.Request) {
	run, err := s.runOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	s.runs.live(run)
	writeJSON(w, 200, run)
}

func (s *Server) handleRunDelete(w http.ResponseWriter, r *http.Request) {
	run, err := s.runOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if run.Status == RunPending || run.Status == RunRunning {
		writeError(w, &APIError{Status: http.StatusConflict, Message: fmt.Sprintf("run %q is %s", run.RunID, run.Status), Hint: "cancel it first"})
		return
	}
	if err := s.meta.DeleteRun(r.Context(), run.tenant, run.RunID); err != nil {
		writeError(w, err)
		return
	}
	s.hub.Drop(run.RunID)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleRunCancel(w http.ResponseWriter, r *http.Request) {
	run, err := s.runOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	q := r.URL.Query()
	action := errCancelInterrupt
	switch q.Get("action") {
	case "", "interrupt":
	case "rollback":
		action = errCancelRollback
	default:
		writeError(w, badRequest("use interrupt or rollback", "query parameter \"action\" is %q", q.Get("action")))
		return
	}
	wait := q.Get("wait") == "1" || q.Get("wait") == "true"
	if err := s.runs.cancel(r.Context(), run.tenant, run.ThreadID, run.RunID, action, wait); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

func (s *Server) handleRunJoin(w http.ResponseWriter, r *http.Request) {
	run, err := s.runOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	l := s.hub.Get(run.RunID)
	if l == nil && s.bus != nil && (run.Status == RunPending || run.Status == RunRunning) {
		l = s.mirror(run)
	}
	if l != nil {
		s.runs.WaitFor(run.RunID)
		defer s.runs.Unwait(run.RunID)
		if !s.waitDone(r.Context(), l) {
			if c := r.URL.Query().Get("cancel_on_disconnect"); c == "1" || c == "true" {
				_ = s.runs.cancel(context.WithoutCancel(r.Context()), run.tenant, run.ThreadID, run.RunID, errCancelInterrupt, false)
			}
			return
		}
	}
	writeJSON(w, 200, s.runs.waitOutput(r.Context(), run, l))
}

func parseModesParam(vals []string) []string {
	var out []string
	for _, v := range vals {
		if strings.HasPrefix(v, "[") {
			var list []string
			if json.Unmarshal([]byte(v), &list) == nil {
				out = append(out, list...)
				continue
			}
		}
		for _, m := range strings.Split(v, ",") {
			if m = strings.TrimSpace(m); m != "" {
				out = append(out, m)
			}
		}
	}
	return out
}

func (s *Server) handleRunJoinStream(w http.ResponseWriter, r *http.Request) {
	run, err := s.runOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	modes := parseModesParam(r.URL.Query()["stream_mode"])
	for _, m := range modes {
		if !slices.Contains(knownStreamModes, m) {
			writeError(w, badRequest("known stream modes: "+strings.Join(knownStreamModes, ", "), "unknown stream_mode %q", m))
			return
		}
	}
	var after int64
	if v := r.Header.Get("Last-Event-ID"); v != "" && v != "-1" {
		if after, err = strconv.ParseInt(v, 10, 64); err != nil || after < 0 {
			writeError(w, badRequest("send the id of the last event received", "header Last-Event-ID is %q", v))
			return
		}
	}
	done, err := s.limits.openStream(principal(r).Tenant)
	if err != nil {
		writeError(w, err)
		return
	}
	defer done()
	l := s.followLog(r.Context(), run)
	cancel := r.URL.Query().Get("cancel_on_disconnect")
	s.streamSSE(w, r, run, l, after, modes, cancel == "1" || cancel == "true")
}

// followLog returns the log a reader of the run's stream follows: the one in memory; else, for
// a run executing in another replica (or waiting for one), a mirror of it; else the events the
// database kept (a finished resumable run), closed.
func (s *Server) followLog(ctx context.Context, run *Run) *stream.Log {
	if l := s.hub.Get(run.RunID); l != nil {
		return l
	}
	if s.bus != nil && (run.Status == RunPending || run.Status == RunRunning) {
		return s.mirror(run)
	}
	evs, err := s.meta.loadEvents(ctx, run.RunID, 0)
	if err != nil {
		evs = nil
	}
	return stream.Closed(evs)
}

// streamSSE writes the run's events after seq `after` as server-sent events until the run ends
// or the client leaves. Events are read from the run's log, so a slow client never holds up the
// run.
func (s *Server) streamSSE(w http.ResponseWriter, r *http.Request, run *Run, l *stream.Log, after int64, modes []string, cancelOnDisconnect bool) {
	flusher, _ := w.(http.Flusher)
	rc := http.NewResponseController(w)
	// Each write must go through within the timeout: a client that stops reading is let go.
	deadline := func() { _ = rc.SetWriteDeadline(time.Now().Add(s.cfg.StreamWriteTimeout)) }
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("Location", runPath(run)+"/stream")
	h.Set("Content-Location", runPath(run))
	w.WriteHeader(http.StatusOK)
	if flusher != nil {
		flusher.Flush()
	}
	s.metrics.streams.Inc()
	defer s.metrics.streams.Dec()
	ctx := r.Context()
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	var buf []byte
loop:
	for {
		evs, done, wake := l.Since(after)
		if len(evs) > 0 {
			buf = buf[:0]
			for _, ev := range evs {
				after = ev.Seq
				if len(modes) > 0 && !slices.Contains(modes, ev.Mode()) && !isControlEvent(ev.Event) && !(ev.Mode() == "messages" && slices.Contains(modes, "messages-tuple")) {
					continue
				}
				buf = appendSSE(buf, ev)
			}
			deadline()
			if _, err := w.Write(buf); err != nil {
				break loop
			}
			if flusher != nil {
				flusher.Flush()
			}
			continue
		}
		if done {
			return
		}
		select {
		case <-wake:
		case <-tick.C:
			deadline()
			if _, err := w.Write([]byte(": heartbeat\n\n")); err != nil {
				break loop
			}
			if flusher != nil {
				flusher.Flush()
			}
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break loop
		}
	}
	if cancelOnDisconnect {
		_ = s.runs.cancel(context.WithoutCancel(ctx), run.tenant, run.ThreadID, run.RunID, errCancelInterrupt, false)
	}
}

func isControlEvent(name string) bool {
	return name == "metadata" || name == "error" || name == "end"
}

func appendSSE(buf []byte, ev streamEvent) []byte {
	buf = append(buf, "id: "...)
	buf = strconv.AppendInt(buf, ev.Seq, 10)
	buf = append(buf, "\nevent: "...)
	buf = append(buf, ev.Event...)
	buf = append(buf, "\ndata: "...)
	buf = ev.AppendData(buf)
	return append(buf, "\n\n"...)
}
