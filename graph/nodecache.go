package graph

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/trellis-go/trellis/cache"
)

// cacheNS is the cache namespace of a node's results, as LangGraph's (writes, node).
func (c *Compiled[S]) cacheNS(node string) string { return "__writes__|" + c.name + "|" + node }

// cacheKey returns the cache key of t's input under its node's policy, or nil when the node is
// not cached.
func (l *loop[S]) cacheKey(t *task) (*cache.Key, error) {
	p := l.c.cacheOf(t.node)
	if p == nil || l.c.opts.Cache == nil || t.node == startNode {
		return nil, nil
	}
	var key string
	if p.Key != nil {
		k, err := p.Key(t.input.Interface())
		if err != nil {
			return nil, fmt.Errorf("graph: the cache key function of node %q: %w", t.node.name, err)
		}
		key = k
	} else {
		// Encoded into a reused buffer: only the hash is kept. The hash is of what json.Marshal
		// gives (without the encoder's newline), so keys stay those of earlier versions.
		buf := encodeBuffers.Get().(*bytes.Buffer)
		buf.Reset()
		err := json.NewEncoder(buf).Encode(t.input.Interface())
		if err != nil {
			encodeBuffers.Put(buf)
			return nil, fmt.Errorf("graph: the input of node %q cannot be hashed as its cache key (it does not encode as JSON: %v); give its CachePolicy a Key function", t.node.name, err)
		}
		sum := sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		if buf.Cap() <= maxPooledBuffer {
			encodeBuffers.Put(buf)
		}
		key = hex.EncodeToString(sum[:])
	}
	if key == "" {
		return nil, fmt.Errorf("graph: the cache key function of node %q returned an empty key", t.node.name)
	}
	return &cache.Key{NS: l.c.cacheNS(t.node.name), Key: key}, nil
}

// fromCache looks t's input up in the cache: on a hit it returns the node's writes and gotos
// as they were recorded.
func (l *loop[S]) fromCache(ctx context.Context, t *task, k *cache.Key) ([]write, []Target, bool, error) {
	got, err := l.c.opts.Cache.Get(ctx, []cache.Key{*k})
	if err != nil {
		return nil, nil, false, fmt.Errorf("graph: reading the cache of node %q: %w", t.node.name, err)
	}
	data, ok := got[*k]
	if !ok {
		return nil, nil, false, nil
	}
	if h, ok := l.c.hits.Load(t.node); ok {
		if h := h.(*decodedHit); h.data == string(data) {
			return slices.Clone(h.writes), slices.Clone(h.targets), true, nil
		}
	}
	var o wireOutcome
	if err := json.Unmarshal(data, &o); err != nil {
		return nil, nil, false, fmt.Errorf("graph: the cached result of node %q does not decode (clear it with ClearCache): %w", t.node.name, err)
	}
	tmp := &task{node: t.node}
	if err := l.decodeOutcome(tmp, o); err != nil {
		return nil, nil, false, fmt.Errorf("graph: the cached result of node %q no longer fits the state (clear it with ClearCache): %w", t.node.name, err)
	}
	if sharable(tmp.writes, tmp.targets) {
		l.c.hits.Store(t.node, &decodedHit{data: string(data), writes: tmp.writes, targets: tmp.targets})
	}
	return tmp.writes, tmp.targets, true, nil
}

// decodedHit is a node's last cache hit as fromCache decoded it. A node whose input has not
// changed hits the same entry again and again (a cache is for that), and decoding it is most of
// a hit's cost: the next hit on the same bytes takes these writes instead. Only values that
// hold no references are kept, so no run can change what another run is given.
type decodedHit struct {
	data    string
	writes  []write
	targets []Target
}

// sharable reports whether a decoded hit can be given to several runs: its values hold no
// pointers (numbers, strings, booleans, and arrays and structs of them) and it sends nothing.
func sharable(writes []write, targets []Target) bool {
	for _, tg := range targets {
		if tg.send {
			return false
		}
	}
	for _, w := range writes {
		if !plainValueType(w.val.Type()) {
			return false
		}
	}
	return true
}

func plainValueType(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String:
		return true
	case reflect.Array:
		return plainValueType(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !plainValueType(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}

// toCache records a node's writes and gotos under k.
func (l *loop[S]) toCache(ctx context.Context, t *task, k *cache.Key, writes []write, gotos []Target) error {
	data, err := encodeOutcome(l.sc, &task{node: t.node, writes: writes, targets: gotos})
	if err != nil {
		return err
	}
	if err := l.c.opts.Cache.Set(context.WithoutCancel(ctx), []cache.Entry{{Key: *k, Value: data, TTL: l.c.cacheOf(t.node).TTL}}); err != nil {
		return fmt.Errorf("graph: caching the result of node %q: %w", t.node.name, err)
	}
	return nil
}

// ClearCache deletes the cached results of the named nodes, or of every node with a cache
// policy when none is named (LangGraph's clear_cache).
func (c *Compiled[S]) ClearCache(ctx context.Context, nodes ...string) error {
	if c.opts.Cache == nil {
		return fmt.Errorf("%s: the graph has no cache (set CompileOptions.Cache)", c.label)
	}
	if len(nodes) == 0 {
		for _, n := range c.g.order {
			if c.cacheOf(c.g.nodes[n]) != nil {
				nodes = append(nodes, n)
			}
		}
	}
	nss := make([]string, 0, len(nodes))
	for _, n := range nodes {
		spec, ok := c.g.nodes[n]
		if !ok {
			return fmt.Errorf("%s: ClearCache names unknown node %q%s", c.label, n, suggest(n, c.g.order))
		}
		if c.cacheOf(spec) == nil {
			return fmt.Errorf("%s: node %q has no cache policy, so nothing of it is cached (add graph.WithCache)", c.label, n)
		}
		nss = append(nss, c.cacheNS(n))
	}
	if len(nss) == 0 {
		return nil
	}
	if err := c.opts.Cache.Clear(ctx, nss); err != nil {
		return fmt.Errorf("%s: clearing the cache: %w", c.label, err)
	}
	return nil
}
