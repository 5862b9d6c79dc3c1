// Package lcstream turns a graph run's events into the LangGraph API's stream: the SSE events
// of each stream mode a run asks for (values, updates, messages-tuple, messages/partial and
// messages/complete, custom, debug, tasks, checkpoints), the LangChain callback events of the
// "events" mode, and the fast path that encodes a messages-tuple token with the metadata every
// token of its message shares encoded once (tokens.go). Values leave with their messages in
// LangChain's shape (package lcwire).
//
// A Converter serves one run: it keeps the state the modes need across events (the messages
// accumulated so far, the metadata of each streamed message, the tasks and model calls the
// "events" mode has reported).
package lcstream

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

// Converter turns one run's graph events into the LangGraph API's SSE events.
type Converter struct {
	modes     []string // as requested
	subgraphs bool
	runMeta   map[string]any              // the run's metadata
	tags      []string                    // the run's config tags, in every message's metadata
	partial   map[string]*message.Message // accumulated messages for "messages" mode
	msgMeta   map[string]*chunkMeta       // each streamed message's metadata, by message ID
	seen      map[string]bool             // messages streamed or in a task's input (messages-tuple)
	completed map[string]bool             // messages sent in messages/complete ("messages" mode)
	events    *eventsConv                 // for "events" mode
	tokens    *tokenEncoder               // for runs whose tokens are all messages-tuple events
}

// chunkMeta is the metadata of a streamed message's chunks, encoded once for all of them as
// long as the chunks' own metadata stays the same.
type chunkMeta struct {
	from map[string]any // the chunk metadata it was built from
	md   map[string]any
	raw  json.RawMessage
}

// New returns a converter for a run's requested modes (as the API names them). runMeta is the
// run's metadata, sent with every message chunk and callback event; tags are the run's config
// tags, which head every message's own.
func New(modes []string, subgraphs bool, runMeta map[string]any, tags []string) *Converter {
	c := &Converter{modes: modes, subgraphs: subgraphs, runMeta: runMeta, tags: tags, partial: map[string]*message.Message{}, msgMeta: map[string]*chunkMeta{},
		seen: map[string]bool{}, completed: map[string]bool{}}
	if slices.Contains(modes, "events") {
		c.events = newEventsConv(c.runMeta)
	}
	if c.tupleOnly() {
		c.tokens = &tokenEncoder{c: c}
	}
	return c
}

// messageMeta returns the metadata of a message chunk: the run's, the chunk's own, and where in
// the graph it was written (the langgraph_* keys); ls_provider, ls_model_name and ls_model_type
// when the chunk names its provider and model.
func (c *Converter) messageMeta(ev graph.Event, chunk graph.MessageChunk) *chunkMeta {
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

// Wants reports whether the run asked for stream mode m.
func (c *Converter) Wants(m string) bool { return slices.Contains(c.modes, m) }

// Frame is one SSE event of the run's stream: its name (the mode, "|" and the subgraph
// namespace when the run streams subgraphs) and its data, to be encoded as JSON.
type Frame struct {
	Event string
	Data  any
}

// Name is the event name of mode for an event of the subgraph namespace ns.
func (c *Converter) Name(mode string, ns []string) string {
	if c.subgraphs && len(ns) > 0 {
		return mode + "|" + strings.Join(ns, "|")
	}
	return mode
}

// Convert turns one graph event into the SSE events the requested modes want. Every value that
// leaves holds its messages in LangChain's shape (lcwire.Value, lcwire.FromChunk).
func (c *Converter) Convert(ev graph.Event) []Frame {
	if len(ev.NS) > 0 && !c.subgraphs {
		return nil
	}
	var out []Frame
	if c.events != nil {
		out = c.events.convert(ev)
	}
	switch ev.Mode {
	case graph.ModeValues:
		if c.Wants("messages") {
			out = append(out, c.complete(ev)...)
		}
		if c.Wants("values") {
			return append(out, Frame{c.Name("values", ev.NS), lcwire.Value(ev.Data)})
		}
	case graph.ModeUpdates:
		if c.Wants("updates") {
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
			return append(out, Frame{c.Name("updates", ev.NS), up})
		}
	case graph.ModeCustom:
		switch ev.Data.(type) {
		case *toolCallEvent, *modelCallEvent: // the events mode's own (events.go)
			return out
		}
		if c.Wants("custom") {
			return append(out, Frame{c.Name("custom", ev.NS), lcwire.Value(ev.Data)})
		}
	case graph.ModeDebug:
		if c.Wants("debug") {
			if d, ok := ev.Data.(graph.DebugEvent); ok {
				var payload any
				switch p := d.Payload.(type) {
				case graph.TaskEvent:
					payload = lcwire.TaskEvent(p)
				default:
					payload = lcwire.CheckpointEvent(lcwire.Value(p), true)
				}
				return append(out, Frame{c.Name("debug", ev.NS), map[string]any{"type": d.Type, "step": d.Step, "timestamp": time.Now().UTC().Format(time.RFC3339Nano), "payload": payload}})
			}
			return append(out, Frame{c.Name("debug", ev.NS), lcwire.Value(ev.Data)})
		}
	case graph.ModeTasks:
		te, ok := ev.Data.(graph.TaskEvent)
		if !ok {
			return out
		}
		if c.Wants("messages-tuple") {
			out = append(out, c.taskMessages(ev, te)...)
		}
		if c.Wants("tasks") {
			return append(out, Frame{c.Name("tasks", ev.NS), lcwire.TaskEvent(te)})
		}
	case graph.ModeCheckpoints:
		if c.Wants("checkpoints") {
			return append(out, Frame{c.Name("checkpoints", ev.NS), lcwire.CheckpointEvent(lcwire.Value(ev.Data), false)})
		}
	case graph.ModeMessages:
		chunk, ok := ev.Data.(graph.MessageChunk)
		if !ok {
			return out
		}
		cm := c.messageMeta(ev, chunk)
		if c.Wants("messages-tuple") {
			var md any = cm.md
			if cm.raw != nil {
				md = cm.raw
			}
			out = append(out, Frame{c.Name("messages", ev.NS), []any{lcwire.FromChunk(chunk.Message), md}})
		}
		if c.Wants("messages") {
			id := chunk.Message.ID
			acc := c.partial[id]
			if acc == nil {
				m := chunk.Message
				m.ToolCalls = slices.Clone(m.ToolCalls)
				acc = &m
				c.partial[id] = acc
				out = append(out, Frame{"messages/metadata", map[string]any{id: map[string]any{"metadata": cm.md}}})
			} else {
				acc.Content += chunk.Message.Content
				acc.ToolCalls = append(acc.ToolCalls, chunk.Message.ToolCalls...)
			}
			out = append(out, Frame{"messages/partial", []any{lcwire.FromChunk(*acc)}})
		}
		return out
	}
	return out
}

// complete returns the "messages/complete" event of the messages a new state holds that no
// earlier one did, as the LangGraph API sends in "messages" mode (messages without an ID are
// left out, as there).
func (c *Converter) complete(ev graph.Event) []Frame {
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
	return []Frame{{"messages/complete", done}}
}

// taskMessages returns the messages-tuple events of the messages a finished task returned that
// were neither streamed as chunks nor in its input (a tools node's tool messages, a node's
// hand-made answer), whole, as LangGraph's messages stream sends a node's output; a task
// starting marks the messages of its input as seen.
func (c *Converter) taskMessages(ev graph.Event, te graph.TaskEvent) []Frame {
	if !te.Finished {
		for _, m := range lcwire.MessagesIn(te.Input) {
			c.seen[m.ID] = true
		}
		return nil
	}
	if te.Error != "" || len(te.Interrupts) > 0 {
		return nil
	}
	var out []Frame
	for _, m := range lcwire.MessagesIn(te.Result) {
		if m.ID != "" && c.seen[m.ID] {
			continue
		}
		if m.ID != "" {
			c.seen[m.ID] = true
		}
		cm := c.messageMeta(ev, graph.MessageChunk{Message: m})
		out = append(out, Frame{c.Name("messages", ev.NS), []any{lcwire.FromMessage(m), cm.md}})
	}
	return out
}
