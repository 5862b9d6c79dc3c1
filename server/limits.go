package server

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/trellis-go/trellis/server/internal/limits"
)

// ErrLimited: the tenant is over its request rate or its open-stream limit.
var ErrLimited = errors.New("server: tenant over its limit")

// tenantLimits are the per-tenant request rates and open streams (package internal/limits),
// answering refusals as the API's 429s.
type tenantLimits struct {
	*limits.Limits
}

func newLimits(cfg Config) *tenantLimits {
	return &tenantLimits{limits.New(cfg.RateLimit, cfg.RateBurst, cfg.MaxStreamsPerTenant)}
}

// allow takes one request from the tenant's budget, or answers how long to wait.
func (l *tenantLimits) allow(tenant string) (bool, time.Duration) { return l.Allow(tenant) }

func (l *tenantLimits) rateError(tenant string, wait time.Duration) *APIError {
	return &APIError{Status: http.StatusTooManyRequests, kind: ErrLimited,
		Message: fmt.Sprintf("tenant %q is over its rate of %g requests per second", tenant, l.Rate()),
		Hint:    fmt.Sprintf("retry after %s (the Retry-After header), or raise Config.RateLimit / --rate-limit", wait.Round(time.Millisecond))}
}

// openStream counts a stream of the tenant, or refuses it when the tenant has its maximum open.
// The returned function ends the stream.
func (l *tenantLimits) openStream(tenant string) (func(), error) {
	done, ok := l.OpenStream(tenant)
	if !ok {
		return nil, l.streamsError(tenant)
	}
	return done, nil
}

func (l *tenantLimits) streamsError(tenant string) *APIError {
	return &APIError{Status: http.StatusTooManyRequests, kind: ErrLimited,
		Message: fmt.Sprintf("tenant %q already has %d streams open, its maximum", tenant, l.Streams()),
		Hint:    "close a stream (or a WebSocket) first, poll with join, or raise Config.MaxStreamsPerTenant / --max-streams-per-tenant"}
}

func retryAfter(w http.ResponseWriter, d time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(d.Seconds())))))
}
