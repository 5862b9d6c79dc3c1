package server

import (
	"context"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/graph"
)

// buildAsking builds "asking": outer -> ask (a subgraph whose "write" node interrupts).
func buildAsking(deps Deps) (graph.Runnable, error) {
	i := graph.New[innerState]()
	i.AddNode("outline", func(_ context.Context, s innerState) (innerState, error) {
		return innerState{Draft: "outline of " + s.Draft}, nil
	})
	i.AddNode("write", func(ctx context.Context, s innerState) (innerState, error) {
		v, err := graph.Interrupt(ctx, "tone?")
		if err != nil {
			return innerState{}, err
		}
		return innerState{Draft: s.Draft + " in a " + v.(string) + " tone"}, nil
	})
	i.AddSequence(graph.START, "outline", "write", graph.END)
	inner, err := i.Compile(graph.CompileOptions{Name: "ask"})
	if err != nil {
		return nil, err
	}
	o := graph.New[outerState]()
	graph.AddSubgraph(o, "ask", inner, func(s outerState) innerState { return innerState{Draft: s.Topic} },
		func(s innerState) outerState { return outerState{Topic: s.Draft} })
	o.AddEdge(graph.START, "ask").AddEdge("ask", graph.END)
	return graph.Erase(o.Compile(graph.CompileOptions{Name: "asking", Saver: deps.Saver}))
}

// TestThreadStateWithSubgraphs checks GET /threads/{id}/state?subgraphs=true and POST
// /threads/{id}/state/checkpoint with subgraphs, in the LangGraph API's shape: without
// subgraphs a subgraph task names its checkpoint namespace in checkpoint, with them it carries
// the subgraph's state (values, next, interrupts) in state.
func TestThreadStateWithSubgraphs(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{extra: []GraphSpec{{ID: "asking", Build: buildAsking}}})
	tid := b.newThread(nil)
	b.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "asking", "input": map[string]any{"topic": "owls"}}, nil, 200)

	type task struct {
		ID         string           `json:"id"`
		Name       string           `json:"name"`
		Interrupts []map[string]any `json:"interrupts"`
		Checkpoint map[string]any   `json:"checkpoint"`
		State      *ThreadState     `json:"state"`
	}
	type state struct {
		Values     map[string]any `json:"values"`
		Next       []string       `json:"next"`
		Tasks      []task         `json:"tasks"`
		Checkpoint map[string]any `json:"checkpoint"`
	}
	var plain state
	b.mustDo("GET", "/threads/"+tid+"/state", nil, &plain, 200)
	if len(plain.Tasks) != 1 || plain.Tasks[0].Name != "ask" {
		t.Fatalf("tasks %+v", plain.Tasks)
	}
	tk := plain.Tasks[0]
	if tk.State != nil || tk.Checkpoint["thread_id"] != tid || tk.Checkpoint["checkpoint_ns"] != "ask:"+tk.ID || len(tk.Checkpoint) != 2 {
		t.Fatalf("without subgraphs: checkpoint %v state %+v", tk.Checkpoint, tk.State)
	}

	check := func(how string, s state) {
		t.Helper()
		if len(s.Tasks) != 1 || s.Tasks[0].State == nil {
			t.Fatalf("%s: tasks %+v", how, s.Tasks)
		}
		tk := s.Tasks[0]
		sub := tk.State
		if tk.Checkpoint != nil {
			t.Errorf("%s: checkpoint %v beside state", how, tk.Checkpoint)
		}
		vals, _ := sub.Values.(map[string]any)
		if vals["draft"] != "outline of owls" || len(sub.Next) != 1 || sub.Next[0] != "write" {
			t.Errorf("%s: subgraph values %v next %v", how, sub.Values, sub.Next)
		}
		if len(sub.Interrupts) != 1 || sub.Interrupts[0]["value"] != "tone?" {
			t.Errorf("%s: subgraph interrupts %v", how, sub.Interrupts)
		}
		cp, _ := sub.Checkpoint.(map[string]any)
		if ns, _ := cp["checkpoint_ns"].(string); !strings.HasPrefix(ns, "ask:") || cp["checkpoint_id"] == "" {
			t.Errorf("%s: subgraph checkpoint %v", how, sub.Checkpoint)
		}
	}
	var got state
	b.mustDo("GET", "/threads/"+tid+"/state?subgraphs=true", nil, &got, 200)
	check("GET ?subgraphs=true", got)
	var at state
	b.mustDo("POST", "/threads/"+tid+"/state/checkpoint", map[string]any{"checkpoint": map[string]any{"checkpoint_id": plain.Checkpoint["checkpoint_id"]}, "subgraphs": true}, &at, 200)
	check("POST state/checkpoint", at)
	b.mustDo("GET", "/threads/"+tid+"/state/"+plain.Checkpoint["checkpoint_id"].(string)+"?subgraphs=1", nil, &at, 200)
	check("GET state/{checkpoint_id}", at)

	var e map[string]any
	if code := b.do("GET", "/threads/"+tid+"/state?subgraphs=maybe", nil, &e); code != 400 || !strings.Contains(e["detail"].(string), "subgraphs") {
		t.Fatalf("subgraphs=maybe: %d %v", code, e)
	}

	// Resumed: the thread finishes with the subgraph's answer and no tasks left.
	var out map[string]any
	b.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "asking", "command": map[string]any{"resume": "calm"}}, &out, 200)
	if out["topic"] != "outline of owls in a calm tone" {
		t.Fatalf("final values %v", out)
	}
	b.mustDo("GET", "/threads/"+tid+"/state?subgraphs=true", nil, &got, 200)
	if len(got.Tasks) != 0 || len(got.Next) != 0 {
		t.Fatalf("finished thread: %+v", got)
	}
}
