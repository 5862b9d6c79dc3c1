package tool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/tool"
)

type none struct{}

// bundle holds the collaborators of an executor test.
type bundle struct {
	exec    *tool.Executor
	release chan struct{} // closing it lets the "hang" tool return
	logs    *bytes.Buffer
	started atomic.Int32 // calls of "slow" that started
}

// setup returns an executor over a fixed set of tools that succeed, fail, panic, hang, need
// permissions or return external content. opts may be nil; Logger is set by setup.
func setup(t *testing.T, opts *tool.ExecutorOptions) *bundle {
	t.Helper()
	b := &bundle{release: make(chan struct{}), logs: &bytes.Buffer{}}
	t.Cleanup(func() {
		select {
		case <-b.release:
		default:
			close(b.release)
		}
	})
	tools := []tool.Tool{
		newWeather(t),
		tool.Must(tool.New("echo", "Echo text.", func(ctx context.Context, a struct {
			Text string `json:"text"`
		}) (string, error) {
			info, _ := tool.CallInfoFrom(ctx)
			return a.Text + " for " + info.User + " (" + info.CallID + ")", nil
		})),
		tool.Must(tool.New("fail", "Always fails.", func(ctx context.Context, _ none) (string, error) {
			return "", errors.New("upstream returned 503")
		})),
		tool.Must(tool.New("boom", "Panics.", func(ctx context.Context, _ none) (string, error) {
			var rows []string
			return rows[len(rows)+2], nil // index out of range
		})),
		tool.WithPolicy(tool.Must(tool.New("hang", "Ignores its context.", func(ctx context.Context, _ none) (string, error) {
			<-b.release
			return "late", nil
		})), tool.Policy{Timeout: 50 * time.Millisecond}),
		tool.Must(tool.New("slow", "Honours its context.", func(ctx context.Context, a struct {
			Ms int `json:"ms"`
		}) (string, error) {
			b.started.Add(1)
			select {
			case <-time.After(time.Duration(a.Ms) * time.Millisecond):
				return "slept", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		})),
		tool.WithPolicy(tool.Must(tool.New("delete_user", "Deletes a user.", func(ctx context.Context, _ none) (string, error) {
			return "deleted", nil
		})), tool.Policy{Permissions: []string{"users:write", "admin"}}),
		tool.Must(tool.New("route", "Returns a command.", func(ctx context.Context, _ none) (tool.Result, error) {
			return tool.Result{Content: "routing", Command: "goto:review"}, nil
		})),
	}
	o := tool.ExecutorOptions{}
	if opts != nil {
		o = *opts
	}
	o.Logger = slog.New(slog.NewTextHandler(b.logs, nil))
	exec, err := tool.NewExecutor(tools, &o)
	if err != nil {
		t.Fatal(err)
	}
	b.exec = exec
	return b
}

func call(id, name, args string) message.ToolCall {
	return message.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func userCtx(user string, perms ...string) context.Context {
	return tool.WithCallInfo(context.Background(), tool.CallInfo{User: user, Tenant: "acme", Permissions: perms})
}

func TestRunTurnsEveryFailureIntoAnErrorResult(t *testing.T) {
	defer goleak.VerifyNone(t)
	b := setup(t, nil)
	calls := []message.ToolCall{
		call("c1", "echo", `{"text":"hi"}`),
		call("c2", "wether", `{}`),
		call("c3", "weather", `{"city":`),
		call("c4", "weather", `{"city":7,"days":3}`),
		call("c5", "fail", `{}`),
		call("c6", "boom", `{}`),
		call("c7", "hang", `{}`),
		call("c8", "delete_user", `{}`),
		call("c9", "route", `{}`),
	}
	outs, err := b.exec.Run(userCtx("ana"), calls)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		isError bool
		kind    error
		text    string
	}{
		{false, nil, "hi for ana (c1)"},
		{true, tool.ErrUnknownTool, `Did you mean "weather"?`},
		{true, tool.ErrInvalidArguments, "arguments are not valid JSON"},
		{true, tool.ErrInvalidArguments, "city: expected a string, got integer 7"},
		{true, nil, `tool: "fail" failed: upstream returned 503`},
		{true, tool.ErrPanic, "index out of range"},
		{true, tool.ErrTimeout, "no answer after 50ms"},
		{true, tool.ErrPermissionDenied, "requires permission users:write, admin"},
		{false, nil, "routing"},
	}
	if len(outs) != len(calls) {
		t.Fatalf("got %d outcomes for %d calls", len(outs), len(calls))
	}
	for i, w := range want {
		o := outs[i]
		if o.Call.ID != calls[i].ID || o.Message.ToolCallID != calls[i].ID || o.Message.Name != calls[i].Name {
			t.Errorf("outcome %d answers %q/%q, want call %q (results must come back in call order)", i, o.Call.ID, o.Message.ToolCallID, calls[i].ID)
		}
		if o.Message.Role != message.RoleTool || o.Message.IsError != w.isError || o.Result.IsError != w.isError {
			t.Errorf("%s: role %q, IsError %v, want tool and %v", calls[i].ID, o.Message.Role, o.Message.IsError, w.isError)
		}
		if !strings.Contains(o.Message.Content, w.text) {
			t.Errorf("%s: content %q does not contain %q", calls[i].ID, o.Message.Content, w.text)
		}
		if w.kind != nil && !errors.Is(o.Err, w.kind) {
			t.Errorf("%s: err %v is not %v", calls[i].ID, o.Err, w.kind)
		}
		if !w.isError && o.Err != nil {
			t.Errorf("%s: unexpected err %v", calls[i].ID, o.Err)
		}
	}
	if got := tool.Commands(outs); len(got) != 1 || got[0] != "goto:review" {
		t.Errorf("commands = %v", got)
	}
	if msgs := tool.Messages(outs); len(msgs) != len(calls) || msgs[0].Content != outs[0].Message.Content {
		t.Errorf("Messages = %v", msgs)
	}
	if !strings.Contains(b.logs.String(), "tool panicked") {
		t.Errorf("panic was not logged: %s", b.logs)
	}
	close(b.release) // let the abandoned "hang" goroutine finish before goleak looks
	time.Sleep(10 * time.Millisecond)
}

// barrier returns a tool whose calls each wait until n calls are in flight at once, and which
// records the highest number in flight. Run sequentially, its first call would wait for its timeout.
func barrier(n int32, peak *atomic.Int32) tool.Tool {
	var inflight atomic.Int32
	arrived := make(chan struct{})
	var once sync.Once
	return tool.Must(tool.New("barrier", "", func(ctx context.Context, _ none) (string, error) {
		cur := inflight.Add(1)
		defer inflight.Add(-1)
		for {
			p := peak.Load()
			if cur <= p || peak.CompareAndSwap(p, cur) {
				break
			}
		}
		if cur == n {
			once.Do(func() { close(arrived) })
		}
		select {
		case <-arrived:
			return "met", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}))
}

func TestRunIsConcurrent(t *testing.T) {
	var peak atomic.Int32
	exec, err := tool.NewExecutor([]tool.Tool{barrier(8, &peak)}, &tool.ExecutorOptions{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	calls := make([]message.ToolCall, 8)
	for i := range calls {
		calls[i] = call(string(rune('a'+i)), "barrier", `{}`)
	}
	outs, err := exec.Run(context.Background(), calls)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if o.Message.Content != "met" {
			t.Fatalf("call %s: %q (%v); the calls did not run concurrently", o.Call.ID, o.Message.Content, o.Err)
		}
	}
	if peak.Load() != 8 {
		t.Errorf("peak in flight = %d, want 8", peak.Load())
	}
}

func TestRunMaxConcurrency(t *testing.T) {
	var peak atomic.Int32
	// The barrier wants 3 at once, which MaxConcurrency 2 forbids: every call must time out, and
	// no more than two may ever run together.
	exec, err := tool.NewExecutor([]tool.Tool{barrier(3, &peak)}, &tool.ExecutorOptions{MaxConcurrency: 2, Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	calls := make([]message.ToolCall, 4)
	for i := range calls {
		calls[i] = call(string(rune('a'+i)), "barrier", `{}`)
	}
	outs, err := exec.Run(context.Background(), calls)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if !errors.Is(o.Err, tool.ErrTimeout) {
			t.Errorf("outcome err = %v, want timeout", o.Err)
		}
	}
	if p := peak.Load(); p != 2 {
		t.Errorf("peak in flight = %d, want 2", p)
	}
	if _, err := tool.NewExecutor(nil, &tool.ExecutorOptions{MaxConcurrency: -1}); err == nil {
		t.Error("negative MaxConcurrency accepted")
	}
}

func TestRunEmptyBatch(t *testing.T) {
	b := setup(t, nil)
	outs, err := b.exec.Run(context.Background(), nil)
	if err != nil || len(outs) != 0 {
		t.Errorf("Run(nil) = %v, %v", outs, err)
	}
}

func TestRunAlreadyCancelled(t *testing.T) {
	b := setup(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	outs, err := b.exec.Run(ctx, []message.ToolCall{call("a", "echo", `{"text":"x"}`)})
	if !errors.Is(err, context.Canceled) || !outs[0].Message.IsError || outs[0].Message.ToolCallID != "a" {
		t.Errorf("Run under a cancelled context = %+v, %v", outs, err)
	}
}

func TestRunCancelled(t *testing.T) {
	defer goleak.VerifyNone(t)
	b := setup(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	outs, err := b.exec.Run(ctx, []message.ToolCall{call("a", "slow", `{"ms":5000}`), call("b", "echo", `{"text":"x"}`)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if !outs[0].Message.IsError || !strings.Contains(outs[0].Message.Content, "cancelled") {
		t.Errorf("cancelled call: %+v", outs[0].Message)
	}
	if outs[1].Message.IsError {
		t.Errorf("finished call reported as error: %+v", outs[1].Message)
	}
}

var errInterrupt = errors.New("graph: interrupt")

func TestRunPropagate(t *testing.T) {
	stop := tool.Must(tool.New("ask_human", "", func(ctx context.Context, _ none) (string, error) {
		return "", errInterrupt
	}))
	stopPanic := tool.Must(tool.New("ask_human_panic", "", func(ctx context.Context, _ none) (string, error) {
		panic(errInterrupt)
	}))
	exec, err := tool.NewExecutor([]tool.Tool{stop, stopPanic}, &tool.ExecutorOptions{
		Propagate: func(err error) bool { return errors.Is(err, errInterrupt) },
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ask_human", "ask_human_panic"} {
		_, err := exec.Run(context.Background(), []message.ToolCall{call("1", name, `{}`)})
		if !errors.Is(err, errInterrupt) {
			t.Errorf("%s: err = %v, want the interrupt returned unchanged", name, err)
		}
	}
}

func TestTenantsAndSpecs(t *testing.T) {
	var tenants tool.Tenants
	tenants.Disable(tool.AllTenants, "delete_user", "route")
	tenants.Enable("acme", "route")
	b := setup(t, &tool.ExecutorOptions{Enabled: &tenants})

	names := func(ctx context.Context) string {
		var n []string
		for _, s := range b.exec.Specs(ctx) {
			n = append(n, s.Name)
		}
		return strings.Join(n, ",")
	}
	if got := names(userCtx("ana")); got != "boom,echo,fail,hang,route,slow,weather" {
		t.Errorf("acme without permissions sees %s", got)
	}
	other := tool.WithCallInfo(context.Background(), tool.CallInfo{Tenant: "globex", Permissions: []string{"*"}})
	if got := names(other); got != "boom,echo,fail,hang,slow,weather" {
		t.Errorf("globex sees %s", got)
	}
	outs, _ := b.exec.Run(other, []message.ToolCall{call("1", "route", `{}`), call("2", "delete_user", `{}`)})
	for _, o := range outs {
		if !errors.Is(o.Err, tool.ErrDisabled) {
			t.Errorf("%s for globex: err = %v, want ErrDisabled", o.Call.Name, o.Err)
		}
	}
	tenants.Enable("globex", "delete_user")
	outs, _ = b.exec.Run(other, []message.ToolCall{call("1", "delete_user", `{}`)})
	if outs[0].Err != nil || outs[0].Message.Content != "deleted" {
		t.Errorf("delete_user with * permission after enabling: %+v", outs[0])
	}
	tenants.Reset("globex")
	if tenants.Enabled("globex", "delete_user") {
		t.Error("Reset kept the tenant's own setting")
	}
	// An unknown tool's hint lists only what the caller may use.
	outs, _ = b.exec.Run(other, []message.ToolCall{call("1", "nope", `{}`)})
	if msg := outs[0].Message.Content; strings.Contains(msg, "route") || !strings.Contains(msg, "Call one of: boom") {
		t.Errorf("unknown-tool hint = %q", msg)
	}
}

func TestCustomAuthorize(t *testing.T) {
	b := setup(t, &tool.ExecutorOptions{Authorize: func(ctx context.Context, info tool.CallInfo, t tool.Tool) error {
		if info.User != "root" && t.Spec().Name == "echo" {
			return errors.New("echo is for root only")
		}
		return nil
	}})
	outs, _ := b.exec.Run(userCtx("ana"), []message.ToolCall{call("1", "echo", `{"text":"x"}`), call("2", "delete_user", `{}`)})
	if !errors.Is(outs[0].Err, tool.ErrPermissionDenied) || !strings.Contains(outs[0].Message.Content, "echo is for root only") {
		t.Errorf("echo: %+v", outs[0])
	}
	if outs[1].Err != nil {
		t.Errorf("custom Authorize replaces the permission check, but delete_user failed: %v", outs[1].Err)
	}
}

func TestNewExecutorRejectsBadTools(t *testing.T) {
	w := tool.Must(tool.New("same", "", func(ctx context.Context, _ none) (string, error) { return "", nil }))
	if _, err := tool.NewExecutor([]tool.Tool{w, w}, nil); !errors.Is(err, tool.ErrInvalidTool) || !strings.Contains(err.Error(), "two tools have this name") {
		t.Errorf("duplicate: %v", err)
	}
	if _, err := tool.NewExecutor([]tool.Tool{nil}, nil); !errors.Is(err, tool.ErrInvalidTool) {
		t.Errorf("nil tool: %v", err)
	}
	if _, err := tool.NewExecutor([]tool.Tool{rawTool{name: "bad name"}}, nil); !errors.Is(err, tool.ErrInvalidTool) {
		t.Errorf("bad name: %v", err)
	}
}

// rawTool is a hand-written Tool, as an MCP tool or a graph-as-tool would be.
type rawTool struct {
	name string
	fn   func(ctx context.Context, args json.RawMessage) (*tool.Result, error)
}

func (r rawTool) Spec() model.ToolSpec { return specOf(r.name, `{"type":"object"}`) }
func (r rawTool) Call(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
	return r.fn(ctx, args)
}

func TestRunNilResultAndStructured(t *testing.T) {
	tools := []tool.Tool{
		rawTool{name: "nil_result", fn: func(context.Context, json.RawMessage) (*tool.Result, error) { return nil, nil }},
		rawTool{name: "structured", fn: func(context.Context, json.RawMessage) (*tool.Result, error) {
			return &tool.Result{Structured: json.RawMessage(`{"n":1}`), Parts: []message.Part{{Type: message.PartImage, ImageURL: "data:image/png;base64,AA=="}}}, nil
		}},
	}
	exec, err := tool.NewExecutor(tools, nil)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := exec.Run(context.Background(), []message.ToolCall{call("1", "nil_result", ""), call("2", "structured", "")})
	if err != nil {
		t.Fatal(err)
	}
	if outs[0].Result == nil || outs[0].Message.IsError {
		t.Errorf("nil result: %+v", outs[0])
	}
	m := outs[1].Message
	if m.Content != `{"n":1}` || len(m.Parts) != 1 || string(m.Metadata["structured"].(json.RawMessage)) != `{"n":1}` {
		t.Errorf("structured message = %+v", m)
	}
}

// onCallersStack reports whether the executor's Run is on the calling goroutine's stack.
func onCallersStack() bool {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(1, pcs)])
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.Function, "tool.(*Executor).Run") {
			return true
		}
		if !more {
			return false
		}
	}
}

// TestNoTimeoutRunsOnCallersGoroutine: a call with no timeout has nothing to be abandoned for,
// so it runs on Run's goroutine; a call with one runs on a goroutine of its own. Panics,
// errors and cancellation are reported as they are for a call on its own goroutine.
func TestNoTimeoutRunsOnCallersGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t)
	var inline atomic.Bool
	where := tool.Must(tool.New("where", "", func(ctx context.Context, _ none) (string, error) {
		inline.Store(onCallersStack())
		return "here", nil
	}))
	boom := tool.Must(tool.New("boom", "", func(ctx context.Context, _ none) (string, error) {
		panic("kaboom")
	}))
	wait := tool.Must(tool.New("wait", "", func(ctx context.Context, _ none) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}))
	for _, tc := range []struct {
		name       string
		timeout    time.Duration
		wantInline bool
	}{{"no limit", -1, true}, {"default limit", 0, false}, {"limit", time.Minute, false}} {
		t.Run(tc.name, func(t *testing.T) {
			exec, err := tool.NewExecutor([]tool.Tool{where, boom, wait}, &tool.ExecutorOptions{Timeout: tc.timeout, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			outs, err := exec.Run(context.Background(), []message.ToolCall{call("a", "where", `{}`)})
			if err != nil || outs[0].Message.Content != "here" {
				t.Fatalf("Run = %+v, %v", outs, err)
			}
			if inline.Load() != tc.wantInline {
				t.Errorf("ran on the caller's goroutine: %v, want %v", inline.Load(), tc.wantInline)
			}
			outs, _ = exec.Run(context.Background(), []message.ToolCall{call("b", "boom", `{}`)})
			if !errors.Is(outs[0].Err, tool.ErrPanic) || !strings.Contains(outs[0].Message.Content, "kaboom") {
				t.Errorf("panicking call: %+v", outs[0])
			}
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(10*time.Millisecond, cancel)
			outs, err = exec.Run(ctx, []message.ToolCall{call("c", "wait", `{}`)})
			if !errors.Is(err, context.Canceled) || !strings.Contains(outs[0].Message.Content, "cancelled while the tool was running") {
				t.Errorf("cancelled call: %+v, %v", outs[0].Message, err)
			}
		})
	}
}
