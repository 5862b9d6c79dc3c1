package server

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
)

// knownStreamModes are the stream_mode values a run accepts. "messages-tuple" streams token
// chunks as [message, metadata] pairs in "messages" events; "messages" streams them accumulated
// in "messages/partial" events, as the LangGraph API does for the SDK's messages mode.
var knownStreamModes = []string{"values", "updates", "messages", "messages-tuple", "custom", "debug", "tasks", "checkpoints"}

// parseStreamModes checks the requested modes and returns the graph modes they need.
func parseStreamModes(modes []string) ([]graph.StreamMode, error) {
	var out []graph.StreamMode
	add := func(m graph.StreamMode) {
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	for _, m := range modes {
		switch m {
		case "messages", "messages-tuple":
			add(graph.ModeMessages)
		case "events":
			return nil, badRequest("stream LangChain callback events is not supported; use messages-tuple for tokens and debug for tasks", "stream_mode %q is not supported", m)
		default:
			gm, err := graph.ParseStreamMode(m)
			if err != nil {
				return nil, badRequest("known stream modes: "+strings.Join(knownStreamModes, ", "), "unknown stream_mode %q", m)
			}
			add(gm)
		}
	}
	return out, nil
}

// configOf renders a checkpoint reference as LangGraph's RunnableConfig.
func configOf(ref *checkpoint.Ref) any {
	if ref == nil {
		return nil
	}
	return map[string]any{"configurable": map[string]any{"thread_id": ref.ThreadID, "checkpoint_ns": ref.NS, "checkpoint_id": ref.CheckpointID}}
}

func checkpointOf(ref *checkpoint.Ref) any {
	if ref == nil {
		return nil
	}
	return map[string]any{"thread_id": ref.ThreadID, "checkpoint_ns": ref.NS, "checkpoint_id": ref.CheckpointID, "checkpoint_map": nil}
}

// interruptsJSON renders interrupts the way the LangGraph API does: value and id first.
func interruptsJSON(ins []graph.Interruption) []map[string]any {
	out := make([]map[string]any, 0, len(ins))
	for _, in := range ins {
		m := map[string]any{"value": in.Value, "id": in.ID}
		if in.When != "" {
			m["when"] = in.When
		}
		if in.NS != "" {
			m["ns"] = in.NS
		}
		out = append(out, m)
	}
	return out
}

// ThreadState is a thread's state at one checkpoint, as GET /threads/{id}/state returns it.
type ThreadState struct {
	Values           any              `json:"values"`
	Next             []string         `json:"next"`
	Tasks            []map[string]any `json:"tasks"`
	Metadata         map[string]any   `json:"metadata"`
	CreatedAt        *time.Time       `json:"created_at"`
	Checkpoint       any              `json:"checkpoint"`
	ParentCheckpoint any              `json:"parent_checkpoint"`
	Config           any              `json:"config"`
	ParentConfig     any              `json:"parent_config"`
	Interrupts       []map[string]any `json:"interrupts"`
}

func threadStateOf(snap *graph.StateSnapshot[any]) *ThreadState {
	ts := &ThreadState{Values: snap.Values, Next: snap.Next, Metadata: snap.Metadata, Tasks: []map[string]any{}, Interrupts: []map[string]any{}}
	if ts.Next == nil {
		ts.Next = []string{}
	}
	if ts.Metadata == nil {
		ts.Metadata = map[string]any{}
	}
	if !snap.CreatedAt.IsZero() {
		t := snap.CreatedAt
		ts.CreatedAt = &t
	}
	ref := snap.Ref
	ts.Checkpoint, ts.Config = checkpointOf(&ref), configOf(&ref)
	ts.ParentCheckpoint, ts.ParentConfig = checkpointOf(snap.Parent), configOf(snap.Parent)
	for _, t := range snap.Tasks {
		var errv any
		if t.Error != "" {
			errv = t.Error
		}
		ts.Tasks = append(ts.Tasks, map[string]any{"id": t.ID, "name": t.Name, "error": errv, "interrupts": interruptsJSON(t.Interrupts), "checkpoint": nil, "state": nil})
		ts.Interrupts = append(ts.Interrupts, interruptsJSON(t.Interrupts)...)
	}
	return ts
}

// converter turns graph events into the LangGraph API's SSE events.
type converter struct {
	modes     []string // as requested
	subgraphs bool
	partial   map[string]*message.Message // accumulated messages for "messages" mode
	seenMeta  map[string]bool
}

func newConverter(modes []string, subgraphs bool) *converter {
	return &converter{modes: modes, subgraphs: subgraphs, partial: map[string]*message.Message{}, seenMeta: map[string]bool{}}
}

func (c *converter) wants(m string) bool { return slices.Contains(c.modes, m) }

type sse struct {
	event string
	data  any
}

func (c *converter) name(mode string, ns []string) string {
	if c.subgraphs && len(ns) > 0 {
		return mode + "|" + strings.Join(ns, "|")
	}
	return mode
}

func (c *converter) convert(ev graph.Event) []sse {
	if len(ev.NS) > 0 && !c.subgraphs {
		return nil
	}
	switch ev.Mode {
	case graph.ModeValues:
		if c.wants("values") {
			return []sse{{c.name("values", ev.NS), ev.Data}}
		}
	case graph.ModeUpdates:
		if c.wants("updates") {
			var data any = ev.Data
			if ins, ok := ev.Data.([]graph.Interruption); ok {
				data = interruptsJSON(ins)
			}
			return []sse{{c.name("updates", ev.NS), map[string]any{ev.Node: data}}}
		}
	case graph.ModeCustom:
		if c.wants("custom") {
			return []sse{{c.name("custom", ev.NS), ev.Data}}
		}
	case graph.ModeDebug:
		if c.wants("debug") {
			if d, ok := ev.Data.(graph.DebugEvent); ok {
				return []sse{{c.name("debug", ev.NS), map[string]any{"type": d.Type, "step": d.Step, "timestamp": time.Now().UTC().Format(time.RFC3339Nano), "payload": d.Payload}}}
			}
			return []sse{{c.name("debug", ev.NS), ev.Data}}
		}
	case graph.ModeTasks:
		if c.wants("tasks") {
			return []sse{{c.name("tasks", ev.NS), ev.Data}}
		}
	case graph.ModeCheckpoints:
		if c.wants("checkpoints") {
			return []sse{{c.name("checkpoints", ev.NS), checkpointEventJSON(ev.Data)}}
		}
	case graph.ModeMessages:
		chunk, ok := ev.Data.(graph.MessageChunk)
		if !ok {
			return nil
		}
		md := map[string]any{}
		for k, v := range chunk.Metadata {
			md[k] = v
		}
		md["langgraph_node"] = ev.Node
		md["langgraph_step"] = ev.Step
		if len(ev.NS) > 0 {
			md["langgraph_checkpoint_ns"] = strings.Join(ev.NS, "|")
		}
		var out []sse
		if c.wants("messages-tuple") {
			out = append(out, sse{c.name("messages", ev.NS), []any{chunk.Message, md}})
		}
		if c.wants("messages") {
			id := chunk.Message.ID
			acc := c.partial[id]
			if acc == nil {
				m := chunk.Message
				m.ToolCalls = slices.Clone(m.ToolCalls)
				acc = &m
				c.partial[id] = acc
				out = append(out, sse{"messages/metadata", map[string]any{id: map[string]any{"metadata": md}}})
			} else {
				acc.Content += chunk.Message.Content
				acc.ToolCalls = append(acc.ToolCalls, chunk.Message.ToolCalls...)
			}
			out = append(out, sse{"messages/partial", []any{*acc}})
		}
		return out
	}
	return nil
}

// checkpointEventJSON renders a checkpoints-mode event with RunnableConfigs, as LangGraph does.
func checkpointEventJSON(data any) any {
	raw, err := json.Marshal(data)
	if err != nil {
		return data
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return data
	}
	for _, k := range []string{"config", "parent_config"} {
		if ref, ok := m[k].(map[string]any); ok {
			m[k] = map[string]any{"configurable": ref}
		}
	}
	if _, ok := m["parent_config"]; !ok {
		m["parent_config"] = nil
	}
	if _, ok := m["tasks"]; !ok {
		m["tasks"] = []any{}
	}
	return m
}

// errorJSON is the data of an "error" event.
func errorJSON(err error) map[string]any {
	name := "Error"
	if nerr, ok := err.(*graph.NodeError); ok {
		name = fmt.Sprintf("NodeError(%s)", nerr.Node)
	} else if _, ok := err.(*BudgetError); ok {
		name = "BudgetExceeded"
	}
	return map[string]any{"error": name, "message": err.Error()}
}
