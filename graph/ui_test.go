package graph_test

import (
	"context"
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
)

type uiState struct {
	Topic string            `json:"topic"`
	UI    []graph.UIMessage `json:"ui"`
}

// A node pushes generative UI messages: they stream in the custom mode as LangGraph's
// push_ui_message sends them, and the state key "ui" keeps them through ReduceUI (a merge
// updates props, a removal takes the component away), across steps and in the checkpoint.
func TestPushUI(t *testing.T) {
	t.Parallel()
	g := graph.New[uiState]()
	graph.SetReducer(g, "ui", graph.ReduceUI)
	g.AddNode("draw", func(ctx context.Context, s uiState) (uiState, error) {
		if _, err := graph.PushUI(ctx, "weather", map[string]any{"city": s.Topic, "temp": 11}, &graph.UIOptions{ID: "w1", MessageID: "ai-1"}); err != nil {
			return uiState{}, err
		}
		_, err := graph.PushUI(ctx, "progress", map[string]any{"done": 0.5}, &graph.UIOptions{ID: "p1"})
		return uiState{}, err
	})
	g.AddNode("update", func(ctx context.Context, s uiState) (uiState, error) {
		if _, err := graph.PushUI(ctx, "weather", map[string]any{"temp": 12}, &graph.UIOptions{ID: "w1", Merge: true}); err != nil {
			return uiState{}, err
		}
		return uiState{}, graph.DeleteUI(ctx, "p1", nil)
	})
	g.AddEdge(graph.START, "draw").AddEdge("draw", "update").AddEdge("update", graph.END)
	c, err := g.Compile(graph.CompileOptions{Saver: checkpoint.NewMemorySaver()})
	if err != nil {
		t.Fatal(err)
	}
	var custom []graph.UIMessage
	var final uiState
	for ev, err := range c.Stream(context.Background(), uiState{Topic: "Lisbon"}, graph.WithThread("ui"), graph.WithStreamModes(graph.ModeCustom, graph.ModeValues)) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Mode {
		case graph.ModeCustom:
			m, ok := ev.Data.(graph.UIMessage)
			if !ok {
				t.Fatalf("custom event %T", ev.Data)
			}
			custom = append(custom, m)
		case graph.ModeValues:
			final = ev.Data.(uiState)
		}
	}
	if len(custom) != 4 || custom[0].Type != "ui" || custom[0].Metadata["message_id"] != "ai-1" || custom[0].Metadata["name"] != "draw" || custom[3].Type != "remove-ui" || custom[3].ID != "p1" {
		t.Fatalf("custom events %+v", custom)
	}
	if len(final.UI) != 1 || final.UI[0].ID != "w1" || final.UI[0].Props["city"] != "Lisbon" || final.UI[0].Props["temp"] != 12 {
		t.Fatalf("state ui %+v: want the weather card alone, merged to 12 degrees", final.UI)
	}
	snap, err := c.State(context.Background(), checkpoint.Ref{ThreadID: "ui"})
	if err != nil || len(snap.Values.UI) != 1 || snap.Values.UI[0].Props["temp"] != float64(12) && snap.Values.UI[0].Props["temp"] != 12 {
		t.Fatalf("checkpointed ui %+v (%v)", snap.Values.UI, err)
	}
	if _, err := graph.PushUI(context.Background(), "x", nil, nil); err == nil {
		t.Error("PushUI outside a node did not fail")
	}
}
