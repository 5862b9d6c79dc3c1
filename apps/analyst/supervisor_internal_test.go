package analyst

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/embed"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/model/scripted"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/memstore"
)

func testAnalyst(t *testing.T) *Analyst {
	t.Helper()
	st, err := memstore.New(&memstore.Options{Config: store.Config{Index: &store.IndexConfig{Embedder: embed.NewLocal(nil), Dims: 256}}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := open(context.Background(), server.AppDeps{Deps: server.Deps{Store: st, SharedStore: st}, Models: model.NewRoles(offline.New(nil), ""),
		Compile: graph.CompileOptions{Saver: checkpoint.NewMemorySaver(), Store: st}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// The research supervisor is a tool-calling agent: a model given its tools searches memory,
// writes memory, asks the user a Question (an inbox interrupt, answered on resume) and ends its
// loop with Done; the answer becomes the vague task's question and what it found in memory
// becomes the tasks' guidance.
func TestSupervisorModelCallsItsTools(t *testing.T) {
	t.Parallel()
	a := testAnalyst(t)
	var mu sync.Mutex
	afterDone := 0
	call := func(name, args string) *model.Response {
		return &model.Response{Message: message.Message{Role: message.RoleAssistant,
			ToolCalls: []message.ToolCall{{ID: "c-" + name, Name: name, Arguments: json.RawMessage(args)}}}}
	}
	m := scripted.New(scripted.Rule(func(req *model.Request) *model.Response {
		mu.Lock()
		defer mu.Unlock()
		if len(req.Tools) != len(researchSupervisorTools) {
			t.Errorf("the supervisor was offered %d tools", len(req.Tools))
		}
		n := 0
		for _, x := range req.Messages {
			if x.Role == message.RoleTool {
				n++
			}
		}
		switch n {
		case 0:
			return call("write_memory_tool", `{"namespace":"user_preferences","context_messages":["Please use footnotes for citations"],"update_reason":"the user's style"}`)
		case 1:
			return call("memory_search_tool", `{"namespace":"user_preferences","query":"footnotes"}`)
		case 2:
			return call("Question", `{"content":"What should the question on Madrid answer?"}`)
		case 3:
			return call("Done", `{"done":true}`)
		}
		afterDone++
		return &model.Response{Message: message.Assistant("still here")}
	}))
	m.Repeat = true
	a.superModel = m

	g := graph.New[ResearchState]()
	g.AddNode("sup", a.researchSupervisor)
	g.AddEdge(graph.START, "sup").AddEdge("sup", graph.END)
	c, err := g.Compile(graph.CompileOptions{Saver: checkpoint.NewMemorySaver()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// In dev mode the run's user is the dev principal; the tools act for the state's user.
	opts := []graph.RunOption{graph.WithThread("sup"), graph.WithConfig(map[string]any{"user_id": server.DevPrincipal.User, "tenant": "acme"})}
	in := ResearchState{UserID: "dana", Query: "Voltra and Madrid", Round: 1, Tasks: []Task{
		{ID: "q1", Question: "Madrid?", Sources: []string{"web"}, FromUser: true},
		{ID: "q2", Question: "What is Voltra doing in B2B fleet leasing?", Sources: []string{"web", "company_db"}}}}
	_, err = c.Invoke(ctx, in, opts...)
	var ie *graph.InterruptedError
	if !errors.As(err, &ie) {
		t.Fatalf("the Question did not pause the run: %v", err)
	}
	raw, _ := json.Marshal(ie.Interrupts[0].Value)
	if !strings.Contains(string(raw), `"action":"Question"`) || !strings.Contains(string(raw), "What should the question on Madrid answer?") {
		t.Fatalf("interrupt %s", raw)
	}
	prefs, err := a.mem.Load(ctx, "dana", NSPreferences)
	if err != nil || !strings.Contains(toJSON(prefs), "[CITATION] style: footnotes") {
		t.Fatalf("write_memory_tool did not write: %v %s", err, toJSON(prefs))
	}
	out, err := c.Invoke(ctx, ResearchState{}, append(opts, graph.Resume([]any{map[string]any{"type": "response", "args": "Madrid's licensing of shared e-bike operators"}}))...)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Tasks[0].Question; !strings.Contains(got, "Madrid's licensing of shared e-bike operators") {
		t.Errorf("the answer did not become the vague task's question: %q", got)
	}
	if !strings.Contains(out.Tasks[1].Guidance, "footnotes") {
		t.Errorf("memory_search_tool's result is not the tasks' guidance: %+v", out.Tasks[1])
	}
	after, _ := a.mem.Load(ctx, "dana", NSPreferences)
	if len(after.Facts) != len(prefs.Facts) {
		t.Errorf("the resumed node wrote the preference again: %d facts, then %d", len(prefs.Facts), len(after.Facts))
	}
	mu.Lock()
	defer mu.Unlock()
	if afterDone != 0 {
		t.Errorf("the model was called %d times after Done", afterDone)
	}
}

// The report supervisor's Question answer goes to the preferences that shape the plan.
func TestReportSupervisorQuestion(t *testing.T) {
	t.Parallel()
	a := testAnalyst(t)
	m := scripted.New(scripted.Rule(func(req *model.Request) *model.Response {
		for _, x := range req.Messages {
			if x.Role == message.RoleTool {
				return &model.Response{Message: message.Message{Role: message.RoleAssistant,
					ToolCalls: []message.ToolCall{{ID: "d", Name: "Done", Arguments: json.RawMessage(`{"done":true}`)}}}}
			}
		}
		return &model.Response{Message: message.Message{Role: message.RoleAssistant,
			ToolCalls: []message.ToolCall{{ID: "q", Name: "Question", Arguments: json.RawMessage(`{"content":"Which framework should the report use?"}`)}}}}
	}))
	m.Repeat = true
	a.superModel = m
	g := graph.New[ReportState]()
	g.AddNode("sup", a.reportSupervisor)
	g.AddEdge(graph.START, "sup").AddEdge("sup", graph.END)
	c, err := g.Compile(graph.CompileOptions{Saver: checkpoint.NewMemorySaver()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	opts := []graph.RunOption{graph.WithThread("rep"), graph.WithConfig(map[string]any{"user_id": "eve", "tenant": "acme"})}
	if _, err := c.Invoke(ctx, ReportState{UserID: "eve", Topic: "Voltra"}, opts...); !errors.As(err, new(*graph.InterruptedError)) {
		t.Fatalf("no Question: %v", err)
	}
	out, err := c.Invoke(ctx, ReportState{}, append(opts, graph.Resume([]any{map[string]any{"type": "response", "args": "Use Porter's five forces please"}}))...)
	if err != nil {
		t.Fatal(err)
	}
	if out.Prefs.Framework != "Porter's five forces" || len(out.Sections) < 2 || out.Sections[1].Name != "Porter's Five Forces" {
		t.Errorf("prefs %+v sections %+v", out.Prefs, out.Sections)
	}
}
