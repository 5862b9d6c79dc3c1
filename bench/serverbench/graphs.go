package serverbench

import (
	"context"

	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/server"
)

// Graph IDs the bench registers.
const (
	// ShortGraph is the two-node graph of the runs-per-second measurement; the LangGraph.js peer
	// (bench/peers/langgraphapi/graph.mjs) serves the same graph under the same ID.
	ShortGraph = "short"
	// StreamGraph is a ReAct agent without tools on a [PacedModel]: one model call that streams
	// its tokens to the run's messages stream.
	StreamGraph = "stream"
)

// ShortState is the state of [ShortGraph]: plan writes "plan:"+Topic to Steps, then act writes
// "act".
type ShortState struct {
	Topic string   `json:"topic"`
	Steps []string `json:"steps" reduce:"append"`
}

func buildShort(deps server.Deps) (graph.Runnable, error) {
	g := graph.New[ShortState]()
	g.AddNode("plan", func(_ context.Context, s ShortState) (ShortState, error) {
		return ShortState{Steps: []string{"plan:" + s.Topic}}, nil
	})
	g.AddNode("act", func(_ context.Context, s ShortState) (ShortState, error) {
		return ShortState{Steps: []string{"act"}}, nil
	})
	g.AddEdge(graph.START, "plan").AddEdge("plan", "act").AddEdge("act", graph.END)
	return graph.Erase(g.Compile(graph.CompileOptions{Name: ShortGraph, Saver: deps.Saver, Store: deps.Store}))
}

// Graphs returns the bench's graphs for a server: [ShortGraph] and [StreamGraph] on m.
func Graphs(m *PacedModel) []server.GraphSpec {
	return []server.GraphSpec{
		{ID: ShortGraph, Description: "two nodes, plan then act (runs per second)", Build: buildShort},
		{ID: StreamGraph, Description: "a ReAct agent without tools on a paced model (streams)", Build: func(deps server.Deps) (graph.Runnable, error) {
			return graph.Erase(react.New(m, &react.Options{Name: StreamGraph, Compile: graph.CompileOptions{Saver: deps.Saver, Store: deps.Store}}))
		}},
	}
}
