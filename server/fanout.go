package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/trellis-go/trellis/server/internal/stream"
)

// ErrFanoutTooLarge: a message is larger than the fanout's transport carries.
var ErrFanoutTooLarge = errors.New("server: fanout message too large")

// Fanout carries messages on named topics to their subscribers in every replica of the server:
// through the replicas' bus (Redis pub/sub with Config.RedisURL, else Postgres LISTEN/NOTIFY)
// when the server runs on Postgres, in this process on SQLite (one process). An application
// gets it as AppDeps.Fanout; the appstream kit builds its rooms on it.
//
// Delivery is at most once and in order per publisher: a subscriber that does not keep up loses
// messages rather than slowing the others, and messages published while a replica's bus
// connection is down do not reach it. Things that must not be lost belong in the database; the
// fanout says that they changed. Topics are shared by every app and tenant of the server:
// callers put both in the topic name (the kit does).
type Fanout struct {
	s *Server

	mu   sync.Mutex
	subs map[string]map[chan json.RawMessage]struct{}
}

func newFanout(s *Server) *Fanout {
	return &Fanout{s: s, subs: map[string]map[chan json.RawMessage]struct{}{}}
}

// fanoutPrefix keeps fanout topics apart from run IDs on the bus, whose per-run subscriptions
// the fanout reuses.
const fanoutPrefix = "fanout\x00"

// fanoutBuffer is how many messages a subscriber may fall behind before it loses some.
const fanoutBuffer = 256

// Kind says how messages travel: "redis", "postgres" or "local".
func (f *Fanout) Kind() string {
	if b := f.s.bus; b != nil {
		return b.Kind()
	}
	return "local"
}

// MaxPayload is the largest payload Publish carries: about 7000 bytes minus the topic on
// Postgres (NOTIFY's limit), 1 MiB otherwise.
func (f *Fanout) MaxPayload(topic string) int {
	if b := f.s.bus; b != nil && b.Limit() > 0 {
		return b.Limit() - len(topic) - 64
	}
	return stream.RedisBatchLimit
}

// Publish sends payload, a JSON value, to the topic's subscribers in every replica, this one
// included. It returns once the message is handed to the transport, not when it is delivered.
func (f *Fanout) Publish(ctx context.Context, topic string, payload json.RawMessage) error {
	if topic == "" {
		return errors.New("server: fanout: empty topic")
	}
	if !json.Valid(payload) {
		return errors.New("server: fanout: the payload is not JSON")
	}
	if n := f.MaxPayload(topic); len(payload) > n {
		return fmt.Errorf("%w: %d bytes, at most %d on %s", ErrFanoutTooLarge, len(payload), n, f.Kind())
	}
	if b := f.s.bus; b != nil {
		// Every replica's bus listener, this one's too, delivers it to its subscribers.
		return b.Publish(ctx, stream.Message{Kind: "ev", RunID: fanoutPrefix + topic, Event: "fanout", Data: payload})
	}
	f.deliver(topic, payload)
	return nil
}

func (f *Fanout) deliver(topic string, payload json.RawMessage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for ch := range f.subs[topic] {
		select {
		case ch <- payload:
		default: // behind: it loses this one
		}
	}
}

// Subscribe returns the messages published on topic from now on, until cancel is called. The
// channel is closed by cancel.
func (f *Fanout) Subscribe(topic string) (<-chan json.RawMessage, func()) {
	ch := make(chan json.RawMessage, fanoutBuffer)
	if b := f.s.bus; b != nil {
		in, unsub := b.Subscribe(fanoutPrefix + topic)
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer close(ch)
			for {
				select {
				case <-stop:
					return
				case m := <-in:
					select {
					case ch <- m.Data:
					default:
					}
				}
			}
		}()
		var once sync.Once
		return ch, func() {
			once.Do(func() {
				unsub()
				close(stop)
				<-done
			})
		}
	}
	f.mu.Lock()
	if f.subs[topic] == nil {
		f.subs[topic] = map[chan json.RawMessage]struct{}{}
	}
	f.subs[topic][ch] = struct{}{}
	f.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			f.mu.Lock()
			delete(f.subs[topic], ch)
			if len(f.subs[topic]) == 0 {
				delete(f.subs, topic)
			}
			f.mu.Unlock()
			close(ch)
		})
	}
}
