package pgcache_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trellis-go/trellis/cache"
	"github.com/trellis-go/trellis/cache/cachetest"
	"github.com/trellis-go/trellis/cache/pgcache"
)

func testURL() string {
	if u := os.Getenv("TRELLIS_TEST_POSTGRES"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable&connect_timeout=5"
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// pool returns a pool on a schema of the test's own, dropped at cleanup; it skips the test,
// saying so, when Postgres is unreachable.
func pool(t *testing.T) *pgxpool.Pool {
	ctx := context.Background()
	admin, err := pgxpool.New(ctx, testURL())
	if err == nil {
		err = admin.Ping(ctx)
	}
	if err != nil {
		if admin != nil {
			admin.Close()
		}
		t.Skipf("Postgres (%s) is unreachable: %v", testURL(), err)
	}
	schema := "pgcache_" + strings.ToLower(strings.NewReplacer("/", "_", "-", "_").Replace(t.Name()))
	schema = schema[:min(len(schema), 60)]
	if _, err := admin.Exec(ctx, fmt.Sprintf("DROP SCHEMA IF EXISTS %s CASCADE; CREATE SCHEMA %s", schema, schema)); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgxpool.ParseConfig(testURL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	cfg.MaxConns = 4
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Close()
		admin.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
		admin.Close()
	})
	return p
}

func TestConformance(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	cachetest.Run(t, cachetest.Options{
		New: func(t *testing.T) cache.Cache {
			c, err := pgcache.New(context.Background(), pool(t), &pgcache.Options{Now: clk.now})
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
		Advance: clk.advance,
	})
}
