// Package cachetest is the conformance suite every [cache.Cache] passes.
package cachetest

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/cache"
)

// Options tell the suite how to drive a cache.
type Options struct {
	// New returns an empty cache.
	New func(t *testing.T) cache.Cache
	// Advance moves the cache's clock forward by d, for the expiry tests. A cache whose clock
	// cannot be moved (Redis expires keys itself) leaves it nil: the suite then waits for a
	// short-lived entry to disappear.
	Advance func(d time.Duration)
}

// Run runs the suite.
func Run(t *testing.T, o Options) {
	ctx := context.Background()
	k := func(ns, key string) cache.Key { return cache.Key{NS: ns, Key: key} }
	t.Run("SetGet", func(t *testing.T) {
		c := o.New(t)
		if err := c.Set(ctx, []cache.Entry{{Key: k("a", "1"), Value: []byte(`{"x":1}`)}, {Key: k("a", "2"), Value: []byte("two")}, {Key: k("b", "1"), Value: []byte{}}}); err != nil {
			t.Fatal(err)
		}
		got, err := c.Get(ctx, []cache.Key{k("a", "1"), k("a", "2"), k("b", "1"), k("a", "3"), k("c", "1")})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || string(got[k("a", "1")]) != `{"x":1}` || string(got[k("a", "2")]) != "two" {
			t.Fatalf("got %q", got)
		}
		if v, ok := got[k("b", "1")]; !ok || len(v) != 0 {
			t.Fatalf("an empty value should be cached: %q %v", v, ok)
		}
		// Set replaces.
		if err := c.Set(ctx, []cache.Entry{{Key: k("a", "1"), Value: []byte("new")}}); err != nil {
			t.Fatal(err)
		}
		got, _ = c.Get(ctx, []cache.Key{k("a", "1")})
		if !bytes.Equal(got[k("a", "1")], []byte("new")) {
			t.Fatalf("after replace: %q", got)
		}
		// Odd characters in names stay apart.
		if err := c.Set(ctx, []cache.Entry{{Key: k("n*|[x]", "k:*?"), Value: []byte("odd")}}); err != nil {
			t.Fatal(err)
		}
		got, _ = c.Get(ctx, []cache.Key{k("n*|[x]", "k:*?"), k("n*|[x]", "k:")})
		if len(got) != 1 || string(got[k("n*|[x]", "k:*?")]) != "odd" {
			t.Fatalf("odd names: %q", got)
		}
	})
	t.Run("Clear", func(t *testing.T) {
		c := o.New(t)
		for _, ns := range []string{"a", "b", "c", "a*"} {
			if err := c.Set(ctx, []cache.Entry{{Key: k(ns, "1"), Value: []byte(ns)}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Clear(ctx, []string{}); err != nil {
			t.Fatal(err)
		}
		all := []cache.Key{k("a", "1"), k("b", "1"), k("c", "1"), k("a*", "1")}
		if got, _ := c.Get(ctx, all); len(got) != 4 {
			t.Fatalf("an empty list cleared something: %q", got)
		}
		if err := c.Clear(ctx, []string{"a", "b"}); err != nil {
			t.Fatal(err)
		}
		got, _ := c.Get(ctx, all)
		if len(got) != 2 || got[k("c", "1")] == nil || got[k("a*", "1")] == nil {
			t.Fatalf("after clearing a and b: %q", got)
		}
		if err := c.Clear(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if got, _ := c.Get(ctx, all); len(got) != 0 {
			t.Fatalf("after clearing all: %q", got)
		}
	})
	t.Run("Validate", func(t *testing.T) {
		c := o.New(t)
		for _, e := range []cache.Entry{{Key: k("", "1")}, {Key: k("a", "")}, {Key: k("a", "1"), TTL: -time.Second}} {
			err := c.Set(ctx, []cache.Entry{e})
			if err == nil || !strings.Contains(err.Error(), "cache:") {
				t.Fatalf("Set(%+v) = %v, want a validation error", e, err)
			}
		}
	})
	t.Run("TTL", func(t *testing.T) {
		c := o.New(t)
		ttl := time.Hour
		if o.Advance == nil {
			ttl = 20 * time.Millisecond
		}
		if err := c.Set(ctx, []cache.Entry{{Key: k("a", "short"), Value: []byte("s"), TTL: ttl}, {Key: k("a", "forever"), Value: []byte("f")}}); err != nil {
			t.Fatal(err)
		}
		if o.Advance != nil {
			if got, _ := c.Get(ctx, []cache.Key{k("a", "short")}); len(got) != 1 {
				t.Fatalf("a live entry is missing: %q", got)
			}
			o.Advance(ttl + time.Second)
		} else {
			// Wait for the server to expire it (bounded, so a cache that never expires fails).
			deadline := time.Now().Add(10 * time.Second)
			for {
				got, err := c.Get(ctx, []cache.Key{k("a", "short")})
				if err != nil {
					t.Fatal(err)
				}
				if len(got) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("an entry with a 20ms TTL is still there after 10s")
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		got, err := c.Get(ctx, []cache.Key{k("a", "short"), k("a", "forever")})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || string(got[k("a", "forever")]) != "f" {
			t.Fatalf("after expiry: %q", got)
		}
	})
}
