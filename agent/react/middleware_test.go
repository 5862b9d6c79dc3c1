package react_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trellis-go/trellis/agent/conversation"
	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/scripted"
	"github.com/trellis-go/trellis/tool"
)

// trace records what the middleware saw, in order, safely across the tools' goroutines.
type trace struct {
	mu  sync.Mutex
	log []string
}

func (t *trace) add(s string) {
	t.mu.Lock()
	t.log = append(t.log, s)
	t.mu.Unlock()
}

func (t *trace) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.log, " ")
}

// recording is a middleware that records every hook and wrapper under its name.
func recording(name string, tr *trace) react.Middleware {
	hook := func(kind string) react.Hook {
		return func(context.Context, react.State) (*react.Update, error) {
			tr.add(name + "." + kind)
			return nil, nil
		}
	}
	return react.Middleware{
		Name: name, BeforeAgent: hook("before_agent"), BeforeModel: hook("before_model"),
		AfterModel: hook("after_model"), AfterAgent: hook("after_agent"),
		WrapModel: func(ctx context.Context, req *react.ModelRequest, next react.ModelHandler) (*model.Response, error) {
			tr.add(name + ">model")
			resp, err := next(ctx, req)
			tr.add("model<" + name)
			return resp, err
		},
		WrapTool: func(ctx context.Context, req *react.ToolRequest, next react.ToolHandler) (tool.Outcome, error) {
			tr.add(name + ">" + req.Call.Name)
			out, err := next(ctx, req)
			tr.add(req.Call.Name + "<" + name)
			return out, err
		},
	}
}

func userState(text string) react.State {
	return react.State{Messages: []message.Message{message.User(text)}}
}

// TestMiddlewareOrder: before-hooks run in order, after-hooks in reverse, the first wrapper is
// the outermost, and each hook is a node of the graph named after its middleware.
func TestMiddlewareOrder(t *testing.T) {
	t.Parallel()
	tr := &trace{}
	m := scripted.New(scripted.ToolCalls(call("c1", "get_price", `{"year":2025,"zone":"NP15"}`)), scripted.Text("done"))
	g, err := react.New(m, &react.Options{Tools: []tool.Tool{priceTool()},
		Middleware: []react.Middleware{recording("a", tr), recording("b", tr)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Invoke(context.Background(), userState("NP15?")); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"a.before_agent b.before_agent",
		"a.before_model b.before_model a>model b>model model<b model<a b.after_model a.after_model",
		"a>get_price b>get_price get_price<b get_price<a",
		"a.before_model b.before_model a>model b>model model<b model<a b.after_model a.after_model",
		"b.after_agent a.after_agent",
	}, " ")
	if got := tr.String(); got != want {
		t.Fatalf("order:\n got  %s\n want %s", got, want)
	}
	nodes := g.Nodes()
	for _, n := range []string{"a.before_agent", "b.before_model", "a.after_model", "b.after_agent", react.NodeModel, react.NodeTools} {
		if !slices.Contains(nodes, n) {
			t.Errorf("graph has no node %q", n)
		}
	}
}

// TestMiddlewareJumpAndState: a before-model hook that jumps to the end skips the model and
// still passes through the after-agent hooks; Extra keys kept by middleware survive checkpoints.
func TestMiddlewareJumpAndState(t *testing.T) {
	t.Parallel()
	tr := &trace{}
	gate := react.Middleware{Name: "gate",
		BeforeModel: func(_ context.Context, s react.State) (*react.Update, error) {
			n, _ := react.ExtraValue[int](s, "gate.turns")
			if n >= 1 {
				return &react.Update{Messages: []message.Message{message.Assistant("closed")}, Jump: react.JumpEnd}, nil
			}
			return &react.Update{Extra: map[string]any{"gate.turns": n + 1}}, nil
		},
		AfterAgent: func(context.Context, react.State) (*react.Update, error) { tr.add("after_agent"); return nil, nil },
	}
	m := scripted.New(scripted.Text("first answer"))
	g, err := react.New(m, &react.Options{Middleware: []react.Middleware{gate},
		Compile: graph.CompileOptions{Saver: checkpoint.NewMemorySaver()}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, thread := context.Background(), graph.WithThread("jump")
	out, err := g.Invoke(ctx, userState("one"), thread)
	if err != nil {
		t.Fatal(err)
	}
	if last := out.Messages[len(out.Messages)-1].Text(); last != "first answer" {
		t.Fatalf("first turn ended with %q", last)
	}
	out, err = g.Invoke(ctx, userState("two"), thread) // the model has no second answer: a call would fail
	if err != nil {
		t.Fatalf("second turn: %v (the gate should have ended it before the model)", err)
	}
	if last := out.Messages[len(out.Messages)-1].Text(); last != "closed" {
		t.Fatalf("second turn ended with %q, want the gate's message", last)
	}
	if n, ok := react.ExtraValue[int](out, "gate.turns"); !ok || n != 1 {
		t.Fatalf("Extra[gate.turns] = %v, %v after a checkpoint round trip, want 1", n, ok)
	}
	if got := tr.String(); got != "after_agent after_agent" {
		t.Fatalf("after-agent hooks ran %q, want once per turn", got)
	}
}

// TestWrapModelChangesTheRequest: a wrapper changes the model, the system prompt and the tools of
// one call; DynamicPrompt sets the prompt from the state.
func TestWrapModelChangesTheRequest(t *testing.T) {
	t.Parallel()
	main := scripted.New()
	other := scripted.New(scripted.Text("from the other model"))
	swap := react.Middleware{Name: "swap", WrapModel: func(ctx context.Context, req *react.ModelRequest, next react.ModelHandler) (*model.Response, error) {
		req.Model = other
		req.Tools = nil
		return next(ctx, req)
	}}
	prompt := react.DynamicPrompt(func(_ context.Context, req *react.ModelRequest) (string, error) {
		return fmt.Sprintf("The conversation has %d messages.", len(req.State.Messages)), nil
	})
	g, err := react.New(main, &react.Options{Prompt: "static", Tools: []tool.Tool{priceTool()}, Middleware: []react.Middleware{prompt, swap}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Invoke(context.Background(), userState("hi")); err != nil {
		t.Fatal(err)
	}
	if len(main.Requests()) != 0 {
		t.Fatal("the agent's own model was called; the wrapper swapped it")
	}
	req := other.Requests()[0]
	if req.Messages[0].Role != message.RoleSystem || req.Messages[0].Text() != "The conversation has 1 messages." {
		t.Fatalf("first message %+v, want the dynamic prompt in place of the static one", req.Messages[0])
	}
	if len(req.Tools) != 0 {
		t.Fatalf("request offered %d tools, want none", len(req.Tools))
	}
}

// TestModelFallback: a failing model's call is answered by the first fallback that works.
func TestModelFallback(t *testing.T) {
	t.Parallel()
	boom := errors.New("upstream 503")
	primary := scripted.New(scripted.Fail("", boom))
	broken := scripted.New(scripted.Fail("", boom))
	good := scripted.New(scripted.Text("fallback answer"))
	g, err := react.New(primary, &react.Options{Middleware: []react.Middleware{react.ModelFallback(broken, good)}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := g.Invoke(context.Background(), userState("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Messages[len(out.Messages)-1].Text(); got != "fallback answer" {
		t.Fatalf("answer %q", got)
	}
	g2, _ := react.New(scripted.New(scripted.Fail("", boom)), &react.Options{Middleware: []react.Middleware{react.ModelFallback(scripted.New(scripted.Fail("", boom)))}})
	if _, err := g2.Invoke(context.Background(), userState("hi")); !errors.Is(err, boom) || !strings.Contains(err.Error(), "1 fallbacks failed") {
		t.Fatalf("all failing: err = %v, want both errors joined", err)
	}
}

// TestModelCallLimit: the run limit ends a run that keeps calling tools; the thread limit holds
// across runs of one thread; ExitError fails with ErrLimit.
func TestModelCallLimit(t *testing.T) {
	t.Parallel()
	loop := func() scripted.Step {
		return scripted.ToolCalls(call(message.NewID(), "get_price", `{"year":2025,"zone":"NP15"}`))
	}
	limit, err := react.ModelCallLimit(react.CallLimit{RunLimit: 2})
	if err != nil {
		t.Fatal(err)
	}
	m := scripted.New(loop(), loop(), loop())
	g, _ := react.New(m, &react.Options{Tools: []tool.Tool{priceTool()}, Middleware: []react.Middleware{limit}})
	out, err := g.Invoke(context.Background(), userState("loop"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.Requests()); n != 2 {
		t.Fatalf("%d model calls, want the run limit of 2", n)
	}
	if last := out.Messages[len(out.Messages)-1].Text(); !strings.Contains(last, "model-call limit") {
		t.Fatalf("last message %q, want the limit explained", last)
	}

	thread, _ := react.ModelCallLimit(react.CallLimit{ThreadLimit: 2})
	m2 := scripted.New(scripted.Text("one"), scripted.Text("two"), scripted.Text("three"))
	g2, _ := react.New(m2, &react.Options{Middleware: []react.Middleware{thread}, Compile: graph.CompileOptions{Saver: checkpoint.NewMemorySaver()}})
	ctx, th := context.Background(), graph.WithThread("limits")
	for i, want := range []string{"one", "two", "model-call limit"} {
		out, err := g2.Invoke(ctx, userState(fmt.Sprint("turn ", i)), th)
		if err != nil {
			t.Fatal(err)
		}
		if last := out.Messages[len(out.Messages)-1].Text(); !strings.Contains(last, want) {
			t.Fatalf("turn %d answered %q, want %q", i, last, want)
		}
	}

	strict, _ := react.ModelCallLimit(react.CallLimit{RunLimit: 1, Exit: react.ExitError})
	g3, _ := react.New(scripted.New(loop(), loop()), &react.Options{Tools: []tool.Tool{priceTool()}, Middleware: []react.Middleware{strict}})
	if _, err := g3.Invoke(context.Background(), userState("loop")); !errors.Is(err, react.ErrLimit) {
		t.Fatalf("err = %v, want ErrLimit", err)
	}
	if _, err := react.ModelCallLimit(react.CallLimit{}); err == nil {
		t.Fatal("a limit with no bound was accepted")
	}
}

// TestToolCallLimit: with ExitContinue the calls over the limit are answered with an error and not
// run, while the others run.
func TestToolCallLimit(t *testing.T) {
	t.Parallel()
	var ran atomic.Int32
	counted := tool.Must(tool.New("get_price", "Average price.", func(_ context.Context, a priceArgs) (string, error) {
		ran.Add(1)
		return a.Zone + " averaged 41.2", nil
	}))
	limit, err := react.ToolCallLimit("get_price", react.CallLimit{RunLimit: 2})
	if err != nil {
		t.Fatal(err)
	}
	m := scripted.New(
		scripted.ToolCalls(call("c1", "get_price", `{"year":2025,"zone":"NP15"}`), call("c2", "get_price", `{"year":2024,"zone":"NP15"}`), call("c3", "get_price", `{"year":2023,"zone":"NP15"}`)),
		scripted.Text("done"),
	)
	g, _ := react.New(m, &react.Options{Tools: []tool.Tool{counted}, Middleware: []react.Middleware{limit}})
	out, err := g.Invoke(context.Background(), userState("three years"))
	if err != nil {
		t.Fatal(err)
	}
	if ran.Load() != 2 {
		t.Fatalf("the tool ran %d times, want 2", ran.Load())
	}
	// The refusal is written by the limit's after-model hook, before the other calls' results.
	results := map[string]string{}
	for _, msg := range out.Messages {
		if msg.Role == message.RoleTool {
			results[msg.ToolCallID] = msg.Text()
		}
	}
	if len(results) != 3 || !strings.HasPrefix(results["c3"], "Not run") || !strings.HasPrefix(results["c1"], "NP15") || !strings.HasPrefix(results["c2"], "NP15") {
		t.Fatalf("tool results %q, want c1 and c2 run, c3 refused", results)
	}
}

// TestToolRetry: a tool that fails twice is run a third time and its answer reaches the model;
// a call with bad arguments is not retried.
func TestToolRetry(t *testing.T) {
	t.Parallel()
	var tries atomic.Int32
	flaky := tool.Must(tool.New("flaky", "Fails twice.", func(_ context.Context, a struct {
		N int `json:"n"`
	}) (string, error) {
		if tries.Add(1) <= 2 {
			return "", errors.New("temporarily unavailable")
		}
		return "worked", nil
	}))
	m := scripted.New(scripted.ToolCalls(call("c1", "flaky", `{"n":1}`), call("c2", "flaky", `{"n":"x"}`)), scripted.Text("done"))
	g, _ := react.New(m, &react.Options{Tools: []tool.Tool{flaky}, Middleware: []react.Middleware{react.ToolRetry(&react.ToolRetryOptions{Backoff: time.Millisecond})}})
	out, err := g.Invoke(context.Background(), userState("go"))
	if err != nil {
		t.Fatal(err)
	}
	if tries.Load() != 3 {
		t.Fatalf("%d tries, want 3 (the bad-argument call is never run)", tries.Load())
	}
	for _, msg := range out.Messages {
		if msg.ToolCallID == "c1" && msg.Text() != "worked" {
			t.Fatalf("c1 answered %q, want the third try's result", msg.Text())
		}
	}
}

// TestRedact: an e-mail address the user writes is neither sent to the model nor kept, and a card
// number a tool returns is hidden from the model.
func TestRedact(t *testing.T) {
	t.Parallel()
	lookup := tool.Must(tool.New("lookup", "Customer record.", func(context.Context, struct{}) (string, error) {
		return "card on file: 4111 1111 1111 1111", nil
	}))
	m := scripted.New(scripted.ToolCalls(call("c1", "lookup", `{}`)), scripted.Text("done"))
	mw, err := react.Redact(nil)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := react.New(m, &react.Options{Tools: []tool.Tool{lookup}, Middleware: []react.Middleware{mw}})
	out, err := g.Invoke(context.Background(), userState("I am ana@example.com, what is on file?"))
	if err != nil {
		t.Fatal(err)
	}
	for i, req := range m.Requests() {
		if s := fmtMsgs(req.Messages); strings.Contains(s, "ana@example.com") || strings.Contains(s, "4111") {
			t.Fatalf("request %d carries personal data: %s", i, s)
		}
	}
	if s := fmtMsgs(out.Messages); strings.Contains(s, "ana@example.com") || !strings.Contains(s, "[REDACTED]") {
		t.Fatalf("stored conversation %s, want the address replaced", s)
	}
}

// TestSummarizationMiddleware: over the budget, older turns are replaced by a summary in the
// stored conversation before the model call.
func TestSummarizationMiddleware(t *testing.T) {
	t.Parallel()
	summariser := scripted.New(scripted.Text("Earlier: the user asked about NP15 prices."))
	mw, err := react.Summarization(&conversation.CompactOptions{Model: summariser, MaxTokens: 60, KeepTurns: 1})
	if err != nil {
		t.Fatal(err)
	}
	m := scripted.New(scripted.Text("fine"))
	g, _ := react.New(m, &react.Options{Middleware: []react.Middleware{mw}})
	var msgs []message.Message
	for i := range 6 {
		msgs = append(msgs, message.User(fmt.Sprintf("question %d about NP15 prices in the summer of 2024, in detail please", i)), message.Assistant("an answer with several words in it"))
	}
	msgs = append(msgs, message.User("and now?"))
	out, err := g.Invoke(context.Background(), react.State{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	if len(summariser.Requests()) != 1 {
		t.Fatalf("summariser called %d times, want 1", len(summariser.Requests()))
	}
	if s := fmtMsgs(out.Messages); !strings.Contains(s, "Earlier: the user asked") || strings.Contains(s, "question 0") {
		t.Fatalf("stored conversation %s, want the summary in place of the oldest turns", s)
	}
}

// TestHumanInTheLoopLangChainFormat: one interrupt lists every reviewed call in LangChain v1's
// shape; approve, edit and reject are applied per call; a rejected call is answered with the
// reviewer's words and never runs.
func TestHumanInTheLoopLangChainFormat(t *testing.T) {
	t.Parallel()
	var ran []string
	var mu sync.Mutex
	price := tool.Must(tool.New("get_price", "Average price.", func(_ context.Context, a priceArgs) (string, error) {
		mu.Lock()
		ran = append(ran, fmt.Sprint(a.Zone, a.Year))
		mu.Unlock()
		return a.Zone + " averaged 41.2", nil
	}))
	hitl, err := react.HumanInTheLoop(react.HumanInTheLoopOptions{Tools: map[string]*react.ToolReview{
		"get_price": nil,
	}})
	if err != nil {
		t.Fatal(err)
	}
	m := scripted.New(
		scripted.ToolCalls(call("c1", "get_price", `{"year":2025,"zone":"NP15"}`), call("c2", "get_price", `{"year":2024,"zone":"NP15"}`), call("c3", "get_price", `{"year":2023,"zone":"NP15"}`)),
		scripted.Text("done"),
	)
	g, _ := react.New(m, &react.Options{Tools: []tool.Tool{price}, Middleware: []react.Middleware{hitl}, Compile: graph.CompileOptions{Saver: checkpoint.NewMemorySaver()}})
	ctx, thread := context.Background(), graph.WithThread("hitl")
	_, err = g.Invoke(ctx, userState("prices"), thread)
	var ie *graph.InterruptedError
	if !errors.As(err, &ie) || len(ie.Interrupts) != 1 {
		t.Fatalf("err = %v, want one interrupt", err)
	}
	var req map[string]any
	if err := json.Unmarshal([]byte(mustMarshal(ie.Interrupts[0].Value)), &req); err != nil {
		t.Fatal(err)
	}
	actions, _ := req["action_requests"].([]any)
	configs, _ := req["review_configs"].([]any)
	if len(actions) != 3 || len(configs) != 1 {
		t.Fatalf("interrupt %s: want 3 action requests and 1 review config", mustMarshal(req))
	}
	first := actions[0].(map[string]any)
	if first["name"] != "get_price" || first["args"].(map[string]any)["zone"] != "NP15" || first["description"] == "" {
		t.Fatalf("action request %v", first)
	}
	if got := mustMarshal(configs[0]); got != `{"action_name":"get_price","allowed_decisions":["approve","edit","reject"]}` {
		t.Fatalf("review config %s", got)
	}
	resume := `{"decisions":[{"type":"approve"},{"type":"edit","edited_action":{"name":"get_price","args":{"year":2024,"zone":"SP15"}}},{"type":"reject","message":"Not that year."}]}`
	out, err := g.Invoke(ctx, react.State{}, thread, graph.Resume(json.RawMessage(resume)))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ran)
	if strings.Join(ran, ",") != "NP152025,SP152024" {
		t.Fatalf("ran %v, want the approved call and the edited one", ran)
	}
	byCall := map[string]string{}
	for _, msg := range out.Messages {
		if msg.Role == message.RoleTool {
			byCall[msg.ToolCallID] = msg.Text()
		}
	}
	if byCall["c2"] != "SP15 averaged 41.2" || byCall["c3"] != "Not that year." {
		t.Fatalf("tool results %v", byCall)
	}
	for _, msg := range out.Messages {
		if msg.Role == message.RoleAssistant && len(msg.ToolCalls) == 3 && string(msg.ToolCalls[1].Arguments) != `{"year":2024,"zone":"SP15"}` {
			t.Fatalf("the assistant's call c2 still reads %s, want the edited arguments", msg.ToolCalls[1].Arguments)
		}
	}

	// A bad answer asks again, saying what to send.
	g2, _ := react.New(scripted.New(scripted.ToolCalls(call("c1", "get_price", `{"year":2025,"zone":"NP15"}`))), &react.Options{Tools: []tool.Tool{price}, Middleware: []react.Middleware{hitl}, Compile: graph.CompileOptions{Saver: checkpoint.NewMemorySaver()}})
	_, _ = g2.Invoke(ctx, userState("prices"), thread)
	_, err = g2.Invoke(ctx, react.State{}, thread, graph.Resume(json.RawMessage(`{"decisions":[{"type":"approve"},{"type":"approve"}]}`)))
	if !errors.As(err, &ie) || !strings.Contains(mustMarshal(ie.Interrupts[0].Value), "2 decisions for 1 tool calls") {
		t.Fatalf("err = %v, want the review asked again with the count mismatch named", err)
	}
}

// TestHumanInTheLoopAllRejected: when every call is rejected the model answers again, reading the
// rejections; the inbox format works through the same middleware.
func TestHumanInTheLoopAllRejected(t *testing.T) {
	t.Parallel()
	for _, format := range []react.ReviewFormat{react.FormatLangChain, react.FormatInbox} {
		hitl, err := react.HumanInTheLoop(react.HumanInTheLoopOptions{Format: format, Tools: map[string]*react.ToolReview{
			"get_price": {Allowed: []react.Decision{react.DecisionApprove, react.DecisionReject}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		m := scripted.New(scripted.ToolCalls(call("c1", "get_price", `{"year":2025,"zone":"NP15"}`)), scripted.Text("understood"))
		g, _ := react.New(m, &react.Options{Tools: []tool.Tool{priceTool()}, Middleware: []react.Middleware{hitl}, Compile: graph.CompileOptions{Saver: checkpoint.NewMemorySaver()}})
		ctx, thread := context.Background(), graph.WithThread("reject")
		if _, err := g.Invoke(ctx, userState("price?"), thread); err == nil {
			t.Fatal("no interrupt")
		}
		resume := `{"decisions":[{"type":"reject","message":"Ask me first."}]}`
		if format == react.FormatInbox {
			resume = `[{"type":"response","args":"Ask me first."}]`
		}
		out, err := g.Invoke(ctx, react.State{}, thread, graph.Resume(json.RawMessage(resume)))
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if last := out.Messages[len(out.Messages)-1].Text(); last != "understood" {
			t.Fatalf("%s: ended with %q, want the model's second answer", format, last)
		}
		if s := fmtMsgs(m.Requests()[1].Messages); !strings.Contains(s, "Ask me first.") {
			t.Fatalf("%s: the model's second request %s lacks the rejection", format, s)
		}
	}
	if _, err := react.HumanInTheLoop(react.HumanInTheLoopOptions{Tools: map[string]*react.ToolReview{"x": {Allowed: []react.Decision{"maybe"}}}}); err == nil {
		t.Fatal("an unknown decision was accepted")
	}
}

// TestMiddlewareNamesChecked: unnamed, duplicate and clashing names are refused at New.
func TestMiddlewareNamesChecked(t *testing.T) {
	t.Parallel()
	for _, mws := range [][]react.Middleware{
		{{}},
		{{Name: "x"}, {Name: "x"}},
		{{Name: react.NodeTools}},
	} {
		if _, err := react.New(scripted.New(), &react.Options{Middleware: mws}); err == nil {
			t.Errorf("middleware %+v accepted", mws)
		}
	}
}

// A wrong answer to a review does not fail the run or lose the calls: the review is asked again
// with what was wrong, and the next answer decides.
func TestHumanInTheLoopAsksAgainAfterAWrongAnswer(t *testing.T) {
	t.Parallel()
	hitl, err := react.HumanInTheLoop(react.HumanInTheLoopOptions{Tools: map[string]*react.ToolReview{
		"get_price": {Allowed: []react.Decision{react.DecisionApprove, react.DecisionReject}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	m := scripted.New(scripted.ToolCalls(call("c1", "get_price", `{"year":2025,"zone":"NP15"}`)), scripted.Text("done"))
	g, _ := react.New(m, &react.Options{Tools: []tool.Tool{priceTool()}, Middleware: []react.Middleware{hitl}, Compile: graph.CompileOptions{Saver: checkpoint.NewMemorySaver()}})
	ctx, thread := context.Background(), graph.WithThread("again")
	if _, err := g.Invoke(ctx, userState("price?"), thread); err == nil {
		t.Fatal("no interrupt")
	}
	for _, wrong := range []string{`{"decisions":[{"type":"edit","edited_action":{"name":"get_price","args":{}}}]}`, `"yes"`, `{"decisions":[]}`} {
		_, err := g.Invoke(ctx, react.State{}, thread, graph.Resume(json.RawMessage(wrong)))
		var ie *graph.InterruptedError
		if !errors.As(err, &ie) || len(ie.Interrupts) != 1 {
			t.Fatalf("answer %s: err = %v, want the review asked again", wrong, err)
		}
		req, ok := react.HITLRequestOf(ie.Interrupts[0].Value)
		if !ok || req.Error == "" || len(req.ActionRequests) != 1 {
			t.Fatalf("answer %s: asked again with %+v", wrong, ie.Interrupts[0].Value)
		}
	}
	out, err := g.Invoke(ctx, react.State{}, thread, graph.Resume(json.RawMessage(`{"decisions":[{"type":"approve"}]}`)))
	if err != nil {
		t.Fatal(err)
	}
	if last := out.Messages[len(out.Messages)-1].Text(); last != "done" {
		t.Fatalf("ended with %q", last)
	}
}
