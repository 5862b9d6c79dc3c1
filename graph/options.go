package graph

import (
	"maps"

	"go.opentelemetry.io/otel/trace"
)

// RunOption configures one run.
type RunOption func(*runOptions)

type runOptions struct {
	threadID        string
	checkpointID    string
	resume          any
	hasResume       bool
	resumeMap       map[string]any
	proceed         bool
	modes           []StreamMode
	subgraphs       bool
	recursionLimit  int
	interruptBefore []string
	interruptAfter  []string
	durability      Durability
	metadata        map[string]any
	config          map[string]any
	context         any
	hasContext      bool
	maxConcurrency  int
	tracer          trace.Tracer
}

// WithThread runs on the thread with this ID: its state is loaded from the saver and every
// superstep is checkpointed to it.
func WithThread(id string) RunOption { return func(o *runOptions) { o.threadID = id } }

// FromCheckpoint starts from this checkpoint of the thread instead of its newest: the run forks
// the thread's history there.
func FromCheckpoint(id string) RunOption { return func(o *runOptions) { o.checkpointID = id } }

// Resume continues a thread paused at one interrupt; the interrupt call returns value. The input
// passed with it is ignored.
func Resume(value any) RunOption {
	return func(o *runOptions) { o.resume, o.hasResume, o.proceed = value, true, true }
}

// ResumeMap continues a thread paused at several interrupts, giving each its value by ID.
func ResumeMap(values map[string]any) RunOption {
	return func(o *runOptions) { o.resumeMap, o.proceed = maps.Clone(values), true }
}

// Continue continues a thread from where it stopped (after a static interrupt, or a crash)
// without new input. The input passed with it is ignored.
func Continue() RunOption { return func(o *runOptions) { o.proceed = true } }

// WithStreamModes chooses the kinds of events a stream yields.
func WithStreamModes(modes ...StreamMode) RunOption {
	return func(o *runOptions) { o.modes = modes }
}

// WithSubgraphs includes the events of subgraphs in the stream, with their namespace.
func WithSubgraphs() RunOption { return func(o *runOptions) { o.subgraphs = true } }

// WithRecursionLimit bounds the run's supersteps (25 by default).
func WithRecursionLimit(n int) RunOption { return func(o *runOptions) { o.recursionLimit = n } }

// InterruptBefore pauses this run before the named nodes (besides those given at compile time).
func InterruptBefore(nodes ...string) RunOption {
	return func(o *runOptions) { o.interruptBefore = append(o.interruptBefore, nodes...) }
}

// InterruptAfter pauses this run after the named nodes (besides those given at compile time).
func InterruptAfter(nodes ...string) RunOption {
	return func(o *runOptions) { o.interruptAfter = append(o.interruptAfter, nodes...) }
}

// WithDurability chooses when this run's checkpoints are written.
func WithDurability(d Durability) RunOption { return func(o *runOptions) { o.durability = d } }

// WithMetadata adds metadata to every checkpoint of this run.
func WithMetadata(md map[string]any) RunOption {
	return func(o *runOptions) { o.metadata = md }
}

// WithConfig passes configurable values (a user ID, a tenant, a model choice) that nodes read
// with [InfoFrom].
func WithConfig(cfg map[string]any) RunOption { return func(o *runOptions) { o.config = cfg } }

// WithContext passes the run's context (LangGraph's context, read through Runtime.context):
// a value of the graph's context type ([CompileOptions.ContextType]) that nodes, the functional
// tasks they call, the tools those call and subgraphs read typed with [Context] (tools with
// tool.Context). When the graph declares a context type, v must be of that type (or a pointer
// to it), or its JSON form (a map or a json.RawMessage, as a server receives it), which is
// decoded into it; a field the type does not have, or a value of the wrong type, fails the
// run before it starts with an error naming the field. Without a declared type v is passed as
// is. Unlike [WithConfig], the context is never checkpointed: each run passes its own.
func WithContext(v any) RunOption {
	return func(o *runOptions) { o.context, o.hasContext = v, true }
}

// WithMaxConcurrency bounds how many nodes of a superstep run at once in this run.
func WithMaxConcurrency(n int) RunOption { return func(o *runOptions) { o.maxConcurrency = n } }
