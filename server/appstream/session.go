package appstream

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/trellis-go/trellis/server"
)

// session is what a WebSocket connection and an SSE stream share: the principal, a bounded
// queue of frames drained by one writer, and the rooms joined.
type session struct {
	k      *Kit
	p      server.Principal
	ctx    context.Context
	cancel context.CancelCauseFunc
	out    chan []byte

	mu    sync.Mutex
	rooms map[string]func()
	wg    sync.WaitGroup
}

func newSession(k *Kit, parent context.Context, p server.Principal) *session {
	ctx, cancel := context.WithCancelCause(parent)
	return &session{k: k, p: p, ctx: ctx, cancel: cancel, out: make(chan []byte, k.o.SendBuffer), rooms: map[string]func(){}}
}

// enqueue queues an encoded frame. A full queue gets WriteTimeout to drain; a client that has
// not taken its frames by then is let go.
func (s *session) enqueue(frame []byte) error {
	select {
	case s.out <- frame:
		return nil
	case <-s.ctx.Done():
		return ErrClosed
	default:
	}
	t := time.NewTimer(s.k.o.WriteTimeout)
	defer t.Stop()
	select {
	case s.out <- frame:
		return nil
	case <-s.ctx.Done():
		return ErrClosed
	case <-t.C:
		s.cancel(ErrSlowClient)
		return ErrSlowClient
	}
}

func (s *session) send(f Frame) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return s.enqueue(b)
}

// Send queues a frame of type typ carrying data (encoded to JSON unless a json.RawMessage) for
// the client. It does not wait for the client: it returns ErrClosed once the connection has
// ended, ErrSlowClient when the client stopped reading.
func (s *session) Send(typ string, data any) error {
	raw, err := encodeData(data)
	if err != nil {
		return err
	}
	return s.send(Frame{Type: typ, Data: raw})
}

// SendFrame queues v, encoded to JSON (as is when a json.RawMessage), as one frame of the
// app's own shape: a WebSocket text message as it is, or an SSE event named by v's "type"
// field with v as its data. It is for protocols an app keeps (a [Socket]'s, an SSE stream's
// events); Send makes the kit's own frames. It returns as Send does.
func (s *session) SendFrame(v any) error {
	raw, err := encodeData(v)
	if err != nil {
		return err
	}
	if raw == nil {
		return errors.New("appstream: SendFrame of nil: give the frame to send")
	}
	return s.enqueue(raw)
}

// PublishFrame sends v to a room of the connection's tenant as a frame of the app's own shape,
// on every replica (see [Kit.PublishFrame]).
func (s *session) PublishFrame(ctx context.Context, room string, v any) error {
	return s.k.PublishFrame(ctx, s.p.Tenant, room, v)
}

// Principal is who the connection acts for.
func (s *session) Principal() server.Principal { return s.p }

// Context ends when the connection does; it carries the principal (server.PrincipalFrom).
func (s *session) Context() context.Context { return s.ctx }

// Join makes the frames published to room (in the connection's app and tenant, from any
// replica) reach this connection until it leaves or ends. Joining a room twice is a no-op.
func (s *session) Join(room string) error {
	if err := checkRoom(room); err != nil {
		return err
	}
	if s.k.fanout == nil {
		return ErrClosed
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		return ErrClosed
	}
	if _, ok := s.rooms[room]; ok {
		return nil
	}
	ch, unsub := s.k.fanout.Subscribe(s.k.topic(s.p.Tenant, room))
	s.rooms[room] = unsub
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for frame := range ch {
			if s.enqueue(frame) != nil {
				return
			}
		}
	}()
	return nil
}

// Leave stops the room's frames; leaving a room not joined is a no-op.
func (s *session) Leave(room string) {
	s.mu.Lock()
	unsub := s.rooms[room]
	delete(s.rooms, room)
	s.mu.Unlock()
	if unsub != nil {
		unsub()
	}
}

// Rooms lists the rooms joined.
func (s *session) Rooms() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.rooms))
	for r := range s.rooms {
		out = append(out, r)
	}
	return out
}

// Publish sends a frame to a room of the connection's tenant, on every replica (this
// connection receives it too if it joined the room).
func (s *session) Publish(ctx context.Context, room, typ string, data any) error {
	return s.k.Publish(ctx, s.p.Tenant, room, typ, data)
}

// end leaves every room and waits for the room forwarders.
func (s *session) end(cause error) {
	s.cancel(cause)
	s.mu.Lock()
	rooms := s.rooms
	s.rooms = map[string]func(){}
	s.mu.Unlock()
	for _, unsub := range rooms {
		unsub()
	}
	s.wg.Wait()
}
