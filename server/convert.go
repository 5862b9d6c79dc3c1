package server

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/server/internal/lcwire"
)

// knownStreamModes are the stream_mode values a run accepts. "messages-tuple" streams token
// chunks as [message, metadata] pairs in "messages" events; "messages" streams them accumulated
// in "messages/partial" events, as the LangGraph API does for the SDK's messages mode;
// "events" streams LangChain callback events (see events.go).
var knownStreamModes = []string{"values", "updates", "messages", "messages-tuple", "custom", "debug", "tasks", "checkpoints", "events", progressMode}

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
		case "messages": // token chunks, and the state's messages as they complete
			add(graph.ModeMessages)
			add(graph.ModeValues)
		case "messages-tuple": // token chunks, and the messages nodes return (from their tasks)
			add(graph.ModeMessages)
			add(graph.ModeTasks)
		case progressMode: // the run's progress, from the task events (progress.go)
			add(graph.ModeTasks)
		case "events":
			add(graph.ModeValues)
			add(graph.ModeTasks)
			add(graph.ModeMessages)
			add(graph.ModeCustom) // tool calls as they start and end (toolCallEvent)
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
	ts.Checkpoint, ts.Config = lcwire.Checkpoint(&ref), lcwire.Config(&ref)
	ts.ParentCheckpoint, ts.ParentConfig = lcwire.Checkpoint(snap.Parent), lcwire.Config(snap.Parent)
	for _, t := range snap.Tasks {
		var errv any
		if t.Error != "" {
			errv = t.Error
		}
		ts.Tasks = append(ts.Tasks, map[string]any{"id": t.ID, "name": t.Name, "error": errv, "interrupts": lcwire.Interrupts(t.Interrupts), "checkpoint": nil, "state": nil})
		ts.Interrupts = append(ts.Interrupts, lcwire.Interrupts(t.Interrupts)...)
	}
	return ts
}

// converter turns graph events into the LangGraph API's SSE events.
type converter struct {
	modes     []string // as requested
	subgraphs bool
	runMeta   map[string]any              // the run's metadata (streamMetadata)
	tags      []string                    // the run's config tags, in every message's metadata
	partial   map[string]*message.Message // accumulated messages for "messages" mode
	msgMeta   map[string]*chunkMeta       // each streamed message's metadata, by message ID
	seen      map[string]bool             // messages streamed or in a task's input (messages-tuple)
	completed map[string]bool             // messages sent in messages/complete ("messages" mode)
	events    *eventsConv                 // for "events" mode
}

// chunkMeta is the metadata of a streamed message's chunks, encoded once for all of them as
// long as the chunks' own metadata stays the same.
type chunkMeta struct {
	from map[string]any // the chunk metadata it was built from
	md   map[string]any
	raw  json.RawMessage
}

// newConverter returns a converter for a run's requested modes; runMeta is the run's metadata
// (streamMetadata), sent with every message chunk and callback event.
func newConverter(modes []string, subgraphs bool, runMeta map[string]any) *converter {
	c := &converter{modes: modes, subgraphs: subgraphs, runMeta: runMeta, partial: map[string]*message.Message{}, msgMeta: map[string]*chunkMeta{},
		seen: map[string]bool{}, completed: map[string]bool{}}
	if tags, ok := runMeta[runTagsKey].([]string); ok {
		c.tags = tags
		c.runMeta = maps.Clone(runMeta)
		delete(c.runMeta, runTagsKey)
	}
	if slices.Contains(modes, "events") {
		c.events = newEventsConv(c.runMeta)
	}
	return c
}

// streamMetadata is the metadata LangGraph attaches to a run's message chunks and callback
// events: the run's own metadata (from the request), its IDs (run_id, thread_id, assistant_id,
// graph_id, user_id), and the scalar values of its config.configurable (as LangChain copies
// them), the IDs winning. It is nil for runs whose modes send no metadata. The graph ID is that
// of the run's assistant, found with assistants.
func streamMetadata(run *Run, assistants assistantSource) map[string]any {
	kw := run.Kwargs
	if kw == nil || !slices.ContainsFunc(kw.StreamMode, func(m string) bool { return m == "messages" || m == "messages-tuple" || m == "events" }) {
		return nil
	}
	md := make(map[string]any, len(run.Metadata)+8)
	if c, ok := kw.Config["configurable"].(map[string]any); ok {
		for k, v := range c {
			switch v.(type) {
			case string, float64, bool:
				if !strings.HasPrefix(k, "__") {
					md[k] = v
				}
			}
		}
	}
	maps.Copy(md, run.Metadata)
	md["run_id"], md["thread_id"], md["assistant_id"] = run.RunID, run.ThreadID, run.AssistantID
	if a, err := assistants.assistant(run.AssistantID); err == nil {
		md["graph_id"] = a.GraphID
	}
	if kw.User != "" {
		md["user_id"] = kw.User
	}
	tags := []string{}
	if ts, ok := kw.Config["tags"].([]any); ok {
		for _, t := range ts {
			if t, ok := t.(string); ok {
				tags = append(tags, t)
			}
		}
	}
	md[runTagsKey] = tags // taken out by newConverter
	return md
}

// runTagsKey carries the run's config tags from streamMetadata to newConverter.
const runTagsKey = "\x00tags"

// messageMeta returns the metadata of a message chunk: the run's, the chunk's own, and where in
// the graph it was written (the langgraph_* keys); ls_provider, ls_model_name and ls_model_type
// when the chunk names its provider and model.
func (c *converter) messageMeta(ev graph.Event, chunk graph.MessageChunk) *chunkMeta {
	c.seen[chunk.Message.ID] = true
	if cm := c.msgMeta[chunk.Message.ID]; cm != nil && sameScalars(cm.from, chunk.Metadata) {
		return cm
	}
	md := make(map[string]any, len(c.runMeta)+len(chunk.Metadata)+11)
	maps.Copy(md, c.runMeta)
	maps.Copy(md, chunk.Metadata)
	// The tags LangGraph puts in a message's metadata: the run's (config.tags), then the
	// message's own (a "tags" list in the chunk's metadata); always a list.
	tags := slices.Clone(c.tags)
	switch own := chunk.Metadata["tags"].(type) {
	case []string:
		tags = append(tags, own...)
	case []any:
		for _, t := range own {
			if t, ok := t.(string); ok {
				tags = append(tags, t)
			}
		}
	}
	if tags == nil {
		tags = []string{}
	}
	md["tags"] = tags
	md["langgraph_node"] = ev.Node
	md["langgraph_step"] = ev.Step
	md["langgraph_triggers"] = []string{"branch:to:" + ev.Node}
	md["langgraph_path"] = []string{"__pregel_pull", ev.Node}
	ns := ev.Node + ":" + ev.TaskID
	if len(ev.NS) > 0 {
		ns = strings.Join(ev.NS, "|") + "|" + ns
	}
	md["langgraph_checkpoint_ns"], md["checkpoint_ns"] = ns, ns
	if p, ok := chunk.Metadata["provider"].(string); ok {
		md["ls_provider"] = p
		md["ls_model_type"] = "chat"
	}
	if m, ok := chunk.Metadata["model"].(string); ok {
		md["ls_model_name"] = m
	}
	raw, err := json.Marshal(md)
	if err != nil {
		raw = nil
	}
	cm := &chunkMeta{from: chunk.Metadata, md: md, raw: raw}
	if chunk.Message.ID != "" {
		c.msgMeta[chunk.Message.ID] = cm
	}
	return cm
}

// sameScalars reports whether a and b hold the same keys with the same string, number or
// boolean values (anything else counts as different).
func sameScalars(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, av := range a {
		bv, ok := b[k]
		if !ok {
			return false
		}
		switch x := av.(type) {
		case string:
			if y, ok := bv.(string); !ok || x != y {
				return false
			}
		case float64:
			if y, ok := bv.(float64); !ok || x != y {
				return false
			}
		case int:
			if y, ok := bv.(int); !ok || x != y {
				return false
			}
		case bool:
			if y, ok := bv.(bool); !ok || x != y {
				return false
			}
		default:
			return false
		}
	}
	return true
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
// leaves holds its messages in LangChain's shape (lcwire.Value, lcwire.FromChunk).
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
		if c.wants("messages") {
			out = append(out, c.complete(ev)...)
		}
		if c.wants("values") {
			return append(out, sse{c.name("values", ev.NS), lcwire.Value(ev.Data)})
		}
	case graph.ModeUpdates:
		if c.wants("updates") {
			var data any
			if ins, ok := ev.Data.([]graph.Interruption); ok {
				data = lcwire.Interrupts(ins)
			} else {
				data = lcwire.Value(ev.Data)
			}
			up := map[string]any{ev.Node: data}
			if ev.Cached {
				up["__metadata__"] = map[string]any{"cached": true}
			}
			return append(out, sse{c.name("updates", ev.NS), up})
		}
	case graph.ModeCustom:
		switch ev.Data.(type) {
		case *toolCallEvent, *modelCallEvent: // the events mode's own (events.go)
			return out
		}
		if c.wants("custom") {
			return append(out, sse{c.name("custom", ev.NS), lcwire.Value(ev.Data)})
		}
	case graph.ModeDebug:
		if c.wants("debug") {
			if d, ok := ev.Data.(graph.DebugEvent); ok {
				var payload any
				switch p := d.Payload.(type) {
				case graph.TaskEvent:
					payload = lcwire.TaskEvent(p)
				default:
					payload = lcwire.CheckpointEvent(lcwire.Value(p), true)
				}
				return append(out, sse{c.name("debug", ev.NS), map[string]any{"type": d.Type, "step": d.Step, "timestamp": time.Now().UTC().Format(time.RFC3339Nano), "payload": payload}})
			}
			return append(out, sse{c.name("debug", ev.NS), lcwire.Value(ev.Data)})
		}
	case graph.ModeTasks:
		te, ok := ev.Data.(graph.TaskEvent)
		if !ok {
			return out
		}
		if c.wants("messages-tuple") {
			out = append(out, c.taskMessages(ev, te)...)
		}
		if c.wants("tasks") {
			return append(out, sse{c.name("tasks", ev.NS), lcwire.TaskEvent(te)})
		}
	case graph.ModeCheckpoints:
		if c.wants("checkpoints") {
			return append(out, sse{c.name("checkpoints", ev.NS), lcwire.CheckpointEvent(lcwire.Value(ev.Data), false)})
		}
	case graph.ModeMessages:
		chunk, ok := ev.Data.(graph.MessageChunk)
		if !ok {
			return out
		}
		cm := c.messageMeta(ev, chunk)
		if c.wants("messages-tuple") {
			var md any = cm.md
			if cm.raw != nil {
				md = cm.raw
			}
			out = append(out, sse{c.name("messages", ev.NS), []any{lcwire.FromChunk(chunk.Message), md}})
		}
		if c.wants("messages") {
			id := chunk.Message.ID
			acc := c.partial[id]
			if acc == nil {
				m := chunk.Message
				m.ToolCalls = slices.Clone(m.ToolCalls)
				acc = &m
				c.partial[id] = acc
				out = append(out, sse{"messages/metadata", map[string]any{id: map[string]any{"metadata": cm.md}}})
			} else {
				acc.Content += chunk.Message.Content
				acc.ToolCalls = append(acc.ToolCalls, chunk.Message.ToolCalls...)
			}
			out = append(out, sse{"messages/partial", []any{lcwire.FromChunk(*acc)}})
		}
		return out
	}
	return out
}

// complete returns the "messages/complete" event of the messages a new state holds that no
// earlier one did, as the LangGraph API sends in "messages" mode (messages without an ID are
// left out, as there).
func (c *converter) complete(ev graph.Event) []sse {
	var done []any
	for _, m := range lcwire.MessagesIn(ev.Data) {
		if m.ID == "" || c.completed[m.ID] {
			continue
		}
		c.completed[m.ID] = true
		done = append(done, lcwire.FromMessage(m))
	}
	if len(done) == 0 {
		return nil
	}
	return []sse{{"messages/complete", done}}
}

// taskMessages returns the messages-tuple events of the messages a finished task returned that
// were neither streamed as chunks nor in its input (a tools node's tool messages, a node's
// hand-made answer), whole, as LangGraph's messages stream sends a node's output; a task
// starting marks the messages of its input as seen.
func (c *converter) taskMessages(ev graph.Event, te graph.TaskEvent) []sse {
	if !te.Finished {
		for _, m := range lcwire.MessagesIn(te.Input) {
			c.seen[m.ID] = true
		}
		return nil
	}
	if te.Error != "" || len(te.Interrupts) > 0 {
		return nil
	}
	var out []sse
	for _, m := range lcwire.MessagesIn(te.Result) {
		if m.ID != "" && c.seen[m.ID] {
			continue
		}
		if m.ID != "" {
			c.seen[m.ID] = true
		}
		cm := c.messageMeta(ev, graph.MessageChunk{Message: m})
		out = append(out, sse{c.name("messages", ev.NS), []any{lcwire.FromMessage(m), cm.md}})
	}
	return out
}

// errorJSON is the data of an "error" event.
func errorJSON(err error) map[string]any {
	return map[string]any{"error": errorName(err), "message": err.Error()} // api_conf.go
}
