package graph

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
)

// START and END are the graph's virtual entry and exit.
const (
	START = "__start__"
	END   = "__end__"
)

// NodeFunc is the usual node: it reads a snapshot of the state and returns a partial update,
// in which every non-zero field is a write. (To write a zero value, or to bypass a reducer, use
// [Write] or [Overwrite].)
type NodeFunc[S any] func(ctx context.Context, state S) (S, error)

// CommandFunc is a node that also decides where to go next (see [Command]).
type CommandFunc[S any] func(ctx context.Context, state S) (*Command[S], error)

// Command is a node's update together with where execution goes next.
type Command[S any] struct {
	// Update is a partial state, as a NodeFunc returns.
	Update S
	// Goto lists the next nodes ([To]) and payloads to send ([Send]). Static edges out of the
	// node are followed as well.
	Goto []Target
	// Parent, when true, sends the command to the graph that contains this one as a subgraph:
	// Goto names the parent's nodes, and ParentUpdate (of the parent's state type) is applied to
	// the parent. Update is then ignored.
	Parent       bool
	ParentUpdate any
}

// Target is where execution goes: a node, or a node with its own payload.
type Target struct {
	Node string
	Arg  any // the payload of a Send; nil for a plain edge
	send bool
}

// To targets a node, which runs on the graph state.
func To(node string) Target { return Target{Node: node} }

// Send targets a node with its own payload, which it receives instead of the graph state. The
// payload must be of the graph's state type (or a pointer to it). Sending to one node several times
// in a superstep runs it once per payload, concurrently: this is how a graph fans out.
func Send(node string, arg any) Target { return Target{Node: node, Arg: arg, send: true} }

// RouteFunc picks the next node after a node finishes. With a path map the result is a key of the
// map; without one it is a node name (or END).
type RouteFunc[S any] func(ctx context.Context, state S) (string, error)

// RouterFunc picks any number of next nodes and sends.
type RouterFunc[S any] func(ctx context.Context, state S) ([]Target, error)

// RetryPolicy retries a failing node.
type RetryPolicy struct {
	// MaxAttempts counts the first attempt; 0 or 1 means no retry.
	MaxAttempts int
	// InitialInterval is the wait before the first retry; zero means 500ms.
	InitialInterval time.Duration
	// BackoffFactor multiplies the wait after each retry; zero means 2.
	BackoffFactor float64
	// MaxInterval caps the wait; zero means 128s.
	MaxInterval time.Duration
	// Jitter, when true, randomises each wait by up to ±25%.
	Jitter bool
	// RetryOn decides which errors are retried; nil retries every error except interrupts,
	// cancellation and deadline expiry of the run's context.
	RetryOn func(error) bool
}

// NodeOption configures a node.
type NodeOption func(*nodeSpec)

// WithRetry retries the node according to policies, in place of the graph's default
// ([NodeDefaults.Retry]). With several, a failure is retried by the first policy whose RetryOn
// accepts the error (as LangGraph's list of retry policies), up to that policy's MaxAttempts
// counted over all the node's attempts. WithRetry() with none turns a default off.
func WithRetry(policies ...RetryPolicy) NodeOption {
	return func(n *nodeSpec) { n.retry, n.retrySet = slices.Clone(policies), true }
}

// WithTimeout cancels the node's context after d, in place of the graph's default
// ([NodeDefaults.Timeout]); the node then fails with an error naming it. Zero turns a default off.
func WithTimeout(d time.Duration) NodeOption {
	return func(n *nodeSpec) { n.timeout, n.timeoutSet = d, true }
}

// WithIdleTimeout stops the node when it has produced nothing for d: no state write
// ([Write]), no custom event ([Emit]), no message chunk ([EmitMessage]), no event of a
// subgraph or of a task it runs. A streaming node thus runs as long as it streams, and one
// that hangs is stopped; it fails with an error naming it and the limit. It replaces the
// graph's default ([NodeDefaults.IdleTimeout]); zero turns a default off.
func WithIdleTimeout(d time.Duration) NodeOption {
	return func(n *nodeSpec) { n.idle, n.idleSet = d, true }
}

// OnError handles the node's failure once its retries are spent (an interrupt is not a
// failure): fn gets the node's input and the error, and returns the node's outcome in its
// place, a [Command] whose Update is written and whose Goto routes (the node's edges are
// followed as well; nil is an empty update), or an error, with which the node fails. The state
// type S must be the graph's.
func OnError[S any](fn func(ctx context.Context, state S, err error) (*Command[S], error)) NodeOption {
	return func(n *nodeSpec) {
		n.onErrorType = reflect.TypeFor[S]()
		n.onError = func(ctx context.Context, in reflect.Value, err error) (result, error) {
			cmd, herr := fn(ctx, mustAssert[S](in), err)
			if herr != nil || cmd == nil {
				return result{}, herr
			}
			if cmd.Parent {
				return result{isCmd: true, parent: &Command[any]{Goto: cmd.Goto, Parent: true, ParentUpdate: cmd.ParentUpdate}}, nil
			}
			return result{update: reflect.ValueOf(&cmd.Update).Elem(), updated: true, gotos: cmd.Goto, isCmd: true}, nil
		}
	}
}

// WithoutCache turns the graph's default cache policy ([NodeDefaults.Cache]) off for the node.
func WithoutCache() NodeOption { return func(n *nodeSpec) { n.cache, n.cacheSet = nil, true } }

// NodeDefaults are policies for every node of a graph that does not set its own
// ([CompileOptions.NodeDefaults]): a node's [WithRetry], [WithCache], [WithTimeout] and
// [WithIdleTimeout] override them.
type NodeDefaults struct {
	Retry       []RetryPolicy
	Cache       *CachePolicy
	Timeout     time.Duration
	IdleTimeout time.Duration
}

// CachePolicy caches a node's results (LangGraph's CachePolicy): a run whose node input has a
// cached result takes the cached writes instead of running the node, and streams the update
// with [Event.Cached] set (`"__metadata__": {"cached": true}` through the API). Results are kept
// in [CompileOptions.Cache], in a namespace of the graph's and node's names.
type CachePolicy struct {
	// Key makes the cache key from the node's input (the state, or a Send's payload, as the
	// node receives it). Nil hashes the input's JSON (SHA-256), so equal inputs share a result.
	Key func(input any) (string, error)
	// TTL is how long a result stays cached; zero keeps it until it is cleared
	// ([Compiled.ClearCache]).
	TTL time.Duration
}

// WithCache caches the node's results according to p (in [CompileOptions.Cache]; without a
// cache the policy is ignored).
func WithCache(p CachePolicy) NodeOption {
	return func(n *nodeSpec) { n.cache, n.cacheSet = &p, true }
}

// Deferred makes the node wait until no other node has work left in the run before it runs:
// useful for a final step after a fan-out whose branches have different lengths.
func Deferred() NodeOption { return func(n *nodeSpec) { n.deferred = true } }

// Destinations declares where a command node may go, for validation and drawing.
func Destinations(nodes ...string) NodeOption {
	return func(n *nodeSpec) { n.ends = append(n.ends, nodes...) }
}

// NodeMetadata attaches metadata to the node; it is reported with the node's stream events.
func NodeMetadata(md map[string]any) NodeOption { return func(n *nodeSpec) { n.metadata = md } }

type nodeSpec struct {
	name        string
	idx         int // the order in which the node was added
	run         func(ctx context.Context, state reflect.Value) (result, error)
	sub         subgraphRunner // non-nil for a subgraph node
	retry       []RetryPolicy
	cache       *CachePolicy
	timeout     time.Duration
	idle        time.Duration
	onError     func(ctx context.Context, in reflect.Value, err error) (result, error)
	onErrorType reflect.Type
	// set: the node chose its own policy, in place of the graph's default.
	retrySet, cacheSet, timeoutSet, idleSet bool
	deferred                                bool
	ends                                    []string
	metadata                                map[string]any
}

// result is what one run of a node produced.
type result struct {
	update  reflect.Value // a partial state, or invalid for none
	gotos   []Target
	parent  *Command[any] // a command for the parent graph
	isCmd   bool
	updated bool
}

type branch[S any] struct {
	route   RouteFunc[S]
	router  RouterFunc[S]
	pathMap map[string]string
	ends    []string // declared destinations of a router
}

type join struct {
	sources []string
	to      string
}

// Graph is a graph under construction. Build it with the Add methods, then [Graph.Compile] it.
// Mistakes found while building (an unknown reducer, a duplicate name) are reported by Compile,
// so the builder methods can be chained.
type Graph[S any] struct {
	schema   *schema
	nodes    map[string]*nodeSpec
	order    []string
	edges    map[string][]string // from -> to, in insertion order
	joins    []join
	branches map[string][]*branch[S]
	errs     []error
}

// New starts a graph whose state is the struct S (see the reducer constants for its tags).
func New[S any]() *Graph[S] {
	g := &Graph[S]{
		nodes:    map[string]*nodeSpec{},
		edges:    map[string][]string{},
		branches: map[string][]*branch[S]{},
	}
	sc, err := newSchema(reflect.TypeFor[S]())
	if err != nil {
		g.errs = append(g.errs, err)
		sc = &schema{typ: reflect.TypeFor[S](), byName: map[string]*channel{}}
	}
	g.schema = sc
	return g
}

func (g *Graph[S]) addNode(name string, n *nodeSpec, opts []NodeOption) *Graph[S] {
	switch {
	case name == "":
		g.errs = append(g.errs, fmt.Errorf("graph: a node needs a name"))
		return g
	case name == START || name == END || strings.HasPrefix(name, "__"):
		g.errs = append(g.errs, fmt.Errorf("graph: node name %q is reserved (names starting with __ belong to the runtime)", name))
		return g
	case strings.ContainsAny(name, "|:"):
		g.errs = append(g.errs, fmt.Errorf("graph: node name %q may not contain '|' or ':' (they separate namespaces)", name))
		return g
	}
	if _, dup := g.nodes[name]; dup {
		g.errs = append(g.errs, fmt.Errorf("graph: node %q is added twice", name))
		return g
	}
	if _, clash := g.schema.byName[name]; clash {
		g.errs = append(g.errs, fmt.Errorf("graph: node %q has the name of a state key; rename one of them", name))
		return g
	}
	n.name, n.idx = name, len(g.order)
	for _, o := range opts {
		o(n)
	}
	g.nodes[name] = n
	g.order = append(g.order, name)
	return g
}

// AddNode adds a node that returns a partial state update.
func (g *Graph[S]) AddNode(name string, fn NodeFunc[S], opts ...NodeOption) *Graph[S] {
	return g.addNode(name, &nodeSpec{run: func(ctx context.Context, st reflect.Value) (result, error) {
		out, err := fn(ctx, mustAssert[S](st))
		if err != nil {
			return result{}, err
		}
		return result{update: reflect.ValueOf(&out).Elem(), updated: true}, nil
	}}, opts)
}

// AddCommandNode adds a node that returns a [Command]: an update and where to go next. Declare
// its possible destinations with [Destinations] so Compile can check them and Mermaid can draw
// them.
func (g *Graph[S]) AddCommandNode(name string, fn CommandFunc[S], opts ...NodeOption) *Graph[S] {
	return g.addNode(name, &nodeSpec{run: func(ctx context.Context, st reflect.Value) (result, error) {
		cmd, err := fn(ctx, mustAssert[S](st))
		if err != nil || cmd == nil {
			return result{}, err
		}
		if cmd.Parent {
			return result{isCmd: true, parent: &Command[any]{Goto: cmd.Goto, Parent: true, ParentUpdate: cmd.ParentUpdate}}, nil
		}
		return result{update: reflect.ValueOf(&cmd.Update).Elem(), updated: true, gotos: cmd.Goto, isCmd: true}, nil
	}}, opts)
}

// AddEdge runs to after from. from may be START; to may be END.
func (g *Graph[S]) AddEdge(from, to string) *Graph[S] {
	g.edges[from] = append(g.edges[from], to)
	return g
}

// AddSequence adds edges through the named nodes in order: START is not implied.
func (g *Graph[S]) AddSequence(nodes ...string) *Graph[S] {
	for i := 1; i < len(nodes); i++ {
		g.AddEdge(nodes[i-1], nodes[i])
	}
	return g
}

// AddJoin runs to once every one of sources has finished (in the same superstep or in
// different ones).
func (g *Graph[S]) AddJoin(sources []string, to string) *Graph[S] {
	if len(sources) == 0 {
		g.errs = append(g.errs, fmt.Errorf("graph: join into %q has no sources", to))
		return g
	}
	g.joins = append(g.joins, join{sources: append([]string(nil), sources...), to: to})
	return g
}

// AddConditionalEdges routes from a node by the result of route: a key of pathMap when pathMap
// is not nil, otherwise a node name or END.
func (g *Graph[S]) AddConditionalEdges(from string, route RouteFunc[S], pathMap map[string]string) *Graph[S] {
	g.branches[from] = append(g.branches[from], &branch[S]{route: route, pathMap: pathMap})
	return g
}

// AddRouter routes from a node to any number of nodes and sends, as route decides. List the
// nodes it may reach in destinations so Compile can check them and Mermaid can draw them.
func (g *Graph[S]) AddRouter(from string, route RouterFunc[S], destinations ...string) *Graph[S] {
	g.branches[from] = append(g.branches[from], &branch[S]{router: route, ends: destinations})
	return g
}
