package agent

import (
	"context"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
)

// StreamModel calls m with streaming, forwarding every text chunk to the graph's messages stream
// (so a UI can show the answer as it is written), and returns the whole response. A
// model.CallObserver in ctx is told when the call starts and ends.
func StreamModel(ctx context.Context, m model.Model, req *model.Request) (*model.Response, error) {
	info, inNode := graph.InfoFrom(ctx)
	msgID := message.NewID()
	obs := model.CallObserverFrom(ctx)
	// Chunks are built only for a run that streams messages; otherwise each is reported by ID
	// alone (graph.EmitMessage still restarts idle timers and records the streamed message).
	streaming := inNode && graph.Streams(ctx, graph.ModeMessages)
	// One metadata map for all of the message's chunks: readers of the messages stream take
	// it as read-only, and a server encodes it once for the message.
	var md map[string]any
	if streaming || obs != nil {
		md = map[string]any{"node": info.Node}
		if provider, name := model.IdentityOf(m); provider != "" {
			md["provider"] = provider
			if name != "" {
				md["model"] = name
			}
		}
	}
	var call model.Call
	if obs != nil {
		call = model.Call{ID: msgID, Request: req}
		call.Provider, _ = md["provider"].(string)
		call.Name, _ = md["model"].(string)
		obs.ModelStarted(ctx, call)
	}
	stream := func(yield func(model.Chunk, error) bool) {
		for ch, err := range m.Stream(ctx, req) {
			if err == nil && inNode && (ch.Text != "" || ch.ToolCall != nil) {
				if streaming {
					part := message.Message{ID: msgID, Role: message.RoleAssistant, Content: ch.Text}
					if ch.ToolCall != nil {
						part.ToolCalls = []message.ToolCall{*ch.ToolCall}
					}
					graph.EmitMessage(ctx, graph.MessageChunk{Message: part, Metadata: md})
				} else {
					graph.EmitMessage(ctx, graph.MessageChunk{Message: message.Message{ID: msgID}})
				}
			}
			if !yield(ch, err) {
				return
			}
		}
	}
	resp, err := model.Collect(stream)
	if err != nil {
		if obs != nil {
			obs.ModelEnded(ctx, call, nil, err)
		}
		return nil, err
	}
	resp.Message.ID = msgID
	if obs != nil {
		obs.ModelEnded(ctx, call, resp, nil)
	}
	return resp, nil
}
