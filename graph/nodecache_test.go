package graph_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trellis-go/trellis/cache"
	"github.com/trellis-go/trellis/cache/pgcache"
	"github.com/trellis-go/trellis/cache/rediscache"
	"github.com/trellis-go/trellis/cache/sqlitecache"
	"github.com/trellis-go/trellis/graph"
)

// caches returns the node caches the runtime is tested on.
func caches() map[string]func(t *testing.T) cache.Cache {
	return map[string]func(t *testing.T) cache.Cache{
		"memory": func(t *testing.T) cache.Cache { return cache.NewMemory() },
		"sqlite": func(t *testing.T) cache.Cache {
			c, err := sqlitecache.Open(bg, filepath.Join(t.TempDir(), "cache.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			return c
		},
		"postgres": func(t *testing.T) cache.Cache {
			c, err := pgcache.New(bg, pgTestPool(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
		"redis": func(t *testing.T) cache.Cache {
			rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
			if err := rdb.Ping(bg).Err(); err != nil {
				rdb.Close()
				t.Skipf("Redis at 127.0.0.1:6379 is unreachable, so the Redis case is skipped: %v", err)
			}
			b := make([]byte, 6)
			rand.Read(b)
			c, err := rediscache.New(rdb, &rediscache.Options{Prefix: "trellis:graphtest:" + hex.EncodeToString(b) + ":"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Clear(bg, nil); rdb.Close() })
			return c
		},
	}
}

// cachedGraph: START -> expensive (cached) -> cheap, counting the runs of each node.
func cachedGraph(t *testing.T, calls *counter, c cache.Cache, p graph.CachePolicy) *graph.Compiled[S] {
	g := graph.New[S]()
	g.AddNode("expensive", func(ctx context.Context, s S) (S, error) {
		calls.inc("expensive")
		return S{Answer: "answer to " + s.Answer, Count: 1}, nil
	}, graph.WithCache(p))
	g.AddNode("cheap", func(ctx context.Context, s S) (S, error) {
		calls.inc("cheap")
		return S{Notes: []string{"cheap"}}, nil
	}, graph.WithCache(graph.CachePolicy{}))
	g.AddSequence(graph.START, "expensive", "cheap", graph.END)
	return compile(t, g, graph.CompileOptions{Cache: c, Name: "cached"})
}

// TestNodeCacheHitStreamsCachedUpdate: the second run with the same input takes the cached
// result, and its update is marked cached, as LangGraph marks it in stream_mode updates.
func TestNodeCacheHitStreamsCachedUpdate(t *testing.T) {
	for name, mk := range caches() {
		t.Run(name, func(t *testing.T) {
			calls := newCounter()
			c := cachedGraph(t, calls, mk(t), graph.CachePolicy{})
			run := func(q string) ([]graph.Event, S) {
				t.Helper()
				var out S
				evs, err := collect(c.Stream(bg, S{Answer: q}, graph.WithStreamModes(graph.ModeUpdates, graph.ModeValues)))
				if err != nil {
					t.Fatal(err)
				}
				vals := ofMode(evs, graph.ModeValues)
				out = vals[len(vals)-1].Data.(S)
				return ofMode(evs, graph.ModeUpdates), out
			}
			ups1, out1 := run("q")
			ups2, out2 := run("q")
			if calls.get("expensive") != 1 || calls.get("cheap") != 1 {
				t.Fatalf("calls %v, want each node once", calls.n)
			}
			if out1.Answer != "answer to q" || out2.Answer != out1.Answer || out2.Count != 1 || !slices.Equal(out2.Notes, []string{"cheap"}) {
				t.Fatalf("outputs %+v / %+v", out1, out2)
			}
			for i, ev := range ups1 {
				if ev.Cached {
					t.Fatalf("first run update %d is marked cached", i)
				}
			}
			if len(ups2) != 2 || !ups2[0].Cached || !ups2[1].Cached || ups2[0].Node != "expensive" || ups2[0].Data.(S).Answer != "answer to q" {
				t.Fatalf("second run updates %+v, want both cached with their writes", ups2)
			}
			// Another input misses.
			run("other")
			if calls.get("expensive") != 2 {
				t.Fatalf("a new input should run the node: %v", calls.n)
			}
			// Clearing one node's cache runs it again, the other stays cached.
			if err := c.ClearCache(bg, "expensive"); err != nil {
				t.Fatal(err)
			}
			run("q")
			if calls.get("expensive") != 3 || calls.get("cheap") != 2 {
				t.Fatalf("after clearing expensive: %v", calls.n)
			}
			// Clearing all.
			if err := c.ClearCache(bg); err != nil {
				t.Fatal(err)
			}
			run("q")
			if calls.get("expensive") != 4 || calls.get("cheap") != 3 {
				t.Fatalf("after clearing all: %v", calls.n)
			}
		})
	}
}

// TestNodeCacheKeyFunctionAndTTL: a key function decides what counts as the same input; a
// result expires after its TTL.
func TestNodeCacheKeyFunctionAndTTL(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	mem := cache.NewMemory(cache.MemoryOptions{Now: clock})
	calls := newCounter()
	c := cachedGraph(t, calls, mem, graph.CachePolicy{
		Key: func(in any) (string, error) { return strings.ToLower(in.(S).Answer), nil },
		TTL: time.Minute,
	})
	for _, q := range []string{"Q", "q", "Q"} {
		if _, err := c.Invoke(bg, S{Answer: q}); err != nil {
			t.Fatal(err)
		}
	}
	if calls.get("expensive") != 1 {
		t.Fatalf("expensive ran %d times; the key function makes the inputs equal", calls.get("expensive"))
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	if _, err := c.Invoke(bg, S{Answer: "q"}); err != nil {
		t.Fatal(err)
	}
	if calls.get("expensive") != 2 {
		t.Fatalf("expensive ran %d times; its result should have expired", calls.get("expensive"))
	}
}

// TestNodeCacheErrors: bad key functions and ClearCache misuse are reported clearly; a failed
// node is not cached.
func TestNodeCacheErrors(t *testing.T) {
	calls := newCounter()
	c := cachedGraph(t, calls, cache.NewMemory(), graph.CachePolicy{Key: func(any) (string, error) { return "", nil }})
	_, err := c.Invoke(bg, S{})
	wantErr(t, err, `node "expensive"`, "empty key")
	wantErr(t, c.ClearCache(bg, "expensiv"), `unknown node "expensiv"`)

	g := graph.New[S]()
	fails := true
	g.AddNode("n", func(ctx context.Context, s S) (S, error) {
		calls.inc("n")
		if fails {
			return S{}, fmt.Errorf("boom")
		}
		return S{Answer: "ok"}, nil
	}, graph.WithCache(graph.CachePolicy{}))
	g.AddNode("plain", note("plain"))
	g.AddEdge(graph.START, "n")
	c2 := compile(t, g, graph.CompileOptions{Cache: cache.NewMemory()})
	if _, err := c2.Invoke(bg, S{}); err == nil {
		t.Fatal("want the node's error")
	}
	fails = false
	if out, err := c2.Invoke(bg, S{}); err != nil || out.Answer != "ok" || calls.get("n") != 2 {
		t.Fatalf("%+v %v calls %v: a failure must not be cached", out, err, calls.n)
	}
	wantErr(t, c2.ClearCache(bg, "plain"), `"plain" has no cache policy`)
	noCache := compile(t, graph.New[S]().AddNode("n", note("n")).AddEdge(graph.START, "n"))
	wantErr(t, noCache.ClearCache(bg), "no cache")
}

// TestNodeCacheHitsDoNotShareValues: hits on the same cached entry give each run values of its
// own, even when a run changes what it was given (a map in the state), and plain values come
// back right hit after hit.
func TestNodeCacheHitsDoNotShareValues(t *testing.T) {
	type S struct {
		N    int            `json:"n"`
		Tags map[string]int `json:"tags"`
	}
	runs := 0
	g := graph.New[S]()
	g.AddNode("a", func(_ context.Context, s S) (S, error) {
		runs++
		return S{N: s.N + 1, Tags: map[string]int{"x": 1}}, nil
	}, graph.WithCache(graph.CachePolicy{}))
	g.AddEdge(graph.START, "a")
	g.AddEdge("a", graph.END)
	c, err := g.Compile(graph.CompileOptions{Cache: cache.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		out, err := c.Invoke(bg, S{N: 41})
		if err != nil {
			t.Fatal(err)
		}
		if out.N != 42 || out.Tags["x"] != 1 || len(out.Tags) != 1 {
			t.Fatalf("run %d: %+v", i, out)
		}
		out.Tags["x"], out.Tags["y"] = 99, 99 // must not reach the next hit
	}
	if runs != 1 {
		t.Errorf("the node ran %d times, want once", runs)
	}
}
