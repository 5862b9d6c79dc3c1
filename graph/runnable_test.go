package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
)

func TestRunnableJSON(t *testing.T) {
	c, _, _ := abc(t, graph.CompileOptions{InterruptBefore: []string{"c"}})
	r := c.Runnable()
	evs, err := collect(r.Stream(bg, json.RawMessage(`{"notes":["in"],"answer":"x"}`), graph.WithThread("t")))
	interrupted(t, err)
	if last := evs[len(evs)-1].Data.(S); !slices.Equal(last.Notes, []string{"in", "a", "b"}) || last.Answer != "x" {
		t.Fatalf("last values %+v", last)
	}
	_, err = collect(r.Stream(bg, json.RawMessage(`{"nots":[]}`), graph.WithThread("u")))
	wantErr(t, err, `"nots"`)

	if _, err := r.UpdateState(bg, refOf("t"), json.RawMessage(`{"notes":["edit"]}`), "b"); err != nil {
		t.Fatal(err)
	}
	_, err = r.UpdateState(bg, refOf("t"), json.RawMessage(`{"count":"x"}`), "b")
	wantErr(t, err, "count")

	snap, err := r.State(bg, refOf("t"))
	if err != nil {
		t.Fatal(err)
	}
	if v := snap.Values.(S); !slices.Equal(v.Notes, []string{"in", "a", "b", "edit"}) || !slices.Equal(snap.Next, []string{"c"}) {
		t.Fatalf("state %+v next %q", v, snap.Next)
	}
	// No input continues nothing: an empty JSON input is a new run with no writes.
	evs, err = collect(r.Stream(bg, nil, graph.WithThread("t"), graph.Continue()))
	if err != nil {
		t.Fatal(err)
	}
	if last := evs[len(evs)-1].Data.(S); !slices.Equal(last.Notes, []string{"in", "a", "b", "edit", "c"}) {
		t.Fatalf("after continue %+v", last)
	}
	n := 0
	for snap, err := range r.History(bg, "t", graph.HistoryOptions{Limit: 3}) {
		if err != nil || snap == nil {
			t.Fatalf("History: %v", err)
		}
		n++
	}
	if n != 3 {
		t.Fatalf("History listed %d, want 3", n)
	}
	if r.Name() != "graph" || len(r.Nodes()) != 3 || r.Mermaid(false) == "" || len(r.Shape().Nodes) != 5 {
		t.Fatalf("descriptions: %q %q", r.Name(), r.Nodes())
	}
}

// A graph's subgraphs are Runnables too: their descriptions, their own subgraphs (found with a
// type assertion, as the server finds them) and, with the saver, their state in their namespace
// of the parent's thread. The parent's Runnable reads the thread as the typed graph does.
func TestRunnableSubgraphs(t *testing.T) {
	saver := newSaver(t)
	inner := graph.New[childState]()
	inner.AddNode("note", func(ctx context.Context, s childState) (childState, error) {
		return childState{Steps: []string{"note " + s.Subject}}, nil
	})
	inner.AddEdge(graph.START, "note")
	mid := graph.New[childState]()
	graph.AddSubgraph(mid, "inner", compile(t, inner, graph.CompileOptions{Name: "inner"}), nil, nil)
	mid.AddNode("write", func(ctx context.Context, s childState) (childState, error) {
		if _, err := graph.Interrupt(ctx, "ok?"); err != nil {
			return childState{}, err
		}
		return childState{Steps: []string{"write"}}, nil
	})
	mid.AddSequence(graph.START, "inner", "write", graph.END)
	midC := compile(t, mid, graph.CompileOptions{Name: "mid", Saver: saver})
	top := graph.New[parentState]()
	graph.AddSubgraph(top, "team", midC,
		func(p parentState) childState { return childState{Subject: p.Topic} },
		func(c childState) parentState { return parentState{Log: c.Steps} })
	top.AddEdge(graph.START, "team")
	c := compile(t, top, graph.CompileOptions{Name: "top", Saver: saver})
	r := c.Runnable()

	_, err := collect(r.Stream(bg, json.RawMessage(`{"topic":"owls"}`), graph.WithThread("t")))
	interrupted(t, err)
	snap, err := r.State(bg, refOf("t"))
	if err != nil || !slices.Equal(snap.Next, []string{"team"}) || len(snap.Interrupts()) != 1 {
		t.Fatalf("parent state %+v, %v; want team waiting at one interrupt", snap, err)
	}
	if v, ok := snap.Values.(parentState); !ok || v.Topic != "owls" {
		t.Fatalf("parent values %#v", snap.Values)
	}

	subs := c.Subgraphs()
	if len(subs) != 1 || subs[0].Node != "team" || subs[0].Graph.Name() != "mid" || !slices.Equal(subs[0].Graph.Nodes(), []string{"inner", "write"}) {
		t.Fatalf("subgraphs %+v", subs)
	}
	nested, ok := subs[0].Graph.(interface{ Subgraphs() []graph.SubgraphNode })
	if !ok {
		t.Fatal("a subgraph's Runnable lists no subgraphs")
	}
	if in := nested.Subgraphs(); len(in) != 1 || in[0].Node != "inner" || in[0].Graph.Name() != "inner" {
		t.Fatalf("nested subgraphs %+v", in)
	}
	var ns string
	for tuple, err := range saver.List(bg, checkpoint.ListOptions{ThreadID: "t", AllNS: true}) {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(tuple.Ref.NS, "team:") && !strings.Contains(tuple.Ref.NS, "|") {
			ns = tuple.Ref.NS
		}
	}
	child, err := subs[0].Graph.State(bg, checkpoint.Ref{ThreadID: "t", NS: ns})
	if err != nil {
		t.Fatalf("subgraph state in %q: %v", ns, err)
	}
	if v, ok := child.Values.(childState); !ok || !slices.Equal(v.Steps, []string{"note owls"}) || !slices.Equal(child.Next, []string{"write"}) {
		t.Fatalf("subgraph state %#v, next %q", child.Values, child.Next)
	}
}

// A nil graph gives a nil Runnable, and Erase passes a constructor's error on.
func TestRunnableOfNothing(t *testing.T) {
	var c *graph.Compiled[S]
	if c.Runnable() != nil {
		t.Fatal("a nil graph's Runnable is not nil")
	}
	boom := errors.New("boom")
	if r, err := graph.Erase(c, boom); r != nil || !errors.Is(err, boom) {
		t.Fatalf("Erase of a failed compile: %v, %v", r, err)
	}
	g := graph.New[S]()
	g.AddNode("a", func(ctx context.Context, s S) (S, error) { return s, nil })
	g.AddEdge(graph.START, "a")
	if r, err := graph.Erase(g.Compile()); err != nil || r == nil || r.Name() != "graph" {
		t.Fatalf("Erase of a compiled graph: %v, %v", r, err)
	}
}

func TestResumeValueFromJSON(t *testing.T) {
	// A resume value that crossed HTTP arrives as a map; InterruptAs converts it.
	type decision struct {
		Approve bool   `json:"approve"`
		Note    string `json:"note"`
	}
	g := graph.New[S]()
	g.AddNode("ask", func(ctx context.Context, s S) (S, error) {
		d, err := graph.InterruptAs[decision](ctx, "ok?")
		if err != nil {
			return S{}, err
		}
		return S{Flag: d.Approve, Answer: d.Note}, nil
	})
	g.AddEdge(graph.START, "ask")
	c, _ := withSaver(t, g)
	_, err := c.Invoke(bg, S{}, graph.WithThread("t"))
	interrupted(t, err)
	var v any
	if err := json.Unmarshal([]byte(`{"approve":true,"note":"lgtm"}`), &v); err != nil {
		t.Fatal(err)
	}
	out, err := c.Invoke(bg, S{}, graph.WithThread("t"), graph.Resume(v))
	if err != nil || !out.Flag || out.Answer != "lgtm" {
		t.Fatalf("got %+v, %v", out, err)
	}
}
