// Package cache stores the results of cached graph nodes (see graph.CachePolicy), as
// LangGraph's BaseCache does: values under a namespace and a key, each with an optional time to
// live, and clearing by namespace.
//
// This package holds the interface and the in-memory cache; the SQLite, Postgres and Redis caches
// live in subpackages, and every cache passes the conformance suite in package cachetest.
package cache

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Key names a cached value: a namespace (the graph runtime uses one per node) and a key in it.
type Key struct {
	NS  string `json:"ns"`
	Key string `json:"key"`
}

// Entry is a value to cache. TTL is how long it lives; zero means until it is cleared.
type Entry struct {
	Key   Key
	Value []byte
	TTL   time.Duration
}

// Cache stores values by key. All methods are safe for concurrent use.
type Cache interface {
	// Get returns the values of the keys that are cached and have not expired; missing keys
	// are absent from the map.
	Get(ctx context.Context, keys []Key) (map[Key][]byte, error)
	// Set stores the entries, replacing values cached under the same keys.
	Set(ctx context.Context, entries []Entry) error
	// Clear deletes every value of the namespaces given, or of all namespaces when namespaces
	// is nil. An empty, non-nil list deletes nothing.
	Clear(ctx context.Context, namespaces []string) error
}

// Validate reports what makes entries unstorable: a key or namespace that is empty, or a
// negative TTL. Every cache checks it before storing anything.
func Validate(entries []Entry) error {
	for i, e := range entries {
		switch {
		case e.Key.NS == "":
			return fmt.Errorf("cache: entry %d has no namespace", i)
		case e.Key.Key == "":
			return fmt.Errorf("cache: entry %d (namespace %q) has no key", i, e.Key.NS)
		case e.TTL < 0:
			return fmt.Errorf("cache: entry %q/%q has a negative TTL %s; use zero for no expiry", e.Key.NS, e.Key.Key, e.TTL)
		}
	}
	return nil
}

// Memory is an in-memory [Cache], for tests and single-process deployments.
type Memory struct {
	mu  sync.Mutex
	m   map[Key]memEntry
	now func() time.Time
}

type memEntry struct {
	val     []byte
	expires time.Time // zero: never
}

// MemoryOptions configure a [Memory] cache.
type MemoryOptions struct {
	// Now is the clock expiry is measured with; nil means time.Now.
	Now func() time.Time
}

// NewMemory returns an empty in-memory cache.
func NewMemory(opts ...MemoryOptions) *Memory {
	c := &Memory{m: map[Key]memEntry{}, now: time.Now}
	if len(opts) > 0 && opts[0].Now != nil {
		c.now = opts[0].Now
	}
	return c
}

var _ Cache = (*Memory)(nil)

// Get implements [Cache].
func (c *Memory) Get(ctx context.Context, keys []Key) (map[Key][]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	out := map[Key][]byte{}
	for _, k := range keys {
		e, ok := c.m[k]
		if !ok {
			continue
		}
		if !e.expires.IsZero() && !now.Before(e.expires) {
			delete(c.m, k)
			continue
		}
		out[k] = slices.Clone(e.val)
	}
	return out, nil
}

// Set implements [Cache].
func (c *Memory) Set(ctx context.Context, entries []Entry) error {
	if err := Validate(entries); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for _, e := range entries {
		me := memEntry{val: slices.Clone(e.Value)}
		if e.TTL > 0 {
			me.expires = now.Add(e.TTL)
		}
		c.m[e.Key] = me
	}
	return nil
}

// Clear implements [Cache].
func (c *Memory) Clear(ctx context.Context, namespaces []string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if namespaces == nil {
		clear(c.m)
		return nil
	}
	for k := range c.m {
		if slices.Contains(namespaces, k.NS) {
			delete(c.m, k)
		}
	}
	return nil
}
