package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/trellis-go/trellis/server/internal/stream"
)

// wsPing is how often the server pings a WebSocket client; a client that does not answer within
// wsPing is disconnected.
const wsPing = 20 * time.Second

// wsSlowGrace is how long a client's full outbox may stay full before the client is dropped.
const wsSlowGrace = 5 * time.Second

// wsIn is a message from a WebSocket client.
//
//	{"type": "run", "assistant_id": "...", "input": {...}, "stream_mode": [...]}   start a run on the thread
//	{"type": "resume", "assistant_id": "...", "resume": <value>}                 resume the paused thread
//	{"type": "subscribe", "run_id": "...", "last_event_id": 12}                  follow a run's stream
//	{"type": "cancel", "run_id": "...", "action": "interrupt"}                   cancel a run
type wsIn struct {
	Type        string          `json:"type"`
	RunID       string          `json:"run_id"`
	LastEventID int64           `json:"last_event_id"`
	Resume      json.RawMessage `json:"resume"`
	Action      string          `json:"action"`
	runCreate
}

// wsOut is a message to a WebSocket client: "run" (a run was created), "event" (a stream event
// of a run), "done" (a run's stream ended) or "error".
type wsOut struct {
	Type   string          `json:"type"`
	RunID  string          `json:"run_id,omitempty"`
	ID     int64           `json:"id,omitempty"`
	Event  string          `json:"event,omitempty"`
	Data   json.RawMessage `json:"data,omitempty"`
	Run    *Run            `json:"run,omitempty"`
	Detail string          `json:"detail,omitempty"`
	// flushed, when set, is no message: the writer closes it once it has written every message
	// queued before (see flush).
	flushed chan struct{}
}

// wsConn is one WebSocket client: a bounded outbox drained by one writer. Producers never
// block: a client whose outbox is full is disconnected, so it cannot stall a run.
type wsConn struct {
	s      *Server
	c      *websocket.Conn
	p      Principal
	tid    string
	out    chan wsOut
	ctx    context.Context
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	subs   map[string]bool
	wg     sync.WaitGroup
	grace  time.Duration
	// release frees the tenant's open stream the connection counts as.
	release func()
}

var errSlowClient = errors.New("client too slow: its buffer of stream events is full")

// send queues a message for the client. A full outbox gets wsSlowGrace to drain; a client that
// cannot take its messages by then is dropped. The run is never waiting here: followers read
// the run's log, they do not sit between the run and its stream.
func (wc *wsConn) send(m wsOut) bool {
	select {
	case wc.out <- m:
		return true
	case <-wc.ctx.Done():
		return false
	default:
	}
	t := time.NewTimer(wc.grace)
	defer t.Stop()
	select {
	case wc.out <- m:
		return true
	case <-wc.ctx.Done():
		return false
	case <-t.C:
		wc.cancel(errSlowClient)
		return false
	}
}

// accept counts the connection as an open stream of the principal's tenant (429 at the tenant's
// limit) and accepts the WebSocket. It answers the request itself and returns nil when it
// cannot; close frees both.
func (s *Server) accept(w http.ResponseWriter, r *http.Request) *wsConn {
	release, err := s.limits.openStream(principal(r).Tenant)
	if err != nil {
		writeError(w, err)
		return nil
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: s.cfg.WebSocketOrigins})
	if err != nil {
		release()
		return nil // Accept has answered (403 for a foreign origin)
	}
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(r.Context()))
	wc := &wsConn{s: s, c: c, p: principal(r), tid: r.PathValue("tid"), out: make(chan wsOut, s.cfg.WebSocketBuffer), ctx: ctx, cancel: cancel,
		subs: map[string]bool{}, grace: wsSlowGrace, release: release}
	s.metrics.streams.Inc()
	go wc.writer()
	return wc
}

func (wc *wsConn) writer() {
	ping := time.NewTicker(wsPing)
	defer ping.Stop()
	for {
		select {
		case m := <-wc.out:
			if m.flushed != nil {
				close(m.flushed)
				continue
			}
			b, _ := json.Marshal(m)
			wctx, cancel := context.WithTimeout(wc.ctx, wc.s.cfg.StreamWriteTimeout) // a client that stops reading is let go
			err := wc.c.Write(wctx, websocket.MessageText, b)
			cancel()
			if err != nil {
				wc.cancel(err)
				return
			}
		case <-ping.C:
			pctx, cancel := context.WithTimeout(wc.ctx, wsPing)
			err := wc.c.Ping(pctx)
			cancel()
			if err != nil {
				wc.cancel(err)
				return
			}
		case <-wc.ctx.Done():
			return
		}
	}
}

func (wc *wsConn) close() {
	cause := context.Cause(wc.ctx)
	wc.cancel(nil)
	wc.wg.Wait()
	wc.s.metrics.streams.Dec()
	defer wc.release()
	if errors.Is(cause, errSlowClient) {
		wc.c.Close(websocket.StatusPolicyViolation, "client too slow")
		return
	}
	wc.c.Close(websocket.StatusNormalClosure, "")
}

// follow forwards a run's events after seq to the client until the run's stream ends.
func (wc *wsConn) follow(run *Run, l *stream.Log, after int64) {
	wc.mu.Lock()
	if wc.subs[run.RunID] {
		wc.mu.Unlock()
		return
	}
	wc.subs[run.RunID] = true
	wc.mu.Unlock()
	wc.wg.Add(1)
	go func() {
		defer wc.wg.Done()
		defer func() {
			wc.mu.Lock()
			delete(wc.subs, run.RunID)
			wc.mu.Unlock()
		}()
		for {
			evs, done, wake := l.Since(after)
			for _, ev := range evs {
				after = ev.Seq
				if !wc.send(wsOut{Type: "event", RunID: run.RunID, ID: ev.Seq, Event: ev.Event, Data: ev.WholeData()}) {
					return
				}
			}
			if len(evs) > 0 {
				continue
			}
			if done {
				wc.send(wsOut{Type: "done", RunID: run.RunID})
				return
			}
			select {
			case <-wake:
			case <-wc.ctx.Done():
				return
			}
		}
	}()
}

// handleRunWebSocket follows one run's stream over a WebSocket (query last_event_id resumes).
func (s *Server) handleRunWebSocket(w http.ResponseWriter, r *http.Request) {
	run, err := s.runOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	wc := s.accept(w, r)
	if wc == nil {
		return
	}
	defer wc.close()
	l := s.followLog(r.Context(), run)
	var after int64
	if v := r.URL.Query().Get("last_event_id"); v != "" {
		after, _ = parseSeq(v)
	}
	wc.follow(run, l, after)
	go wc.drainReads()
	wc.wg.Wait()
	wc.flush() // the final "done" is written before the connection closes
}

// flush waits until the writer has written every message queued so far, or the connection
// ended.
func (wc *wsConn) flush() {
	done := make(chan struct{})
	select {
	case wc.out <- wsOut{flushed: done}:
	case <-wc.ctx.Done():
		return
	}
	select {
	case <-done:
	case <-wc.ctx.Done():
	}
}

func parseSeq(v string) (int64, error) {
	var n int64
	err := json.Unmarshal([]byte(v), &n)
	return n, err
}

// drainReads reads (and discards) client messages so pings and close frames are processed.
func (wc *wsConn) drainReads() {
	for {
		if _, _, err := wc.c.Read(wc.ctx); err != nil {
			wc.cancel(err)
			return
		}
	}
}

// handleThreadWebSocket is a session on one thread: the client starts runs, resumes the thread
// and follows streams by sending messages (see wsIn).
func (s *Server) handleThreadWebSocket(w http.ResponseWriter, r *http.Request) {
	t, err := s.thread(r)
	if err != nil {
		writeError(w, err)
		return
	}
	wc := s.accept(w, r)
	if wc == nil {
		return
	}
	defer wc.close()
	wc.c.SetReadLimit(s.cfg.MaxBodyBytes)
	for {
		_, data, err := wc.c.Read(wc.ctx)
		if err != nil {
			wc.cancel(err)
			return
		}
		var in wsIn
		if err := json.Unmarshal(data, &in); err != nil {
			wc.send(wsOut{Type: "error", Detail: "the message is not valid JSON: " + err.Error()})
			continue
		}
		switch in.Type {
		case "run", "resume":
			req := in.runCreate
			if in.Type == "resume" {
				req.Command = &RunCommand{Resume: in.Resume}
				req.Input = nil
			}
			err := s.checkRunInput(&req)
			var run *Run
			var l *stream.Log
			if err == nil {
				run, l, err = s.runs.create(wc.ctx, wc.p, t.ThreadID, &req)
			}
			if err != nil {
				wc.send(wsOut{Type: "error", Detail: errText(err)})
				continue
			}
			wc.send(wsOut{Type: "run", RunID: run.RunID, Run: run})
			wc.follow(run, l, 0)
		case "subscribe":
			run, err := s.meta.getRun(wc.ctx, wc.p.Tenant, t.ThreadID, in.RunID)
			if err != nil {
				wc.send(wsOut{Type: "error", Detail: errText(err)})
				continue
			}
			wc.follow(run, s.followLog(wc.ctx, run), in.LastEventID)
		case "cancel":
			action := errCancelInterrupt
			if in.Action == "rollback" {
				action = errCancelRollback
			}
			if err := s.runs.cancel(wc.ctx, wc.p.Tenant, t.ThreadID, in.RunID, action, false); err != nil {
				wc.send(wsOut{Type: "error", Detail: errText(err)})
			}
		default:
			wc.send(wsOut{Type: "error", Detail: `unknown message type "` + in.Type + `" (use run, resume, subscribe or cancel)`})
		}
	}
}

func errText(err error) string {
	var ae *APIError
	if errors.As(err, &ae) {
		if ae.Hint != "" {
			return ae.Message + " (" + ae.Hint + ")"
		}
		return ae.Message
	}
	return err.Error()
}
