// Package limits holds the server's per-tenant limits: a request rate and a number of open
// streams, kept in the process or, shared by the replicas, in Redis. The server turns a refusal
// into a 429 (server.ErrLimited).
package limits

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limits holds the per-tenant request rate limiters and open-stream counts: in Redis, shared
// with the other replicas, when it has a Shared (the server's Config.RedisURL), else in this
// process. The process's own are also the fallback while Redis cannot be reached.
type Limits struct {
	rate    rate.Limit
	burst   int
	streams int
	shared  *Shared

	mu       sync.Mutex
	limiters map[string]*rate.Limiter
	open     map[string]int
}

// New returns the limits of perSecond requests per tenant (none when it is not positive) with
// burst (zero means twice the rate, at least 1) and of streams open streams per tenant (none
// when it is not positive).
func New(perSecond float64, burst, streams int) *Limits {
	if burst == 0 {
		burst = max(1, int(math.Ceil(2*perSecond)))
	}
	return &Limits{rate: rate.Limit(perSecond), burst: burst, streams: streams,
		limiters: map[string]*rate.Limiter{}, open: map[string]int{}}
}

// Share keeps the limits in Redis from now on, falling back to the process's own while Redis
// cannot be reached. Call it before the limits are used.
func (l *Limits) Share(s *Shared) { l.shared = s }

// Rate is the requests per second a tenant may make.
func (l *Limits) Rate() float64 { return float64(l.rate) }

// Streams is the most streams a tenant may have open.
func (l *Limits) Streams() int { return l.streams }

// Allow takes one request from the tenant's budget, or answers how long to wait.
func (l *Limits) Allow(tenant string) (bool, time.Duration) {
	if l.rate <= 0 {
		return true, 0
	}
	if l.shared != nil {
		if allowed, wait, ok := l.shared.allow(tenant, float64(l.rate), l.burst); ok {
			return allowed, wait
		}
	}
	l.mu.Lock()
	lim := l.limiters[tenant]
	if lim == nil {
		lim = rate.NewLimiter(l.rate, l.burst)
		l.limiters[tenant] = lim
	}
	l.mu.Unlock()
	res := lim.Reserve()
	if d := res.Delay(); d > 0 {
		res.Cancel()
		return false, d
	}
	return true, 0
}

// OpenStream counts a stream of the tenant, or refuses it (ok false) when the tenant has its
// maximum open. The returned function ends the stream.
func (l *Limits) OpenStream(tenant string) (done func(), ok bool) {
	if l.streams <= 0 {
		return func() {}, true
	}
	if l.shared != nil {
		if done, ok := l.shared.open(tenant, l.streams); ok {
			return done, done != nil
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[tenant] >= l.streams {
		return nil, false
	}
	l.open[tenant]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			if l.open[tenant]--; l.open[tenant] <= 0 {
				delete(l.open, tenant)
			}
			l.mu.Unlock()
		})
	}, true
}
