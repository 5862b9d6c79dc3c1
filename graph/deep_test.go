package graph_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
)

func TestInterruptInEverySendBranch(t *testing.T) {
	calls := newCounter()
	g := graph.New[mapState]()
	g.AddNode("approve", func(ctx context.Context, s mapState) (mapState, error) {
		calls.inc(s.Subject)
		v, err := graph.Interrupt(ctx, "approve "+s.Subject+"?")
		if err != nil {
			return mapState{}, err
		}
		return mapState{Jokes: []string{fmt.Sprintf("%s: %v", s.Subject, v)}}, nil
	})
	g.AddRouter(graph.START, func(ctx context.Context, s mapState) ([]graph.Target, error) {
		return []graph.Target{graph.Send("approve", mapState{Subject: "x"}), graph.Send("approve", mapState{Subject: "y"})}, nil
	}, "approve")
	c, _ := withSaver(t, g)
	_, err := c.Invoke(bg, mapState{}, graph.WithThread("t"))
	ins := interrupted(t, err)
	if len(ins) != 2 {
		t.Fatalf("interrupts %+v", ins)
	}
	m := map[string]any{}
	for _, in := range ins {
		m[in.ID] = strings.TrimSuffix(strings.TrimPrefix(in.Value.(string), "approve "), "?") + " ok"
	}
	out, err := c.Invoke(bg, mapState{}, graph.WithThread("t"), graph.ResumeMap(m))
	if err != nil {
		t.Fatal(err)
	}
	// Each branch re-ran with its own payload, restored from the checkpoint.
	if want := []string{"x: x ok", "y: y ok"}; !slices.Equal(out.Jokes, want) {
		t.Fatalf("jokes %q, want %q", out.Jokes, want)
	}
	if calls.get("x") != 2 || calls.get("y") != 2 {
		t.Fatalf("calls %v", calls.n)
	}
}

func TestSubgraphTwoInterruptsInSequence(t *testing.T) {
	child := graph.New[childState]()
	child.AddNode("ask", func(ctx context.Context, s childState) (childState, error) {
		a, err := graph.Interrupt(ctx, "first?")
		if err != nil {
			return childState{}, err
		}
		b, err := graph.Interrupt(ctx, "second?")
		if err != nil {
			return childState{}, err
		}
		return childState{Steps: []string{fmt.Sprint(a, "+", b)}}, nil
	})
	child.AddEdge(graph.START, "ask")
	g := graph.New[parentState]()
	graph.AddSubgraph(g, "sub", compile(t, child),
		func(p parentState) childState { return childState{} },
		func(c childState) parentState { return parentState{Log: c.Steps} })
	g.AddEdge(graph.START, "sub")
	c, _ := withSaver(t, g)
	_, err := c.Invoke(bg, parentState{}, graph.WithThread("t"))
	if ins := interrupted(t, err); ins[0].Value != "first?" {
		t.Fatalf("%+v", ins)
	}
	_, err = c.Invoke(bg, parentState{}, graph.WithThread("t"), graph.Resume("A"))
	if ins := interrupted(t, err); len(ins) != 1 || ins[0].Value != "second?" {
		t.Fatalf("%+v", ins)
	}
	out, err := c.Invoke(bg, parentState{}, graph.WithThread("t"), graph.Resume("B"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Log, []string{"A+B"}) {
		t.Fatalf("log %q", out.Log)
	}
}

func TestNestedSubgraphInterrupt(t *testing.T) {
	calls := newCounter()
	leaf := graph.New[childState]()
	leaf.AddNode("prep", func(ctx context.Context, s childState) (childState, error) {
		calls.inc("prep")
		return childState{Steps: []string{"prep"}}, nil
	})
	leaf.AddNode("ask", func(ctx context.Context, s childState) (childState, error) {
		v, err := graph.Interrupt(ctx, "deep?")
		if err != nil {
			return childState{}, err
		}
		return childState{Steps: []string{fmt.Sprint("deep ", v)}}, nil
	})
	leaf.AddSequence(graph.START, "prep", "ask")
	mid := graph.New[childState]()
	graph.AddSubgraph(mid, "leaf", compile(t, leaf), nil, func(c childState) childState { return childState{Steps: c.Steps} })
	mid.AddEdge(graph.START, "leaf")
	g := graph.New[parentState]()
	graph.AddSubgraph(g, "mid", compile(t, mid),
		func(p parentState) childState { return childState{} },
		func(c childState) parentState { return parentState{Log: c.Steps} })
	g.AddEdge(graph.START, "mid")
	c, saver := withSaver(t, g)
	_, err := c.Invoke(bg, parentState{}, graph.WithThread("t"))
	ins := interrupted(t, err)
	if len(ins) != 1 || strings.Count(ins[0].NS, "|") != 1 || !strings.HasPrefix(ins[0].NS, "mid:") || !strings.Contains(ins[0].NS, "|leaf:") {
		t.Fatalf("interrupt %+v, want namespace mid:<task>|leaf:<task>", ins)
	}
	out, err := c.Invoke(bg, parentState{}, graph.WithThread("t"), graph.Resume("yes"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"prep", "deep yes"}; !slices.Equal(out.Log, want) {
		t.Fatalf("log %q, want %q", out.Log, want)
	}
	if calls.get("prep") != 1 {
		t.Fatalf("prep ran %d times", calls.get("prep"))
	}
	spaces := map[string]bool{}
	for tuple, err := range saver.List(bg, checkpoint.ListOptions{ThreadID: "t", AllNS: true}) {
		if err != nil {
			t.Fatal(err)
		}
		spaces[tuple.Ref.NS] = true
	}
	if len(spaces) != 3 {
		t.Fatalf("namespaces %v, want root, mid and mid|leaf", spaces)
	}
}

func TestSubgraphFollowsParentDurability(t *testing.T) {
	child := graph.New[childState]()
	child.AddNode("a", func(ctx context.Context, s childState) (childState, error) {
		return childState{Steps: []string{"a"}}, nil
	})
	child.AddNode("b", func(ctx context.Context, s childState) (childState, error) {
		return childState{Steps: []string{"b"}}, nil
	})
	child.AddSequence(graph.START, "a", "b")
	g := graph.New[parentState]()
	graph.AddSubgraph(g, "sub", compile(t, child),
		func(p parentState) childState { return childState{} },
		func(c childState) parentState { return parentState{Log: c.Steps} })
	g.AddEdge(graph.START, "sub")
	c, saver := withSaver(t, g)
	if _, err := c.Invoke(bg, parentState{}, graph.WithThread("t"), graph.WithDurability(graph.DurabilityExit)); err != nil {
		t.Fatal(err)
	}
	perNS := map[string]int{}
	for tuple, err := range saver.List(bg, checkpoint.ListOptions{ThreadID: "t", AllNS: true}) {
		if err != nil {
			t.Fatal(err)
		}
		perNS[tuple.Ref.NS]++
	}
	for ns, n := range perNS {
		if n != 1 {
			t.Fatalf("namespace %q has %d checkpoints; with exit durability every namespace writes one (%v)", ns, n, perNS)
		}
	}
}

func TestDecodeStateRejectsTrailingData(t *testing.T) {
	_, err := graph.DecodeState[S]([]byte(`{"answer":"x"} {"answer":"y"}`))
	wantErr(t, err, "after the state")
	if _, err := graph.DecodeState[S]([]byte(" {\"answer\":\"x\"}\n ")); err != nil {
		t.Fatalf("whitespace around the object: %v", err)
	}
}

func TestSubgraphInterruptWithEveryDurability(t *testing.T) {
	for _, d := range []graph.Durability{graph.DurabilitySync, graph.DurabilityAsync, graph.DurabilityExit} {
		t.Run(string(d), func(t *testing.T) {
			calls := newCounter()
			c, _ := parentGraph(t, childGraph(t, calls, true), calls)
			_, err := c.Invoke(bg, parentState{Topic: "owls"}, graph.WithThread("t"), graph.WithDurability(d))
			interrupted(t, err)
			out, err := c.Invoke(bg, parentState{}, graph.WithThread("t"), graph.Resume("dry"), graph.WithDurability(d))
			if err != nil {
				t.Fatal(err)
			}
			if want := "plan, side, research owls, write owls (dry)"; out.Final != want {
				t.Fatalf("final %q, want %q", out.Final, want)
			}
			if calls.get("research") != 1 || calls.get("side") != 1 {
				t.Fatalf("calls %v", calls.n)
			}
		})
	}
}

func TestSendSiblingThatFinishedIsNotRerun(t *testing.T) {
	calls := newCounter()
	g := graph.New[mapState]()
	g.AddNode("work", func(ctx context.Context, s mapState) (mapState, error) {
		calls.inc(s.Subject)
		if s.Subject == "ask" {
			v, err := graph.Interrupt(ctx, "?")
			if err != nil {
				return mapState{}, err
			}
			return mapState{Jokes: []string{fmt.Sprint("ask: ", v)}}, nil
		}
		return mapState{Jokes: []string{s.Subject}}, nil
	})
	g.AddRouter(graph.START, func(ctx context.Context, s mapState) ([]graph.Target, error) {
		return []graph.Target{graph.Send("work", mapState{Subject: "done"}), graph.Send("work", mapState{Subject: "ask"})}, nil
	}, "work")
	c, _ := withSaver(t, g)
	_, err := c.Invoke(bg, mapState{}, graph.WithThread("t"))
	interrupted(t, err)
	out, err := c.Invoke(bg, mapState{}, graph.WithThread("t"), graph.Resume("yes"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"done", "ask: yes"}; !slices.Equal(out.Jokes, want) {
		t.Fatalf("jokes %q, want %q", out.Jokes, want)
	}
	if calls.get("done") != 1 || calls.get("ask") != 2 {
		t.Fatalf("calls %v", calls.n)
	}
}

func TestFailureAndInterruptInOneSuperstep(t *testing.T) {
	fail := true
	g := graph.New[S]()
	g.AddNode("ask", func(ctx context.Context, s S) (S, error) {
		v, err := graph.Interrupt(ctx, "?")
		if err != nil {
			return S{}, err
		}
		return S{Notes: []string{fmt.Sprint("ask ", v)}}, nil
	})
	g.AddNode("flaky", func(ctx context.Context, s S) (S, error) {
		if fail {
			return S{}, fmt.Errorf("flaky down")
		}
		return S{Notes: []string{"flaky"}}, nil
	})
	g.AddEdge(graph.START, "ask").AddEdge(graph.START, "flaky")
	c, _ := withSaver(t, g)
	_, err := c.Invoke(bg, S{}, graph.WithThread("t"))
	wantErr(t, err, "flaky down")
	fail = false
	// Continuing re-runs the failed node; the interrupt is still pending and still asks.
	_, err = c.Invoke(bg, S{}, graph.WithThread("t"), graph.Continue())
	interrupted(t, err)
	out, err := c.Invoke(bg, S{}, graph.WithThread("t"), graph.Resume("now"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ask now", "flaky"}; !slices.Equal(out.Notes, want) {
		t.Fatalf("notes %q, want %q", out.Notes, want)
	}
}

func TestInterruptsInSubgraphsFannedOutBySend(t *testing.T) {
	calls := newCounter()
	child := childGraph(t, calls, true)
	g := graph.New[parentState]()
	graph.AddSubgraph(g, "team", child,
		func(p parentState) childState { return childState{Subject: p.Topic} },
		func(c childState) parentState { return parentState{Log: c.Steps} })
	g.AddRouter(graph.START, func(ctx context.Context, s parentState) ([]graph.Target, error) {
		return []graph.Target{graph.Send("team", parentState{Topic: "a"}), graph.Send("team", parentState{Topic: "b"})}, nil
	}, "team")
	c, _ := withSaver(t, g)
	_, err := c.Invoke(bg, parentState{}, graph.WithThread("t"))
	ins := interrupted(t, err)
	if len(ins) != 2 || ins[0].NS == ins[1].NS {
		t.Fatalf("interrupts %+v, want one per branch, in different namespaces", ins)
	}
	m := map[string]any{}
	for _, in := range ins {
		m[in.ID] = strings.TrimSuffix(strings.TrimPrefix(in.Value.(string), "tone for "), "?") + "-tone"
	}
	out, err := c.Invoke(bg, parentState{}, graph.WithThread("t"), graph.ResumeMap(m))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"research a", "write a (a-tone)", "research b", "write b (b-tone)"}
	if !slices.Equal(out.Log, want) {
		t.Fatalf("log %q, want %q", out.Log, want)
	}
	if calls.get("research") != 2 || calls.get("write") != 4 {
		t.Fatalf("calls %v", calls.n)
	}
}

func TestStaticInterruptInsideSubgraph(t *testing.T) {
	calls := newCounter()
	inner := graph.New[childState]()
	for _, n := range []string{"one", "two"} {
		inner.AddNode(n, func(ctx context.Context, s childState) (childState, error) {
			calls.inc(n)
			return childState{Steps: []string{n}}, nil
		})
	}
	inner.AddSequence(graph.START, "one", "two")
	child := compile(t, inner, graph.CompileOptions{InterruptBefore: []string{"two"}})
	g := graph.New[parentState]()
	graph.AddSubgraph(g, "sub", child,
		func(p parentState) childState { return childState{} },
		func(c childState) parentState { return parentState{Log: c.Steps} })
	g.AddEdge(graph.START, "sub")
	c, _ := withSaver(t, g)
	_, err := c.Invoke(bg, parentState{}, graph.WithThread("t"))
	ins := interrupted(t, err)
	if len(ins) != 1 || ins[0].Node != "two" || ins[0].When != "before" || !strings.HasPrefix(ins[0].NS, "sub:") {
		t.Fatalf("interrupts %+v", ins)
	}
	out, err := c.Invoke(bg, parentState{}, graph.WithThread("t"), graph.Continue())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Log, []string{"one", "two"}) || calls.get("one") != 1 || calls.get("two") != 1 {
		t.Fatalf("log %q calls %v", out.Log, calls.n)
	}
}
