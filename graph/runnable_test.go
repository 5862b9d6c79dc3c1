package graph_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/trellis-go/trellis/graph"
)

func TestRunnableJSON(t *testing.T) {
	c, _, _ := abc(t, graph.CompileOptions{InterruptBefore: []string{"c"}})
	var r graph.Runnable = c
	evs, err := collect(r.StreamJSON(bg, json.RawMessage(`{"notes":["in"],"answer":"x"}`), graph.WithThread("t")))
	interrupted(t, err)
	if last := evs[len(evs)-1].Data.(S); !slices.Equal(last.Notes, []string{"in", "a", "b"}) || last.Answer != "x" {
		t.Fatalf("last values %+v", last)
	}
	_, err = collect(r.StreamJSON(bg, json.RawMessage(`{"nots":[]}`), graph.WithThread("u")))
	wantErr(t, err, `"nots"`)

	if _, err := r.UpdateStateJSON(bg, refOf("t"), json.RawMessage(`{"notes":["edit"]}`), "b"); err != nil {
		t.Fatal(err)
	}
	_, err = r.UpdateStateJSON(bg, refOf("t"), json.RawMessage(`{"count":"x"}`), "b")
	wantErr(t, err, "count")

	snap, err := r.StateOf(bg, refOf("t"))
	if err != nil {
		t.Fatal(err)
	}
	if v := snap.Values.(S); !slices.Equal(v.Notes, []string{"in", "a", "b", "edit"}) || !slices.Equal(snap.Next, []string{"c"}) {
		t.Fatalf("state %+v next %q", v, snap.Next)
	}
	// No input continues nothing: an empty JSON input is a new run with no writes.
	evs, err = collect(r.StreamJSON(bg, nil, graph.WithThread("t"), graph.Continue()))
	if err != nil {
		t.Fatal(err)
	}
	if last := evs[len(evs)-1].Data.(S); !slices.Equal(last.Notes, []string{"in", "a", "b", "edit", "c"}) {
		t.Fatalf("after continue %+v", last)
	}
	n := 0
	for snap, err := range r.HistoryOf(bg, "t", graph.HistoryOptions{Limit: 3}) {
		if err != nil || snap == nil {
			t.Fatalf("HistoryOf: %v", err)
		}
		n++
	}
	if n != 3 {
		t.Fatalf("HistoryOf listed %d, want 3", n)
	}
	if r.Name() != "graph" || len(r.Nodes()) != 3 || r.Mermaid(false) == "" || len(r.Shape().Nodes) != 5 {
		t.Fatalf("descriptions: %q %q", r.Name(), r.Nodes())
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
