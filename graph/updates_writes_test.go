package graph_test

import (
	"context"
	"slices"
	"testing"

	"github.com/trellis-go/trellis/graph"
)

// A node that writes a key twice (as a tool node applies several tools' commands) streams both
// writes in its update, combined by the key's reducer, not only the last one.
func TestUpdateShowsEveryWriteOfAKey(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("tools", func(ctx context.Context, s S) (S, error) {
		first := make([]string, 1, 4) // room to grow: the update must not append into it
		first[0] = "fiscal"
		if err := graph.Write(ctx, "notes", first); err != nil {
			return S{}, err
		}
		if err := graph.Write(ctx, "notes", []string{"goals"}); err != nil {
			return S{}, err
		}
		if got := first[:2]; got[1] != "" {
			t.Errorf("the update appended into the node's slice: %q", got)
		}
		return S{}, graph.Write(ctx, "count", 2)
	})
	g.AddEdge(graph.START, "tools")
	g.AddEdge("tools", graph.END)
	c := compile(t, g)
	evs, err := collect(c.Stream(bg, S{}, graph.WithStreamModes(graph.ModeUpdates)))
	if err != nil {
		t.Fatal(err)
	}
	ups := ofMode(evs, graph.ModeUpdates)
	if len(ups) != 1 {
		t.Fatalf("%d updates", len(ups))
	}
	up, ok := ups[0].Data.(S)
	if !ok || !slices.Equal(up.Notes, []string{"fiscal", "goals"}) || up.Count != 2 {
		t.Fatalf("update %#v, want notes [fiscal goals] and count 2", ups[0].Data)
	}
	out, err := c.Invoke(bg, S{})
	if err != nil || !slices.Equal(out.Notes, []string{"fiscal", "goals"}) {
		t.Fatalf("state %v %v", out.Notes, err)
	}
}
