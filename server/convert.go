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
// in "messages/partial" events, as the LangGraph API does for the SDK's messages mode;
// "events" streams LangChain callback events (see events.go).
var knownStreamModes = []string{"values", "updates", "messages", "messages-tuple", "custom", "debug", "tasks", "checkpoints", "events"}

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
			add(graph.ModeValues)
			add(graph.ModeTasks)
			add(graph.ModeMessages)
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
		m := map[string]any{"value": apiValue(in.Value), "id": in.ID}
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
	events    *eventsConv                 // for "events" mode
}

func newConverter(modes []string, subgraphs bool) *converter {
	c := &converter{modes: modes, subgraphs: subgraphs, partial: map[string]*message.Message{}}
	if slices.Contains(modes, "events") {
		c.events = newEventsConv()
	}
	return c
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

// convert turns one graph event into the SSE events the requested modes want. Every value that
// leaves holds its messages in LangChain's shape (apiValue, toLangChainChunk).
func (c *converter) convert(ev graph.Event) []sse {
	if len(ev.NS) > 0 && !c.subgraphs {
		return nil
	}
	var out []sse
	if c.events != nil {
		out = c.events.convert(ev)
	}
	switch ev.Mode {
	case graph.ModeValues:
		if c.wants("values") {
			return append(out, sse{c.name("values", ev.NS), apiValue(ev.Data)})
		}
	case graph.ModeUpdates:
		if c.wants("updates") {
			var data any
			if ins, ok := ev.Data.([]graph.Interruption); ok {
				data = interruptsJSON(ins)
			} else {
				data = apiValue(ev.Data)
			}
			return append(out, sse{c.name("updates", ev.NS), map[string]any{ev.Node: data}})
		}
	case graph.ModeCustom:
		if c.wants("custom") {
			return append(out, sse{c.name("custom", ev.NS), apiValue(ev.Data)})
		}
	case graph.ModeDebug:
		if c.wants("debug") {
			if d, ok := ev.Data.(graph.DebugEvent); ok {
				return append(out, sse{c.name("debug", ev.NS), map[string]any{"type": d.Type, "step": d.Step, "timestamp": time.Now().UTC().Format(time.RFC3339Nano), "payload": apiValue(d.Payload)}})
			}
			return append(out, sse{c.name("debug", ev.NS), apiValue(ev.Data)})
		}
	case graph.ModeTasks:
		if c.wants("tasks") {
			return append(out, sse{c.name("tasks", ev.NS), apiValue(ev.Data)})
		}
	case graph.ModeCheckpoints:
		if c.wants("checkpoints") {
			return append(out, sse{c.name("checkpoints", ev.NS), checkpointEventJSON(apiValue(ev.Data))})
		}
	case graph.ModeMessages:
		chunk, ok := ev.Data.(graph.MessageChunk)
		if !ok {
			return out
		}
		md := map[string]any{}
		for k, v := range chunk.Metadata {
			md[k] = v
		}
		md["langgraph_node"] = ev.Node
		md["langgraph_step"] = ev.Step
		md["langgraph_path"] = []string{"__pregel_pull", ev.Node}
		ns := ev.Node + ":" + ev.TaskID
		if len(ev.NS) > 0 {
			ns = strings.Join(ev.NS, "|") + "|" + ns
		}
		md["langgraph_checkpoint_ns"], md["checkpoint_ns"] = ns, ns
		if p, ok := chunk.Metadata["provider"].(string); ok {
			md["ls_provider"] = p
		}
		if m, ok := chunk.Metadata["model"].(string); ok {
			md["ls_model_name"] = m
		}
		if c.wants("messages-tuple") {
			out = append(out, sse{c.name("messages", ev.NS), []any{toLangChainChunk(chunk.Message), md}})
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
			out = append(out, sse{"messages/partial", []any{toLangChainChunk(*acc)}})
		}
		return out
	}
	return out
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
