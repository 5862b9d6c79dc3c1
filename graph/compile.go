package graph

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/trellis-go/trellis/cache"
	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/store"
)

// Durability says when checkpoints are written.
type Durability string

// Durability modes.
const (
	// DurabilitySync writes each superstep's checkpoint before the next superstep starts.
	DurabilitySync Durability = "sync"
	// DurabilityAsync writes checkpoints in the background while the next superstep runs; the run
	// waits for them before it returns.
	DurabilityAsync Durability = "async"
	// DurabilityExit writes one checkpoint when the run ends, is interrupted or fails.
	DurabilityExit Durability = "exit"
)

// CompileOptions configure a compiled graph. The zero value means: no checkpoints, no static
// interrupts, the whole state as input and output, unbounded concurrency, recursion limit 25.
type CompileOptions struct {
	// Name names the graph in stream events, Mermaid and errors; "graph" by default.
	Name string
	// Saver stores checkpoints; nil runs without persistence (threads, interrupts and history
	// then need a saver and fail without one). A subgraph without a Saver uses its parent's.
	Saver checkpoint.Saver
	// InterruptBefore and InterruptAfter stop the run before or after these nodes run.
	InterruptBefore []string
	InterruptAfter  []string
	// InputKeys and OutputKeys restrict which state keys input may set and output reports; empty
	// means all.
	InputKeys  []string
	OutputKeys []string
	// MaxConcurrency bounds how many nodes of one superstep run at once; zero means no bound.
	MaxConcurrency int
	// RecursionLimit bounds the supersteps of one run; zero means 25.
	RecursionLimit int
	// Durability is the default durability of runs; empty means DurabilitySync.
	Durability Durability
	// NodeDefaults are the retry, cache, timeout and idle timeout policies of every node that
	// does not set its own.
	NodeDefaults NodeDefaults
	// Cache keeps the results of nodes with a cache policy ([WithCache]); nil caches nothing.
	// See package cache and its subpackages for the backends.
	Cache cache.Cache
	// Store is handed to nodes through [StoreFrom]; the graph never reads it.
	Store store.Store
	// RequireEnd refuses to compile a graph with nodes from which no path reaches END (a loop
	// with no way out). LangGraph compiles such a graph, and its runs stop at the recursion
	// limit with GraphRecursionError; so does trellis by default, and [Compiled.Warnings] names
	// the nodes. Set it to catch the mistake at compile time instead.
	RequireEnd bool
	// ConfigType and ContextType describe what a run's configurable values ([Info].Config)
	// and its context ([WithContext], read with [Context]) may hold: a struct type whose JSON
	// Schema a server publishes as the graph's config_schema and context_schema (LangGraph's
	// config_schema and context_schema), so a UI can offer the fields. Nil declares none. The
	// runtime does not check configurable values against ConfigType; a run's context must be
	// a ContextType (or its JSON form, which is decoded into one).
	ConfigType  reflect.Type
	ContextType reflect.Type
}

// Compiled is a graph ready to run. It is safe for concurrent use: every run has its own state.
type Compiled[S any] struct {
	g        *Graph[S]
	opts     CompileOptions
	name     string
	label    string          // how errors name the graph: `graph` or `graph "name"`
	inputs   map[string]bool // nil: all keys
	outputs  []*channel      // nil: all keys
	joinsBy  map[string][]int
	joinFrom map[string][]string // join target -> its sources (for graph descriptions)
	warnings []string
	// valuesOnOutput streams values only after a superstep that wrote an output key, and present
	// turns the state (or an update) into what values and updates events carry: both are set by
	// entrypoints (functional.go), whose events carry their return value.
	valuesOnOutput bool
	present        func(reflect.Value) any
	// view shows an entrypoint's internal state as LangGraph shows an entrypoint's, in
	// snapshots read through a parent, checkpoint events and task events; nil for a graph.
	view *entryView
	// hits holds each cached node's last cache hit, decoded (see fromCache): *nodeSpec ->
	// *decodedHit.
	hits sync.Map
}

// entryView is how an entrypoint's state (functional.go) is shown: state gives its return value
// (nil before it has one, as LangGraph's null), input the input the entrypoint was called with.
type entryView struct {
	state func(reflect.Value) any
	input func(reflect.Value) any
}

// retryOf, cacheOf, timeoutOf and idleOf are a node's policies: its own, or the graph's
// defaults.
func (c *Compiled[S]) retryOf(n *nodeSpec) []RetryPolicy {
	if n.retrySet {
		return n.retry
	}
	return c.opts.NodeDefaults.Retry
}

func (c *Compiled[S]) cacheOf(n *nodeSpec) *CachePolicy {
	if n.cacheSet || n == startNode {
		return n.cache
	}
	return c.opts.NodeDefaults.Cache
}

func (c *Compiled[S]) timeoutOf(n *nodeSpec) time.Duration {
	if n.timeoutSet {
		return n.timeout
	}
	return c.opts.NodeDefaults.Timeout
}

func (c *Compiled[S]) idleOf(n *nodeSpec) time.Duration {
	if n.idleSet {
		return n.idle
	}
	return c.opts.NodeDefaults.IdleTimeout
}

// Warnings lists what Compile found suspicious but allowed, such as nodes that cannot reach END
// (see [CompileOptions.RequireEnd]). Empty for a graph with nothing to report.
func (c *Compiled[S]) Warnings() []string { return slices.Clone(c.warnings) }

// Compile checks the graph and returns it ready to run. Every mistake found is reported, each
// naming the nodes, edges or keys at fault.
func (g *Graph[S]) Compile(opts ...CompileOptions) (*Compiled[S], error) {
	var o CompileOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	errs := slices.Clone(g.errs)
	isNode := func(n string) bool { _, ok := g.nodes[n]; return ok }
	dest := func(what, n string) {
		if n != END && !isNode(n) {
			errs = append(errs, fmt.Errorf("graph: %s names unknown node %q%s", what, n, suggest(n, g.order)))
		}
	}
	src := func(what, n string) {
		if n != START && !isNode(n) {
			errs = append(errs, fmt.Errorf("graph: %s starts at unknown node %q%s", what, n, suggest(n, g.order)))
		}
	}
	for _, name := range g.order {
		if t := g.nodes[name].onErrorType; t != nil && t != g.schema.typ {
			errs = append(errs, fmt.Errorf("graph: node %q: its error handler takes state %s, but the graph's state is %s", name, t, g.schema.typ))
		}
	}
	for _, from := range sortedKeys(g.edges) {
		for _, to := range g.edges[from] {
			what := fmt.Sprintf("edge %s -> %s", from, to)
			src(what, from)
			dest(what, to)
			if to == START {
				errs = append(errs, fmt.Errorf("graph: %s: no edge may lead into START", what))
			}
		}
	}
	for _, j := range g.joins {
		what := fmt.Sprintf("join [%s] -> %s", strings.Join(j.sources, ", "), j.to)
		for _, s := range j.sources {
			if !isNode(s) {
				errs = append(errs, fmt.Errorf("graph: %s waits on unknown node %q%s", what, s, suggest(s, g.order)))
			}
		}
		dest(what, j.to)
	}
	for _, from := range sortedKeys(g.branches) {
		for _, b := range g.branches[from] {
			what := fmt.Sprintf("conditional edge from %s", from)
			src(what, from)
			for _, key := range sortedKeys(b.pathMap) {
				dest(fmt.Sprintf("%s (path %q)", what, key), b.pathMap[key])
			}
			for _, e := range b.ends {
				dest(what, e)
			}
		}
	}
	for _, name := range g.order {
		for _, e := range g.nodes[name].ends {
			dest(fmt.Sprintf("node %s's destinations", name), e)
		}
	}
	if len(g.edges[START]) == 0 && len(g.branches[START]) == 0 {
		errs = append(errs, errors.New("graph: nothing leaves START: add an edge from START to the first node"))
	}
	for _, lists := range [][]string{o.InterruptBefore, o.InterruptAfter} {
		for _, n := range lists {
			if !isNode(n) {
				errs = append(errs, fmt.Errorf("graph: interrupt names unknown node %q%s", n, suggest(n, g.order)))
			}
		}
	}
	keys := func(what string, names []string) map[string]bool {
		if len(names) == 0 {
			return nil
		}
		m := map[string]bool{}
		for _, k := range names {
			if _, ok := g.schema.byName[k]; !ok {
				errs = append(errs, fmt.Errorf("graph: %s names unknown state key %q", what, k))
			}
			m[k] = true
		}
		return m
	}
	inputs := keys("InputKeys", o.InputKeys)
	outKeys := keys("OutputKeys", o.OutputKeys)
	var warnings []string
	if len(errs) == 0 {
		if stuck := g.cannotFinish(); len(stuck) > 0 {
			msg := fmt.Sprintf("graph: nodes %s cannot reach END: every path from them loops until the recursion limit (add an edge or a route to END)", strings.Join(stuck, ", "))
			if o.RequireEnd {
				errs = append(errs, errors.New(msg))
			} else {
				warnings = append(warnings, msg)
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	c := &Compiled[S]{g: g, opts: o, name: o.Name, inputs: inputs, joinsBy: map[string][]int{}, joinFrom: map[string][]string{}, warnings: warnings}
	c.label = "graph"
	if c.name == "" {
		c.name = "graph"
	} else {
		c.label = fmt.Sprintf("graph %q", c.name)
	}
	for _, ch := range g.schema.channels {
		if outKeys == nil || outKeys[ch.name] {
			c.outputs = append(c.outputs, ch)
		}
	}
	if outKeys == nil {
		c.outputs = nil
	}
	for i, j := range g.joins {
		for _, s := range j.sources {
			c.joinsBy[s] = append(c.joinsBy[s], i)
		}
		c.joinFrom[j.to] = j.sources
	}
	return c, nil
}

// successors returns where execution may go after a node, and whether that set is open (a route
// without declared destinations may go anywhere).
func (g *Graph[S]) successors(n string) (out []string, open bool) {
	out = append(out, g.edges[n]...)
	for _, j := range g.joins {
		if slices.Contains(j.sources, n) {
			out = append(out, j.to)
		}
	}
	for _, b := range g.branches[n] {
		switch {
		case b.pathMap != nil:
			for _, k := range sortedKeys(b.pathMap) {
				out = append(out, b.pathMap[k])
			}
		case len(b.ends) > 0:
			out = append(out, b.ends...)
		default:
			open = true
		}
	}
	if spec := g.nodes[n]; spec != nil {
		out = append(out, spec.ends...)
	}
	return out, open
}

// cannotFinish lists the nodes reachable from START from which no path reaches END or a node
// with no way out (which ends the run). It walks the edges backwards from the ways out, so it is
// linear in the size of the graph.
func (g *Graph[S]) cannotFinish() []string {
	reach := map[string]bool{}
	preds := map[string][]string{}
	stack := []string{START}
	var exits []string
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		next, open := g.successors(n)
		if n != START && (open || len(next) == 0 || g.nodes[n].deferred) {
			exits = append(exits, n)
		}
		for _, m := range next {
			if m == END {
				exits = append(exits, n)
				continue
			}
			preds[m] = append(preds[m], n)
			if !reach[m] {
				reach[m] = true
				stack = append(stack, m)
			}
		}
	}
	finishes := map[string]bool{}
	for len(exits) > 0 {
		n := exits[len(exits)-1]
		exits = exits[:len(exits)-1]
		if finishes[n] {
			continue
		}
		finishes[n] = true
		exits = append(exits, preds[n]...)
	}
	var stuck []string
	for n := range reach {
		if !finishes[n] {
			stuck = append(stuck, n)
		}
	}
	sort.Strings(stuck)
	return stuck
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// suggest returns " (did you mean X?)" for the known name closest to n, if any is close.
func suggest(n string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(n, k); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Name returns the graph's name.
func (c *Compiled[S]) Name() string { return c.name }

// Nodes returns the graph's node names in the order they were added.
func (c *Compiled[S]) Nodes() []string { return slices.Clone(c.g.order) }

// StateType returns the reflected state type, for tools that describe graphs (schemas, UIs).
func (c *Compiled[S]) StateType() reflect.Type { return c.g.schema.typ }

// ConfigType returns [CompileOptions.ConfigType]: the type of a run's configurable values, or nil.
func (c *Compiled[S]) ConfigType() reflect.Type { return c.opts.ConfigType }

// ContextType returns [CompileOptions.ContextType]: the type of a run's context, or nil.
func (c *Compiled[S]) ContextType() reflect.Type { return c.opts.ContextType }

// InputKeys returns the state keys input may set (all of them when not restricted).
func (c *Compiled[S]) InputKeys() []string {
	var out []string
	for _, ch := range c.g.schema.channels {
		if c.inputs == nil || c.inputs[ch.name] {
			out = append(out, ch.name)
		}
	}
	return out
}

// OutputKeys returns the state keys output reports.
func (c *Compiled[S]) OutputKeys() []string {
	chs := c.outputs
	if chs == nil {
		chs = c.g.schema.channels
	}
	out := make([]string, len(chs))
	for i, ch := range chs {
		out[i] = ch.name
	}
	return out
}
