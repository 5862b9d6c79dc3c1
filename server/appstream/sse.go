package appstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/trellis-go/trellis/server"
)

// Stream is one SSE connection: frames go to the client as events named by their type. Its
// methods are safe for concurrent use.
type Stream struct {
	*session
}

// SSE returns a handler that admits a request (Origin, credentials, the tenant's rate and open
// streams) and streams to it: serve runs with the stream and may Send and Join; the stream ends
// when serve returns (after the frames it queued are written) or the client goes away. A serve
// that only follows rooms returns when s.Context() ends. An error serve returns is sent as a
// last "error" frame.
func (k *Kit) SSE(serve func(s *Stream) error) http.Handler {
	return k.EventStream(func(http.ResponseWriter, *http.Request, server.Principal) func(*Stream) error { return serve })
}

// EventStream is [Kit.SSE] for a route that looks at the request before it streams (a POST
// whose body it reads, checks of its own): once the request is admitted, open runs with the
// caller's principal and either answers the request itself (a 400 in the app's own shape, say)
// and returns nil, or returns the function that streams, as for SSE. Frames an app sends with
// SendFrame keep its own shape: an event named by their "type", the frame as its data.
func (k *Kit) EventStream(open func(w http.ResponseWriter, r *http.Request, p server.Principal) func(s *Stream) error) http.Handler {
	return k.admit(func(w http.ResponseWriter, r *http.Request, p server.Principal, done func()) {
		defer done()
		serve := open(w, r, p)
		if serve == nil {
			return
		}
		if _, ok := w.(http.Flusher); !ok {
			writeHTTPError(w, http.StatusInternalServerError, "no_streaming", "this response cannot be streamed", "")
			return
		}
		s := &Stream{session: newSession(k, r.Context(), p)}
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		w.WriteHeader(http.StatusOK)
		finished := make(chan error, 1)
		go func() {
			var err error
			defer func() {
				if v := recover(); v != nil {
					err = errors.New("the stream's handler failed")
					k.log.Error("appstream: SSE handler panicked", "panic", v)
				}
				finished <- err
			}()
			err = serve(s)
		}()
		s.writeLoop(w, finished)
		s.end(context.Canceled)
	})
}

// writeLoop writes frames and heartbeats until serve has finished and its frames are written,
// or the client is gone or too slow.
func (s *Stream) writeLoop(w http.ResponseWriter, finished <-chan error) {
	rc := http.NewResponseController(w)
	f := w.(http.Flusher)
	var seq int64
	write := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(s.k.o.WriteTimeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		f.Flush()
		return true
	}
	event := func(frame []byte) bool {
		var head struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(frame, &head)
		seq++
		var buf bytes.Buffer
		buf.WriteString("id: " + strconv.FormatInt(seq, 10) + "\n")
		if head.Type != "" {
			buf.WriteString("event: " + head.Type + "\n")
		}
		for line := range bytes.SplitSeq(frame, []byte("\n")) {
			buf.WriteString("data: ")
			buf.Write(line)
			buf.WriteByte('\n')
		}
		buf.WriteByte('\n')
		return write(buf.Bytes())
	}
	t := time.NewTicker(s.k.o.PingInterval)
	defer t.Stop()
	if !write([]byte(": connected\n\n")) {
		s.cancel(ErrSlowClient)
	}
	for {
		select {
		case <-s.ctx.Done():
			return
		case b := <-s.out:
			if !event(b) {
				s.cancel(ErrSlowClient)
				return
			}
		case <-t.C:
			if !write([]byte(": ping\n\n")) {
				s.cancel(ErrSlowClient)
				return
			}
		case err := <-finished:
			// Write what serve queued, then end.
			for {
				select {
				case b := <-s.out:
					if !event(b) {
						return
					}
					continue
				default:
				}
				break
			}
			if err != nil {
				code, msg := "failed", err.Error()
				var e *Error
				if errors.As(err, &e) {
					code, msg = e.Code, e.Message
				}
				b, _ := json.Marshal(Frame{Type: "error", Code: code, Message: msg})
				event(b)
			}
			return
		}
	}
}
