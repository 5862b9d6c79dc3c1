package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/model/scripted"
)

type askState struct {
	Tool string `json:"tool"`
}

// askerApp is an app whose one node asks its default model once, with one tool, and keeps the
// tool the model called. It does not wrap the model: the server does.
func askerApp(pack *offline.Pack, got **model.Roles) App {
	return App{Name: "asker", Pack: pack, Build: func(ctx context.Context, d AppDeps) (*AppParts, error) {
		*got = d.Models
		m := d.Models.Default()
		tools := []model.ToolSpec{{Name: "list_loans", Description: "List the loans.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}}
		g := graph.New[askState]()
		g.AddNode("ask", func(ctx context.Context, s askState) (askState, error) {
			resp, err := m.Generate(ctx, &model.Request{Messages: []message.Message{message.User("what did I borrow?")}, Tools: tools})
			if err != nil {
				return askState{}, err
			}
			if len(resp.Message.ToolCalls) > 0 {
				s.Tool = resp.Message.ToolCalls[0].Name
			}
			return s, nil
		})
		g.AddEdge(graph.START, "ask")
		g.AddEdge("ask", graph.END)
		c, err := graph.Erase(g.Compile(d.Compile))
		if err != nil {
			return nil, err
		}
		return &AppParts{Graphs: []AppGraph{{ID: "asker", Graph: c}}}, nil
	}}
}

// TestAppModelsAreBudgetedAndPacked: a run's max_tokens stops an app's model call though the app
// never wrapped its model (the server wraps every role with telemetry), and the offline model the
// app gets knows its pack's intents while staying recognisable as offline.
func TestAppModelsAreBudgetedAndPacked(t *testing.T) {
	t.Parallel()
	pack := &offline.Pack{Name: "library", Intents: []offline.Intent{{Tool: "list_loans", Examples: []string{"what did I borrow"}}}}

	// The offline model, extended with the app's pack: the intent reaches the tool.
	var roles *model.Roles
	b := setup(t, setupOpts{cfg: Config{Apps: []App{askerApp(pack, &roles)}}})
	if !model.IsOffline(roles.Default()) || !model.IsOffline(roles.For(model.RoleFast)) {
		t.Fatal("the app's roles are not recognised as the offline model")
	}
	if got := offline.PacksOf(roles.Default()); len(got) != 1 || got[0] != pack {
		t.Fatalf("the app's offline model has packs %v, want its own", got)
	}
	tid := b.newThread(nil)
	var out map[string]any
	b.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "asker", "input": map[string]any{}}, &out, 200)
	if out["tool"] != "list_loans" {
		t.Fatalf("with its pack the offline model called %v, want list_loans (%v)", out["tool"], out)
	}
	// Without the pack, the same words find no tool.
	b2 := setup(t, setupOpts{cfg: Config{Apps: []App{askerApp(nil, &roles)}}})
	tid = b2.newThread(nil)
	out = nil
	b2.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "asker", "input": map[string]any{}}, &out, 200)
	if out["tool"] != "" && out["tool"] != nil {
		t.Fatalf("without a pack the offline model called %v", out["tool"])
	}

	// A configured model, never wrapped by the app: max_tokens 1 refuses the call.
	sm := scripted.New(scripted.Rule(func(req *model.Request) *model.Response {
		return &model.Response{Message: message.Assistant("ok"), Usage: model.Usage{InputTokens: 300, OutputTokens: 10}, FinishReason: model.FinishStop}
	}))
	sm.Repeat = true
	b3 := setup(t, setupOpts{cfg: Config{Apps: []App{askerApp(pack, &roles)}, Models: model.NewRoles(sm, "scripted")}})
	if model.IsOffline(roles.Default()) || offline.PacksOf(roles.Default()) != nil {
		t.Fatal("a real model was taken for the offline one")
	}
	tid = b3.newThread(nil)
	out = nil
	b3.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "asker", "input": map[string]any{}, "config": map[string]any{"max_tokens": 1}}, &out, 200)
	if name, msg := runError(t, out); name != "BudgetExceeded" || !strings.Contains(msg, "max_tokens") && !strings.Contains(msg, "token budget") {
		t.Fatalf("the app's model call was not stopped by the run's budget: %s: %s", name, msg)
	}
}

// An invalid pack stops start-up with a clear error.
func TestAppWithInvalidPackRefused(t *testing.T) {
	t.Parallel()
	var roles *model.Roles
	bad := &offline.Pack{Name: "broken", Entities: []offline.Entity{{Arg: "shelf", Pattern: "("}}}
	_, err := New(Config{DataDir: t.TempDir(), Dev: true, Apps: []App{askerApp(bad, &roles)}})
	if err == nil || !strings.Contains(err.Error(), `pack "broken"`) || !strings.Contains(err.Error(), "does not compile") {
		t.Fatalf("err = %v", err)
	}
}
