package appstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
	"golang.org/x/time/rate"

	"github.com/trellis-go/trellis/server"
)

// Handler is what an app does with a WebSocket connection. Every field may be nil.
type Handler struct {
	// OnOpen runs once the connection is up, before any message is handled; an error closes
	// the connection with the error's text as the reason.
	OnOpen func(c *Conn) error
	// OnMessage handles a client message, one at a time per connection (the connection keeps
	// reading, answering pings, while it runs). Returning nil acks a message that has an ID;
	// an error answers it with an error frame (an *Error gives its code, any other "failed").
	OnMessage func(c *Conn, m Message) error
	// OnClose runs once the connection has ended and its stream slot is free.
	OnClose func(c *Conn)
}

// Conn is one WebSocket connection. Its methods are safe for concurrent use.
type Conn struct {
	*session
	ws *websocket.Conn
}

// errHeartbeat: the client did not answer a ping in time.
var errHeartbeat = errors.New("appstream: the client did not answer a ping in time")

// inboxSize is how many client messages may wait while the handler works on one; a message
// arriving when it is full is answered with an error of code "busy".
const inboxSize = 32

// seenIDs is how many message IDs a connection remembers to recognise a resent message.
const seenIDs = 1024

// WebSocket returns a handler that admits a connection (Origin, credentials, the tenant's rate
// and open streams), upgrades it, and serves h on it.
func (k *Kit) WebSocket(h Handler) http.Handler {
	return k.admit(func(w http.ResponseWriter, r *http.Request, p server.Principal, done func()) {
		done = sync.OnceFunc(done)
		defer done()
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{
			// The Origin was checked by admit, against the same rules as SSE.
			InsecureSkipVerify: true,
		})
		if err != nil {
			return // Accept has answered the request
		}
		ws.SetReadLimit(k.o.MaxMessageBytes)
		c := &Conn{session: newSession(k, r.Context(), p), ws: ws}
		c.serve(h, done)
	})
}

// serve runs the connection until it ends, then frees its stream slot with release before
// OnClose runs, so that by OnClose the tenant may open another stream.
func (c *Conn) serve(h Handler, release func()) {
	k := c.k
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.writeLoop() }()
	go func() { defer wg.Done(); c.pingLoop() }()

	inbox := make(chan Message, inboxSize)
	handled := make(chan struct{})
	go func() {
		defer close(handled)
		c.handleLoop(h, inbox)
	}()
	if h.OnOpen != nil {
		if err := h.OnOpen(c); err != nil {
			c.cancel(err)
		}
	}
	c.readLoop(inbox)
	close(inbox)
	<-handled
	cause := context.Cause(c.ctx)
	c.end(cause)
	wg.Wait()
	switch {
	case errors.Is(cause, ErrSlowClient), errors.Is(cause, errHeartbeat):
		k.log.Info("appstream: client let go", "tenant", c.p.Tenant, "user", c.p.User, "reason", cause.Error())
		c.ws.Close(websocket.StatusPolicyViolation, truncate(cause.Error()))
	case cause != nil && !errors.Is(cause, context.Canceled) && !errors.Is(cause, ErrClosed):
		c.ws.Close(websocket.StatusInternalError, truncate(cause.Error()))
	default:
		c.ws.Close(websocket.StatusNormalClosure, "")
	}
	release()
	if h.OnClose != nil {
		h.OnClose(c)
	}
}

func truncate(s string) string {
	if len(s) > 120 { // a close reason fits in 123 bytes
		return s[:120]
	}
	return s
}

// readLoop reads client frames until the connection ends, answering malformed and over-rate
// ones itself and queueing the others for the handler.
func (c *Conn) readLoop(inbox chan<- Message) {
	var lim *rate.Limiter
	if c.k.o.MessageRate > 0 {
		lim = rate.NewLimiter(rate.Limit(c.k.o.MessageRate), max(1, int(2*c.k.o.MessageRate)))
	}
	for {
		typ, data, err := c.ws.Read(c.ctx)
		if err != nil {
			if c.ctx.Err() == nil {
				c.cancel(ErrClosed)
			}
			return
		}
		if typ != websocket.MessageText {
			_ = c.send(Frame{Type: "error", Code: "bad_message", Message: "send JSON text frames, not binary ones"})
			continue
		}
		var m Message
		if err := json.Unmarshal(data, &m); err != nil {
			_ = c.send(Frame{Type: "error", Code: "bad_message", Message: "the message is not a JSON object: " + err.Error()})
			continue
		}
		if m.Type == "" {
			_ = c.send(Frame{Type: "error", ID: m.ID, Code: "bad_message", Message: `field "type" is required: name what the message is ({"type": "...", "id": "...", "data": ...})`})
			continue
		}
		if lim != nil {
			if res := lim.Reserve(); res.Delay() > 0 {
				wait := res.Delay()
				res.Cancel()
				_ = c.send(Frame{Type: "error", ID: m.ID, Code: "rate_limited", RetryAfterMS: max(1, wait.Milliseconds()),
					Message: fmt.Sprintf("more than %g messages per second; resend after retry_after_ms", c.k.o.MessageRate)})
				continue
			}
		}
		select {
		case inbox <- m:
		default:
			_ = c.send(Frame{Type: "error", ID: m.ID, Code: "busy", Message: "too many messages are waiting to be handled; resend it later"})
		}
	}
}

// handleLoop hands queued messages to the app one at a time and acks them.
func (c *Conn) handleLoop(h Handler, inbox <-chan Message) {
	seen := map[string]struct{}{}
	var order []string
	for m := range inbox {
		if c.ctx.Err() != nil {
			continue
		}
		if m.ID != "" {
			if _, dup := seen[m.ID]; dup {
				_ = c.send(Frame{Type: "ack", ID: m.ID, Duplicate: true})
				continue
			}
		}
		err := c.handle(h, m)
		if err != nil {
			code, msg := "failed", err.Error()
			var e *Error
			if errors.As(err, &e) {
				code, msg = e.Code, e.Message
			}
			_ = c.send(Frame{Type: "error", ID: m.ID, Code: code, Message: msg})
			continue
		}
		if m.ID != "" {
			seen[m.ID] = struct{}{}
			order = append(order, m.ID)
			if len(order) > seenIDs {
				delete(seen, order[0])
				order = order[1:]
			}
			_ = c.send(Frame{Type: "ack", ID: m.ID, Room: ackRoom(m)})
		}
	}
}

func ackRoom(m Message) string {
	if m.Type == "join" || m.Type == "leave" {
		return m.Room
	}
	return ""
}

func (c *Conn) handle(h Handler, m Message) error {
	if c.k.o.CanJoin != nil {
		switch m.Type {
		case "join":
			if err := checkRoom(m.Room); err != nil {
				return &Error{Code: "bad_room", Message: err.Error()}
			}
			if !c.k.o.CanJoin(c.p, m.Room) {
				return &Error{Code: "forbidden", Message: fmt.Sprintf("you may not join room %q", m.Room)}
			}
			return c.Join(m.Room)
		case "leave":
			c.Leave(m.Room)
			return nil
		}
	}
	if h.OnMessage == nil {
		return &Error{Code: "unknown_type", Message: fmt.Sprintf("this endpoint takes no %q messages", m.Type)}
	}
	return h.OnMessage(c, m)
}

// writeLoop writes queued frames, each within WriteTimeout.
func (c *Conn) writeLoop() {
	for {
		select {
		case <-c.ctx.Done():
			return
		case b := <-c.out:
			ctx, cancel := context.WithTimeout(c.ctx, c.k.o.WriteTimeout)
			err := c.ws.Write(ctx, websocket.MessageText, b)
			cancel()
			if err != nil {
				if c.ctx.Err() == nil {
					c.cancel(ErrSlowClient)
				}
				return
			}
		}
	}
}

// pingLoop pings the client every PingInterval; a pong that does not come within it ends the
// connection.
func (c *Conn) pingLoop() {
	t := time.NewTicker(c.k.o.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(c.ctx, c.k.o.PingInterval)
			err := c.ws.Ping(ctx)
			cancel()
			if err != nil {
				if c.ctx.Err() == nil {
					c.cancel(errHeartbeat)
				}
				return
			}
		}
	}
}

// Close ends the connection.
func (c *Conn) Close() { c.cancel(ErrClosed) }
