package rediscache_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/trellis-go/trellis/cache"
	"github.com/trellis-go/trellis/cache/cachetest"
	"github.com/trellis-go/trellis/cache/rediscache"
)

// client returns a client on 127.0.0.1:6379, or skips the test, saying so, when Redis is
// unreachable.
func client(t *testing.T) *redis.Client {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		rdb.Close()
		t.Skipf("Redis at 127.0.0.1:6379 is unreachable: %v", err)
	}
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

func TestConformance(t *testing.T) {
	cachetest.Run(t, cachetest.Options{
		New: func(t *testing.T) cache.Cache {
			b := make([]byte, 6)
			rand.Read(b)
			// A prefix of the test's own, so runs never see each other's keys; cleared after.
			c, err := rediscache.New(client(t), &rediscache.Options{Prefix: "trellis:test:" + hex.EncodeToString(b) + ":"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Clear(context.Background(), nil) })
			return c
		},
	})
}

// TestPrefixesKeepApart: clearing one cache leaves another prefix's values.
func TestPrefixesKeepApart(t *testing.T) {
	ctx := context.Background()
	rdb := client(t)
	a, _ := rediscache.New(rdb, &rediscache.Options{Prefix: "trellis:test:a*:"})
	b, _ := rediscache.New(rdb, &rediscache.Options{Prefix: "trellis:test:ab:"})
	k := cache.Key{NS: "n", Key: "k"}
	for _, c := range []*rediscache.Cache{a, b} {
		if err := c.Set(ctx, []cache.Entry{{Key: k, Value: []byte("v")}}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { b.Clear(ctx, nil) })
	if err := a.Clear(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Get(ctx, []cache.Key{k}); len(got) != 1 {
		t.Fatalf("clearing prefix a* cleared ab: %q", got)
	}
}
