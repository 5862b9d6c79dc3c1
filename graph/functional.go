package graph

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/trellis-go/trellis/cache"
	"github.com/trellis-go/trellis/checkpoint"
)

// The functional API: an entrypoint is a plain Go function run as a one-node graph, and tasks
// are plain Go functions it (or any node) calls, whose results are recorded as pending writes so
// that a resumed run does not run a finished task again.

// subRecord is the pending write of one functional task call.
type subRecord struct {
	Name   string          `json:"name"`
	Done   bool            `json:"done,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Resume []any           `json:"resume,omitempty"`
	// persisted: the record as it stands is stored.
	persisted bool
}

// subState holds the records of the functional tasks a node called.
type subState struct {
	mu sync.Mutex
	m  map[string]*subRecord
}

// subHost records functional task calls against the checkpoint the running superstep started
// from.
type subHost interface {
	recordSub(t *task, id string) error
}

// recordSub stores the record of one functional task call at once (unless the durability is
// exit, in which case the records are stored with the node's outcome when the run stops).
func (l *loop[S]) recordSub(t *task, id string) error {
	if l.saver == nil || l.durability == DurabilityExit {
		return nil
	}
	return l.putSub(t, id)
}

func (l *loop[S]) putSub(t *task, id string) error {
	ss := t.subs
	ss.mu.Lock()
	rec := ss.m[id]
	if rec == nil || rec.persisted {
		ss.mu.Unlock()
		return nil
	}
	data, err := json.Marshal(rec)
	rec.persisted = err == nil
	ss.mu.Unlock()
	if err != nil {
		return fmt.Errorf("graph: the result of task %q cannot be stored as JSON: %w", rec.Name, err)
	}
	req := checkpoint.WritesRequest{Ref: checkpoint.Ref{ThreadID: l.threadID, NS: l.ns, CheckpointID: l.cpID}, TaskID: id, Writes: []checkpoint.PendingWrite{{Channel: pendingFunc, Value: data}}}
	if l.writer != nil {
		l.writer.do(func(ctx context.Context, s checkpoint.Saver) error { return s.PutWrites(ctx, req) })
		return nil
	}
	if err := l.saver.PutWrites(context.WithoutCancel(l.ctx), req); err != nil {
		return fmt.Errorf("%s: saving the result of task %q: %w", l.c.label, rec.Name, err)
	}
	return nil
}

// putSubs stores the records of t's functional task calls not stored yet.
func (l *loop[S]) putSubs(t *task) error {
	ss := t.subs
	if ss == nil {
		return nil
	}
	ss.mu.Lock()
	ids := sortedKeys(ss.m)
	ss.mu.Unlock()
	for _, id := range ids {
		if err := l.putSub(t, id); err != nil {
			return err
		}
	}
	return nil
}

// loadSub takes a pending write of a functional task call, if pw is one of a scheduled task.
func loadSub(byID map[string]*task, pw checkpoint.PendingWrite) (bool, error) {
	if pw.Channel != pendingFunc {
		return false, nil
	}
	parent, _, ok := strings.Cut(pw.TaskID, "/")
	t := byID[parent]
	if !ok || t == nil {
		return true, nil
	}
	var rec subRecord
	if err := json.Unmarshal(pw.Value, &rec); err != nil {
		return true, fmt.Errorf("graph: the saved result of a task called by node %q does not decode: %w", t.node.name, err)
	}
	rec.persisted = true
	if t.subs == nil {
		t.subs = &subState{m: map[string]*subRecord{}}
	}
	t.subs.m[pw.TaskID] = &rec
	return true, nil
}

// TaskOption configures a [Task].
type TaskOption func(*taskSpec)

type taskSpec struct {
	retry *RetryPolicy
	cache *CachePolicy
}

// TaskRetry retries a failing task according to p.
func TaskRetry(p RetryPolicy) TaskOption { return func(s *taskSpec) { s.retry = &p } }

// TaskCache caches the task's results in the running graph's cache ([CompileOptions.Cache]),
// as [WithCache] does a node's: Key gets the task's input (nil hashes its JSON). A call with a
// cached input returns the cached result without running, and its update is marked cached.
func TaskCache(p CachePolicy) TaskOption { return func(s *taskSpec) { s.cache = &p } }

// taskCacheKey returns the cache key of a call of the task, or nil when it is not cached.
func taskCacheKey(r *run, name string, p *CachePolicy, in any) (*cache.Key, error) {
	if p == nil || r.cache == nil {
		return nil, nil
	}
	var key string
	if p.Key != nil {
		k, err := p.Key(in)
		if err != nil {
			return nil, fmt.Errorf("graph: the cache key function of task %q: %w", name, err)
		}
		key = k
	} else {
		data, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("graph: the input of task %q cannot be hashed as its cache key (%v); give its CachePolicy a Key function", name, err)
		}
		sum := sha256.Sum256(data)
		key = hex.EncodeToString(sum[:])
	}
	if key == "" {
		return nil, fmt.Errorf("graph: the cache key function of task %q returned an empty key", name)
	}
	return &cache.Key{NS: "__tasks__|" + name, Key: key}, nil
}

// Task is a unit of work of the functional API (LangGraph's @task): a plain Go function that an
// entrypoint (or any node) calls with [Task.Call]. Inside a run with a checkpoint saver each
// call's result is recorded as a pending write of the calling node, so when the node runs again
// (resumed after an interrupt, or continued after a failure or a crash) a call that finished
// returns its recorded result instead of running again. Calls are matched by their order in the
// node: call tasks in a deterministic order (launching them from one goroutine, as an
// entrypoint normally does). A task's result must encode to JSON.
//
// A task may call [Interrupt] (it pauses the run; when the thread is resumed the task runs again
// and the call returns the resume value), [Emit], and run other graphs with their Invoke.
type Task[In, Out any] struct {
	name string
	fn   func(context.Context, In) (Out, error)
	spec taskSpec
}

// NewTask makes a task named name (in stream events and interrupts) that runs fn.
func NewTask[In, Out any](name string, fn func(ctx context.Context, in In) (Out, error), opts ...TaskOption) *Task[In, Out] {
	t := &Task[In, Out]{name: name, fn: fn}
	for _, o := range opts {
		o(&t.spec)
	}
	return t
}

// Name returns the task's name.
func (t *Task[In, Out]) Name() string { return t.name }

// Future is the pending result of a task call.
type Future[T any] struct {
	done chan struct{}
	val  T
	err  error
}

// Get waits for the task and returns its result. A task that paused at an interrupt returns an
// *InterruptedError: the entrypoint returns it (as is, or wrapped) to pause the run.
func (f *Future[T]) Get() (T, error) {
	<-f.done
	return f.val, f.err
}

// Done is closed when the task has finished.
func (f *Future[T]) Done() <-chan struct{} { return f.done }

// Call starts the task on in and returns its future. Outside a running node the task runs as a
// plain function call (on a goroutine), with nothing recorded.
func (t *Task[In, Out]) Call(ctx context.Context, in In) *Future[Out] {
	f := &Future[Out]{done: make(chan struct{})}
	tc := taskFrom(ctx)
	if tc == nil {
		go func() {
			defer close(f.done)
			f.val, f.err = t.attempts(ctx, in)
		}()
		return f
	}
	parent := tc.task
	tc.mu.Lock()
	if tc.fn == nil {
		tc.fn = &taskCalls{}
	}
	calls := tc.fn
	n := calls.n
	calls.n++
	if parent.subs == nil {
		parent.subs = &subState{m: map[string]*subRecord{}}
	}
	ss := parent.subs
	tc.mu.Unlock()
	id := parent.id + "/" + strconv.Itoa(n)
	r := tc.run

	ss.mu.Lock()
	rec := ss.m[id]
	if rec != nil && rec.Name != t.name {
		ss.mu.Unlock()
		f.err = fmt.Errorf("graph: call %d of node %q was task %q when it was recorded and is task %q now: the node must call its tasks in the same order every time it runs", n, parent.node.name, rec.Name, t.name)
		close(f.done)
		return f
	}
	if rec == nil {
		rec = &subRecord{Name: t.name}
		ss.m[id] = rec
	}
	done, result, resume := rec.Done, rec.Result, append([]any(nil), rec.Resume...)
	ss.mu.Unlock()

	sub := &task{id: id, node: &nodeSpec{name: t.name}, inline: parent.inline}
	sub.live.Store(&taskLive{up: parent})
	if done {
		// Recorded in an earlier run: the call returns what it returned then.
		defer close(f.done)
		if err := json.Unmarshal(result, &f.val); err != nil {
			f.err = fmt.Errorf("graph: the recorded result of task %q does not decode as %T (did the task change?): %w", t.name, f.val, err)
			return f
		}
		r.emitSub(parent, sub, ModeUpdates, f.val, true)
		return f
	}
	calls.wg.Add(1)
	go func() {
		defer calls.wg.Done()
		defer close(f.done)
		stc := &taskCtx{run: r, task: sub, resume: resume}
		sctx := context.WithValue(ctx, taskKey{}, stc)
		if r.modes.has(ModeTasks) {
			r.emitSub(parent, sub, ModeTasks, TaskEvent{ID: id, Name: t.name, Input: in, Triggers: []string{"__pregel_push"}}, false)
		}
		ck, err := taskCacheKey(r, t.name, t.spec.cache, in)
		cached := false
		if err == nil && ck != nil {
			var got map[cache.Key][]byte
			if got, err = r.cache.Get(ctx, []cache.Key{*ck}); err == nil {
				if data, ok := got[*ck]; ok && json.Unmarshal(data, &f.val) == nil {
					cached = true
				}
			}
		}
		switch {
		case err != nil:
			f.err = err
		case !cached:
			f.val, f.err = t.attempts(sctx, in)
		}
		r.touch(parent)
		stc.mu.Lock()
		ins, resumed := stc.interrupts, stc.resume
		stc.mu.Unlock()
		if len(ins) > 0 {
			f.err = &InterruptedError{Interrupts: ins}
			tc.mu.Lock()
			calls.interrupts = append(calls.interrupts, ins...)
			tc.mu.Unlock()
		}
		ss.mu.Lock()
		rec.Resume, rec.persisted = resumed, false
		var encErr error
		if f.err == nil {
			rec.Result, encErr = json.Marshal(f.val)
			rec.Done = encErr == nil
		}
		ss.mu.Unlock()
		if encErr != nil {
			f.err = fmt.Errorf("graph: the result of task %q cannot be stored as JSON: %w", t.name, encErr)
		}
		if ck != nil && !cached && f.err == nil && len(ins) == 0 {
			if err := r.cache.Set(context.WithoutCancel(ctx), []cache.Entry{{Key: *ck, Value: rec.Result, TTL: t.spec.cache.TTL}}); err != nil {
				f.err = fmt.Errorf("graph: caching the result of task %q: %w", t.name, err)
			}
		}
		if r.host != nil && (rec.Done || len(resumed) > 0) {
			if err := r.host.recordSub(parent, id); err != nil && f.err == nil {
				f.err = err
			}
		}
		switch {
		case len(ins) > 0:
			r.emitSub(parent, sub, ModeUpdates, ins, false)
		case f.err == nil:
			r.emitSub(parent, sub, ModeUpdates, f.val, cached)
		}
		if r.modes.has(ModeTasks) {
			ev := TaskEvent{ID: id, Name: t.name, Finished: true, Interrupts: ins}
			if f.err != nil && len(ins) == 0 {
				ev.Error = f.err.Error()
			} else if f.err == nil {
				ev.Result = f.val
			}
			r.emitSub(parent, sub, ModeTasks, ev, false)
		}
	}()
	return f
}

// attempts runs the task with its retry policy, catching a panic.
func (t *Task[In, Out]) attempts(ctx context.Context, in In) (out Out, err error) {
	call := func() (out Out, err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("task %q: panic: %v", t.name, p)
			}
		}()
		return t.fn(ctx, in)
	}
	for attempt := 1; ; attempt++ {
		out, err = call()
		if err == nil || errors.Is(err, errInterruptRaised) {
			return out, err
		}
		p := t.spec.retry
		if p == nil || attempt >= p.MaxAttempts || !retryable(p, err, ctx) || !sleep(ctx, backoff(p, attempt)) {
			return out, err
		}
	}
}

// emitSub streams an event of a functional task call: in updates mode its result (Node is the
// task's name; an interrupt comes as "__interrupt__"), in tasks mode its start and end.
func (r *run) emitSub(parent, sub *task, mode StreamMode, data any, cached bool) {
	if !r.modes.has(mode) {
		return
	}
	node := sub.node.name
	if ins, ok := data.([]Interruption); ok && mode == ModeUpdates {
		node = "__interrupt__"
		data = ins
	}
	r.emit(parent, Event{Mode: mode, NS: r.nsPath, Node: node, Step: r.step, TaskID: sub.id, Data: data, Cached: cached})
}

// Final is what an entrypoint made with [NewEntrypointFinal] returns: Value goes to the caller,
// Save is kept as the thread's previous value for the next run ([Previous]), as LangGraph's
// entrypoint.final(value=..., save=...).
type Final[Out, Save any] struct {
	Value Out
	Save  Save
}

// entryState is the state of an entrypoint's one-node graph.
type entryState[In, Out, Save any] struct {
	Input    *In   `json:"input,omitempty"`
	Output   *Out  `json:"output,omitempty"`
	Previous *Save `json:"previous,omitempty"`
}

type previousKey struct{}

type previousVal struct {
	v  any
	ok bool
}

// Previous returns, inside an entrypoint, the value its last run on the thread saved (its
// return value, or the Save of a [Final]); ok is false on a thread's first run, outside an
// entrypoint, or when T is not the entrypoint's saved type.
func Previous[T any](ctx context.Context) (T, bool) {
	p, _ := ctx.Value(previousKey{}).(previousVal)
	v, ok := p.v.(T)
	return v, ok && p.ok
}

// Entrypoint is a workflow of the functional API (LangGraph's @entrypoint): a plain Go function
// run as a graph of one node, named after the entrypoint. It has what a compiled graph has:
// threads and checkpoints with a saver (the input, the return value and the saved value are
// checkpointed), interrupts and resume, streaming, and a [Runnable] view to serve it. The tasks
// it calls ([Task]) are recorded as pending writes, so a resumed run does not run a finished
// task again.
//
// Streams: values mode yields the return value (Out) once the function returns; updates mode
// yields one update per task call (Node is the task's name, Data its result) and one for the
// entrypoint (its return value).
type Entrypoint[In, Out, Save any] struct {
	c *Compiled[entryState[In, Out, Save]]
}

// NewEntrypoint makes an entrypoint named name that runs fn. opts are a compiled graph's (Saver,
// Store, Durability, ...); its Name is the entrypoint's. The return value is also what the next
// run on the thread reads with [Previous].
func NewEntrypoint[In, Out any](name string, fn func(ctx context.Context, in In) (Out, error), opts ...CompileOptions) (*Entrypoint[In, Out, Out], error) {
	return NewEntrypointFinal(name, func(ctx context.Context, in In) (Final[Out, Out], error) {
		out, err := fn(ctx, in)
		return Final[Out, Out]{Value: out, Save: out}, err
	}, opts...)
}

// NewEntrypointFinal makes an entrypoint whose function returns a [Final]: a value for the
// caller and a distinct value saved for the next run on the thread ([Previous]).
func NewEntrypointFinal[In, Out, Save any](name string, fn func(ctx context.Context, in In) (Final[Out, Save], error), opts ...CompileOptions) (*Entrypoint[In, Out, Save], error) {
	if fn == nil {
		return nil, fmt.Errorf("graph: entrypoint %q has no function", name)
	}
	type st = entryState[In, Out, Save]
	g := New[st]()
	g.AddNode(name, func(ctx context.Context, s st) (st, error) {
		var in In
		if s.Input != nil {
			in = *s.Input
		}
		var prev previousVal
		if s.Previous != nil {
			prev = previousVal{v: *s.Previous, ok: true}
		}
		res, err := fn(context.WithValue(ctx, previousKey{}, prev), in)
		if err != nil {
			return st{}, err
		}
		return st{Output: &res.Value, Previous: &res.Save}, nil
	})
	g.AddEdge(START, name).AddEdge(name, END)
	var o CompileOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	o.Name = name
	o.InputKeys, o.OutputKeys = []string{"input"}, []string{"output"}
	c, err := g.Compile(o)
	if err != nil {
		return nil, err
	}
	c.valuesOnOutput = true
	c.present = func(v reflect.Value) any {
		if s, ok := v.Interface().(st); ok && s.Output != nil {
			return *s.Output
		}
		var zero Out
		return zero
	}
	c.view = &entryView{
		state: func(v reflect.Value) any {
			if s, ok := v.Interface().(st); ok && s.Output != nil {
				return *s.Output
			}
			return nil
		},
		input: func(v reflect.Value) any {
			if s, ok := v.Interface().(st); ok && s.Input != nil {
				return *s.Input
			}
			return nil
		},
	}
	return &Entrypoint[In, Out, Save]{c: c}, nil
}

// Name returns the entrypoint's name.
func (e *Entrypoint[In, Out, Save]) Name() string { return e.c.name }

// Invoke runs the entrypoint on in and returns its value. A run that pauses at an interrupt
// returns an *InterruptedError; resume it with [Resume] (the input is then ignored).
func (e *Entrypoint[In, Out, Save]) Invoke(ctx context.Context, in In, opts ...RunOption) (Out, error) {
	s, err := e.c.Invoke(ctx, entryState[In, Out, Save]{Input: &in}, opts...)
	var out Out
	if err == nil && s.Output != nil {
		out = *s.Output
	}
	return out, err
}

// Stream runs the entrypoint on in and yields its events (see [Entrypoint]).
func (e *Entrypoint[In, Out, Save]) Stream(ctx context.Context, in In, opts ...RunOption) iter.Seq2[Event, error] {
	return e.c.Stream(ctx, entryState[In, Out, Save]{Input: &in}, opts...)
}

// State returns the thread's state: Values is the entrypoint's last return value (Out).
func (e *Entrypoint[In, Out, Save]) State(ctx context.Context, ref checkpoint.Ref) (*StateSnapshot[Out], error) {
	s, err := e.c.State(ctx, ref)
	if err != nil {
		return nil, err
	}
	out := &StateSnapshot[Out]{Next: s.Next, Tasks: s.Tasks, Ref: s.Ref, Parent: s.Parent, Step: s.Step, Metadata: s.Metadata, CreatedAt: s.CreatedAt}
	if s.Values.Output != nil {
		out.Values = *s.Values.Output
	}
	return out, nil
}

// Runnable returns the entrypoint as a [Runnable], to serve it like any graph: Stream takes
// the JSON of In (not an object of state keys), State and History hold Out in Values, and
// StateType is In.
func (e *Entrypoint[In, Out, Save]) Runnable() Runnable { return entryRunnable[In, Out, Save]{e} }

// AddEntrypoint adds an entrypoint as a node of g, as [AddSubgraph] adds a compiled graph: in
// maps the parent's state to the entrypoint's input, out maps its return value to the parent's
// update. Its checkpoints and events have the node's namespace, and its interrupts pause the
// parent.
func AddEntrypoint[P, In, Out, Save any](g *Graph[P], name string, e *Entrypoint[In, Out, Save], in func(P) In, out func(Out) P, opts ...NodeOption) *Graph[P] {
	if e == nil || in == nil || out == nil {
		g.errs = append(g.errs, fmt.Errorf("graph: entrypoint node %q needs an entrypoint and both mapping functions", name))
		return g
	}
	type st = entryState[In, Out, Save]
	return AddSubgraph(g, name, e.c, func(p P) st {
		v := in(p)
		return st{Input: &v}
	}, func(s st) P {
		var o Out
		if s.Output != nil {
			o = *s.Output
		}
		return out(o)
	}, opts...)
}

type entryRunnable[In, Out, Save any] struct{ e *Entrypoint[In, Out, Save] }

var _ Runnable = entryRunnable[int, int, int]{}

func (r entryRunnable[In, Out, Save]) Name() string             { return r.e.c.Name() }
func (r entryRunnable[In, Out, Save]) Nodes() []string          { return r.e.c.Nodes() }
func (r entryRunnable[In, Out, Save]) Shape() Shape             { return r.e.c.Shape() }
func (r entryRunnable[In, Out, Save]) Mermaid(xray bool) string { return r.e.c.Mermaid(xray) }
func (r entryRunnable[In, Out, Save]) StateType() reflect.Type  { return reflect.TypeFor[In]() }
func (r entryRunnable[In, Out, Save]) InputKeys() []string      { return nil }

// OutputType is the type of the entrypoint's return value, for servers that describe it.
func (r entryRunnable[In, Out, Save]) OutputType() reflect.Type { return reflect.TypeFor[Out]() }
func (r entryRunnable[In, Out, Save]) OutputKeys() []string     { return nil }

// ContextType is the entrypoint's [CompileOptions.ContextType], which a server publishes as
// its context_schema and checks a run's context against.
func (r entryRunnable[In, Out, Save]) ContextType() reflect.Type { return r.e.c.ContextType() }

func (r entryRunnable[In, Out, Save]) Stream(ctx context.Context, input json.RawMessage, opts ...RunOption) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		var in In
		if len(input) > 0 && string(input) != "null" {
			if err := json.Unmarshal(input, &in); err != nil {
				yield(Event{}, fmt.Errorf("entrypoint %q: the input does not decode as %T: %w", r.e.c.name, in, err))
				return
			}
		}
		for ev, err := range r.e.Stream(ctx, in, opts...) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

func entrySnapshot[In, Out, Save any](s *StateSnapshot[entryState[In, Out, Save]]) *StateSnapshot[any] {
	if s == nil {
		return nil
	}
	var v any
	if s.Values.Output != nil {
		v = *s.Values.Output
	}
	return &StateSnapshot[any]{Values: v, Next: s.Next, Tasks: s.Tasks, Ref: s.Ref, Parent: s.Parent, Step: s.Step, Metadata: s.Metadata, CreatedAt: s.CreatedAt}
}

func (r entryRunnable[In, Out, Save]) State(ctx context.Context, ref checkpoint.Ref) (*StateSnapshot[any], error) {
	s, err := r.e.c.State(ctx, ref)
	return entrySnapshot(s), err
}

func (r entryRunnable[In, Out, Save]) History(ctx context.Context, threadID string, opts HistoryOptions) iter.Seq2[*StateSnapshot[any], error] {
	return func(yield func(*StateSnapshot[any], error) bool) {
		for s, err := range r.e.c.History(ctx, threadID, opts) {
			if !yield(entrySnapshot(s), err) {
				return
			}
		}
	}
}

// UpdateState sets the entrypoint's saved value (what [Previous] returns next run) to values,
// the JSON of Save.
func (r entryRunnable[In, Out, Save]) UpdateState(ctx context.Context, ref checkpoint.Ref, values json.RawMessage, asNode string) (checkpoint.Ref, error) {
	var save Save
	if err := json.Unmarshal(values, &save); err != nil {
		return checkpoint.Ref{}, fmt.Errorf("entrypoint %q: the update does not decode as its saved value %T: %w", r.e.c.name, save, err)
	}
	if asNode == "" {
		asNode = r.e.c.name
	}
	return r.e.c.UpdateState(ctx, ref, entryState[In, Out, Save]{Previous: &save}, asNode)
}

func (r entryRunnable[In, Out, Save]) DeleteThread(ctx context.Context, threadID string) error {
	return r.e.c.DeleteThread(ctx, threadID)
}

func (r entryRunnable[In, Out, Save]) CopyThread(ctx context.Context, from, to string) error {
	return r.e.c.CopyThread(ctx, from, to)
}

func (r entryRunnable[In, Out, Save]) PruneThread(ctx context.Context, threadID string, keep int) error {
	return r.e.c.PruneThread(ctx, threadID, keep)
}
