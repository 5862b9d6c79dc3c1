package graph_test

import (
	"context"
	"testing"

	"github.com/trellis-go/trellis/graph"
)

func TestStreamsTellsANodeWhichModesTheRunStreams(t *testing.T) {
	type St struct {
		Custom bool `json:"custom"`
	}
	g := graph.New[St]()
	g.AddNode("n", func(ctx context.Context, s St) (St, error) {
		return St{Custom: graph.Streams(ctx, graph.ModeCustom)}, nil
	})
	g.AddEdge(graph.START, "n").AddEdge("n", graph.END)
	c, err := g.Compile(graph.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		modes []graph.StreamMode
		want  bool
	}{{[]graph.StreamMode{graph.ModeValues}, false}, {[]graph.StreamMode{graph.ModeCustom, graph.ModeValues}, true}} {
		var last St
		for ev, err := range c.Stream(context.Background(), St{}, graph.WithStreamModes(tc.modes...)) {
			if err != nil {
				t.Fatal(err)
			}
			if s, ok := ev.Data.(St); ok && ev.Mode == graph.ModeValues {
				last = s
			}
		}
		if last.Custom != tc.want {
			t.Errorf("modes %v: Streams(custom) = %v, want %v", tc.modes, last.Custom, tc.want)
		}
	}
	if graph.Streams(context.Background(), graph.ModeCustom) {
		t.Error("Streams outside a run reports true")
	}
}
