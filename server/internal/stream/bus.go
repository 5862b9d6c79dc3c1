package stream

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

// The bus connects the processes (replicas) sharing one database: the one executing a run
// publishes each of its stream events, and any one asked for that run's stream follows them (the
// server's mirror); a cancellation asked of one reaches the one executing the run. It travels
// through Redis pub/sub or through Postgres LISTEN/NOTIFY. Messages may be lost (a slow
// subscriber, a reconnect): events are also in the database, and a follower that sees a gap
// reads them from there.

// Channel is the one channel every replica listens on.
const Channel = "trellis_bus"

// pgNotifyLimit keeps NOTIFY payloads under Postgres's 8000-byte limit; a larger event is sent
// without its data and read from the database.
const pgNotifyLimit = 7000

// Message is what travels on the bus: a run's event ("ev"), events of any runs ("evs"), the
// cancellation of a run ("cancel") or the end of one ("done").
type Message struct {
	Kind   string          `json:"k"` // "ev", "evs", "cancel" or "done"
	RunID  string          `json:"r"`
	Thread string          `json:"t,omitempty"`
	Seq    int64           `json:"s,omitempty"`
	Event  string          `json:"e,omitempty"`
	Data   json.RawMessage `json:"d,omitempty"`
	Action string          `json:"a,omitempty"` // "interrupt" or "rollback"
	// Events are the events of an "evs" message, of any runs; an event without data is to be
	// read from the database.
	Events []MessageEvent `json:"v,omitempty"`
}

// MessageEvent is one event of an "evs" message.
type MessageEvent struct {
	RunID string          `json:"r"`
	Seq   int64           `json:"s"`
	Event string          `json:"e"`
	Data  json.RawMessage `json:"d,omitempty"`
}

// RedisBatchLimit bounds the payload of one "evs" message on Redis.
const RedisBatchLimit = 1 << 20

// Bus is the bus of one process: it publishes, and hands what the others publish to its
// subscribers and handlers.
type Bus struct {
	kind     string // "redis" or "postgres"
	publishF func(ctx context.Context, payload string) error
	// publishManyF sends several payloads in one round trip.
	publishManyF func(ctx context.Context, payloads []string) error
	limit        int
	log          *slog.Logger
	// handlers are set once the runner exists, after the listener has started: notifications
	// from other replicas may already arrive, so they are read atomically.
	handlers atomic.Pointer[Handlers]

	mu   sync.Mutex
	subs map[string]map[chan *Message]struct{}

	stop context.CancelFunc
	done sync.WaitGroup
}

// Batch is events of one run, written together.
type Batch struct {
	RunID  string
	Events []Event
}

// Kind returns how the bus travels: "redis" or "postgres".
func (b *Bus) Kind() string { return b.kind }

// Limit returns the largest payload of a message (0: the transport's own).
func (b *Bus) Limit() int { return b.limit }

// Handlers are what the bus calls for other replicas' cancel and done messages.
type Handlers struct {
	Cancel func(runID, action string)
	Done   func(threadID, runID string)
}

// Handle sets what the bus calls for cancel and done messages; those that arrive before are
// dropped (no run of this process can be concerned yet).
func (b *Bus) Handle(h Handlers) { b.handlers.Store(&h) }

func newBus(kind string, log *slog.Logger) *Bus {
	return &Bus{kind: kind, log: log, subs: map[string]map[chan *Message]struct{}{}}
}

// NewRedisBus subscribes to the bus's channel on Redis and starts listening. The bus owns the
// client: Close closes it.
func NewRedisBus(ctx context.Context, client *redis.Client, log *slog.Logger) (*Bus, error) {
	b := newBus("redis", log)
	sub := client.Subscribe(ctx, Channel)
	if _, err := sub.Receive(ctx); err != nil {
		sub.Close()
		client.Close()
		return nil, fmt.Errorf("server: subscribe on Redis: %w", err)
	}
	b.publishF = func(ctx context.Context, payload string) error {
		return client.Publish(ctx, Channel, payload).Err()
	}
	b.publishManyF = func(ctx context.Context, payloads []string) error {
		_, err := client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, payload := range payloads {
				p.Publish(ctx, Channel, payload)
			}
			return nil
		})
		return err
	}
	lctx, cancel := context.WithCancel(context.Background())
	b.stop = func() { cancel(); sub.Close(); client.Close() }
	b.done.Add(1)
	go func() {
		defer b.done.Done()
		for m := range sub.Channel() {
			b.dispatch(m.Payload)
		}
		_ = lctx
	}()
	return b, nil
}

// NewPgBus listens with LISTEN on a connection of the pool's own, reconnecting when it drops,
// and publishes with NOTIFY.
func NewPgBus(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) (*Bus, error) {
	b := newBus("postgres", log)
	b.limit = pgNotifyLimit
	b.publishF = func(ctx context.Context, payload string) error {
		_, err := pool.Exec(ctx, `SELECT pg_notify($1, $2)`, Channel, payload)
		return err
	}
	b.publishManyF = func(ctx context.Context, payloads []string) error {
		_, err := pool.Exec(ctx, `SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p`, Channel, payloads)
		return err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, `LISTEN `+Channel); err != nil {
		conn.Release()
		return nil, fmt.Errorf("server: LISTEN: %w", err)
	}
	lctx, cancel := context.WithCancel(context.Background())
	b.stop = cancel
	b.done.Add(1)
	go func() {
		defer b.done.Done()
		for {
			n, err := conn.Conn().WaitForNotification(lctx)
			if err == nil {
				b.dispatch(n.Payload)
				continue
			}
			conn.Release()
			if lctx.Err() != nil {
				return
			}
			b.log.Warn("bus: LISTEN connection lost; reconnecting", "err", err)
			for {
				select {
				case <-lctx.Done():
					return
				case <-time.After(500 * time.Millisecond):
				}
				c, err := pool.Acquire(lctx)
				if err != nil {
					continue
				}
				if _, err := c.Exec(lctx, `LISTEN `+Channel); err != nil {
					c.Release()
					continue
				}
				conn = c
				break
			}
		}
	}()
	return b, nil
}

func (b *Bus) dispatch(payload string) {
	var m Message
	if err := json.Unmarshal([]byte(payload), &m); err != nil {
		return
	}
	switch m.Kind {
	case "cancel":
		if h := b.handlers.Load(); h != nil {
			h.Cancel(m.RunID, m.Action)
		}
	case "done":
		if h := b.handlers.Load(); h != nil {
			h.Done(m.Thread, m.RunID)
		}
	case "ev":
		b.deliver(m)
	case "evs":
		for _, ev := range m.Events {
			b.deliver(Message{Kind: "ev", RunID: ev.RunID, Seq: ev.Seq, Event: ev.Event, Data: ev.Data})
		}
	}
}

func (b *Bus) deliver(m Message) {
	b.mu.Lock()
	defer b.mu.Unlock()
	subs := b.subs[m.RunID]
	if len(subs) == 0 {
		return
	}
	p := &m // shared by the subscribers, which only read it
	for ch := range subs {
		select {
		case ch <- p:
		default: // the follower is behind; it will see the gap and read the database
		}
	}
}

// PublishEvents sends written events of any runs in as few messages as the bus's payload limit
// allows, all in one round trip. An event too large for a message goes without its data.
func (b *Bus) PublishEvents(ctx context.Context, batches []Batch) error {
	payloads := b.EventPayloads(batches)
	switch {
	case len(payloads) == 0:
		return nil
	case len(payloads) == 1 || b.publishManyF == nil:
		for _, p := range payloads {
			if err := b.publishF(ctx, p); err != nil {
				return err
			}
		}
		return nil
	default:
		return b.publishManyF(ctx, payloads)
	}
}

// EventPayloads encodes events as "evs" messages within the bus's payload limit.
func (b *Bus) EventPayloads(batches []Batch) []string {
	limit := b.limit
	if limit <= 0 {
		limit = RedisBatchLimit
	}
	const head, tail = `{"k":"evs","v":[`, `]}`
	var payloads []string
	buf := make([]byte, 0, 4096)
	buf = append(buf, head...)
	n := 0
	for _, bt := range batches {
		id, _ := json.Marshal(bt.RunID)
		for _, ev := range bt.Events {
			name, _ := json.Marshal(ev.Event)
			one := make([]byte, 0, 64+len(ev.Data))
			one = append(one, `{"r":`...)
			one = append(one, id...)
			one = append(one, `,"s":`...)
			one = strconv.AppendInt(one, ev.Seq, 10)
			one = append(one, `,"e":`...)
			one = append(one, name...)
			if len(head)+len(one)+len(`,"d":`)+len(ev.Data)+1+len(tail) <= limit {
				one = append(one, `,"d":`...)
				one = append(one, ev.Data...)
			}
			one = append(one, '}')
			if n > 0 && len(buf)+1+len(one)+len(tail) > limit {
				payloads = append(payloads, string(append(buf, tail...)))
				buf, n = append(buf[:0], head...), 0
			}
			if n > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, one...)
			n++
		}
	}
	if n > 0 {
		payloads = append(payloads, string(append(buf, tail...)))
	}
	return payloads
}

// Publish sends a message to every process on the bus (this one too); a message over the
// bus's payload limit goes without its data.
func (b *Bus) Publish(ctx context.Context, m Message) error {
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if b.limit > 0 && len(raw) > b.limit {
		m.Data = nil
		raw, _ = json.Marshal(m)
	}
	return b.publishF(ctx, string(raw))
}

// Subscribe returns the events published for a run until unsubscribe is called; a subscriber
// only reads the messages (all of a run's subscribers share each one). The channel holds
// pointers: every run created in a process with a bus is followed from its creation (Mirror),
// and a buffer of messages was 35 KB a run.
func (b *Bus) Subscribe(runID string) (<-chan *Message, func()) {
	ch := make(chan *Message, subscriberBuffer)
	b.mu.Lock()
	if b.subs[runID] == nil {
		b.subs[runID] = map[chan *Message]struct{}{}
	}
	b.subs[runID][ch] = struct{}{}
	b.mu.Unlock()
	return ch, func() {
		b.mu.Lock()
		delete(b.subs[runID], ch)
		if len(b.subs[runID]) == 0 {
			delete(b.subs, runID)
		}
		b.mu.Unlock()
	}
}

// subscriberBuffer is how many messages a subscriber may be behind before it loses some.
const subscriberBuffer = 256

// Close stops listening.
func (b *Bus) Close() {
	if b.stop != nil {
		b.stop()
	}
	b.done.Wait()
}
