package server

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// ErrLimited: the tenant is over its request rate or its open-stream limit.
var ErrLimited = errors.New("server: tenant over its limit")

// limits holds the per-tenant request rate limiters and open-stream counts: in Redis, shared
// with the other replicas, when Config.RedisURL is set (sharedLimits), else in this process. The
// process's own are also the fallback while Redis cannot be reached.
type limits struct {
	rate    rate.Limit
	burst   int
	streams int
	shared  *sharedLimits

	mu       sync.Mutex
	limiters map[string]*rate.Limiter
	open     map[string]int
}

func newLimits(cfg Config) *limits {
	burst := cfg.RateBurst
	if burst == 0 {
		burst = max(1, int(math.Ceil(2*cfg.RateLimit)))
	}
	return &limits{rate: rate.Limit(cfg.RateLimit), burst: burst, streams: cfg.MaxStreamsPerTenant,
		limiters: map[string]*rate.Limiter{}, open: map[string]int{}}
}

// allow takes one request from the tenant's budget, or answers how long to wait.
func (l *limits) allow(tenant string) (bool, time.Duration) {
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

func (l *limits) rateError(tenant string, wait time.Duration) *APIError {
	return &APIError{Status: http.StatusTooManyRequests, kind: ErrLimited,
		Message: fmt.Sprintf("tenant %q is over its rate of %g requests per second", tenant, float64(l.rate)),
		Hint:    fmt.Sprintf("retry after %s (the Retry-After header), or raise Config.RateLimit / --rate-limit", wait.Round(time.Millisecond))}
}

// openStream counts a stream of the tenant, or refuses it when the tenant has its maximum open.
// The returned function ends the stream.
func (l *limits) openStream(tenant string) (func(), error) {
	if l.streams <= 0 {
		return func() {}, nil
	}
	if l.shared != nil {
		if done, ok := l.shared.open(tenant, l.streams); ok {
			if done == nil {
				return nil, l.streamsError(tenant)
			}
			return done, nil
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[tenant] >= l.streams {
		return nil, l.streamsError(tenant)
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
	}, nil
}

func (l *limits) streamsError(tenant string) *APIError {
	return &APIError{Status: http.StatusTooManyRequests, kind: ErrLimited,
		Message: fmt.Sprintf("tenant %q already has %d streams open, its maximum", tenant, l.streams),
		Hint:    "close a stream (or a WebSocket) first, poll with join, or raise Config.MaxStreamsPerTenant / --max-streams-per-tenant"}
}

func retryAfter(w http.ResponseWriter, d time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(d.Seconds())))))
}
