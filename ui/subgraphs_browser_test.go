package ui_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/server"
)

// nestedApp is a test app whose assistant "nested" writes inside a subgraph: the subgraph
// "writer"'s node "draft" streams a text word by word to the messages stream, then the
// subgraph answers "The writer is done.".
func nestedApp() server.App {
	return server.App{
		Name:        "nested",
		Description: "A test app whose answer is written inside a subgraph.",
		Build: func(_ context.Context, d server.AppDeps) (*server.AppParts, error) {
			child := graph.New[react.State]()
			child.AddNode("draft", func(ctx context.Context, s react.State) (react.State, error) {
				id := message.NewID()
				md := map[string]any{"node": "draft"}
				for i, w := range strings.Fields("Hello from inside the writer subgraph, one word at a time.") {
					if i > 0 {
						w = " " + w
					}
					graph.EmitMessage(ctx, graph.MessageChunk{Message: message.Message{ID: id, Role: message.RoleAssistant, Content: w}, Metadata: md})
					// Paced like a model, so that the page shows the text growing.
					select {
					case <-ctx.Done():
						return react.State{}, ctx.Err()
					case <-time.After(25 * time.Millisecond):
					}
				}
				return react.State{Messages: []message.Message{message.Assistant("The writer is done.")}}, nil
			})
			child.AddSequence(graph.START, "draft", graph.END)
			writer, err := child.Compile(graph.CompileOptions{Name: "writer"})
			if err != nil {
				return nil, err
			}
			g := graph.New[react.State]()
			graph.AddSubgraph[react.State, react.State](g, "writer", writer, nil, nil)
			g.AddSequence(graph.START, "writer", graph.END)
			c, err := g.Compile(graph.CompileOptions{Name: "nested", Saver: d.Compile.Saver, Store: d.Compile.Store})
			if err != nil {
				return nil, err
			}
			return &server.AppParts{Graphs: []server.AppGraph{{ID: "nested", Graph: c.Runnable(), Description: "Writes its answer in a subgraph."}}}, nil
		},
	}
}

// TestBrowserSubgraphTokens drives the Studio chat in Chromium (e2e/subgraphs.mjs): with
// stream_subgraphs the subgraph's tokens (messages|<ns> events) show as they stream, labelled
// "writer › draft"; without it they do not. The graph view folds the subgraph into one node and
// unfolds it.
func TestBrowserSubgraphTokens(t *testing.T) {
	base := serveApps(t, nestedApp())
	driveChromium(t, "subgraphs.mjs", base, "subgraphs-01-tokens", "subgraphs-02-folded")
}
