package server

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/trellis-go/trellis/server/internal/engine"
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

// mirror returns a log that follows a run executing in another process (stream.Mirror).
func (s *Server) mirror(run *Run) *stream.Log {
	return stream.Mirror(s.hub, s.bus, engine.Events{DB: s.meta.DB}, run.RunID, false)
}
