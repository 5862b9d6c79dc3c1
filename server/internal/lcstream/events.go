package lcstream

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/server/internal/lcwire"
	"github.com/trellis-go/trellis/tool"
)

// The "events" stream mode: LangChain callback-style events (astream_events v2), built from
// the runtime's lifecycle, tasks, values and messages events. Each SSE event is named "events"
// and carries {event, name, run_id, parent_ids, tags, metadata, data}:
//
//   - on_chain_start / on_chain_end for the graph (run_id: the API's run ID; input, output);
//   - on_chain_stream for the graph with each new state (data.chunk: the values);
//   - on_chain_start for each node's task as it starts (run_id: the task ID; data.input), then
//     on_chain_stream (data.chunk: the node's update) and on_chain_end (input, output) when it
//     finishes; a task that fails or pauses at an interrupt gets no end;
//   - on_chat_model_start (data.input.messages: the prompt) when a model call made through
//     agent.StreamModel starts, on_chat_model_stream (data.chunk: an AIMessageChunk) per token
//     chunk, and on_chat_model_end (data.input, data.output: the whole message) when it ends
//     (run_id: the message ID): the server puts a model.CallObserver in the run's context that
//     sends the start and end through the graph's custom stream (modelCallEvent). A node that
//     streams chunks by other means gets its start with its first chunk, with an empty input,
//     and its end when its task finishes;
//   - on_tool_start when a tool call starts and on_tool_end when it ends, for the calls a
//     tool.Executor runs (the ReAct agent's tools node): the server puts a tool.CallObserver in
//     the run's context that sends both through the graph's custom stream (toolCallEvent), so
//     they arrive in order with the node's other events, the call's arguments as input and the
//     tool message as output (run_id: the tool call's ID). A tool message a node returns without
//     an executor having run it gets both events when the node's task finishes.
//
// Every event's metadata holds the run's, as LangGraph's do.

// ModeLifecycle is the stream mode of the two events that bracket a run for the "events" mode:
// the server's view of a graph yields them before the graph's first event and after its last,
// and the converter turns them into the graph's on_chain_start and on_chain_end. The graph
// runtime never emits it, and the other modes ignore it.
const ModeLifecycle graph.StreamMode = "trellis:lifecycle"

// Lifecycle is the Data of a ModeLifecycle event: the run starting (Start, with the run's
// Input) or ending (with Output, the last values).
type Lifecycle struct {
	Start  bool
	Name   string
	RunID  string
	Input  json.RawMessage
	Output any
}

// eventsConv makes the "events" mode's callback events.
type eventsConv struct {
	graphName string
	graphRun  string
	input     any
	runMeta   map[string]any
	tasks     map[string]*taskRun
	calls     map[string]message.ToolCall // every tool call seen, by ID
	observed  map[string]bool             // tool calls reported as they ran, by ID
}

// toolCallEvent is a tool call starting or ending, sent by ToolObserver through the graph's
// custom stream to the converter, which never lets it out as a custom event.
type toolCallEvent struct {
	start bool
	call  message.ToolCall
	out   message.Message // the tool message, at the end
}

// ToolObserver reports a run's tool calls as toolCallEvents.
type ToolObserver struct{}

func (ToolObserver) ToolStarted(ctx context.Context, call message.ToolCall) {
	graph.Emit(ctx, &toolCallEvent{start: true, call: call})
}

func (ToolObserver) ToolEnded(ctx context.Context, o tool.Outcome) {
	graph.Emit(ctx, &toolCallEvent{call: o.Call, out: o.Message})
}

// modelCallEvent is a model call starting or ending, sent by ModelObserver through the graph's
// custom stream like toolCallEvent.
type modelCallEvent struct {
	start bool
	call  model.Call
	resp  *model.Response // at the end, when the call succeeded
}

// ModelObserver reports a run's streamed model calls (agent.StreamModel) as modelCallEvents.
type ModelObserver struct{}

func (ModelObserver) ModelStarted(ctx context.Context, call model.Call) {
	graph.Emit(ctx, &modelCallEvent{start: true, call: call})
}

func (ModelObserver) ModelEnded(ctx context.Context, call model.Call, resp *model.Response, _ error) {
	graph.Emit(ctx, &modelCallEvent{call: call, resp: resp})
}

// modelInput is a chat model's input as LangChain reports it: one batch of messages.
func modelInput(req *model.Request) map[string]any {
	msgs := []any{}
	if req != nil {
		for _, m := range req.Messages {
			msgs = append(msgs, lcwire.FromMessage(m))
		}
	}
	return map[string]any{"messages": []any{msgs}}
}

// toolArgs is a call's arguments as an event's input.
func toolArgs(call message.ToolCall) any {
	if len(call.Arguments) > 0 && json.Valid(call.Arguments) {
		return json.RawMessage(call.Arguments)
	}
	return map[string]any{}
}

type taskRun struct {
	name   string
	input  any
	models []*modelRun
}

type modelRun struct {
	id    string
	name  string
	acc   message.Message
	meta  map[string]any
	input map[string]any // the prompt, when the call was observed
	ended bool           // on_chat_model_end was sent when the call ended
}

func newEventsConv(runMeta map[string]any) *eventsConv {
	return &eventsConv{runMeta: runMeta, tasks: map[string]*taskRun{}, calls: map[string]message.ToolCall{}, observed: map[string]bool{}}
}

// meta returns the run's metadata with more (a node's) over it.
func (e *eventsConv) meta(more map[string]any) map[string]any {
	m := make(map[string]any, len(e.runMeta)+len(more))
	maps.Copy(m, e.runMeta)
	maps.Copy(m, more)
	return m
}

// lcEvent is one LangChain callback event.
func lcEvent(event, name, runID string, parents []string, meta map[string]any, tags []string, data map[string]any) Frame {
	if parents == nil {
		parents = []string{}
	}
	if tags == nil {
		tags = []string{}
	}
	return Frame{"events", map[string]any{"event": event, "name": name, "run_id": runID, "parent_ids": parents,
		"tags": tags, "metadata": meta, "data": data}}
}

// nodeMeta is the metadata LangGraph attaches to a node's events.
func nodeMeta(ev graph.Event, node string) map[string]any {
	ns := node + ":" + ev.TaskID
	if len(ev.NS) > 0 {
		ns = strings.Join(ev.NS, "|") + "|" + ns
	}
	return map[string]any{"langgraph_node": node, "langgraph_step": ev.Step, "langgraph_task_id": ev.TaskID,
		"langgraph_checkpoint_ns": ns, "checkpoint_ns": ns}
}

func (e *eventsConv) parents(taskID string) []string {
	if taskID == "" {
		return []string{e.graphRun}
	}
	return []string{e.graphRun, taskID}
}

func (e *eventsConv) convert(ev graph.Event) []Frame {
	switch ev.Mode {
	case ModeLifecycle:
		lc, ok := ev.Data.(*Lifecycle)
		if !ok {
			return nil
		}
		meta := e.meta(map[string]any{"run_id": lc.RunID})
		if lc.Start {
			e.graphName, e.graphRun = lc.Name, lc.RunID
			if len(lc.Input) > 0 {
				e.input = lc.Input
			}
			return []Frame{lcEvent("on_chain_start", lc.Name, lc.RunID, nil, meta, nil, map[string]any{"input": e.input})}
		}
		return []Frame{lcEvent("on_chain_end", lc.Name, lc.RunID, nil, meta, nil, map[string]any{"input": e.input, "output": lcwire.Value(lc.Output)})}
	case graph.ModeValues:
		if len(ev.NS) > 0 {
			return nil
		}
		return []Frame{lcEvent("on_chain_stream", e.graphName, e.graphRun, nil, e.meta(map[string]any{"run_id": e.graphRun}), nil, map[string]any{"chunk": lcwire.Value(ev.Data)})}
	case graph.ModeCustom:
		if mc, ok := ev.Data.(*modelCallEvent); ok {
			return e.modelCall(ev, mc)
		}
		tc, ok := ev.Data.(*toolCallEvent)
		if !ok {
			return nil
		}
		meta := e.meta(nodeMeta(ev, ev.Node))
		tags := []string{fmt.Sprintf("graph:step:%d", ev.Step)}
		args := toolArgs(tc.call)
		if tc.start {
			e.observed[tc.call.ID] = true
			return []Frame{lcEvent("on_tool_start", tc.call.Name, tc.call.ID, e.parents(ev.TaskID), meta, tags, map[string]any{"input": args})}
		}
		return []Frame{lcEvent("on_tool_end", tc.call.Name, tc.call.ID, e.parents(ev.TaskID), meta, tags, map[string]any{"input": args, "output": lcwire.FromMessage(tc.out)})}
	case graph.ModeTasks:
		te, ok := ev.Data.(graph.TaskEvent)
		if !ok {
			return nil
		}
		meta := e.meta(nodeMeta(ev, te.Name))
		tags := []string{fmt.Sprintf("graph:step:%d", ev.Step)}
		if !te.Finished {
			t := &taskRun{name: te.Name, input: lcwire.Value(te.Input)}
			e.tasks[te.ID] = t
			return []Frame{lcEvent("on_chain_start", te.Name, te.ID, e.parents(""), meta, tags, map[string]any{"input": t.input})}
		}
		t := e.tasks[te.ID]
		if t == nil {
			t = &taskRun{name: te.Name}
		}
		delete(e.tasks, te.ID)
		var out []Frame
		for _, m := range t.models {
			if !m.ended {
				out = append(out, lcEvent("on_chat_model_end", m.name, m.id, e.parents(te.ID), m.meta, tags, map[string]any{"output": lcwire.FromMessage(m.acc)}))
			}
		}
		if te.Error != "" || len(te.Interrupts) > 0 {
			return out
		}
		for _, m := range lcwire.MessagesIn(te.Result) {
			for _, tc := range m.ToolCalls {
				e.calls[tc.ID] = tc
			}
			if m.Role != message.RoleTool || e.observed[m.ToolCallID] {
				delete(e.observed, m.ToolCallID)
				continue
			}
			call := e.calls[m.ToolCallID]
			args := toolArgs(call)
			name := m.Name
			if name == "" {
				name = call.Name
			}
			tmeta := meta
			out = append(out,
				lcEvent("on_tool_start", name, m.ToolCallID, e.parents(te.ID), tmeta, tags, map[string]any{"input": args}),
				lcEvent("on_tool_end", name, m.ToolCallID, e.parents(te.ID), tmeta, tags, map[string]any{"input": args, "output": lcwire.FromMessage(m)}))
		}
		result := lcwire.Value(te.Result)
		return append(out,
			lcEvent("on_chain_stream", te.Name, te.ID, e.parents(""), meta, tags, map[string]any{"chunk": result}),
			lcEvent("on_chain_end", te.Name, te.ID, e.parents(""), meta, tags, map[string]any{"input": t.input, "output": result}))
	case graph.ModeMessages:
		chunk, ok := ev.Data.(graph.MessageChunk)
		if !ok || chunk.Message.Role != message.RoleAssistant {
			return nil
		}
		tags := []string{fmt.Sprintf("graph:step:%d", ev.Step)}
		var out []Frame
		m := e.modelRunOf(ev, chunk.Message.ID)
		if m == nil {
			// A chunk of a call nobody observed (a node streaming on its own): its start is its
			// first chunk, and the prompt is unknown.
			m = e.newModelRun(ev, chunk.Message.ID, chunk.Metadata)
			out = append(out, lcEvent("on_chat_model_start", m.name, m.id, e.parents(ev.TaskID), m.meta, tags, map[string]any{"input": map[string]any{}}))
		}
		m.acc.Content += chunk.Message.Content
		m.acc.ToolCalls = append(m.acc.ToolCalls, chunk.Message.ToolCalls...)
		for _, tc := range chunk.Message.ToolCalls {
			e.calls[tc.ID] = tc
		}
		return append(out, lcEvent("on_chat_model_stream", m.name, m.id, e.parents(ev.TaskID), m.meta, tags, map[string]any{"chunk": lcwire.FromChunk(chunk.Message)}))
	}
	return nil
}

// modelRunOf returns the model call of ev's task whose message has ID id, or nil.
func (e *eventsConv) modelRunOf(ev graph.Event, id string) *modelRun {
	if t := e.tasks[ev.TaskID]; t != nil {
		for _, m := range t.models {
			if m.id == id {
				return m
			}
		}
	}
	return nil
}

// newModelRun records a model call of ev's task whose message has ID id; md is the metadata its
// chunks carry (node, provider, model).
func (e *eventsConv) newModelRun(ev graph.Event, id string, md map[string]any) *modelRun {
	t := e.tasks[ev.TaskID]
	if t == nil { // a call from outside a known task still streams
		t = &taskRun{name: ev.Node}
		e.tasks[ev.TaskID] = t
	}
	name, _ := md["model"].(string)
	if name == "" {
		name = "chat_model"
	}
	meta := e.meta(nodeMeta(ev, ev.Node))
	for k, v := range md {
		if _, taken := meta[k]; !taken {
			meta[k] = v
		}
	}
	if p, ok := md["provider"].(string); ok {
		meta["ls_provider"] = p
	}
	if name != "chat_model" {
		meta["ls_model_name"] = name
	}
	m := &modelRun{id: id, name: name, acc: message.Message{ID: id, Role: message.RoleAssistant}, meta: meta}
	t.models = append(t.models, m)
	return m
}

// modelCall turns an observed model call's start and end into on_chat_model_start (with the
// prompt) and on_chat_model_end (with the whole answer). A failed call gets no end, as in
// LangChain, where the error ends the stream.
func (e *eventsConv) modelCall(ev graph.Event, mc *modelCallEvent) []Frame {
	tags := []string{fmt.Sprintf("graph:step:%d", ev.Step)}
	if mc.start {
		// The same metadata as the call's chunks carry (agent.StreamModel).
		md := map[string]any{"node": ev.Node}
		if mc.call.Provider != "" {
			md["provider"] = mc.call.Provider
			if mc.call.Name != "" {
				md["model"] = mc.call.Name
			}
		}
		m := e.newModelRun(ev, mc.call.ID, md)
		m.input = modelInput(mc.call.Request)
		return []Frame{lcEvent("on_chat_model_start", m.name, m.id, e.parents(ev.TaskID), m.meta, tags, map[string]any{"input": m.input})}
	}
	m := e.modelRunOf(ev, mc.call.ID)
	if m == nil || m.ended {
		return nil
	}
	m.ended = true
	if mc.resp == nil {
		return nil
	}
	for _, tc := range mc.resp.Message.ToolCalls {
		e.calls[tc.ID] = tc
	}
	return []Frame{lcEvent("on_chat_model_end", m.name, m.id, e.parents(ev.TaskID), m.meta, tags, map[string]any{"input": m.input, "output": lcwire.FromMessage(mc.resp.Message)})}
}
