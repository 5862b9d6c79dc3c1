package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trellis-go/trellis/cache"
	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/internal/runctx"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/store"
)

// Errors of a run.
var (
	// ErrRecursionLimit: the run used up its supersteps without reaching END.
	ErrRecursionLimit = errors.New("graph: recursion limit reached without reaching END (raise it with graph.WithRecursionLimit, or look for a loop that never exits)")
	// ErrNothingToResume: Resume or Continue on a thread that is not paused.
	ErrNothingToResume = errors.New("graph: nothing to resume")
	// ErrGraphChanged: a thread's checkpoints were made by a graph that no longer matches.
	ErrGraphChanged = errors.New("graph: the thread's checkpoints do not match this graph")
	// ErrInvalidUpdate: a superstep wrote a key without a reducer twice (LangGraph's
	// InvalidUpdateError, INVALID_CONCURRENT_GRAPH_UPDATE). The superstep fails and its writes are
	// not applied; the tasks' outcomes stay recorded against the checkpoint it started from.
	ErrInvalidUpdate = errors.New("invalid concurrent update")
)

// NodeError is a node's failure, naming the node.
type NodeError struct {
	Node   string
	Step   int
	TaskID string
	Err    error
}

func (e *NodeError) Error() string {
	return fmt.Sprintf("graph: node %q failed in superstep %d: %v", e.Node, e.Step, e.Err)
}

func (e *NodeError) Unwrap() error { return e.Err }

// Reserved channels of pending writes.
const (
	pendingOutcome   = "__task__"
	pendingInterrupt = "__interrupt__"
	pendingResume    = "__resume__"
	pendingError     = "__error__"
	// pendingFunc records one call of a functional task ([Task]) made by a node: its result
	// once it finished, and the resume values its interrupts were answered with.
	pendingFunc = "__func__"
)

// task is one node to run in a superstep, and what running it produced.
type task struct {
	id     string
	node   *nodeSpec
	input  reflect.Value // the state snapshot, or the payload of a Send
	arg    []byte        // the encoded payload of a Send, once encoded
	send   bool
	inline bool // runs on the loop's goroutine, so it may yield events directly

	finished   bool // has an outcome (ran now, or restored from pending writes)
	restored   bool
	persisted  bool // its outcome is recorded as pending writes
	routeLater bool // its routes are evaluated once the superstep's writes are applied
	writes     []write
	targets    []Target
	parent     *Command[any]
	err        error
	interrupts []Interruption
	// asked are the interrupts the task paused at before this run resumed it; they stay recorded
	// against the paused checkpoint once the task finishes, so history still shows them.
	asked  []Interruption
	resume []any
	// subs are the functional tasks ([Task]) the node called, by their IDs (the task's ID, a
	// slash and the call's number): restored from pending writes and filled as calls finish.
	subs *subState
	// cached: the node's outcome came from its cache policy's cache instead of a run.
	cached bool
	// live holds what is only needed while some tasks run: the restart of an idle timer
	// (WithIdleTimeout), and for a functional task the node that called it.
	live atomic.Pointer[taskLive]
	// handled: the node failed and its error handler (OnError) gave its outcome.
	handled bool
}

type taskLive struct {
	idle func()
	up   *task
}

// touch restarts the idle timers of t and of the nodes it runs under.
func (r *run) touch(t *task) {
	for t != nil {
		lv := t.live.Load()
		if lv == nil {
			break
		}
		if lv.idle != nil {
			lv.idle()
		}
		t = lv.up
	}
	if r.link != nil {
		r.link.run.touch(r.link.task)
	}
}

// run is the part of a running graph that does not depend on the state type; nodes reach it
// through their context.
type run struct {
	ctx       context.Context
	cancel    context.CancelFunc
	sc        *schema
	saver     checkpoint.Saver
	store     store.Store
	threadID  string
	ns        string
	nsPath    []string
	config    map[string]any
	resumeMap map[string]any
	modes     modeSet
	subgraphs bool
	// limit and maxConc are the run's recursion limit and concurrency bound, which its
	// subgraphs inherit.
	limit, maxConc int
	step           int
	// stop is the last superstep the run may write (see loop).
	stop int
	// durability is the run's; subgraphs follow their parent's.
	durability Durability

	yield     func(Event) bool
	deliverMu sync.Mutex
	events    chan Event
	stopped   atomic.Bool
	tr        *tracing // nil unless the run is traced (trace.go)
	// host records the functional tasks nodes call (functional.go).
	host subHost
	// link is the parent's task when this run is a subgraph's.
	link *parentLink
	// cache is the graph's (or its parent's) cache, which functional tasks with a cache policy
	// use.
	cache cache.Cache
}

func (r *run) schema() *schema { return r.sc }

func (r *run) emitTask(t *task, mode StreamMode, data any) {
	r.emit(t, Event{Mode: mode, NS: r.nsPath, Node: t.node.name, Step: r.step, TaskID: t.id, Data: data})
}

// emit delivers an event: directly when the task runs on the loop's goroutine, through the
// events channel when it runs concurrently with others.
func (r *run) emit(t *task, ev Event) {
	r.touch(t)
	if r.stopped.Load() {
		return
	}
	if t == nil || t.inline {
		r.deliver(ev)
		return
	}
	select {
	case r.events <- ev:
	case <-r.ctx.Done():
	}
}

func (r *run) deliver(ev Event) {
	// An inline task may emit from goroutines of its own (parallel tool calls, a model client's
	// reader): the reader's loop body must still run one event at a time.
	r.deliverMu.Lock()
	defer r.deliverMu.Unlock()
	if r.stopped.Load() {
		return
	}
	if !r.yield(ev) {
		r.stopped.Store(true)
		r.cancel()
	}
}

// loop runs one graph (the root or a subgraph) on one thread namespace.
type loop[S any] struct {
	*run
	c          *Compiled[S]
	state      reflect.Value // addressable S
	versions   map[string]string
	saved      map[string]string // versions in the last saved checkpoint
	tracks     []track
	next       []*task
	barriers   map[string][]string
	head       string         // the namespace's newest checkpoint
	cpID       string         // the checkpoint this loop stands on
	cpParent   string         // its parent
	cpMeta     map[string]any // its metadata
	durability Durability
	metadata   map[string]any
	writer     *asyncWriter
	// unsaved: with exit durability, a checkpoint is due but held back until the run ends.
	unsaved       bool
	unsavedSource checkpoint.Source
	stepSize      int  // tasks in the running superstep
	wroteOutput   bool // the last writes applied set an output key (see Compiled.valuesOnOutput)
	before        map[string]bool
	after         map[string]bool
}

// track follows one channel's updates since the last saved checkpoint, so that a reducer's
// channel can store only its new updates.
type track struct {
	dirty   bool
	full    bool // the next blob must hold the full value
	updates []reflect.Value
	chain   int // bytes of deltas stored since the last full blob
	base    int // bytes of the last full blob
}

// parentLink ties a subgraph run to the task that runs it in the parent.
type parentLink struct {
	run  *run
	task *task
	name string
}

// Invoke runs the graph to the end and returns the final state (restricted to the output keys).
// A run that pauses at an interrupt returns the state so far and an *InterruptedError.
func (c *Compiled[S]) Invoke(ctx context.Context, input S, opts ...RunOption) (S, error) {
	return c.execute(ctx, input, opts, func(Event) bool { return true }, nil)
}

// Stream runs the graph and yields its events as they happen (the values mode unless
// [WithStreamModes] says otherwise). A run that fails or pauses ends the stream with the error.
// Stopping the iteration cancels the run.
func (c *Compiled[S]) Stream(ctx context.Context, input S, opts ...RunOption) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		stopped := false
		_, err := c.execute(ctx, input, opts, func(ev Event) bool {
			if !yield(ev, nil) {
				stopped = true
				return false
			}
			return true
		}, nil)
		if err != nil && !stopped {
			yield(Event{}, err)
		}
	}
}

func (c *Compiled[S]) execute(ctx context.Context, input S, opts []RunOption, yield func(Event) bool, link *parentLink) (_ S, err error) {
	var o runOptions
	for _, opt := range opts {
		opt(&o)
	}
	var zero S
	if o.hasContext {
		v, err := c.runContext(o.context)
		if err != nil {
			return zero, err
		}
		ctx = runctx.With(ctx, v)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &run{ctx: ctx, cancel: cancel, sc: c.g.schema, saver: c.opts.Saver, store: c.opts.Store, cache: c.opts.Cache,
		threadID: o.threadID, config: o.config, resumeMap: o.resumeMap, subgraphs: o.subgraphs, yield: yield}
	r.ctx = r.startRun(ctx, &o, c.name, link) // tracing, when a tracer is set (trace.go)
	defer r.endRun(&err)
	defer func() {
		// A goroutine a node left behind may still emit: once the run is over its events are
		// dropped, since calling the reader's yield now would panic in that goroutine.
		r.deliverMu.Lock()
		r.stopped.Store(true)
		r.deliverMu.Unlock()
	}()
	l := &loop[S]{run: r, c: c, durability: o.durability, metadata: o.metadata}
	r.host = l
	if len(o.modes) == 0 {
		o.modes = []StreamMode{ModeValues}
	}
	r.modes = modesOf(o.modes)
	limit := o.recursionLimit
	if limit == 0 {
		limit = c.opts.RecursionLimit
	}
	if limit == 0 {
		limit = 25
	}
	maxConc := o.maxConcurrency
	if maxConc == 0 {
		maxConc = c.opts.MaxConcurrency
	}
	if link != nil {
		r.link = link
		p := link.run
		if r.saver == nil {
			r.saver = p.saver
		}
		if r.store == nil {
			r.store = p.store
		}
		if r.cache == nil {
			r.cache = p.cache
		}
		r.threadID, r.config, r.resumeMap, r.modes, r.subgraphs = p.threadID, p.config, p.resumeMap, p.modes, p.subgraphs
		seg := link.name + ":" + link.task.id
		r.nsPath = append(slices.Clip(p.nsPath), seg)
		r.ns = strings.Join(r.nsPath, "|")
		// As in LangGraph, the run's limits reach its subgraphs, unless a subgraph was
		// compiled with its own.
		if c.opts.RecursionLimit == 0 {
			limit = p.limit
		}
		if c.opts.MaxConcurrency == 0 {
			maxConc = p.maxConc
		}
		l.durability = p.durability
	}
	r.limit, r.maxConc = limit, maxConc
	if l.durability == "" {
		l.durability = c.opts.Durability
	}
	if l.durability == "" {
		l.durability = DurabilitySync
	}
	r.durability = l.durability
	l.before = toSet(c.opts.InterruptBefore, o.interruptBefore)
	l.after = toSet(c.opts.InterruptAfter, o.interruptAfter)
	for _, n := range slices.Concat(o.interruptBefore, o.interruptAfter) {
		if _, ok := c.g.nodes[n]; !ok {
			return zero, fmt.Errorf("%s: the run's static interrupt names unknown node %q%s", c.label, n, suggest(n, c.g.order))
		}
	}
	if r.saver == nil && r.threadID != "" {
		return zero, fmt.Errorf("%s: the run names thread %q, but the graph has no checkpoint saver (set CompileOptions.Saver)", c.label, r.threadID)
	}
	if r.saver != nil && r.threadID == "" {
		return zero, fmt.Errorf("%s: the graph has a checkpoint saver, so each run needs a thread: pass graph.WithThread(id)", c.label)
	}
	if r.saver == nil && (o.proceed || o.checkpointID != "") {
		return zero, fmt.Errorf("%s: resuming or forking needs a checkpoint saver and a thread", c.label)
	}
	l.state = reflect.New(c.g.schema.typ).Elem()
	l.versions = map[string]string{}
	l.saved = map[string]string{}
	l.barriers = map[string][]string{}
	l.tracks = make([]track, len(c.g.schema.channels))
	if r.saver != nil && l.durability == DurabilityAsync {
		l.writer = newAsyncWriter(r.saver)
		defer l.writer.close()
	}

	proceed := o.proceed
	var tuple *checkpoint.Tuple
	if r.saver != nil {
		var err error
		tuple, err = r.saver.Get(ctx, checkpoint.Ref{ThreadID: r.threadID, NS: r.ns, CheckpointID: o.checkpointID})
		switch {
		case errors.Is(err, checkpoint.ErrNotFound):
			if o.checkpointID != "" {
				return zero, fmt.Errorf("%s: thread %q has no checkpoint %q: %w", c.label, r.threadID, o.checkpointID, err)
			}
			if proceed {
				return zero, fmt.Errorf("%w: thread %q has no checkpoints (start it with input first)", ErrNothingToResume, r.threadID)
			}
			tuple = nil
		case err != nil:
			return zero, fmt.Errorf("%s: loading thread %q: %w", c.label, r.threadID, err)
		}
		if tuple != nil {
			if err := l.restore(tuple); err != nil {
				return zero, err
			}
			l.head = tuple.Checkpoint.ID
			if o.checkpointID != "" {
				latest, err := r.saver.Get(ctx, checkpoint.Ref{ThreadID: r.threadID, NS: r.ns})
				if err != nil {
					return zero, fmt.Errorf("%s: loading thread %q: %w", c.label, r.threadID, err)
				}
				l.head = latest.Checkpoint.ID
			}
			// A subgraph whose namespace stopped part-way continues where it stopped.
			if link != nil && len(tuple.Checkpoint.Next) > 0 {
				proceed = true
			}
		}
	}

	// As in LangGraph, the recursion limit counts from the superstep after the checkpoint the run
	// starts from (-1 on a new thread): a run may write checkpoints up to step stop, and one that
	// would go past it fails, even when nothing is left to run.
	if tuple != nil {
		r.stop = l.step + limit + 1
	} else {
		r.stop = limit
	}
	skipBefore := false
	if proceed {
		if tuple == nil || len(l.next) == 0 {
			return zero, fmt.Errorf("%w: thread %q is not paused (its last run finished); send new input instead", ErrNothingToResume, r.threadID)
		}
		forked, err := l.fork(tuple, o)
		if err != nil {
			return zero, err
		}
		if err := l.loadPending(tuple, o); err != nil {
			return zero, err
		}
		if forked {
			// The branch's first checkpoint is the fork: what its tasks finished is recorded
			// there again if the branch stops.
			for _, t := range l.next {
				t.persisted = false
				if t.subs != nil {
					for _, rec := range t.subs.m {
						rec.persisted = false
					}
				}
			}
		}
		skipBefore = true
		// A resumed or continued run first streams the state it starts from, as LangGraph's
		// does, so a client sees the values even when the run pauses again at once.
		l.emitValues()
		if start := l.pendingStart(); start != nil {
			// The run stopped between its input checkpoint and the input's superstep.
			if err := l.runStart(start); err != nil {
				return zero, err
			}
			skipBefore = false
		}
	} else {
		if err := l.applyInput(input); err != nil {
			return zero, err
		}
	}

	err = l.loop(limit, maxConc, skipBefore)
	if l.writer != nil {
		if werr := l.writer.close(); werr != nil && err == nil {
			err = werr
		}
	}
	return l.output(), err
}

func toSet(lists ...[]string) map[string]bool {
	m := map[string]bool{}
	for _, l := range lists {
		for _, n := range l {
			m[n] = true
		}
	}
	return m
}

// output returns the state restricted to the output keys.
func (l *loop[S]) output() S {
	if l.c.outputs == nil {
		return l.sc.snapshot(l.state).Interface().(S)
	}
	out := reflect.New(l.sc.typ).Elem()
	snap := l.sc.snapshot(l.state)
	for _, ch := range l.c.outputs {
		out.Field(ch.index).Set(snap.Field(ch.index))
	}
	return out.Interface().(S)
}

// applyInput starts a run from input. As in LangGraph, two checkpoints record it: an input
// checkpoint that holds the state before the input, with the __start__ task (carrying the input)
// scheduled, and then the superstep of that task, where the input is applied and the nodes after
// START are scheduled. A thread's first input checkpoint is step -1; the input of a later run
// continues the thread's count.
func (l *loop[S]) applyInput(input S) error {
	in := reflect.ValueOf(&input).Elem()
	ws := l.sc.writesOf(in, nil)
	if l.c.inputs != nil {
		for _, w := range ws {
			if !l.c.inputs[w.ch.name] {
				return fmt.Errorf("%s: input sets state key %q, which is not an input key (input keys: %s)", l.c.label, w.ch.name, strings.Join(l.c.InputKeys(), ", "))
			}
		}
	}
	start := &task{id: newTaskID(), node: startNode, writes: ws, finished: true}
	if l.saver != nil {
		arg, err := encodeOutcome(l.sc, start)
		if err != nil {
			return err
		}
		start.arg = arg
	}
	// restore left l.step one past the checkpoint's.
	if l.cpID == "" {
		l.step = -1
	}
	l.next = []*task{start}
	l.barriers = map[string][]string{}
	if err := l.checkpoint(checkpoint.SourceInput, false); err != nil {
		return err
	}
	l.step++
	return l.runStart(start)
}

// runStart runs the __start__ task: its writes (the input) apply, the nodes after START are
// scheduled, and the superstep is checkpointed.
func (l *loop[S]) runStart(start *task) error {
	l.next = nil
	if err := l.apply([]*task{start}); err != nil {
		return err
	}
	targets, err := l.route(l.run.ctx, START, l.state)
	if err != nil {
		return err
	}
	start.targets = targets
	if err := l.plan([]*task{start}, nil); err != nil {
		return err
	}
	if err := l.checkpoint(checkpoint.SourceLoop, false); err != nil {
		return err
	}
	l.emitValues()
	l.step++
	return nil
}

// pendingStart returns the __start__ task when the loop stands on an input checkpoint.
func (l *loop[S]) pendingStart() *task {
	if len(l.next) == 1 && l.next[0].node == startNode {
		return l.next[0]
	}
	return nil
}

// fork starts a branch when a run continues, with no resume value, from a checkpoint older than
// the thread's newest: as in LangGraph, a fork checkpoint copies it one step later and the branch
// counts on from there. The branch replays the checkpoint's superstep, so its interrupts are
// asked again rather than answered with the values the first branch was given.
func (l *loop[S]) fork(tuple *checkpoint.Tuple, o runOptions) (bool, error) {
	cp := tuple.Checkpoint
	if o.checkpointID == "" || l.ns != "" || cp.ID == l.head || o.hasResume || o.resumeMap != nil ||
		cp.Source == checkpoint.SourceUpdate || cp.Source == checkpoint.SourceFork {
		return false, nil
	}
	kept := tuple.Pending[:0:0]
	for _, pw := range tuple.Pending {
		if pw.Channel == pendingFunc {
			// A functional task that was answered goes with the interrupts (the branch asks
			// again); a finished one that asked nothing keeps its result.
			var rec subRecord
			if json.Unmarshal(pw.Value, &rec) != nil || !rec.Done || len(rec.Resume) > 0 {
				continue
			}
		}
		if pw.Channel != pendingResume && pw.Channel != pendingInterrupt {
			kept = append(kept, pw)
		}
	}
	tuple.Pending = kept
	if err := l.checkpoint(checkpoint.SourceFork, false); err != nil {
		return false, err
	}
	l.step++
	return true, nil
}

// startNode stands for START when the __start__ task is scheduled: it carries a run's input
// between the input checkpoint and the superstep that applies it.
var startNode = &nodeSpec{name: START}

// loop runs supersteps until nothing is scheduled, the run pauses, or it fails.
func (l *loop[S]) loop(limit, maxConc int, skipBefore bool) error {
	for len(l.next) > 0 {
		if err := l.ctx.Err(); err != nil {
			l.finalCheckpoint()
			return fmt.Errorf("%s: run cancelled before superstep %d: %w", l.c.label, l.step, context.Cause(l.ctx))
		}
		if l.step > l.stop {
			l.finalCheckpoint()
			return l.recursionError(limit)
		}
		tasks, held := l.runnable()
		if !skipBefore {
			if ins := l.staticInterrupts(tasks, l.before, "before"); ins != nil {
				l.finalCheckpoint()
				l.emitBreakpoint()
				return &InterruptedError{Interrupts: ins}
			}
		}
		skipBefore = false

		l.traceStep(tasks)
		l.emitRestored(tasks)
		l.runTasks(tasks, maxConc)
		if l.stopped.Load() {
			l.finalCheckpoint()
			return fmt.Errorf("%s: run cancelled: the stream's reader stopped", l.c.label)
		}

		var interrupts []Interruption
		var failed *task
		var parentCmd *Command[any]
		for _, t := range tasks {
			switch {
			case len(t.interrupts) > 0:
				interrupts = append(interrupts, t.interrupts...)
			case t.err != nil && failed == nil:
				failed = t
			case t.parent != nil && parentCmd == nil:
				parentCmd = t.parent
			}
		}
		if failed != nil || len(interrupts) > 0 {
			if err := l.saveStop(tasks); err != nil {
				return err
			}
			if failed != nil {
				return failed.err
			}
			if l.saver != nil {
				l.emitCheckpoint(true) // again, with the interrupts its tasks wait at
			}
			// The __interrupt__ updates and the updates of the tasks that finished went out as
			// each task ended. As LangGraph's root graph does, the values stream then shows the
			// state with the finished tasks' writes applied (they are applied for good when the
			// run resumes).
			if l.ns == "" {
				l.emitValuesWith(tasks)
			}
			return &InterruptedError{Interrupts: interrupts}
		}
		if parentCmd != nil {
			return &parentCommandError{cmd: parentCmd}
		}

		if err := l.apply(tasks); err != nil {
			l.finalCheckpoint()
			return err
		}
		for _, t := range tasks {
			if t.routeLater {
				routed, err := l.route(l.ctx, t.node.name, l.sc.snapshot(l.state))
				if err != nil {
					// Nothing of this superstep is saved: resuming runs it again from its start.
					return &NodeError{Node: t.node.name, Step: l.step, TaskID: t.id, Err: err}
				}
				t.targets = append(t.targets, routed...)
			}
		}
		if err := l.plan(tasks, held); err != nil {
			return err
		}
		if err := l.checkpoint(checkpoint.SourceLoop, false); err != nil {
			return err
		}
		l.emitValues()
		l.step++
		if ins := l.staticInterrupts(tasks, l.after, "after"); ins != nil && len(l.next) > 0 {
			l.finalCheckpoint()
			l.emitBreakpoint()
			return &InterruptedError{Interrupts: ins}
		}
	}
	if err := l.finalCheckpoint(); err != nil {
		return err
	}
	if l.step > l.stop {
		// LangGraph checks the limit before it looks for more work: a run whose last superstep
		// was the last one allowed fails as well.
		return l.recursionError(limit)
	}
	return nil
}

func (l *loop[S]) recursionError(limit int) error {
	return fmt.Errorf("%w (limit %d supersteps; graph %s)", ErrRecursionLimit, limit, l.c.name)
}

// runnable splits the scheduled tasks into those that run now and deferred ones held back while
// other work remains.
func (l *loop[S]) runnable() (now, held []*task) {
	deferred := false
	for _, t := range l.next {
		deferred = deferred || t.node.deferred
	}
	if !deferred {
		return l.next, nil
	}
	for _, t := range l.next {
		if t.node.deferred {
			held = append(held, t)
		} else {
			now = append(now, t)
		}
	}
	if len(now) == 0 {
		return held, nil
	}
	return now, held
}

func (l *loop[S]) staticInterrupts(tasks []*task, set map[string]bool, when string) []Interruption {
	if len(set) == 0 {
		return nil
	}
	var out []Interruption
	for _, t := range tasks {
		if set[t.node.name] {
			out = append(out, Interruption{ID: t.id + "." + when, Node: t.node.name, NS: l.ns, When: when})
		}
	}
	return out
}

// runTasks runs a superstep's tasks: on the loop's goroutine when there is one, concurrently
// otherwise, relaying their events as they come.
func (l *loop[S]) runTasks(tasks []*task, maxConc int) {
	l.stepSize = len(tasks)
	todo := tasks[:0:0]
	for _, t := range tasks {
		if !t.finished {
			todo = append(todo, t)
		}
	}
	if len(todo) == 0 {
		return
	}
	if len(todo) == 1 {
		todo[0].inline = true
		l.execute(todo[0])
		return
	}
	if l.events == nil {
		l.events = make(chan Event, 64)
	}
	var sem chan struct{}
	if maxConc > 0 && maxConc < len(todo) {
		sem = make(chan struct{}, maxConc)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, t := range todo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if sem != nil {
				sem <- struct{}{}
				defer func() { <-sem }()
			}
			l.execute(t)
		}()
	}
	go func() { wg.Wait(); close(done) }()
	for {
		select {
		case ev := <-l.events:
			l.deliver(ev)
		case <-done:
			for {
				select {
				case ev := <-l.events:
					l.deliver(ev)
				default:
					return
				}
			}
		}
	}
}

// execute runs one task with its retry policy and timeout, and routes from it.
func (l *loop[S]) execute(t *task) {
	tc := &taskCtx{run: l.run, task: t, resume: t.resume}
	ctx := context.WithValue(l.ctx, taskKey{}, tc)
	if l.modes.has(ModeTasks) || l.modes.has(ModeDebug) {
		l.taskEvent(t, TaskEvent{ID: t.id, Name: t.node.name, Input: l.taskInput(t), Triggers: []string{triggerOf(t)}})
	}
	policy := l.c.retryOf(t.node)
	// A node with a cache policy takes a cached result for its input instead of running.
	ck, cacheErr := l.cacheKey(t)
	var hitWrites []write
	var hitGotos []Target
	hit := false
	if cacheErr == nil && ck != nil {
		hitWrites, hitGotos, hit, cacheErr = l.fromCache(ctx, t, ck)
	}
	if cacheErr != nil {
		policy = nil
	}
	var handled *result
	for attempt := 1; ; attempt++ {
		var res result
		var err error
		switch {
		case cacheErr != nil:
			err = cacheErr
		case hit:
			tc.writes, res, t.cached = hitWrites, result{gotos: hitGotos}, true
		case handled != nil:
			// The node failed and its error handler turned the error into this result.
			tc.writes, res, handled = nil, *handled, nil
		default:
			tc.calls, tc.writes, tc.interrupts, tc.fn = 0, nil, nil, nil
			res, err = l.tracedCall(ctx, t, attempt)
			tc.waitTasks() // the functional tasks the node started and did not wait for
		}
		var child *InterruptedError
		if len(tc.interrupts) > 0 || errors.As(err, &child) {
			// The node's own interrupts, then those of a subgraph or of the functional tasks it
			// called (several tasks may pause at once, even if the node saw only one of them).
			ins := slices.Clone(tc.interrupts)
			if child != nil {
				ins = append(ins, child.Interrupts...)
			}
			ins = append(ins, tc.taskInterrupts()...)
			t.interrupts, t.resume = uniqueInterrupts(ins), tc.resume
			if len(t.interrupts) > 0 {
				break
			}
		}
		if err == nil {
			t.writes = tc.writes
			if res.updated {
				t.writes = l.sc.writesOf(res.update, t.writes)
			}
			t.targets, t.parent, t.resume = res.gotos, res.parent, tc.resume
			if ck != nil && !hit && !t.handled && t.parent == nil {
				err = l.toCache(ctx, t, ck, t.writes, res.gotos)
			}
			if err == nil && t.parent == nil && len(l.c.g.branches[t.node.name]) > 0 {
				if t.inline && l.stepSize == 1 {
					// Alone in its superstep, the task's local state is the state after the
					// superstep: route from that, without copying the state first.
					t.routeLater = true
				} else {
					var local reflect.Value
					if local, err = l.localState(t); err == nil {
						var routed []Target
						routed, err = l.route(ctx, t.node.name, local)
						t.targets = append(t.targets, routed...)
					}
				}
			}
			if err == nil {
				t.finished = true
				break
			}
		}
		if p := pickRetry(policy, err, l.ctx); p != nil && attempt < p.MaxAttempts {
			if !sleep(l.ctx, backoff(p, attempt)) {
				err = context.Cause(l.ctx)
			} else {
				continue
			}
		}
		if h := t.node.onError; h != nil && !t.handled && l.ctx.Err() == nil && cacheErr == nil {
			res, herr := l.handle(ctx, t, err)
			if herr == nil {
				handled, t.handled, policy = &res, true, nil
				continue
			}
			err = herr
		}
		var ne *NodeError
		if !errors.As(err, &ne) {
			err = &NodeError{Node: t.node.name, Step: l.step, TaskID: t.id, Err: err}
		}
		t.err = err
		break
	}
	if t.finished {
		identifyMessages(t)
	}
	// As LangGraph, a task's update (or its interrupts) is streamed as soon as the task ends, so
	// the updates of a superstep's finished tasks go out even when the superstep then stops at an
	// interrupt or fails (two writes to a key without a reducer, say).
	switch {
	case len(t.interrupts) > 0:
		if l.modes.has(ModeUpdates) {
			l.emit(t, Event{Mode: ModeUpdates, NS: l.nsPath, Node: "__interrupt__", Step: l.step, TaskID: t.id, Data: t.interrupts})
		}
	case t.finished && t.parent == nil:
		l.emitUpdate(t)
	}
	if l.modes.has(ModeTasks) || l.modes.has(ModeDebug) {
		ev := TaskEvent{ID: t.id, Name: t.node.name, Finished: true, Interrupts: t.interrupts}
		if t.err != nil {
			ev.Error = t.err.Error()
		} else if t.finished {
			ev.Result = l.taskResult(t)
		}
		l.taskEvent(t, ev)
	}
	if t.finished && l.saver != nil && l.durability != DurabilityExit && !t.inline {
		// Record the finished task at once, so a crash later in the superstep does not run it again.
		if err := l.putWrites(t); err != nil && t.err == nil {
			t.err = err
			t.finished = false
		}
	}
}

// uniqueInterrupts drops repeated interrupts (by ID), keeping the order.
func uniqueInterrupts(ins []Interruption) []Interruption {
	var out []Interruption
	for _, in := range ins {
		if !slices.ContainsFunc(out, func(o Interruption) bool { return o.ID == in.ID }) {
			out = append(out, in)
		}
	}
	return out
}

// taskInput is a task's input as its task events carry it: an entrypoint's node shows the
// input the entrypoint was called with.
func (l *loop[S]) taskInput(t *task) any {
	if l.c.view != nil {
		return l.c.view.input(t.input)
	}
	return t.input.Interface()
}

// taskResult is a finished task's writes as its task event carries them: an entrypoint's node
// shows its return value as the one write LangGraph reports, to "__end__".
func (l *loop[S]) taskResult(t *task) any {
	up := l.updateOf(t)
	if l.c.view != nil {
		return map[string]any{END: l.c.view.state(up)}
	}
	return up.Interface()
}

func (l *loop[S]) taskEvent(t *task, ev TaskEvent) {
	if l.modes.has(ModeTasks) {
		l.emitTask(t, ModeTasks, ev)
	}
	if l.modes.has(ModeDebug) {
		typ := "task"
		if ev.Finished {
			typ = "task_result"
		}
		l.emitTask(t, ModeDebug, DebugEvent{Type: typ, Step: l.step, Payload: ev})
	}
}

// triggerOf names what started a task, as LangGraph's task events do.
func triggerOf(t *task) string {
	if t.send {
		return "__pregel_push"
	}
	return "branch:to:" + t.node.name
}

// call runs the node once, turning a panic or a timeout into an error naming it.
func (l *loop[S]) call(ctx context.Context, t *task) (res result, err error) {
	if d := l.c.idleOf(t.node); d > 0 {
		// The idle timer restarts whenever the node produces something (see run.touch).
		idleErr := fmt.Errorf("graph: node %q produced nothing for %s (idle timeout)", t.node.name, d)
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		timer := time.AfterFunc(d, func() { cancel(idleErr) })
		t.live.Store(&taskLive{idle: func() { timer.Reset(d) }})
		defer func() {
			t.live.Store(nil)
			timer.Stop()
			if err != nil && context.Cause(ctx) == idleErr && l.ctx.Err() == nil {
				err = idleErr
			}
			cancel(nil)
		}()
	}
	if d := l.c.timeoutOf(t.node); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, d, fmt.Errorf("graph: node %q timed out after %s", t.node.name, d))
		defer cancel()
		defer func() {
			if err != nil && ctx.Err() != nil && l.ctx.Err() == nil {
				err = context.Cause(ctx)
			}
		}()
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	if t.node.sub != nil {
		return t.node.sub.runSub(ctx, l.run, t)
	}
	return t.node.run(ctx, l.withManaged(t.input))
}

// withManaged returns the node's input with its managed values filled (RemainingSteps,
// IsLastStep), as LangGraph computes them from the superstep and the run's last allowed one.
func (l *loop[S]) withManaged(in reflect.Value) reflect.Value {
	if len(l.sc.managed) == 0 || in.Type() != l.sc.typ {
		return in
	}
	out := reflect.New(l.sc.typ).Elem()
	out.Set(in)
	for _, ch := range l.sc.managed {
		f := out.Field(ch.index)
		switch ch.typ {
		case remainingStepsType:
			f.SetInt(int64(l.stop - l.step))
		case isLastStepType:
			f.SetBool(l.step == l.stop-1)
		}
	}
	return out
}

// handle calls the node's error handler (OnError) on err, which the retries did not cure.
func (l *loop[S]) handle(ctx context.Context, t *task, err error) (res result, herr error) {
	defer func() {
		if p := recover(); p != nil {
			herr = fmt.Errorf("the error handler panicked: %v (handling: %v)\n%s", p, err, debug.Stack())
		}
	}()
	res, herr = t.node.onError(ctx, t.input, err)
	if herr != nil {
		return res, fmt.Errorf("%w (the error handler failed, handling: %v)", herr, err)
	}
	return res, nil
}

// pickRetry returns the first of policies that retries err, or nil.
func pickRetry(policies []RetryPolicy, err error, runCtx context.Context) *RetryPolicy {
	for i := range policies {
		if retryable(&policies[i], err, runCtx) {
			return &policies[i]
		}
	}
	return nil
}

func retryable(p *RetryPolicy, err error, runCtx context.Context) bool {
	if runCtx.Err() != nil {
		return false
	}
	if p.RetryOn != nil {
		return p.RetryOn(err)
	}
	var ie *InterruptedError
	return !errors.As(err, &ie)
}

func backoff(p *RetryPolicy, attempt int) time.Duration {
	d := p.InitialInterval
	if d == 0 {
		d = 500 * time.Millisecond
	}
	f := p.BackoffFactor
	if f == 0 {
		f = 2
	}
	maxD := p.MaxInterval
	if maxD == 0 {
		maxD = 128 * time.Second
	}
	w := float64(d)
	for i := 1; i < attempt; i++ {
		w *= f
	}
	w = min(w, float64(maxD))
	if p.Jitter {
		w *= 0.75 + rand.Float64()/2
	}
	return time.Duration(w)
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// localState is the state as the task's own writes leave it, which its routes read.
func (l *loop[S]) localState(t *task) (reflect.Value, error) {
	st := l.sc.snapshot(l.state)
	for _, w := range t.writes {
		f := st.Field(w.ch.index)
		if w.overwrite || w.ch.reducer == ReduceLast {
			f.Set(w.val)
			continue
		}
		v, err := w.ch.reduce(f, w.val)
		if err != nil {
			return st, err
		}
		f.Set(v)
	}
	return st, nil
}

// route evaluates the conditional edges out of node on state.
func (l *loop[S]) route(ctx context.Context, node string, state reflect.Value) (out []Target, err error) {
	defer func() {
		// A route runs on a task's goroutine (or the caller's, after START): a panic there must
		// fail the run like a panicking node, not end the process.
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("graph: route after %q: panic: %v\n%s", node, p, debug.Stack())
		}
	}()
	for _, b := range l.c.g.branches[node] {
		s := mustAssert[S](state)
		if b.router != nil {
			ts, err := b.router(ctx, s)
			if err != nil {
				return nil, fmt.Errorf("graph: router after %q: %w", node, err)
			}
			out = append(out, ts...)
			continue
		}
		key, err := b.route(ctx, s)
		if err != nil {
			return nil, fmt.Errorf("graph: conditional edge after %q: %w", node, err)
		}
		to := key
		if b.pathMap != nil {
			var ok bool
			if to, ok = b.pathMap[key]; !ok {
				return nil, fmt.Errorf("graph: conditional edge after %q returned %q, which its path map does not have (keys: %s)", node, key, strings.Join(sortedKeys(b.pathMap), ", "))
			}
		}
		out = append(out, To(to))
	}
	for _, t := range out {
		if t.Node == END {
			continue
		}
		if _, ok := l.c.g.nodes[t.Node]; !ok {
			return nil, fmt.Errorf("graph: route after %q goes to unknown node %q%s", node, t.Node, suggest(t.Node, l.c.g.order))
		}
	}
	return out, nil
}

// apply applies the writes of a finished superstep in LangGraph's order: the tasks of nodes
// pulled by edges, routes and joins sorted by node name, then the tasks of sends in the order
// they were made (LangGraph sorts by task path, in which every pull task comes before every
// push task). So a list or a message history that two nodes of one superstep append to ends in
// the same order as under LangGraph, whatever order the nodes were added in.
func (l *loop[S]) apply(tasks []*task) error {
	tasks = writeOrder(tasks)
	type writer struct{ node, task string }
	var last map[*channel]writer
	for _, t := range tasks {
		for _, w := range t.writes {
			if w.ch.reducer == ReduceLast || w.overwrite {
				if last == nil {
					last = map[*channel]writer{}
				}
				// As LangGraph's LastValue channel, a key without a reducer takes one value per
				// superstep, whether the two come from two tasks or from one (graph.Write and the
				// returned update, say).
				if prev, ok := last[w.ch]; ok {
					what := "written"
					if w.overwrite {
						what = "overwritten"
					}
					by := fmt.Sprintf("both %q and %q", prev.node, t.node.name)
					if prev.task == t.id {
						by = fmt.Sprintf("%q twice", t.node.name)
					}
					hint := "a key without a reducer takes one write per superstep (give it a `reduce` tag, or let one node write it once)"
					if w.ch.kind != kindState {
						hint = fmt.Sprintf("a %s channel takes one write per superstep (let one node write it once)", [...]string{kindEphemeral: ChannelEphemeral, kindUntracked: ChannelUntracked}[w.ch.kind])
					}
					return fmt.Errorf("%s: %w: state key %q was %s by %s in superstep %d; %s", l.c.label, ErrInvalidUpdate, w.ch.name, what, by, l.step, hint)
				}
				last[w.ch] = writer{t.node.name, t.id}
			}
		}
	}
	for _, t := range tasks {
		for i, w := range t.writes {
			f := l.state.Field(w.ch.index)
			tr := &l.tracks[w.ch.pos]
			val := w.val
			if w.overwrite || w.ch.reducer == ReduceLast {
				f.Set(val)
				tr.full = true
			} else {
				if w.ch.reducer == ReduceMessages {
					// The update as the updates stream reports it carries the IDs the
					// state got, so that clients can match the two.
					val = withMessageIDs(val)
					t.writes[i].val = val
				}
				v, err := w.ch.reduce(f, val)
				if err != nil {
					return err
				}
				f.Set(v)
				if l.saver != nil && !tr.full {
					if len(tr.updates) < maxTrackedUpdates {
						tr.updates = append(tr.updates, val)
					} else {
						tr.full, tr.updates = true, nil
					}
				}
			}
			if !l.wroteOutput && (l.c.outputs == nil || slices.Contains(l.c.outputs, w.ch)) {
				l.wroteOutput = true
			}
			if l.saver != nil && w.ch.stored() {
				tr.dirty = true
				l.versions[w.ch.name] = checkpoint.NextVersion(l.versions[w.ch.name])
			}
		}
	}
	l.clearEphemeral(tasks)
	return nil
}

// clearEphemeral clears the ephemeral channels the superstep's tasks did not write, as
// LangGraph's EphemeralValue is cleared by a superstep that does not update it: a value is seen
// by the superstep after its write, and gone after that one.
func (l *loop[S]) clearEphemeral(tasks []*task) {
	for _, ch := range l.sc.ephemeral {
		f := l.state.Field(ch.index)
		if f.IsZero() || slices.ContainsFunc(tasks, func(t *task) bool {
			return slices.ContainsFunc(t.writes, func(w write) bool { return w.ch == ch })
		}) {
			continue
		}
		f.Set(reflect.Zero(ch.typ))
		if !l.wroteOutput && (l.c.outputs == nil || slices.Contains(l.c.outputs, ch)) {
			l.wroteOutput = true
		}
		if l.saver != nil {
			tr := &l.tracks[ch.pos]
			tr.dirty, tr.full, tr.updates = true, true, nil
			l.versions[ch.name] = checkpoint.NextVersion(l.versions[ch.name])
		}
	}
}

// writeOrder returns tasks in the order their writes apply (see apply).
func writeOrder(tasks []*task) []*task {
	if len(tasks) < 2 {
		return tasks
	}
	sorted := true
	for i := 1; i < len(tasks) && sorted; i++ {
		sorted = taskPathCmp(tasks[i-1], tasks[i]) <= 0
	}
	if sorted {
		return tasks
	}
	out := slices.Clone(tasks)
	slices.SortStableFunc(out, taskPathCmp)
	return out
}

// taskPathCmp orders pull tasks before push (send) tasks, pull tasks by node name, push tasks
// as they are.
func taskPathCmp(a, b *task) int {
	switch {
	case a.send != b.send:
		if a.send {
			return 1
		}
		return -1
	case a.send:
		return 0
	}
	return strings.Compare(a.node.name, b.node.name)
}

// identifyMessages gives the messages a finished task writes to a messages channel their IDs
// as soon as it finishes (LangGraph's messages stream names a message it emits the same way), so
// that the task's result as streamed (tasks events, a node's whole messages in messages-tuple),
// its pending writes and the state all carry the same IDs.
func identifyMessages(t *task) {
	for i, w := range t.writes {
		if !w.overwrite && w.ch.reducer == ReduceMessages {
			t.writes[i].val = withMessageIDs(w.val)
		}
	}
}

// withMessageIDs gives every message of an update an ID, so that replaying the update from a
// checkpoint yields the same list.
func withMessageIDs(v reflect.Value) reflect.Value {
	msgs := mustAssert[[]message.Message](v)
	for i := range msgs {
		if msgs[i].ID == "" {
			out := slices.Clone(msgs)
			for j := i; j < len(out); j++ {
				if out[j].ID == "" {
					out[j].ID = message.NewID()
				}
			}
			return reflect.ValueOf(out)
		}
	}
	return v
}

// plan schedules the next superstep from the tasks that just finished: nodes pulled by edges,
// joins and routes run once each, in the order they were added to the graph, then the sends in
// the order they were made, then deferred tasks still held back.
func (l *loop[S]) plan(done []*task, held []*task) error {
	var pulled []*nodeSpec
	var seen map[*nodeSpec]bool // used once the list is long enough to make a scan slow
	pull := func(name string) {
		n := l.c.g.nodes[name]
		if seen != nil {
			if !seen[n] {
				seen[n] = true
				pulled = append(pulled, n)
			}
			return
		}
		if slices.Contains(pulled, n) {
			return
		}
		pulled = append(pulled, n)
		if len(pulled) > 16 {
			seen = make(map[*nodeSpec]bool, 2*len(pulled))
			for _, p := range pulled {
				seen[p] = true
			}
		}
	}
	var sends []*task
	for _, t := range done {
		name := t.node.name
		for _, to := range l.c.g.edges[name] {
			if to != END {
				pull(to)
			}
		}
		for _, ji := range l.c.joinsBy[name] {
			j := l.c.g.joins[ji]
			key := joinKey(ji, j.to)
			if !slices.Contains(l.barriers[key], name) {
				l.barriers[key] = append(l.barriers[key], name)
			}
			if len(l.barriers[key]) == len(j.sources) {
				delete(l.barriers, key)
				if j.to != END {
					pull(j.to)
				}
			}
		}
		for _, tg := range t.targets {
			if tg.Node == END {
				continue
			}
			if !tg.send {
				if _, ok := l.c.g.nodes[tg.Node]; !ok {
					return fmt.Errorf("graph: %q goes to unknown node %q%s", name, tg.Node, suggest(tg.Node, l.c.g.order))
				}
				pull(tg.Node)
				continue
			}
			arg, err := l.sendArg(name, tg)
			if err != nil {
				return err
			}
			sends = append(sends, &task{id: newTaskID(), node: l.c.g.nodes[tg.Node], input: arg, send: true})
		}
	}
	slices.SortFunc(pulled, func(a, b *nodeSpec) int { return a.idx - b.idx })
	next := make([]*task, 0, len(pulled)+len(sends)+len(held))
	var snap reflect.Value
	if len(pulled)+len(held) > 0 {
		// Pulled tasks read the state as it is after this superstep.
		snap = l.sc.snapshot(l.state)
	}
	for _, n := range pulled {
		next = append(next, &task{id: newTaskID(), node: n, input: snap})
	}
	for _, h := range held {
		if h.send || !slices.Contains(pulled, h.node) {
			if !h.send {
				h.input = snap
			}
			next = append(next, h)
		}
	}
	next = append(next, sends...)
	l.next = next
	return nil
}

func joinKey(i int, to string) string { return fmt.Sprintf("%s#%d", to, i) }

func (l *loop[S]) sendArg(from string, tg Target) (reflect.Value, error) {
	if _, ok := l.c.g.nodes[tg.Node]; !ok {
		return reflect.Value{}, fmt.Errorf("graph: %q sends to unknown node %q%s", from, tg.Node, suggest(tg.Node, l.c.g.order))
	}
	switch a := tg.Arg.(type) {
	case S:
		return reflect.ValueOf(&a).Elem(), nil
	case *S:
		if a != nil {
			return reflect.ValueOf(a).Elem(), nil
		}
	}
	var want S
	return reflect.Value{}, fmt.Errorf("graph: %q sends %T to %q; a Send payload must be the graph's state type %T", from, tg.Arg, tg.Node, want)
}

var taskSeq atomic.Uint64

// taskPrefix makes task IDs of different processes differ.
var taskPrefix = rand.Uint32()

func newTaskID() string {
	// Unique within a process, and random across processes.
	var b [16]byte
	const hex = "0123456789abcdef"
	v := uint64(taskPrefix)<<32 | uint64(uint32(taskSeq.Add(1)))
	for i := 15; i >= 0; i-- {
		b[i] = hex[v&0xF]
		v >>= 4
	}
	return string(b[:])
}

func (l *loop[S]) updateOf(t *task) reflect.Value {
	up := reflect.New(l.sc.typ).Elem()
	for i, w := range t.writes {
		f := up.Field(w.ch.index)
		// A key the task wrote more than once (a tool node applying several tools' commands)
		// shows every write, combined by its reducer, not only the last.
		if !w.overwrite && w.ch.reducer != ReduceLast && writtenBefore(t.writes[:i], w.ch) {
			if f.Kind() == reflect.Slice {
				f.Set(f.Slice3(0, f.Len(), f.Len())) // the reducer appends to a copy, never the writer's array
			}
			if v, err := w.ch.reduce(f, w.val); err == nil {
				f.Set(v)
				continue
			}
		}
		f.Set(w.val)
	}
	return up
}

// writtenBefore reports whether one of writes is to ch. A task writes few keys, so a scan is
// cheaper than a set.
func writtenBefore(writes []write, ch *channel) bool {
	for _, w := range writes {
		if w.ch == ch {
			return true
		}
	}
	return false
}

func (l *loop[S]) emitValues() {
	wrote := l.wroteOutput
	l.wroteOutput = false
	if !l.modes.has(ModeValues) || (l.c.valuesOnOutput && !wrote) {
		return
	}
	var data any = l.output()
	if l.c.present != nil {
		data = l.c.present(reflect.ValueOf(data))
	}
	l.deliver(Event{Mode: ModeValues, NS: l.nsPath, Step: l.step, Data: data})
}

// emitUpdate streams a finished task's update; Cached marks one restored from the checkpoint's
// pending writes rather than run again.
func (l *loop[S]) emitUpdate(t *task) {
	if l.modes.has(ModeUpdates) {
		var data any = l.updateOf(t).Interface()
		if l.c.present != nil {
			data = l.c.present(reflect.ValueOf(data))
		}
		l.emit(t, Event{Mode: ModeUpdates, NS: l.nsPath, Node: t.node.name, Step: l.step, TaskID: t.id, Data: data, Cached: t.restored || t.cached})
	}
}

// emitRestored streams, before a superstep runs, what LangGraph streams for its tasks that
// finished in an earlier run (a superstep resumed after an interrupt or a failure): their
// updates, marked cached, and, when some task still has to run, their task start events.
func (l *loop[S]) emitRestored(tasks []*task) {
	if !l.modes.has(ModeUpdates) && !l.modes.has(ModeTasks) && !l.modes.has(ModeDebug) {
		return
	}
	pending := false
	for _, t := range tasks {
		pending = pending || !t.finished
	}
	for _, t := range tasks {
		if !t.restored || !t.finished {
			continue
		}
		t.inline = true // it does not run: its events go out from the loop's goroutine
		l.emitUpdate(t)
		if pending && (l.modes.has(ModeTasks) || l.modes.has(ModeDebug)) {
			l.taskEvent(t, TaskEvent{ID: t.id, Name: t.node.name, Input: l.taskInput(t), Triggers: []string{triggerOf(t)}})
		}
	}
}

// emitValuesWith streams the state with the writes of the superstep's finished tasks applied,
// when one of them wrote an output key; the loop's own state is left as it is.
func (l *loop[S]) emitValuesWith(tasks []*task) {
	if !l.modes.has(ModeValues) {
		return
	}
	var done []*task
	wrote := false
	for _, t := range tasks {
		if !t.finished || len(t.interrupts) > 0 {
			continue
		}
		done = append(done, t)
		for _, w := range t.writes {
			wrote = wrote || l.c.outputs == nil || slices.Contains(l.c.outputs, w.ch)
		}
	}
	if !wrote {
		return
	}
	st := l.sc.snapshot(l.state)
	for _, t := range writeOrder(done) {
		for _, w := range t.writes {
			f := st.Field(w.ch.index)
			if w.overwrite || w.ch.reducer == ReduceLast {
				f.Set(w.val)
				continue
			}
			v, err := w.ch.reduce(f, w.val)
			if err != nil {
				return // the writes do not apply; resuming reports it
			}
			f.Set(v)
		}
	}
	saved := l.state
	l.state = st
	l.wroteOutput = true
	l.emitValues()
	l.state = saved
}

// emitBreakpoint streams the empty __interrupt__ update LangGraph streams at a static breakpoint.
func (l *loop[S]) emitBreakpoint() {
	if l.modes.has(ModeUpdates) {
		l.deliver(Event{Mode: ModeUpdates, NS: l.nsPath, Node: "__interrupt__", Step: l.step, Data: []Interruption{}})
	}
}

// parentCommandError carries a subgraph node's command for its parent out of the subgraph run.
type parentCommandError struct{ cmd *Command[any] }

func (e *parentCommandError) Error() string {
	return "graph: a command for the parent graph was raised outside a subgraph"
}

// encodeJSON marshals v, naming the key on failure.
func encodeJSON(what string, v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("graph: %s cannot be stored as JSON: %w", what, err)
	}
	return data, nil
}
