package sqlitecache_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/trellis-go/trellis/cache"
	"github.com/trellis-go/trellis/cache/cachetest"
	"github.com/trellis-go/trellis/cache/sqlitecache"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func TestConformance(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	cachetest.Run(t, cachetest.Options{
		New: func(t *testing.T) cache.Cache {
			c, err := sqlitecache.Open(context.Background(), filepath.Join(t.TempDir(), "cache.db"), &sqlitecache.Options{Now: clk.now})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			return c
		},
		Advance: clk.advance,
	})
}

func TestOpenRefusesMemory(t *testing.T) {
	if _, err := sqlitecache.Open(context.Background(), ":memory:", nil); err == nil {
		t.Fatal("want an error for :memory:")
	}
}
