package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"sync"

	"github.com/trellis-go/trellis/internal/runctx"
	"github.com/trellis-go/trellis/store"
)

// taskCtx is what a running node can reach through its context.
type taskCtx struct {
	run    *run
	task   *task
	mu     sync.Mutex
	writes []write
	// Interrupts: the values this task resumed with so far, in order, and how many Interrupt
	// calls the current attempt has made.
	resume     []any
	calls      int
	interrupts []Interruption
	// streamed is the ID of the last message chunk the task sent (EmitMessage).
	streamed string
	// fn follows the functional tasks ([Task]) this attempt calls; nil until it calls one.
	fn *taskCalls
}

// taskCalls numbers the functional tasks a node's attempt calls, waits for them, and collects
// their interrupts.
type taskCalls struct {
	n          int
	wg         sync.WaitGroup
	interrupts []Interruption
}

func (tc *taskCtx) waitTasks() {
	tc.mu.Lock()
	fn := tc.fn
	tc.mu.Unlock()
	if fn != nil {
		fn.wg.Wait()
	}
}

func (tc *taskCtx) taskInterrupts() []Interruption {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.fn == nil {
		return nil
	}
	return tc.fn.interrupts
}

type taskKey struct{}

func taskFrom(ctx context.Context) *taskCtx {
	tc, _ := ctx.Value(taskKey{}).(*taskCtx)
	return tc
}

// Interruption is a pause a node asked for, waiting for a value from outside.
type Interruption struct {
	// ID identifies the interrupt when resuming several at once.
	ID string `json:"id"`
	// Value is what the node surfaced: a question, a proposal to approve, ...
	Value any `json:"value"`
	// Node is the node that paused; NS the subgraph namespace it ran in ("" for the root graph).
	Node string `json:"node"`
	NS   string `json:"ns,omitempty"`
	// When is "before" or "after" for a static interrupt, empty for one raised by a node.
	When string `json:"when,omitempty"`
}

// InterruptedError ends a run that paused at one or more interrupts. Resume the thread with
// [Resume] (one interrupt) or [ResumeMap] (several, by ID).
type InterruptedError struct {
	Interrupts []Interruption
}

func (e *InterruptedError) Error() string {
	if len(e.Interrupts) == 1 {
		in := e.Interrupts[0]
		if in.When != "" {
			return fmt.Sprintf("graph: run paused %s node %q", in.When, in.Node)
		}
		return fmt.Sprintf("graph: run paused at an interrupt in node %q (id %s)", in.Node, in.ID)
	}
	return fmt.Sprintf("graph: run paused at %d interrupts", len(e.Interrupts))
}

// errInterruptRaised is returned by [Interrupt] to the node, which should return it.
var errInterruptRaised = &InterruptedError{}

// Interrupt pauses the run and surfaces value to the caller. The node should return the error at
// once: when the thread is resumed, the node runs again from its start and this call returns the
// resume value instead. A node may call Interrupt several times; each call is matched with a resume
// value by its order in the node.
func Interrupt(ctx context.Context, value any) (any, error) {
	tc := taskFrom(ctx)
	if tc == nil {
		return nil, fmt.Errorf("graph: Interrupt called outside a running node")
	}
	if tc.run.saver == nil {
		return nil, fmt.Errorf("graph: node %q called Interrupt, but the graph has no checkpoint saver to resume from (set CompileOptions.Saver)", tc.task.node.name)
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	i := tc.calls
	tc.calls++
	if i < len(tc.resume) {
		return tc.resume[i], nil
	}
	id := tc.task.id + "." + strconv.Itoa(i)
	if v, ok := tc.run.resumeMap[id]; ok {
		tc.resume = append(tc.resume, v)
		return v, nil
	}
	tc.interrupts = append(tc.interrupts, Interruption{ID: id, Value: value, Node: tc.task.node.name, NS: tc.run.ns})
	return nil, errInterruptRaised
}

// InterruptAs is [Interrupt] with the resume value decoded into T (values that crossed JSON,
// such as a resume sent over HTTP, arrive as maps and are converted).
func InterruptAs[T any](ctx context.Context, value any) (T, error) {
	var out T
	v, err := Interrupt(ctx, value)
	if err != nil {
		return out, err
	}
	if t, ok := v.(T); ok {
		return t, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return out, fmt.Errorf("graph: resume value %T cannot be read as %T: %w", v, out, err)
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return out, fmt.Errorf("graph: resume value %s cannot be read as %T: %w", data, out, err)
	}
	return out, nil
}

func addWrite(ctx context.Context, key string, value any, overwrite bool) error {
	tc := taskFrom(ctx)
	if tc == nil {
		return fmt.Errorf("graph: write to %q outside a running node", key)
	}
	tc.run.touch(tc.task)
	ch, ok := tc.run.schema().byName[key]
	if !ok {
		return fmt.Errorf("graph: node %q writes unknown state key %q", tc.task.node.name, key)
	}
	if ch.kind == kindManaged {
		return fmt.Errorf("graph: node %q writes state key %q, a managed value (%s) the runtime fills; read it, do not write it", tc.task.node.name, key, ch.typ)
	}
	v := reflect.ValueOf(value)
	if !v.IsValid() {
		v = reflect.Zero(ch.typ)
	}
	if !v.Type().AssignableTo(ch.typ) {
		return fmt.Errorf("graph: node %q writes %T to state key %q, which holds %s", tc.task.node.name, value, key, ch.typ)
	}
	tc.mu.Lock()
	tc.writes = append(tc.writes, write{ch: ch, val: v, overwrite: overwrite})
	tc.mu.Unlock()
	return nil
}

// Write records a write of value to the state key named key, applied through the key's reducer
// with the node's other writes. Use it to write a zero value, which a returned partial state cannot
// express.
func Write(ctx context.Context, key string, value any) error { return addWrite(ctx, key, value, false) }

// Overwrite replaces the value of the state key named key, bypassing its reducer: for example to
// replace a whole list that normally only grows.
func Overwrite(ctx context.Context, key string, value any) error {
	return addWrite(ctx, key, value, true)
}

// Emit sends value to the run's stream in the custom mode.
func Emit(ctx context.Context, value any) {
	tc := taskFrom(ctx)
	if tc == nil {
		return
	}
	tc.run.touch(tc.task)
	if tc.run.modes.has(ModeCustom) {
		tc.run.emitTask(tc.task, ModeCustom, value)
	}
}

// EmitMessage sends a model's streamed chunk to the run's stream in the messages mode. Model
// helpers call it for every token chunk so that a UI can show text as it is written.
func EmitMessage(ctx context.Context, chunk MessageChunk) {
	tc := taskFrom(ctx)
	if tc == nil {
		return
	}
	tc.run.touch(tc.task)
	if id := chunk.Message.ID; id != "" {
		tc.mu.Lock()
		tc.streamed = id
		tc.mu.Unlock()
	}
	if tc.run.modes.has(ModeMessages) {
		tc.run.emitTask(tc.task, ModeMessages, chunk)
	}
}

// StreamedMessageID returns the ID of the last message chunk the running node sent with
// [EmitMessage] (in this attempt or an earlier one), or "" when it sent none. A node that
// streams an answer and then returns it as a message it builds itself gives that message this
// ID, so that a reader of the messages stream sees the chunks and the final message as one
// message (LangGraph's clients match them by ID; with two IDs they show the answer twice).
func StreamedMessageID(ctx context.Context) string {
	tc := taskFrom(ctx)
	if tc == nil {
		return ""
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.streamed
}

// Info describes the running node to itself.
type Info struct {
	Node     string
	TaskID   string
	Step     int
	ThreadID string
	NS       string
	// Config holds the run's configurable values (see [WithConfig]).
	Config map[string]any
	// Context is the run's context (see [WithContext]), nil when it has none; [Context] reads
	// it typed.
	Context any
}

// InfoFrom returns what the context says about the running node; ok is false outside a node.
func InfoFrom(ctx context.Context) (Info, bool) {
	tc := taskFrom(ctx)
	if tc == nil {
		return Info{}, false
	}
	r := tc.run
	rc, _ := runctx.Value(ctx)
	return Info{Node: tc.task.node.name, TaskID: tc.task.id, Step: r.step, ThreadID: r.threadID, NS: r.ns, Config: r.config, Context: rc}, true
}

// StoreFrom returns the store given in CompileOptions.Store (or the parent graph's), or nil.
func StoreFrom(ctx context.Context) store.Store {
	if tc := taskFrom(ctx); tc != nil {
		return tc.run.store
	}
	return nil
}
