package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
)

// DefaultTimeout bounds a tool call when neither the tool's [Policy] nor [ExecutorOptions] set one.
const DefaultTimeout = 60 * time.Second

// ExecutorOptions configure an [Executor]. The zero value is usable: every field documents what
// its zero value means.
type ExecutorOptions struct {
	// Timeout bounds each call whose Policy sets no timeout. Zero means [DefaultTimeout]; a
	// negative value means no limit. A call with no limit runs on the caller's goroutine, as
	// there is nothing to abandon it for: cancellation reaches it through its context only.
	Timeout time.Duration
	// MaxConcurrency caps how many calls of one batch run tool code at once. A slot is freed when
	// the tool returns, not when a timed-out call is abandoned; a call waits for a slot at most its
	// timeout. Zero means all calls of a batch run at once.
	MaxConcurrency int
	// Authorize decides whether the caller in info may run t, and returns an error saying why not.
	// Nil means [RequirePermissions]: the caller must hold every permission of the tool's Policy.
	// It is called concurrently.
	Authorize func(ctx context.Context, info CallInfo, t Tool) error
	// Enabled reports whether a tool is switched on for a tenant; [*Tenants] implements it.
	// Nil means every tool is enabled for everyone.
	Enabled Enabler
	// Filters rewrite every result, error results included, in order, before the model sees it.
	// See [NewRedactor] and [LabelExternal].
	Filters []Filter
	// Propagate picks out errors that must not become error results but stop the batch and be
	// returned by [Executor.Run] unchanged, such as the graph's interrupt. Panics whose value is
	// an error are offered too. Nil means none.
	Propagate func(error) bool
	// Logger receives a record for each failed call (panics with their stack). Nil means
	// slog.Default().
	Logger *slog.Logger
}

// Enabler reports whether a tool is switched on for a tenant. Implementations must be safe for
// concurrent use.
type Enabler interface {
	Enabled(tenant, tool string) bool
}

// Filter rewrites a result before it enters the model's context. FilterResult is called
// concurrently for different results and must not keep r or c.
type Filter interface {
	FilterResult(ctx context.Context, c *FilterCall, r *Result)
}

// FilterCall describes the call whose result a [Filter] sees.
type FilterCall struct {
	// Info is the call's context, with CallID and Tool set.
	Info CallInfo
	// Policy is the tool's policy; zero for a tool the executor does not have.
	Policy Policy
	// Err is why the call failed, or nil. When it is a [*CallError] with a Kind, or an
	// [*ArgumentError], the result's text was written by the executor, not by the tool.
	Err error
}

// FromTool reports whether the result's text came from the tool (its output, or an error it
// returned) rather than from the executor (a refusal, a timeout, a panic, bad arguments).
func (c *FilterCall) FromTool() bool {
	if c.Err == nil {
		return true
	}
	var ae *ArgumentError
	if errors.As(c.Err, &ae) {
		return false
	}
	var ce *CallError
	if errors.As(c.Err, &ce) {
		return ce.Kind == nil
	}
	return true
}

// FilterFunc adapts a function to [Filter].
type FilterFunc func(ctx context.Context, c *FilterCall, r *Result)

// FilterResult calls f.
func (f FilterFunc) FilterResult(ctx context.Context, c *FilterCall, r *Result) { f(ctx, c, r) }

// RequirePermissions is the default authorization: it refuses a call when the caller lacks any of
// the permissions the tool's [Policy] lists.
func RequirePermissions(_ context.Context, info CallInfo, t Tool) error {
	if missing := info.Missing(PolicyOf(t).Permissions); len(missing) > 0 {
		return fmt.Errorf("requires permission %s", strings.Join(missing, ", "))
	}
	return nil
}

// Executor runs the tool calls a model asks for. It is safe for concurrent use.
type Executor struct {
	tools map[string]Tool
	names []string // sorted
	opts  ExecutorOptions
	log   *slog.Logger
}

// NewExecutor returns an executor for the given tools. It returns a [*DefinitionError] when a
// tool's spec is unusable (see [CheckSpec]) or two tools share a name. opts may be nil.
func NewExecutor(tools []Tool, opts *ExecutorOptions) (*Executor, error) {
	e := &Executor{tools: make(map[string]Tool, len(tools))}
	if opts != nil {
		e.opts = *opts
	}
	if e.opts.MaxConcurrency < 0 {
		return nil, fmt.Errorf("tool: ExecutorOptions.MaxConcurrency is %d; use 0 for no limit or a positive number", e.opts.MaxConcurrency)
	}
	e.log = e.opts.Logger
	if e.log == nil {
		e.log = slog.Default()
	}
	for i, t := range tools {
		if t == nil {
			return nil, &DefinitionError{Tool: fmt.Sprintf("#%d", i), Problem: "tool is nil"}
		}
		s := t.Spec()
		if err := CheckSpec(s); err != nil {
			return nil, err
		}
		if _, dup := e.tools[s.Name]; dup {
			return nil, &DefinitionError{Tool: s.Name, Problem: "two tools have this name", Hint: "give each tool a unique name, or a prefix per MCP server"}
		}
		e.tools[s.Name] = t
		e.names = append(e.names, s.Name)
	}
	sort.Strings(e.names)
	return e, nil
}

// Tool returns the tool with the given name.
func (e *Executor) Tool(name string) (Tool, bool) {
	t, ok := e.tools[name]
	return t, ok
}

// Tools returns all the executor's tools, sorted by name.
func (e *Executor) Tools() []Tool {
	tools := make([]Tool, len(e.names))
	for i, n := range e.names {
		tools[i] = e.tools[n]
	}
	return tools
}

// Specs returns, sorted by name, the specs of the tools the caller in ctx may use: enabled for its
// tenant and authorized for it. Bind these to the model so it is not offered tools it cannot run.
func (e *Executor) Specs(ctx context.Context) []model.ToolSpec {
	info, _ := CallInfoFrom(ctx)
	var specs []model.ToolSpec
	for _, n := range e.names {
		t := e.tools[n]
		if e.visible(ctx, info, n, t) {
			specs = append(specs, t.Spec())
		}
	}
	return specs
}

func (e *Executor) visible(ctx context.Context, info CallInfo, name string, t Tool) bool {
	if e.opts.Enabled != nil && !e.opts.Enabled.Enabled(info.Tenant, name) {
		return false
	}
	return e.authorize(ctx, info, t) == nil
}

func (e *Executor) authorize(ctx context.Context, info CallInfo, t Tool) error {
	if e.opts.Authorize != nil {
		return e.opts.Authorize(ctx, info, t)
	}
	return RequirePermissions(ctx, info, t)
}

// Outcome is what became of one tool call.
type Outcome struct {
	Call message.ToolCall
	// Message is the tool message to append to the conversation; IsError is set on failure.
	Message message.Message
	// Result is the filtered result, never nil. Its Command, if any, is for the graph to apply.
	Result *Result
	// Err says why the call failed: an [*ArgumentError] or a [*CallError]. Nil on success, and
	// also when the tool itself returned a result with IsError set.
	Err error
	// Duration is how long the call took, checks included.
	Duration time.Duration
}

// Messages returns the tool messages of outcomes, in order.
func Messages(outcomes []Outcome) []message.Message {
	msgs := make([]message.Message, len(outcomes))
	for i, o := range outcomes {
		msgs[i] = o.Message
	}
	return msgs
}

// Commands returns the non-nil commands of outcomes, in call order.
func Commands(outcomes []Outcome) []any {
	var cmds []any
	for _, o := range outcomes {
		if o.Result != nil && o.Result.Command != nil {
			cmds = append(cmds, o.Result.Command)
		}
	}
	return cmds
}

// Run runs calls concurrently and returns one outcome per call, in call order. Failures of any
// kind (an unknown tool, malformed or mistyped arguments, a refused permission, a disabled tool,
// an error, a panic, a timeout) become error results the model can read; Run itself returns an
// error only when ctx ends (the outcomes are then still complete, unfinished calls reporting the
// cancellation) or when a call fails with an error that Propagate selects.
//
// Each call sees ctx's [CallInfo] with CallID and Tool filled in. A call that outlives its timeout
// is abandoned: Run reports it and returns, while the tool's goroutine ends whenever the tool
// returns, so tools should honour their context. A call with no timeout (a negative
// ExecutorOptions.Timeout or Policy.Timeout) runs on the caller's goroutine when it is the only
// one, and Run waits for it even when ctx ends.
func (e *Executor) Run(ctx context.Context, calls []message.ToolCall) ([]Outcome, error) {
	outcomes := make([]Outcome, len(calls))
	base, _ := CallInfoFrom(ctx)
	var (
		wg        sync.WaitGroup
		sem       chan struct{}
		mu        sync.Mutex
		propagate error
	)
	if len(calls) == 1 {
		// runOne never blocks past the call's timeout, so a lone call needs no goroutine here,
		// nor a context of its own (there are no other calls to stop).
		o, perr := e.runOne(ctx, base, calls[0], nil)
		outcomes[0] = o
		if perr != nil {
			return outcomes, perr
		}
		return outcomes, ctx.Err()
	}
	if e.opts.MaxConcurrency > 0 && e.opts.MaxConcurrency < len(calls) {
		sem = make(chan struct{}, e.opts.MaxConcurrency)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i, call := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, perr := e.runOne(runCtx, base, call, sem)
			outcomes[i] = o
			if perr != nil {
				mu.Lock()
				if propagate == nil {
					propagate = perr
				}
				mu.Unlock()
				cancel()
			}
		}()
	}
	wg.Wait()
	if propagate != nil {
		return outcomes, propagate
	}
	if err := ctx.Err(); err != nil {
		return outcomes, err
	}
	return outcomes, nil
}

// runOne runs a single call and never panics. The second result is an error Propagate selected.
func (e *Executor) runOne(ctx context.Context, base CallInfo, call message.ToolCall, sem chan struct{}) (Outcome, error) {
	start := time.Now()
	info := base
	info.CallID, info.Tool = call.ID, call.Name
	o := Outcome{Call: call}
	if obs := callObserverFrom(ctx); obs != nil {
		obs.ToolStarted(ctx, call)
		defer func() { obs.ToolEnded(ctx, o) }()
	}
	t, ok := e.tools[call.Name]
	var policy Policy
	var res *Result
	var err error
	switch {
	case !ok:
		err = &CallError{Tool: call.Name, CallID: call.ID, Kind: ErrUnknownTool, Hint: e.unknownHint(ctx, info, call.Name)}
	case e.opts.Enabled != nil && !e.opts.Enabled.Enabled(info.Tenant, call.Name):
		err = &CallError{Tool: call.Name, CallID: call.ID, Kind: ErrDisabled,
			Hint: "It is not available here; continue without it"}
	default:
		policy = PolicyOf(t)
		if aerr := e.authorize(ctx, info, t); aerr != nil {
			err = &CallError{Tool: call.Name, CallID: call.ID, Kind: ErrPermissionDenied, Err: aerr,
				Hint: "Do not retry it; tell the user this action needs a permission they do not have"}
			break
		}
		if ctx.Err() != nil {
			err = &CallError{Tool: call.Name, CallID: call.ID, Err: ctx.Err(), Hint: "The run was cancelled before the tool started"}
			break
		}
		res, err = e.invoke(ctx, info, t, policy, call, sem)
	}
	if err != nil && e.opts.Propagate != nil && e.opts.Propagate(err) {
		o.Err = err
		o.Result = &Result{Content: err.Error(), IsError: true}
		o.Message = message.ToolError(call.ID, call.Name, err.Error())
		o.Duration = time.Since(start)
		return o, err
	}
	if err != nil {
		res = &Result{Content: err.Error(), IsError: true}
		o.Err = err
	}
	if res == nil {
		res = &Result{}
	}
	if len(e.opts.Filters) > 0 {
		fc := &FilterCall{Info: info, Policy: policy, Err: err}
		for _, f := range e.opts.Filters {
			f.FilterResult(ctx, fc, res)
		}
	}
	if err != nil {
		// Logged after the filters, so a secret in an error message does not reach the logs.
		e.log.LogAttrs(ctx, slog.LevelWarn, "tool call failed",
			slog.String("tool", call.Name), slog.String("call_id", call.ID), slog.String("error", res.Content))
	}
	o.Result = res
	o.Message = toMessage(call, res)
	o.Duration = time.Since(start)
	return o, nil
}

type callReturn struct {
	res *Result
	err error
}

// invoke calls t under its timeout, turning a panic into an error and abandoning a call that does
// not return in time. With sem set, the call first takes a slot, waiting at most its timeout, and
// the slot is freed only when the tool returns, so MaxConcurrency bounds running tool code even
// when calls are abandoned.
func (e *Executor) invoke(ctx context.Context, info CallInfo, t Tool, p Policy, call message.ToolCall, sem chan struct{}) (*Result, error) {
	call1 := func(ctx context.Context) (*Result, error) { return t.Call(ctx, call.Arguments) }
	if pr, ok := t.(preparer); ok {
		// Arguments are checked here, where the stack is already grown, rather than on the
		// call's fresh goroutine.
		run, err := prepareSafely(pr, call)
		if err != nil {
			return nil, err
		}
		call1 = run
	}
	timeout := p.Timeout
	if timeout == 0 {
		timeout = e.opts.Timeout
	}
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if sem != nil {
		var expired <-chan time.Time
		if timeout > 0 {
			timer := time.NewTimer(timeout)
			defer timer.Stop()
			expired = timer.C
		}
		select {
		case sem <- struct{}{}:
		case <-expired:
			return nil, &CallError{Tool: call.Name, CallID: call.ID, Kind: ErrTimeout,
				Err:  fmt.Errorf("no free slot after %v: %d calls were still running", timeout, cap(sem)),
				Hint: "Too many tool calls at once; make fewer calls in one turn"}
		case <-ctx.Done():
			return nil, &CallError{Tool: call.Name, CallID: call.ID, Err: ctx.Err(), Hint: "The run was cancelled before the tool started"}
		}
	}
	callCtx := WithCallInfo(ctx, info)
	if timeout < 0 {
		// No timeout to enforce, so nothing to abandon: the call runs on the caller's goroutine,
		// sparing a goroutine and the two hand-offs between threads that waiting for it costs.
		// Cancellation reaches the tool through its context, and Run returns once it does.
		r := e.callSafely(callCtx, call, call1, sem)
		if r.err != nil && ctx.Err() != nil && !e.keepsOwnError(r.err) {
			return nil, &CallError{Tool: call.Name, CallID: call.ID, Err: ctx.Err(), Hint: "The run was cancelled while the tool was running"}
		}
		return e.returned(r, callCtx, call, timeout)
	}
	var cancel context.CancelFunc
	callCtx, cancel = context.WithTimeoutCause(callCtx, timeout, ErrTimeout)
	defer cancel()

	done := make(chan callReturn, 1) // buffered: an abandoned call must still be able to finish
	go func() { done <- e.callSafely(callCtx, call, call1, sem) }()

	select {
	case r := <-done:
		return e.returned(r, callCtx, call, timeout)
	case <-callCtx.Done():
		if errors.Is(context.Cause(callCtx), ErrTimeout) {
			return nil, timeoutError(call, timeout)
		}
		return nil, &CallError{Tool: call.Name, CallID: call.ID, Err: ctx.Err(), Hint: "The run was cancelled while the tool was running"}
	}
}

// callSafely runs a prepared call, freeing its concurrency slot (if it holds one) when the
// tool returns and turning a panic into an error.
func (e *Executor) callSafely(ctx context.Context, call message.ToolCall, run func(context.Context) (*Result, error), sem chan struct{}) (r callReturn) {
	if sem != nil {
		defer func() { <-sem }()
	}
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		if err, ok := p.(error); ok && e.opts.Propagate != nil && e.opts.Propagate(err) {
			r = callReturn{err: err}
			return
		}
		// The panic value goes to the model through the filters; the log gets the stack.
		e.log.LogAttrs(ctx, slog.LevelError, "tool panicked",
			slog.String("tool", call.Name), slog.String("call_id", call.ID),
			slog.String("stack", string(debug.Stack())))
		r = callReturn{err: &CallError{Tool: call.Name, CallID: call.ID, Kind: ErrPanic, Err: fmt.Errorf("%v", p),
			Hint: "This is a bug in the tool; try another approach or tell the user it failed"}}
	}()
	res, err := run(ctx)
	return callReturn{res, err}
}

// keepsOwnError reports whether a call's error is returned as it is rather than wrapped: the
// executor's own errors and those Propagate selects.
func (e *Executor) keepsOwnError(err error) bool {
	var ae *ArgumentError
	var ce *CallError
	return errors.As(err, &ae) || errors.As(err, &ce) || (e.opts.Propagate != nil && e.opts.Propagate(err))
}

// returned turns what a call returned into invoke's results.
func (e *Executor) returned(r callReturn, callCtx context.Context, call message.ToolCall, timeout time.Duration) (*Result, error) {
	switch {
	case r.err == nil:
		return r.res, nil
	case e.keepsOwnError(r.err):
		return nil, r.err
	case timeout > 0 && errors.Is(context.Cause(callCtx), ErrTimeout):
		return nil, timeoutError(call, timeout)
	}
	return nil, &CallError{Tool: call.Name, CallID: call.ID, Err: r.err}
}

// preparer is a tool that can check and decode its arguments before it is called (*Func).
type preparer interface {
	prepare(args json.RawMessage) (func(context.Context) (*Result, error), error)
}

// prepareSafely prepares a call, turning a panic into the error a panicking tool gets.
func prepareSafely(p preparer, call message.ToolCall) (run func(context.Context) (*Result, error), err error) {
	defer func() {
		if r := recover(); r != nil {
			run, err = nil, &CallError{Tool: call.Name, CallID: call.ID, Kind: ErrPanic, Err: fmt.Errorf("checking the arguments: %v", r),
				Hint: "This is a bug in the tool; try another approach or tell the user it failed"}
		}
	}()
	return p.prepare(call.Arguments)
}

func timeoutError(call message.ToolCall, d time.Duration) error {
	return &CallError{Tool: call.Name, CallID: call.ID, Kind: ErrTimeout, Err: fmt.Errorf("no answer after %v", d),
		Hint: "The tool may be slow or stuck; try again with a smaller request, or continue without it"}
}

func (e *Executor) unknownHint(ctx context.Context, info CallInfo, name string) string {
	var avail []string
	best, bestD := "", 4
	for _, n := range e.names {
		if !e.visible(ctx, info, n, e.tools[n]) {
			continue
		}
		avail = append(avail, n)
		if d := distance(strings.ToLower(name), strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	if len(avail) == 0 {
		return "No tools are available; answer without tools"
	}
	hint := ""
	if best != "" {
		hint = fmt.Sprintf("Did you mean %q? ", best)
	}
	return hint + "Call one of: " + strings.Join(avail, ", ")
}

// distance is the Levenshtein distance between a and b, bounded in cost by short tool names.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func toMessage(call message.ToolCall, r *Result) message.Message {
	var m message.Message
	if r.IsError {
		m = message.ToolError(call.ID, call.Name, r.Text())
	} else {
		m = message.ToolResult(call.ID, call.Name, r.Text())
	}
	if len(r.Parts) > 0 {
		m.Parts = append([]message.Part(nil), r.Parts...)
	}
	if len(r.Structured) > 0 {
		m.Metadata = map[string]any{"structured": json.RawMessage(r.Structured)}
	}
	return m
}
