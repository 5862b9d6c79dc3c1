// Package rediscache is a [cache.Cache] in Redis (github.com/redis/go-redis/v9). Each value is
// a Redis string under Prefix, the namespace and the key; Redis expires entries itself.
package rediscache

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/trellis-go/trellis/cache"
)

// Options configure a cache.
type Options struct {
	// Prefix starts every Redis key the cache writes; empty means "trellis:cache:". Two caches
	// with different prefixes share a Redis without seeing each other's values.
	Prefix string
}

// Cache is a [cache.Cache] on Redis.
type Cache struct {
	rdb    redis.UniversalClient
	prefix string
}

var _ cache.Cache = (*Cache)(nil)

// New returns a cache on rdb; the caller keeps ownership of the client.
func New(rdb redis.UniversalClient, opts *Options) (*Cache, error) {
	if rdb == nil {
		return nil, errors.New("rediscache: no client: pass a *redis.Client (redis.NewClient)")
	}
	c := &Cache{rdb: rdb, prefix: "trellis:cache:"}
	if opts != nil && opts.Prefix != "" {
		c.prefix = opts.Prefix
	}
	return c, nil
}

// nsPart is a namespace as it appears in a Redis key: its length first, so that no namespace is
// a prefix of another's keys.
func (c *Cache) nsPart(ns string) string { return c.prefix + strconv.Itoa(len(ns)) + ":" + ns + ":" }

func (c *Cache) redisKey(k cache.Key) string { return c.nsPart(k.NS) + k.Key }

// Get implements [cache.Cache], in one MGET.
func (c *Cache) Get(ctx context.Context, keys []cache.Key) (map[cache.Key][]byte, error) {
	out := map[cache.Key][]byte{}
	if len(keys) == 0 {
		return out, nil
	}
	rk := make([]string, len(keys))
	for i, k := range keys {
		rk[i] = c.redisKey(k)
	}
	vals, err := c.rdb.MGet(ctx, rk...).Result()
	if err != nil {
		return nil, fmt.Errorf("rediscache: get: %w", err)
	}
	for i, v := range vals {
		if s, ok := v.(string); ok {
			out[keys[i]] = []byte(s)
		}
	}
	return out, nil
}

// Set implements [cache.Cache], in one pipeline.
func (c *Cache) Set(ctx context.Context, entries []cache.Entry) error {
	if err := cache.Validate(entries); err != nil {
		return err
	}
	_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, e := range entries {
			p.Set(ctx, c.redisKey(e.Key), e.Value, e.TTL)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("rediscache: set: %w", err)
	}
	return nil
}

// globEscape escapes the characters SCAN's MATCH treats as patterns.
var globEscape = strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`, `]`, `\]`)

// Clear implements [cache.Cache]: it scans for the namespaces' keys and deletes them.
func (c *Cache) Clear(ctx context.Context, namespaces []string) error {
	patterns := []string{globEscape.Replace(c.prefix) + "*"}
	if namespaces != nil {
		patterns = patterns[:0]
		for _, ns := range namespaces {
			patterns = append(patterns, globEscape.Replace(c.nsPart(ns))+"*")
		}
	}
	for _, pat := range patterns {
		iter := c.rdb.Scan(ctx, 0, pat, 500).Iterator()
		var batch []string
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			err := c.rdb.Del(ctx, batch...).Err()
			batch = batch[:0]
			return err
		}
		for iter.Next(ctx) {
			batch = append(batch, iter.Val())
			if len(batch) == 500 {
				if err := flush(); err != nil {
					return fmt.Errorf("rediscache: clear: %w", err)
				}
			}
		}
		if err := iter.Err(); err != nil {
			return fmt.Errorf("rediscache: clear: %w", err)
		}
		if err := flush(); err != nil {
			return fmt.Errorf("rediscache: clear: %w", err)
		}
	}
	return nil
}
