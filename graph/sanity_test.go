package graph_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
)

type S struct {
	Messages []message.Message `json:"messages" reduce:"messages"`
	Notes    []string          `json:"notes" reduce:"append"`
	Count    int               `json:"count" reduce:"sum"`
	Answer   string            `json:"answer"`
}

func TestSanity(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("a", func(ctx context.Context, s S) (S, error) { return S{Notes: []string{"a"}, Count: 1}, nil })
	g.AddNode("b", func(ctx context.Context, s S) (S, error) { return S{Notes: []string{"b"}, Count: 1}, nil })
	g.AddNode("c", func(ctx context.Context, s S) (S, error) {
		return S{Answer: fmt.Sprint(s.Notes, s.Count)}, nil
	})
	g.AddEdge(graph.START, "a").AddEdge(graph.START, "b").AddJoin([]string{"a", "b"}, "c").AddEdge("c", graph.END)
	c, err := g.Compile(graph.CompileOptions{Saver: checkpoint.NewMemorySaver()})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Invoke(context.Background(), S{Notes: []string{"start"}}, graph.WithThread("t1"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", out)
	for ev, err := range c.Stream(context.Background(), S{}, graph.WithThread("t1"), graph.WithStreamModes(graph.ModeUpdates, graph.ModeValues)) {
		t.Logf("%v %+v", err, ev)
	}
	t.Log(c.Mermaid(false))
}
