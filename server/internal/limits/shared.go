package limits

import (
	"context"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/trellis-go/trellis/server/internal/periodic"
)

// Shared keeps the tenants' request rates and open streams in Redis, so that the replicas
// sharing it hold each tenant to one limit together rather than one limit each.
//
// A tenant's rate is a generic cell rate algorithm over Redis's own clock: one key holds the
// time at which the tenant's bucket would be full again. A tenant's open streams are the members
// of a sorted set, each scored with the time its lease ends; the process holding a stream renews
// its lease every streamLease/3, and a stream whose process died without closing it stops
// counting when its lease ends. Every check and change is one script, atomic in Redis.
//
// When Redis cannot be reached the process falls back to its own limits (Limits), and says so in
// its log at most once a minute: a tenant may then get up to one limit per replica.
type Shared struct {
	client  *redis.Client
	replica string
	log     *slog.Logger

	mu   sync.Mutex
	mine map[string]map[string]bool // tenant -> stream members this process holds

	lastWarn atomic.Int64 // unix seconds of the last fallback warning
	closed   atomic.Bool
	stop     func() // stops the renewals
}

// streamLease is how long a stream counts after its process last renewed it.
const streamLease = 30 * time.Second

// redisOpTimeout bounds a limit check: a slow Redis must not hold requests up.
const redisOpTimeout = 500 * time.Millisecond

func rateKey(tenant string) string    { return "trellis:limits:rate:" + tenant }
func streamsKey(tenant string) string { return "trellis:limits:streams:" + tenant }

// rateScript takes one request from a tenant's bucket. ARGV: the interval between requests at
// the tenant's rate and the burst, in microseconds and requests. It returns 0 when the request
// may go, else the microseconds to wait.
var rateScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local after = tat + interval
local wait = after - interval * burst - now
if wait > 0 then return math.ceil(wait) end
redis.call('SET', KEYS[1], string.format('%.0f', after), 'PX', math.ceil((after - now) / 1000) + 1)
return 0
`)

// openScript counts a new stream when the tenant has fewer than its limit open. ARGV: the
// stream's member, the limit, the lease in milliseconds. It returns 1 when counted, else 0.
var openScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1
`)

// renewScript extends the leases of the given members (those still in the set) by ARGV[1]
// milliseconds from now.
var renewScript = redis.NewScript(`
local t = redis.call('TIME')
local until_ = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], 'XX', until_, ARGV[i])
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]))
return 0
`)

// NewShared keeps the limits in Redis through client, which it closes on Close. It renews
// its streams' leases every streamLease/3 until then.
func NewShared(client *redis.Client, log *slog.Logger) *Shared {
	l := &Shared{client: client, replica: uuid.NewString(), log: log, mine: map[string]map[string]bool{}}
	l.stop = periodic.Every(streamLease/3, l.renew)
	return l
}

// fallback logs, at most once a minute, that Redis failed and the process's own limits apply.
func (l *Shared) fallback(what string, err error) {
	now := time.Now().Unix()
	if last := l.lastWarn.Load(); now-last >= 60 && l.lastWarn.CompareAndSwap(last, now) {
		l.log.Warn("cannot reach Redis for the tenants' limits; this process applies its own until it can", "check", what, "err", err)
	}
}

// allow reports whether the tenant may make one more request at rate per second with burst,
// and how long to wait if not; ok is false when Redis could not answer.
func (l *Shared) allow(tenant string, perSecond float64, burst int) (allowed bool, wait time.Duration, ok bool) {
	ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
	defer cancel()
	interval := math.Max(1, math.Round(1e6/perSecond))
	n, err := rateScript.Run(ctx, l.client, []string{rateKey(tenant)}, strconv.FormatFloat(interval, 'f', 0, 64), burst).Int64()
	if err != nil {
		l.fallback("rate", err)
		return false, 0, false
	}
	if n > 0 {
		return false, time.Duration(n) * time.Microsecond, true
	}
	return true, 0, true
}

// open counts a stream of the tenant against limit; it returns the function that ends it, nil
// when the tenant has its limit open, and ok false when Redis could not answer.
func (l *Shared) open(tenant string, limit int) (done func(), ok bool) {
	ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
	defer cancel()
	member := l.replica + ":" + uuid.NewString()
	n, err := openScript.Run(ctx, l.client, []string{streamsKey(tenant)}, member, limit, streamLease.Milliseconds()).Int64()
	if err != nil {
		l.fallback("streams", err)
		return nil, false
	}
	if n == 0 {
		return nil, true
	}
	l.mu.Lock()
	if l.mine[tenant] == nil {
		l.mine[tenant] = map[string]bool{}
	}
	l.mine[tenant][member] = true
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			delete(l.mine[tenant], member)
			if len(l.mine[tenant]) == 0 {
				delete(l.mine, tenant)
			}
			l.mu.Unlock()
			if l.closed.Load() {
				return // close ended it
			}
			ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
			defer cancel()
			if err := l.client.ZRem(ctx, streamsKey(tenant), member).Err(); err != nil {
				l.fallback("closing a stream", err) // its lease ends it
			}
		})
	}, true
}

// renew renews the leases of this process's open streams.
func (l *Shared) renew(ctx context.Context) {
	l.mu.Lock()
	batches := map[string][]any{}
	for tenant, members := range l.mine {
		args := []any{streamLease.Milliseconds()}
		for m := range members {
			args = append(args, m)
		}
		batches[tenant] = args
	}
	l.mu.Unlock()
	if len(batches) == 0 {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := l.client.Pipelined(rctx, func(p redis.Pipeliner) error {
		for tenant, args := range batches {
			renewScript.Eval(rctx, p, []string{streamsKey(tenant)}, args...) // EVALSHA cannot fall back in a pipeline
		}
		return nil
	})
	if err != nil && ctx.Err() == nil {
		l.fallback("renewing streams", err)
	}
}

// Close stops the renewals and ends this process's streams in Redis.
func (l *Shared) Close() {
	l.closed.Store(true)
	l.stop()
	l.mu.Lock()
	mine := l.mine
	l.mine = map[string]map[string]bool{}
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, _ = l.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for tenant, members := range mine {
			for m := range members {
				p.ZRem(ctx, streamsKey(tenant), m)
			}
		}
		return nil
	})
	l.client.Close()
}
