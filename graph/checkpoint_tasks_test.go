package graph_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/graph"
)

// A checkpoint event sent again when a superstep stops at an interrupt lists the task that
// finished in it with its writes as [channel, value] pairs (they are kept as pending writes),
// and the task that asked with its interrupt, as LangGraph's tasks carry result and interrupts;
// a subgraph node's task names the subgraph's checkpoints in state.
func TestCheckpointTasksCarryResultAndState(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("a", func(ctx context.Context, s S) (S, error) { return S{Notes: []string{"a"}, Answer: "from a"}, nil })
	g.AddNode("b", func(ctx context.Context, s S) (S, error) {
		v, err := graph.Interrupt(ctx, "ok?")
		if err != nil {
			return S{}, err
		}
		return S{Notes: []string{"b:" + v.(string)}}, nil
	})
	inner := graph.New[S]()
	inner.AddNode("deep", func(ctx context.Context, s S) (S, error) { return S{Count: 1}, nil })
	inner.AddSequence(graph.START, "deep", graph.END)
	child := compile(t, inner, graph.CompileOptions{})
	graph.AddSubgraph(g, "sub", child, func(s S) S { return s }, func(s S) S { return S{Count: s.Count} })
	g.AddEdge(graph.START, "a").AddEdge(graph.START, "b").AddEdge("a", "sub").AddEdge("b", "sub").AddEdge("sub", graph.END)
	c, _ := withSaver(t, g)

	var cps []graph.CheckpointEvent[S]
	run := func(opts ...graph.RunOption) {
		opts = append(opts, graph.WithThread("t"), graph.WithStreamModes(graph.ModeCheckpoints))
		for ev, err := range c.Stream(bg, S{}, opts...) {
			if err != nil {
				if !strings.Contains(err.Error(), "interrupt") {
					t.Fatal(err)
				}
				continue
			}
			if ev.Mode == graph.ModeCheckpoints && len(ev.NS) == 0 {
				cps = append(cps, ev.Data.(graph.CheckpointEvent[S]))
			}
		}
	}
	run()
	last := cps[len(cps)-1]
	if len(last.Tasks) != 2 {
		t.Fatalf("the checkpoint the interrupt stopped at: tasks %+v", last.Tasks)
	}
	for _, task := range last.Tasks {
		raw, _ := json.Marshal(task)
		switch task.Name {
		case "a":
			if got := string(mustJSON(t, task.Result)); got != `[["notes",["a"]],["answer","from a"]]` || len(task.Interrupts) != 0 {
				t.Errorf("task a: %s, want its writes as [channel, value] pairs", raw)
			}
		case "b":
			if task.Result != nil || len(task.Interrupts) != 1 || task.Interrupts[0].Value != "ok?" {
				t.Errorf("task b: %s, want its interrupt and no result", raw)
			}
		}
	}
	cps = nil
	run(graph.Resume("yes"))
	var subTask *graph.CheckpointTask
	for _, cp := range cps {
		for i := range cp.Tasks {
			if cp.Tasks[i].Name == "sub" {
				subTask = &cp.Tasks[i]
			}
		}
	}
	if subTask == nil {
		t.Fatal("no checkpoint lists the subgraph's task")
	}
	cfg, _ := subTask.State["configurable"].(map[string]any)
	if cfg["thread_id"] != "t" || cfg["checkpoint_ns"] != "sub:"+subTask.ID {
		t.Fatalf("the subgraph task's state: %v, want its thread and namespace sub:<task id>", subTask.State)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
