package supervisor_test

import (
	"context"
	"testing"

	"github.com/trellis-go/trellis/agent/supervisor"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model/scripted"
)

// A synthesizer that streams its answer (the default one, through StreamModel, or one of its
// own, as vesper's does) ends in a final message with the chunks' ID, so that a reader of the
// messages stream (trellis chat, LangGraph's SDK) sees one answer, not two.
func TestSupervisorFinalMessageHasTheStreamedID(t *testing.T) {
	own := func(o *supervisor.Options) {
		o.Synthesize = func(ctx context.Context, _ supervisor.State) (string, error) {
			for _, part := range []string{"NP15 ", "averaged $41.20."} {
				graph.EmitMessage(ctx, graph.MessageChunk{Message: message.Message{ID: "synth-1", Role: message.RoleAssistant, Content: part}})
			}
			return "NP15 averaged $41.20.", nil
		}
	}
	for name, c := range map[string]struct {
		synth []scripted.Step
		edit  func(*supervisor.Options)
	}{
		"default": {synth: []scripted.Step{scripted.Text("NP15 averaged $41.20.")}},
		"own":     {edit: own},
	} {
		t.Run(name, func(t *testing.T) {
			g, _ := setupSupervisor(t, []scripted.Step{route(`{"intent":"dayahead_curve","agents":["prices"]}`)}, c.synth, c.edit)
			ids := map[string]bool{}
			var final supervisor.State
			for ev, err := range g.Stream(context.Background(), ask("NP15?"), graph.WithStreamModes(graph.ModeMessages, graph.ModeValues)) {
				if err != nil {
					t.Fatal(err)
				}
				switch d := ev.Data.(type) {
				case graph.MessageChunk:
					if ev.Node == supervisor.NodeSynthesize {
						ids[d.Message.ID] = true
					}
				case supervisor.State:
					final = d
				}
			}
			last := final.Messages[len(final.Messages)-1]
			if len(ids) != 1 || !ids[last.ID] {
				t.Fatalf("synthesizer chunks' IDs %v, final message ID %q", ids, last.ID)
			}
		})
	}
}
