package graph

import (
	"context"
	"fmt"
	"maps"
	"reflect"

	"github.com/trellis-go/trellis/message"
)

// UIMessage is a generative UI message in LangGraph's shape: a node asks the client to draw the
// component Name with Props ({"type": "ui"}), or to take the one with ID away
// ({"type": "remove-ui"}). Metadata holds "message_id" (the AI message it belongs under) and
// "merge" (update the props of the component with the same ID instead of replacing them).
type UIMessage struct {
	Type     string         `json:"type"`
	ID       string         `json:"id"`
	Name     string         `json:"name,omitempty"`
	Props    map[string]any `json:"props,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// UIOptions tune [PushUI] and [DeleteUI]. Nil options are the defaults.
type UIOptions struct {
	// ID names the component, to update or remove it later; empty means a new ID.
	ID string
	// MessageID is the ID of the AI message the component is drawn under.
	MessageID string
	// Merge updates the props of the component with the same ID (shallowly) instead of
	// replacing them.
	Merge bool
	// StateKey is the state key the messages are kept in, when the state has it (a
	// []UIMessage whose reducer is [ReduceUI]); empty means "ui".
	StateKey string
	// Metadata is added to the message's metadata.
	Metadata map[string]any
}

// UI types.
const (
	UITypeShow   = "ui"
	UITypeRemove = "remove-ui"
)

// PushUI sends a generative UI message from a node: on the run's custom stream, as LangGraph's
// push_ui_message does (the web UI's Studio draws it from its component registry), and into the
// state key UIOptions.StateKey when the state has one, so a client reopening the thread draws it
// again. It returns the message sent.
func PushUI(ctx context.Context, name string, props map[string]any, o *UIOptions) (UIMessage, error) {
	if name == "" {
		return UIMessage{}, fmt.Errorf("graph: PushUI needs the component's name")
	}
	var opts UIOptions
	if o != nil {
		opts = *o
	}
	if opts.ID == "" {
		opts.ID = message.NewID()
	}
	md := maps.Clone(opts.Metadata)
	if md == nil {
		md = map[string]any{}
	}
	md["merge"] = opts.Merge
	if opts.MessageID != "" {
		md["message_id"] = opts.MessageID
	}
	if info, ok := InfoFrom(ctx); ok {
		md["name"] = info.Node
	}
	m := UIMessage{Type: UITypeShow, ID: opts.ID, Name: name, Props: props, Metadata: md}
	return m, sendUI(ctx, m, opts.StateKey)
}

// DeleteUI asks the client to take the component id away, on the custom stream and in the state
// key, as PushUI sends.
func DeleteUI(ctx context.Context, id string, o *UIOptions) error {
	if id == "" {
		return fmt.Errorf("graph: DeleteUI needs the component's ID")
	}
	key := ""
	if o != nil {
		key = o.StateKey
	}
	return sendUI(ctx, UIMessage{Type: UITypeRemove, ID: id}, key)
}

var uiSliceType = reflect.TypeFor[[]UIMessage]()

func sendUI(ctx context.Context, m UIMessage, key string) error {
	tc := taskFrom(ctx)
	if tc == nil {
		return fmt.Errorf("graph: a UI message is sent from inside a running node")
	}
	Emit(ctx, m)
	if key == "" {
		key = "ui"
	}
	if ch, ok := tc.run.schema().byName[key]; ok && ch.typ == uiSliceType {
		return addWrite(ctx, key, []UIMessage{m}, false)
	}
	return nil
}

// ReduceUI is the reducer of a state key that keeps UI messages, as LangGraph's
// ui_message_reducer: a message replaces the one with its ID (or merges its props into it when
// its metadata says "merge"), a new ID is appended, and a "remove-ui" message removes its ID.
//
//	graph.SetReducer(g, "ui", graph.ReduceUI)
func ReduceUI(current, update []UIMessage) []UIMessage {
	out := append([]UIMessage(nil), current...)
	for _, m := range update {
		at := -1
		for i := range out {
			if out[i].ID == m.ID {
				at = i
				break
			}
		}
		switch {
		case m.Type == UITypeRemove:
			if at >= 0 {
				out = append(out[:at], out[at+1:]...)
			}
		case at < 0:
			out = append(out, m)
		case m.Metadata["merge"] == true:
			merged := m
			merged.Props = maps.Clone(out[at].Props)
			if merged.Props == nil {
				merged.Props = map[string]any{}
			}
			maps.Copy(merged.Props, m.Props)
			out[at] = merged
		default:
			out[at] = m
		}
	}
	return out
}
