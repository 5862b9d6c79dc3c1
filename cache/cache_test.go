package cache_test

import (
	"sync"
	"testing"
	"time"

	"github.com/trellis-go/trellis/cache"
	"github.com/trellis-go/trellis/cache/cachetest"
)

// clock is a clock the test moves by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func TestMemory(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	cachetest.Run(t, cachetest.Options{
		New:     func(t *testing.T) cache.Cache { return cache.NewMemory(cache.MemoryOptions{Now: clk.now}) },
		Advance: clk.advance,
	})
}
