package server

import (
	"encoding/json"
	"testing"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/server/internal/lcstream"
)

// BenchmarkMessagesTupleChunk converts one token chunk of a streaming model in messages-tuple
// mode and encodes the event's data, as a run does for every token.
func BenchmarkMessagesTupleChunk(b *testing.B) {
	run := &Run{RunID: "01a20329-bdf5-743e-b42f-f6be711ab264", ThreadID: "da27e3ba-c00f-4f72-a334-bf04bb528e16", AssistantID: AssistantID("example"),
		Metadata: map[string]any{"team": "blue"}, Kwargs: &RunKwargs{StreamMode: []string{"messages-tuple"}, User: "dev"}}
	s := &Server{byID: map[string]*Assistant{AssistantID("example"): {AssistantID: AssistantID("example"), GraphID: "example"}}}
	runMeta, tags := streamMetadata(run, s)
	conv := lcstream.New(run.Kwargs.StreamMode, false, runMeta, tags)
	ev := graph.Event{Mode: graph.ModeMessages, Node: "model", Step: 1, TaskID: "e4befb7f00000004",
		Data: graph.MessageChunk{Message: message.Message{ID: "m-1", Role: message.RoleAssistant, Content: "tok "}, Metadata: map[string]any{"node": "model"}}}
	b.ReportAllocs()
	for b.Loop() {
		for _, o := range conv.Convert(ev) {
			if _, err := json.Marshal(o.Data); err != nil {
				b.Fatal(err)
			}
		}
	}
}
