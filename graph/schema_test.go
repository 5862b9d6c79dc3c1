package graph_test

import (
	"context"
	"testing"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/memstore"
)

type taggedState struct {
	Kept    string `json:"kept"`
	Skipped string `json:"-"`
	hidden  string
	NoTag   int
}

type dupState struct {
	X string
	B string `json:"X"`
}

func TestStateSchemaFollowsJSONTags(t *testing.T) {
	g := graph.New[taggedState]()
	g.AddNode("a", func(ctx context.Context, s taggedState) (taggedState, error) {
		return taggedState{Kept: "k", Skipped: "s", hidden: "h", NoTag: 1}, nil
	})
	g.AddEdge(graph.START, "a")
	c := compile(t, g)
	if got := c.InputKeys(); len(got) != 2 || got[0] != "kept" || got[1] != "NoTag" {
		t.Fatalf("state keys %q, want kept and NoTag (json:\"-\" and unexported fields are not state)", got)
	}
	out, err := c.Invoke(bg, taggedState{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Kept != "k" || out.NoTag != 1 || out.Skipped != "" || out.hidden != "" {
		t.Fatalf("got %+v: only state keys are written", out)
	}

	_, err = graph.New[dupState]().AddEdge(graph.START, graph.END).Compile()
	wantErr(t, err, `two fields are named "X"`)
}

func TestStoreFrom(t *testing.T) {
	st, err := memstore.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	var got store.Store
	inner := graph.New[S]()
	inner.AddNode("read", func(ctx context.Context, s S) (S, error) { got = graph.StoreFrom(ctx); return S{}, nil })
	inner.AddEdge(graph.START, "read")
	g := graph.New[S]()
	graph.AddSubgraph(g, "sub", compile(t, inner), nil, nil)
	g.AddEdge(graph.START, "sub")
	if _, err := compile(t, g, graph.CompileOptions{Store: st}).Invoke(bg, S{}); err != nil {
		t.Fatal(err)
	}
	if got != st {
		t.Fatalf("a subgraph's node got store %v, want the parent's", got)
	}
	if graph.StoreFrom(context.Background()) != nil {
		t.Fatal("StoreFrom outside a node is not nil")
	}
}
