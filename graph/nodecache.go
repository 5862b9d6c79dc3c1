package graph

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

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
		data, err := json.Marshal(t.input.Interface())
		if err != nil {
			return nil, fmt.Errorf("graph: the input of node %q cannot be hashed as its cache key (it does not encode as JSON: %v); give its CachePolicy a Key function", t.node.name, err)
		}
		sum := sha256.Sum256(data)
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
	var o wireOutcome
	if err := json.Unmarshal(data, &o); err != nil {
		return nil, nil, false, fmt.Errorf("graph: the cached result of node %q does not decode (clear it with ClearCache): %w", t.node.name, err)
	}
	tmp := &task{node: t.node}
	if err := l.decodeOutcome(tmp, o); err != nil {
		return nil, nil, false, fmt.Errorf("graph: the cached result of node %q no longer fits the state (clear it with ClearCache): %w", t.node.name, err)
	}
	return tmp.writes, tmp.targets, true, nil
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
