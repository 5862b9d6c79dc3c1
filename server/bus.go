package server

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
	"github.com/trellis-go/trellis/server/internal/stream"
)

// The bus connects replicas sharing one database: the replica executing a run publishes each
// of its stream events, and any replica asked for that run's stream follows them (see
// Server.mirror); a cancellation asked of one replica reaches the one executing the run. It
// travels through Redis pub/sub when Config.RedisURL is set, else through Postgres
// LISTEN/NOTIFY. Messages may be lost (a slow subscriber, a reconnect): events are also in the
// database, and a follower that sees a gap reads them from there.

// busChannel is the one channel every replica listens on.
const busChannel = "trellis_bus"

// pgNotifyLimit keeps NOTIFY payloads under Postgres's 8000-byte limit; a larger event is sent
// without its data and read from the database.
const pgNotifyLimit = 7000

type busMsg struct {
	Kind   string          `json:"k"` // "ev", "evs", "cancel" or "done"
	RunID  string          `json:"r"`
	Thread string          `json:"t,omitempty"`
	Seq    int64           `json:"s,omitempty"`
	Event  string          `json:"e,omitempty"`
	Data   json.RawMessage `json:"d,omitempty"`
	Action string          `json:"a,omitempty"` // "interrupt" or "rollback"
	// Events are the events of an "evs" message, of any runs; an event without data is to be
	// read from the database.
	Events []busEvent `json:"v,omitempty"`
}

type busEvent struct {
	RunID string          `json:"r"`
	Seq   int64           `json:"s"`
	Event string          `json:"e"`
	Data  json.RawMessage `json:"d,omitempty"`
}

// redisBatchLimit bounds the payload of one "evs" message on Redis.
const redisBatchLimit = 1 << 20

type bus struct {
	kind     string // "redis" or "postgres"
	publishF func(ctx context.Context, payload string) error
	// publishManyF sends several payloads in one round trip.
	publishManyF func(ctx context.Context, payloads []string) error
	limit        int
	log          *slog.Logger
	// handlers are set once the runner exists, after the listener has started: notifications
	// from other replicas may already arrive, so they are read atomically.
	handlers atomic.Pointer[busHandlers]

	mu   sync.Mutex
	subs map[string]map[chan busMsg]struct{}

	stop context.CancelFunc
	done sync.WaitGroup
}

// busHandlers are what the bus calls for other replicas' cancel and done messages.
type busHandlers struct {
	cancel func(runID, action string)
	done   func(threadID, runID string)
}

// handle sets what the bus calls for cancel and done messages; those that arrive before are
// dropped (no run of this process can be concerned yet).
func (b *bus) handle(h busHandlers) { b.handlers.Store(&h) }

func newBus(kind string, log *slog.Logger) *bus {
	return &bus{kind: kind, log: log, subs: map[string]map[chan busMsg]struct{}{}}
}

// dialRedis connects to Redis at url and checks that it answers; purpose says what for, in the
// error.
func dialRedis(ctx context.Context, url, purpose string) (*redis.Client, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, &ConfigError{Field: "RedisURL", Problem: fmt.Sprintf("cannot be parsed: %v", err), Hint: "use redis://host:6379/0"}
	}
	client := redis.NewClient(opts)
	if err := client.Ping(ctx).Err(); err != nil {
		client.Close()
		return nil, fmt.Errorf("server: cannot reach Redis for %s: %w (is TRELLIS_REDIS_URL right and Redis up?)", purpose, err)
	}
	return client, nil
}

// newRedisBus connects to Redis at url and starts listening.
func newRedisBus(ctx context.Context, url string, log *slog.Logger) (*bus, error) {
	client, err := dialRedis(ctx, url, "the replicas' bus")
	if err != nil {
		return nil, err
	}
	b := newBus("redis", log)
	sub := client.Subscribe(ctx, busChannel)
	if _, err := sub.Receive(ctx); err != nil {
		sub.Close()
		client.Close()
		return nil, fmt.Errorf("server: subscribe on Redis: %w", err)
	}
	b.publishF = func(ctx context.Context, payload string) error {
		return client.Publish(ctx, busChannel, payload).Err()
	}
	b.publishManyF = func(ctx context.Context, payloads []string) error {
		_, err := client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, payload := range payloads {
				p.Publish(ctx, busChannel, payload)
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

// newPgBus listens with LISTEN on a connection of its own, reconnecting when it drops.
func newPgBus(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) (*bus, error) {
	b := newBus("postgres", log)
	b.limit = pgNotifyLimit
	b.publishF = func(ctx context.Context, payload string) error {
		_, err := pool.Exec(ctx, `SELECT pg_notify($1, $2)`, busChannel, payload)
		return err
	}
	b.publishManyF = func(ctx context.Context, payloads []string) error {
		_, err := pool.Exec(ctx, `SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p`, busChannel, payloads)
		return err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, `LISTEN `+busChannel); err != nil {
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
				if _, err := c.Exec(lctx, `LISTEN `+busChannel); err != nil {
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

func (b *bus) dispatch(payload string) {
	var m busMsg
	if err := json.Unmarshal([]byte(payload), &m); err != nil {
		return
	}
	switch m.Kind {
	case "cancel":
		if h := b.handlers.Load(); h != nil {
			h.cancel(m.RunID, m.Action)
		}
	case "done":
		if h := b.handlers.Load(); h != nil {
			h.done(m.Thread, m.RunID)
		}
	case "ev":
		b.deliver(m)
	case "evs":
		for _, ev := range m.Events {
			b.deliver(busMsg{Kind: "ev", RunID: ev.RunID, Seq: ev.Seq, Event: ev.Event, Data: ev.Data})
		}
	}
}

func (b *bus) deliver(m busMsg) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs[m.RunID] {
		select {
		case ch <- m:
		default: // the follower is behind; it will see the gap and read the database
		}
	}
}

// publishEvents sends written events of any runs in as few messages as the bus's payload limit
// allows, all in one round trip. An event too large for a message goes without its data.
func (b *bus) publishEvents(ctx context.Context, batches []eventBatch) error {
	payloads := b.eventPayloads(batches)
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

// eventPayloads encodes events as "evs" messages within the bus's payload limit.
func (b *bus) eventPayloads(batches []eventBatch) []string {
	limit := b.limit
	if limit <= 0 {
		limit = redisBatchLimit
	}
	const head, tail = `{"k":"evs","v":[`, `]}`
	var payloads []string
	buf := make([]byte, 0, 4096)
	buf = append(buf, head...)
	n := 0
	for _, bt := range batches {
		id, _ := json.Marshal(bt.runID)
		for _, ev := range bt.events {
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

func (b *bus) publish(ctx context.Context, m busMsg) error {
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

// subscribe returns the events published for a run until unsubscribe is called.
func (b *bus) subscribe(runID string) (<-chan busMsg, func()) {
	ch := make(chan busMsg, 256)
	b.mu.Lock()
	if b.subs[runID] == nil {
		b.subs[runID] = map[chan busMsg]struct{}{}
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

func (b *bus) close() {
	if b.stop != nil {
		b.stop()
	}
	b.done.Wait()
}

// mirror returns a log that follows a run executing in another process: it holds the events
// already in the database and appends those the bus brings, reading the database again whenever
// it sees a gap, and closes when the run ends (the "end" event, or a final status in the
// database, checked every second).
func (s *Server) mirror(run *Run) *stream.Log { return newMirror(s.hub, s.bus, s.meta, run, false) }

// newMirror is Server.mirror on the hub h, the bus b and the database meta; fresh says the run
// was just created, so that the database has none of its events yet (the subscription, made
// before this returns, sees every one).
func newMirror(h *stream.Hub, b *bus, meta *metaDB, run *Run, fresh bool) *stream.Log {
	l, created := h.OpenMirror(run.RunID)
	if !created {
		return l
	}
	ch, unsub := b.subscribe(run.RunID)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	l.StartMirror(func() { cancel(); <-stopped })
	go func() {
		defer close(stopped)
		defer unsub()
		fill := func() {
			evs, err := meta.loadEvents(ctx, run.RunID, l.Last())
			if err != nil {
				return
			}
			for _, ev := range evs {
				if ev.Seq == l.Last()+1 {
					l.Append(ev.Event, ev.Data)
				}
			}
		}
		finish := func() {
			fill()
			// The executing replica writes the run's final status just after its end event;
			// close once it is there, as a local run's log does, so that whoever was waiting
			// finds the status final.
			for range 100 {
				r, err := meta.runByID(ctx, run.RunID)
				if err != nil || (r.Status != RunPending && r.Status != RunRunning) {
					break
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
			if ctx.Err() != nil {
				// Stopped meanwhile: this process took the run, and the log is its now.
				return
			}
			l.Close()
		}
		if !fresh {
			fill()
		}
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case m := <-ch:
				switch {
				case m.Seq <= l.Last():
				case m.Seq == l.Last()+1 && m.Data != nil:
					l.Append(m.Event, m.Data)
				default:
					fill()
				}
				if m.Event == "end" {
					finish()
					return
				}
			case <-tick.C:
				r, err := meta.runByID(ctx, run.RunID)
				if ctx.Err() != nil {
					return // stopped: the query failed for that, not for the run
				}
				if err != nil || (r.Status != RunPending && r.Status != RunRunning) {
					finish()
					return
				}
			}
		}
	}()
	return l
}
