package server

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trellis-go/trellis/server/internal/stream"
)

// The bus (stream.Bus) connects replicas sharing one database: the replica executing a run
// publishes each of its stream events, and any replica asked for that run's stream follows them
// (see Server.mirror); a cancellation asked of one replica reaches the one executing the run. It
// travels through Redis pub/sub when Config.RedisURL is set, else through Postgres
// LISTEN/NOTIFY. Messages may be lost (a slow subscriber, a reconnect): events are also in the
// database, and a follower that sees a gap reads them from there.

// busChannel is the one channel every replica listens on.
const busChannel = stream.Channel

// newRedisBus connects to Redis at url and starts listening.
func newRedisBus(ctx context.Context, url string, log *slog.Logger) (*stream.Bus, error) {
	client, err := dialRedis(ctx, url, "the replicas' bus")
	if err != nil {
		return nil, err
	}
	return stream.NewRedisBus(ctx, client, log)
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

// mirror returns a log that follows a run executing in another process: it holds the events
// already in the database and appends those the bus brings, reading the database again whenever
// it sees a gap, and closes when the run ends (the "end" event, or a final status in the
// database, checked every second).
func (s *Server) mirror(run *Run) *stream.Log { return newMirror(s.hub, s.bus, s.meta, run, false) }

// newMirror is Server.mirror on the hub h, the bus b and the database meta; fresh says the run
// was just created, so that the database has none of its events yet (the subscription, made
// before this returns, sees every one).
func newMirror(h *stream.Hub, b *stream.Bus, meta *metaStore, run *Run, fresh bool) *stream.Log {
	l, created := h.OpenMirror(run.RunID)
	if !created {
		return l
	}
	ch, unsub := b.Subscribe(run.RunID)
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
