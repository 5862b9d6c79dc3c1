package appstream

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"golang.org/x/time/rate"

	"github.com/trellis-go/trellis/server"
)

// Socket is a WebSocket that speaks the app's own protocol: the kit admits it (Origin,
// credentials, the tenant's rate and open streams), pings it, bounds every write and lets go a
// client that stops reading, as for a [Conn]; the app reads the client's messages with Read and
// writes frames of its own shape with SendFrame. No acks, error frames or join messages are
// added: the wire is the app's. Rooms work as on a Conn; a frame published with PublishFrame
// reaches the room's sockets as it was published. Its methods are safe for concurrent use.
type Socket struct {
	*session
	ws    *websocket.Conn
	inbox chan []byte
	// held is true while the reader holds a message the app has not taken yet (or waits out
	// the message rate): the client is then not pinged, since its pong could not be read.
	held atomic.Bool
}

// Socket returns a handler for a WebSocket of the app's own protocol. A request is admitted as
// for [Kit.WebSocket]; then open runs with the caller's principal, before the upgrade, and
// either refuses the request by answering it itself (an app's own 404 for a session that is not
// the caller's, say) and returning nil, or returns the function that serves the socket. The
// connection ends when serve returns (after the frames it queued are written); an error it
// returns closes the socket with status 1011 and the error's text.
func (k *Kit) Socket(open func(w http.ResponseWriter, r *http.Request, p server.Principal) func(s *Socket) error) http.Handler {
	return k.admit(func(w http.ResponseWriter, r *http.Request, p server.Principal, done func()) {
		defer done()
		serve := open(w, r, p)
		if serve == nil {
			return
		}
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{
			// The Origin was checked by admit, against the same rules as SSE.
			InsecureSkipVerify: true,
		})
		if err != nil {
			return // Accept has answered the request
		}
		ws.SetReadLimit(k.o.MaxMessageBytes)
		s := &Socket{session: newSession(k, r.Context(), p), ws: ws, inbox: make(chan []byte)}
		s.serve(serve)
	})
}

func (s *Socket) serve(serve func(s *Socket) error) {
	k := s.k
	stop := make(chan struct{}) // serve has returned: write what is queued, stop pinging
	var loops, reader sync.WaitGroup
	loops.Add(2)
	go func() { defer loops.Done(); s.writeLoop(stop) }()
	go func() { defer loops.Done(); s.pingLoop(stop) }()
	reader.Add(1)
	go func() { defer reader.Done(); s.readLoop() }()

	err := func() (err error) {
		defer func() {
			if v := recover(); v != nil {
				k.log.Error("appstream: socket handler panicked", "panic", v)
				err = errors.New("the socket's handler failed")
			}
		}()
		return serve(s)
	}()
	close(stop)
	loops.Wait()
	cause := context.Cause(s.ctx)
	switch {
	case errors.Is(cause, ErrSlowClient), errors.Is(cause, errHeartbeat):
		k.log.Info("appstream: client let go", "tenant", s.p.Tenant, "user", s.p.User, "reason", cause.Error())
		s.ws.Close(websocket.StatusPolicyViolation, truncate(cause.Error()))
	case err != nil && !errors.Is(err, ErrClosed) && s.ctx.Err() == nil:
		k.log.Warn("appstream: socket ended with an error", "tenant", s.p.Tenant, "user", s.p.User, "err", err)
		s.ws.Close(websocket.StatusInternalError, truncate(err.Error()))
	default:
		s.ws.Close(websocket.StatusNormalClosure, "")
	}
	s.end(ErrClosed)
	reader.Wait()
}

// Read returns the client's next message (the payload of a text or binary frame). It waits
// until one comes and returns ErrClosed once the connection has ended. Messages wait for Read
// while the app works on one: the client is slowed, not refused, and a client past
// Options.MessageRate is slowed too.
func (s *Socket) Read() ([]byte, error) {
	select {
	case b := <-s.inbox:
		return b, nil
	case <-s.ctx.Done():
		return nil, ErrClosed
	}
}

// readLoop reads client messages and hands them to Read one at a time.
func (s *Socket) readLoop() {
	var lim *rate.Limiter
	if s.k.o.MessageRate > 0 {
		lim = rate.NewLimiter(rate.Limit(s.k.o.MessageRate), max(1, int(2*s.k.o.MessageRate)))
	}
	for {
		_, data, err := s.ws.Read(s.ctx)
		if err != nil {
			if s.ctx.Err() == nil {
				s.cancel(ErrClosed)
			}
			return
		}
		s.held.Store(true)
		if lim != nil && lim.Wait(s.ctx) != nil {
			return
		}
		select {
		case s.inbox <- data:
			s.held.Store(false)
		case <-s.ctx.Done():
			return
		}
	}
}

// writeLoop writes queued frames, each within WriteTimeout, until the connection ends or stop
// is closed; then it writes what is still queued (within the same deadline each) and returns.
func (s *Socket) writeLoop(stop <-chan struct{}) {
	write := func(b []byte) bool {
		ctx, cancel := context.WithTimeout(s.ctx, s.k.o.WriteTimeout)
		defer cancel()
		if err := s.ws.Write(ctx, websocket.MessageText, b); err != nil {
			if s.ctx.Err() == nil {
				s.cancel(ErrSlowClient)
			}
			return false
		}
		return true
	}
	for {
		select {
		case <-s.ctx.Done():
			return
		case b := <-s.out:
			if !write(b) {
				return
			}
		case <-stop:
			for {
				select {
				case b := <-s.out:
					if !write(b) {
						return
					}
				default:
					return
				}
			}
		}
	}
}

// pingLoop pings the client every PingInterval while the reader is free to read its pong; a
// pong that does not come within the interval ends the connection.
func (s *Socket) pingLoop(stop <-chan struct{}) {
	t := time.NewTicker(s.k.o.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-stop:
			return
		case <-t.C:
			if s.held.Load() {
				continue // the client is sending; its pong would wait behind its messages
			}
			ctx, cancel := context.WithTimeout(s.ctx, s.k.o.PingInterval)
			err := s.ws.Ping(ctx)
			cancel()
			if err != nil && !s.held.Load() {
				if s.ctx.Err() == nil {
					s.cancel(errHeartbeat)
				}
				return
			}
		}
	}
}

// Close ends the connection: Read returns ErrClosed.
func (s *Socket) Close() { s.cancel(ErrClosed) }

// SocketError is a refusal an open function may write for a request it will not upgrade, in
// the kit's JSON shape ({"code", "detail", "hint"}).
func SocketError(w http.ResponseWriter, status int, code, msg, hint string) {
	writeHTTPError(w, status, code, msg, hint)
}
