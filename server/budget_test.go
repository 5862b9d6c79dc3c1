package server

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/scripted"
	"github.com/trellis-go/trellis/telemetry"
)

type loopState struct {
	Count int `json:"count" reduce:"sum"`
}

// buildLooper is a graph whose node asks a scripted model something and then runs again,
// forever: only a budget (or the recursion limit) ends it. Each model call reports usage of
// 300 input and 100 output tokens.
func buildLooper(deps Deps) (graph.Runnable, error) {
	sm := scripted.New(scripted.Rule(func(req *model.Request) *model.Response {
		msg := message.Assistant("again")
		msg.Metadata = map[string]any{"provider": "scripted", "model": "looper-1"}
		return &model.Response{Message: msg, Usage: model.Usage{InputTokens: 300, OutputTokens: 100}, FinishReason: model.FinishStop}
	}))
	sm.Repeat = true
	m := telemetry.Model(sm, telemetry.ModelInfo{Provider: "scripted", Name: "looper-1"})
	g := graph.New[loopState]()
	g.AddNode("think", func(ctx context.Context, s loopState) (loopState, error) {
		if _, err := m.Generate(ctx, &model.Request{Messages: []message.Message{message.User("go on")}}); err != nil {
			return loopState{}, err
		}
		return loopState{Count: 1}, nil
	})
	g.AddEdge(graph.START, "think")
	g.AddConditionalEdges("think", func(ctx context.Context, s loopState) (string, error) { return "think", nil }, nil)
	return graph.Erase(g.Compile(graph.CompileOptions{Name: "looper", Saver: deps.Saver, RecursionLimit: 1000}))
}

func looperSetup(t *testing.T, cfg Config) *bundle {
	return setup(t, setupOpts{cfg: cfg, extra: []GraphSpec{{ID: "looper", Build: buildLooper}}})
}

func runError(t *testing.T, out map[string]any) (string, string) {
	t.Helper()
	e, _ := out["__error__"].(map[string]any)
	if e == nil {
		t.Fatalf("the run did not fail: %v", out)
	}
	name, _ := e["error"].(string)
	msg, _ := e["message"].(string)
	return name, msg
}

func (b *bundle) count(tid string) float64 {
	b.t.Helper()
	var st struct {
		Values map[string]any `json:"values"`
	}
	b.mustDo("GET", "/threads/"+tid+"/state", nil, &st, 200)
	n, _ := st.Values["count"].(float64)
	return n
}

func TestStepBudget(t *testing.T) {
	t.Parallel()
	b := looperSetup(t, Config{MaxRunSteps: 5})

	tid := b.newThread(nil)
	_, evs := b.stream("POST", "/threads/"+tid+"/runs/stream", map[string]any{"assistant_id": "looper", "input": map[string]any{}}, nil, nil)
	var errEv *sseEvent
	for i := range evs {
		if evs[i].Event == "error" {
			errEv = &evs[i]
		}
	}
	if errEv == nil || !strings.Contains(string(errEv.Data), `"BudgetExceeded"`) || !strings.Contains(string(errEv.Data), "step budget of 5 supersteps") {
		t.Fatalf("want an error event naming the step budget; events %v, error %s", names(evs), errEv)
	}
	// The checkpoint of the last superstep is kept: five rounds of the loop.
	if n := b.count(tid); n != 5 {
		t.Fatalf("count after the budget = %v, want 5", n)
	}
	var runs []Run
	b.mustDo("GET", "/threads/"+tid+"/runs", nil, &runs, 200)
	if len(runs) != 1 || runs[0].Status != RunError {
		t.Fatalf("runs: %+v", runs)
	}

	// A run may lower the budget in its config...
	tid2 := b.newThread(nil)
	var out map[string]any
	b.mustDo("POST", "/threads/"+tid2+"/runs/wait", map[string]any{"assistant_id": "looper", "input": map[string]any{}, "config": map[string]any{"max_steps": 3}}, &out, 200)
	if name, msg := runError(t, out); name != "BudgetExceeded" || !strings.Contains(msg, "step budget of 3 supersteps") {
		t.Fatalf("error %s: %s", name, msg)
	}
	if n := b.count(tid2); n != 3 {
		t.Fatalf("count = %v, want 3", n)
	}
	// ...and a lower recursion_limit stays a recursion limit, not a budget.
	b.mustDo("POST", "/threads/"+tid2+"/runs/wait", map[string]any{"assistant_id": "looper", "input": map[string]any{}, "config": map[string]any{"recursion_limit": 2}}, &out, 200)
	if name, msg := runError(t, out); name == "BudgetExceeded" || !strings.Contains(msg, "recursion limit") {
		t.Fatalf("error %s: %s", name, msg)
	}
	// ...but never raise it, and bad values are refused naming the field.
	for _, bad := range []any{50, 0, -1, 2.5, "ten"} {
		var e map[string]string
		code := b.do("POST", "/threads/"+tid2+"/runs", map[string]any{"assistant_id": "looper", "input": map[string]any{}, "config": map[string]any{"max_steps": bad}}, &e)
		if code != http.StatusBadRequest || !strings.Contains(e["detail"], "config.max_steps") {
			t.Fatalf("max_steps %v: status %d %v", bad, code, e)
		}
	}
}

func TestTokenBudget(t *testing.T) {
	t.Parallel()
	b := looperSetup(t, Config{MaxRunTokens: 1000})
	tid := b.newThread(nil)
	var out map[string]any
	b.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "looper", "input": map[string]any{}}, &out, 200)
	name, msg := runError(t, out)
	// Calls of 400 tokens: the third starts at 800 (its input fits), the fourth is refused at 1200.
	if name != "BudgetExceeded" || !strings.Contains(msg, "used 1200 tokens of its token budget of 1000") {
		t.Fatalf("error %s: %s", name, msg)
	}
	if n := b.count(tid); n != 3 {
		t.Fatalf("count = %v, want 3 (the checkpoint before the refused call)", n)
	}
	// A run's own lower budget.
	tid2 := b.newThread(nil)
	b.mustDo("POST", "/threads/"+tid2+"/runs/wait", map[string]any{"assistant_id": "looper", "input": map[string]any{}, "config": map[string]any{"max_tokens": 400}}, &out, 200)
	if _, msg := runError(t, out); !strings.Contains(msg, "used 400 tokens of its token budget of 400") {
		t.Fatalf("error: %s", msg)
	}
	if n := b.count(tid2); n != 1 {
		t.Fatalf("count = %v, want 1", n)
	}
	if code := b.do("POST", "/threads/"+tid2+"/runs", map[string]any{"assistant_id": "looper", "config": map[string]any{"max_tokens": 5000}}, nil); code != http.StatusBadRequest {
		t.Fatalf("max_tokens above the server's: status %d", code)
	}
	// The tokens show in /metrics: 4 calls of 300+100.
	resp, err := http.Get(b.http.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), `trellis_model_tokens_total{kind="input"} 1200`) || !strings.Contains(string(body), `trellis_model_tokens_total{kind="output"} 400`) {
		t.Fatalf("metrics lack the token counts:\n%s", grepLines(string(body), "tokens"))
	}
}

func TestNoBudgetCountsTokens(t *testing.T) {
	t.Parallel()
	b := looperSetup(t, Config{})
	var out map[string]any
	tid := b.newThread(nil)
	b.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "looper", "input": map[string]any{}, "config": map[string]any{"recursion_limit": 4, "max_tokens": 100000}}, &out, 200)
	if name, msg := runError(t, out); name == "BudgetExceeded" || !strings.Contains(msg, "recursion limit") {
		t.Fatalf("error %s: %s", name, msg)
	}
	if n := b.count(tid); n != 4 {
		t.Fatalf("count = %v, want 4", n)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
