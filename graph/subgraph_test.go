package graph_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
)

// parentState and childState differ: the subgraph node maps between them.
type parentState struct {
	Topic string   `json:"topic"`
	Log   []string `json:"log" reduce:"append"`
	Final string   `json:"final"`
}

type childState struct {
	Subject string   `json:"subject"`
	Steps   []string `json:"steps" reduce:"append"`
}

func childGraph(t *testing.T, calls *counter, interrupt bool) *graph.Compiled[childState] {
	g := graph.New[childState]()
	g.AddNode("research", func(ctx context.Context, s childState) (childState, error) {
		calls.inc("research")
		graph.Emit(ctx, "researching "+s.Subject)
		return childState{Steps: []string{"research " + s.Subject}}, nil
	})
	g.AddNode("write", func(ctx context.Context, s childState) (childState, error) {
		calls.inc("write")
		if interrupt {
			v, err := graph.Interrupt(ctx, "tone for "+s.Subject+"?")
			if err != nil {
				return childState{}, err
			}
			return childState{Steps: []string{fmt.Sprintf("write %s (%v)", s.Subject, v)}}, nil
		}
		return childState{Steps: []string{"write " + s.Subject}}, nil
	})
	g.AddSequence(graph.START, "research", "write", graph.END)
	return compile(t, g, graph.CompileOptions{Name: "writer"})
}

func parentGraph(t *testing.T, child *graph.Compiled[childState], calls *counter) (*graph.Compiled[parentState], checkpoint.Saver) {
	g := graph.New[parentState]()
	g.AddNode("plan", func(ctx context.Context, s parentState) (parentState, error) {
		calls.inc("plan")
		return parentState{Log: []string{"plan"}}, nil
	})
	graph.AddSubgraph(g, "team", child,
		func(p parentState) childState { return childState{Subject: p.Topic} },
		func(c childState) parentState { return parentState{Log: c.Steps} })
	g.AddNode("side", func(ctx context.Context, s parentState) (parentState, error) {
		calls.inc("side")
		return parentState{Log: []string{"side"}}, nil
	})
	g.AddNode("finish", func(ctx context.Context, s parentState) (parentState, error) {
		return parentState{Final: strings.Join(s.Log, ", ")}, nil
	})
	g.AddEdge(graph.START, "plan").AddEdge("plan", "team").AddEdge("plan", "side")
	g.AddJoin([]string{"team", "side"}, "finish")
	return withSaver(t, g, graph.CompileOptions{Name: "editor"})
}

func TestSubgraphMapsStateAndCheckpointsInItsNamespace(t *testing.T) {
	calls := newCounter()
	c, saver := parentGraph(t, childGraph(t, calls, false), calls)
	out, err := c.Invoke(bg, parentState{Topic: "owls"}, graph.WithThread("t"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "plan, side, research owls, write owls"; out.Final != want {
		t.Fatalf("final %q, want %q", out.Final, want)
	}
	// The child's checkpoints live in their own namespace of the thread.
	spaces := map[string]int{}
	for tuple, err := range saver.List(bg, checkpoint.ListOptions{ThreadID: "t", AllNS: true}) {
		if err != nil {
			t.Fatal(err)
		}
		spaces[tuple.Ref.NS]++
	}
	if len(spaces) != 2 || spaces[""] != 5 {
		t.Fatalf("namespaces %v, want the root (5 checkpoints) and one for the subgraph", spaces)
	}
	for ns, n := range spaces {
		if ns != "" && (!strings.HasPrefix(ns, "team:") || n != 4) {
			t.Fatalf("subgraph namespace %q has %d checkpoints, want team:<task> with 4", ns, n)
		}
	}
	// The root history is unaffected by the child's checkpoints.
	if n := len(history(t, c, "t")); n != 5 {
		t.Fatalf("root history has %d checkpoints", n)
	}
}

func TestSubgraphEventsCarryNamespace(t *testing.T) {
	calls := newCounter()
	c, _ := parentGraph(t, childGraph(t, calls, false), calls)
	evs, err := collect(c.Stream(bg, parentState{Topic: "owls"}, graph.WithThread("t"), graph.WithSubgraphs(),
		graph.WithStreamModes(graph.ModeUpdates, graph.ModeCustom)))
	if err != nil {
		t.Fatal(err)
	}
	var root, child []string
	var ns []string
	for _, ev := range evs {
		switch {
		case ev.Mode == graph.ModeCustom:
			if len(ev.NS) != 1 || ev.Node != "research" {
				t.Fatalf("custom event from the subgraph %+v", ev)
			}
		case len(ev.NS) == 0:
			root = append(root, ev.Node)
		default:
			child = append(child, ev.Node)
			if ns != nil && !slices.Equal(ns, ev.NS) {
				t.Fatalf("namespaces %q and %q within one subgraph run", ns, ev.NS)
			}
			ns = ev.NS
		}
	}
	// team and side run in one superstep: their updates stream as each ends, in either order.
	if len(root) == 4 {
		slices.Sort(root[1:3])
	}
	if !slices.Equal(root, []string{"plan", "side", "team", "finish"}) || !slices.Equal(child, []string{"research", "write"}) {
		t.Fatalf("root updates %q, child updates %q", root, child)
	}
	if !strings.HasPrefix(ns[0], "team:") {
		t.Fatalf("namespace %q", ns)
	}

	// Without WithSubgraphs, the child's updates stay inside; custom events still arrive.
	evs, err = collect(c.Stream(bg, parentState{Topic: "owls"}, graph.WithThread("u"), graph.WithStreamModes(graph.ModeUpdates, graph.ModeCustom)))
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Mode == graph.ModeUpdates && len(ev.NS) > 0 {
			t.Fatalf("a subgraph update leaked without WithSubgraphs: %+v", ev)
		}
	}
	if n := len(ofMode(evs, graph.ModeCustom)); n != 1 {
		t.Fatalf("%d custom events, want the child's one", n)
	}
}

func TestSubgraphInterrupt(t *testing.T) {
	calls := newCounter()
	c, _ := parentGraph(t, childGraph(t, calls, true), calls)
	_, err := c.Invoke(bg, parentState{Topic: "owls"}, graph.WithThread("t"))
	ins := interrupted(t, err)
	if len(ins) != 1 || ins[0].Node != "write" || !strings.HasPrefix(ins[0].NS, "team:") || ins[0].Value != "tone for owls?" {
		t.Fatalf("interrupts %+v", ins)
	}
	snap, err := c.State(bg, refOf("t"))
	if err != nil {
		t.Fatal(err)
	}
	// "side" finished in the interrupted superstep: as under LangGraph, its write shows in the
	// newest state and it has left Next, while the saved checkpoint still lists both.
	if !slices.Equal(snap.Next, []string{"team"}) || len(snap.Interrupts()) != 1 || !slices.Contains(snap.Values.Log, "side") {
		t.Fatalf("root snapshot next %q interrupts %+v log %q", snap.Next, snap.Interrupts(), snap.Values.Log)
	}
	saved, err := c.State(bg, snap.Ref)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(saved.Next, []string{"team", "side"}) || slices.Contains(saved.Values.Log, "side") {
		t.Fatalf("the saved checkpoint: next %q log %q, want both tasks next and no write of side", saved.Next, saved.Values.Log)
	}
	out, err := c.Invoke(bg, parentState{}, graph.WithThread("t"), graph.Resume("playful"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "plan, side, research owls, write owls (playful)"; out.Final != want {
		t.Fatalf("final %q, want %q", out.Final, want)
	}
	// Inside the child, research finished before the pause and did not run again; in the
	// parent, the sibling side did not run again either.
	if calls.get("research") != 1 || calls.get("write") != 2 || calls.get("side") != 1 || calls.get("plan") != 1 {
		t.Fatalf("calls %v", calls.n)
	}
}

type sharedState struct {
	Items []string `json:"items" reduce:"append"`
	Route string   `json:"route"`
}

func TestSubgraphCommandToParent(t *testing.T) {
	child := graph.New[childState]()
	child.AddCommandNode("escalate", func(ctx context.Context, s childState) (*graph.Command[childState], error) {
		return &graph.Command[childState]{
			Parent:       true,
			Goto:         []graph.Target{graph.To("human")},
			ParentUpdate: sharedState{Route: "escalated: " + s.Subject},
		}, nil
	})
	child.AddNode("never", func(ctx context.Context, s childState) (childState, error) {
		return s, errors.New("the child went on after sending a command to its parent")
	})
	child.AddEdge(graph.START, "escalate").AddEdge("escalate", "never")
	cc := compile(t, child)

	g := graph.New[sharedState]()
	graph.AddSubgraph(g, "triage", cc,
		func(p sharedState) childState { return childState{Subject: p.Items[0]} },
		func(c childState) sharedState { return sharedState{Items: c.Steps} })
	g.AddNode("human", func(ctx context.Context, s sharedState) (sharedState, error) {
		return sharedState{Items: []string{"human saw " + s.Route}}, nil
	})
	g.AddEdge(graph.START, "triage")
	c, _ := withSaver(t, g)
	out, err := c.Invoke(bg, sharedState{Items: []string{"refund"}}, graph.WithThread("t"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"refund", "human saw escalated: refund"}; !slices.Equal(out.Items, want) || out.Route != "escalated: refund" {
		t.Fatalf("got %+v, want items %q", out, want)
	}

	// A parent update of the wrong type is an error naming the subgraph.
	bad := graph.New[childState]()
	bad.AddCommandNode("escalate", func(ctx context.Context, s childState) (*graph.Command[childState], error) {
		return &graph.Command[childState]{Parent: true, ParentUpdate: "not the parent's state"}, nil
	})
	bad.AddEdge(graph.START, "escalate")
	g2 := graph.New[sharedState]()
	graph.AddSubgraph(g2, "triage", compile(t, bad),
		func(p sharedState) childState { return childState{} },
		func(c childState) sharedState { return sharedState{} })
	g2.AddEdge(graph.START, "triage")
	_, err = compile(t, g2).Invoke(bg, sharedState{})
	wantErr(t, err, `"triage"`, "string", "sharedState")

	// At the root there is no parent.
	_, err = compile(t, bad).Invoke(bg, childState{})
	wantErr(t, err, "parent")
}

func TestSubgraphSameStateNoMapping(t *testing.T) {
	inner := graph.New[S]()
	inner.AddNode("inc", func(ctx context.Context, s S) (S, error) { return S{Count: 1, Answer: "inner"}, nil })
	inner.AddEdge(graph.START, "inc")
	g := graph.New[S]()
	graph.AddSubgraph(g, "sub", compile(t, inner), nil, nil)
	g.AddEdge(graph.START, "sub")
	out, err := compile(t, g).Invoke(bg, S{Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The child's final state (count 2) is the parent's update, through the parent's reducer.
	if out.Count != 3 || out.Answer != "inner" {
		t.Fatalf("got %+v", out)
	}
}

func TestSubgraphFanOutBySend(t *testing.T) {
	calls := newCounter()
	child := childGraph(t, calls, false)
	g := graph.New[parentState]()
	graph.AddSubgraph(g, "team", child,
		func(p parentState) childState { return childState{Subject: p.Topic} },
		func(c childState) parentState { return parentState{Log: c.Steps} })
	g.AddRouter(graph.START, func(ctx context.Context, s parentState) ([]graph.Target, error) {
		var out []graph.Target
		for _, topic := range strings.Split(s.Topic, ",") {
			out = append(out, graph.Send("team", parentState{Topic: topic}))
		}
		return out, nil
	}, "team")
	c, saver := withSaver(t, g)
	out, err := c.Invoke(bg, parentState{Topic: "a,b,c"}, graph.WithThread("t"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"research a", "write a", "research b", "write b", "research c", "write c"}
	if !slices.Equal(out.Log, want) {
		t.Fatalf("log %q, want %q", out.Log, want)
	}
	spaces := map[string]bool{}
	for tuple, err := range saver.List(bg, checkpoint.ListOptions{ThreadID: "t", AllNS: true}) {
		if err != nil {
			t.Fatal(err)
		}
		spaces[tuple.Ref.NS] = true
	}
	if len(spaces) != 4 {
		t.Fatalf("%d namespaces, want the root and one per branch", len(spaces))
	}
}

func TestAddSubgraphErrors(t *testing.T) {
	g := graph.New[parentState]()
	graph.AddSubgraph[parentState, childState](g, "nil", nil, nil, nil)
	graph.AddSubgraph(g, "unmapped", childGraph(t, newCounter(), false), nil, nil)
	g.AddEdge(graph.START, graph.END)
	_, err := g.Compile()
	wantErr(t, err, `"nil"`, "nil", `"unmapped"`, "both mapping functions")
}

func TestSubgraphsInheritTheRunsLimits(t *testing.T) {
	// A child that loops n times, counting how many of its tasks run at once.
	var running, peak atomic.Int32
	loopChild := func(n int) *graph.Compiled[S] {
		g := graph.New[S]()
		g.AddNode("tick", func(ctx context.Context, s S) (S, error) {
			return S{Count: 1}, nil
		})
		for _, w := range []string{"w1", "w2", "w3"} {
			g.AddNode(w, func(ctx context.Context, s S) (S, error) {
				now := running.Add(1)
				defer running.Add(-1)
				for p := peak.Load(); now > p && !peak.CompareAndSwap(p, now); p = peak.Load() {
				}
				time.Sleep(2 * time.Millisecond)
				return S{}, nil
			})
			g.AddEdge(graph.START, w)
		}
		g.AddEdge(graph.START, "tick")
		g.AddConditionalEdges("tick", func(ctx context.Context, s S) (string, error) {
			if s.Count >= n {
				return graph.END, nil
			}
			return "tick", nil
		}, nil)
		return compile(t, g)
	}
	parent := func(child *graph.Compiled[S]) *graph.Compiled[S] {
		g := graph.New[S]()
		graph.AddSubgraph(g, "child", child, nil, nil)
		g.AddEdge(graph.START, "child")
		return compile(t, g)
	}

	// 40 supersteps in the child: more than the default 25, fine under the run's limit of 100.
	if _, err := parent(loopChild(40)).Invoke(bg, S{}, graph.WithRecursionLimit(100), graph.WithMaxConcurrency(1)); err != nil {
		t.Fatalf("a subgraph under a run limit of 100 failed: %v", err)
	}
	if p := peak.Load(); p != 1 {
		t.Errorf("the run allowed one task at a time, but the subgraph ran %d at once", p)
	}
	// And a run limit of 5 stops a child that needs 10.
	_, err := parent(loopChild(10)).Invoke(bg, S{}, graph.WithRecursionLimit(5))
	if !errors.Is(err, graph.ErrRecursionLimit) {
		t.Fatalf("a subgraph needing 10 supersteps under a run limit of 5: %v", err)
	}
}
