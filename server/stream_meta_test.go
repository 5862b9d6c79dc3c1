package server

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model/scripted"
	"github.com/trellis-go/trellis/tool"
)

// gateGraph is a ReAct agent whose one tool call ("hold") blocks until the test closes release,
// answering "released", or gives up after a while, answering "gave up".
func gateGraph(release <-chan struct{}) GraphSpec {
	return GraphSpec{ID: "gate", Build: func(d Deps) (graph.Runnable, error) {
		hold, err := tool.New("hold", "waits for the test", func(ctx context.Context, a struct {
			For string `json:"for"`
		}) (string, error) {
			select {
			case <-release:
				return "released", nil
			case <-time.After(20 * time.Second):
				return "gave up", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		})
		if err != nil {
			return nil, err
		}
		m := scripted.New(
			scripted.ToolCalls(message.ToolCall{ID: "call-1", Name: "hold", Arguments: json.RawMessage(`{"for":"the test"}`)}),
			scripted.Text("done"),
		)
		return graph.Erase(react.New(m, &react.Options{Name: "gate", Tools: []tool.Tool{hold}, Compile: graph.CompileOptions{Saver: d.Saver}}))
	}}
}

// TestStreamEventsToolTiming checks that on_tool_start goes out while the tool runs, and
// on_tool_end once it has returned: the tool waits until the test has seen its start.
func TestStreamEventsToolTiming(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	b := setup(t, setupOpts{extra: []GraphSpec{gateGraph(release)}})
	body := map[string]any{"assistant_id": "gate", "stream_mode": []string{"events", "custom"},
		"input": map[string]any{"messages": []any{map[string]any{"type": "human", "content": "hold on"}}}}
	var startSeen, endBeforeStart bool
	_, evs := b.stream("POST", "/runs/stream", body, nil, func(e sseEvent) bool {
		var ev lcEv
		_ = json.Unmarshal(e.Data, &ev)
		switch ev.Event {
		case "on_tool_start":
			if !startSeen {
				startSeen = true
				close(release) // the tool has not returned: it waits for this
			}
		case "on_tool_end":
			endBeforeStart = endBeforeStart || !startSeen
		}
		return false
	})
	if !startSeen || endBeforeStart {
		t.Fatalf("tool start seen %v, end before start %v: %v", startSeen, endBeforeStart, names(evs))
	}
	var start, end *lcEv
	var toolsTask string
	for _, e := range evs {
		if e.Event == "custom" {
			t.Fatalf("a tool event leaked as a custom event: %s", e.Data)
		}
		if e.Event != "events" {
			continue
		}
		var ev lcEv
		_ = json.Unmarshal(e.Data, &ev)
		switch {
		case ev.Event == "on_chain_start" && ev.Name == "tools":
			toolsTask = ev.RunID
		case ev.Event == "on_tool_start":
			if start != nil {
				t.Fatal("two on_tool_start events for one call")
			}
			start = &ev
		case ev.Event == "on_tool_end":
			if end != nil {
				t.Fatal("two on_tool_end events for one call")
			}
			end = &ev
		}
	}
	if start == nil || end == nil || start.RunID != "call-1" || end.RunID != "call-1" || start.Name != "hold" {
		t.Fatalf("tool events %+v %+v", start, end)
	}
	if toolsTask == "" || len(start.ParentIDs) != 2 || start.ParentIDs[1] != toolsTask || start.Metadata["langgraph_node"] != "tools" {
		t.Fatalf("tool start's parents %v (tools task %q), metadata %v", start.ParentIDs, toolsTask, start.Metadata)
	}
	var in map[string]any
	var out map[string]any
	_ = json.Unmarshal(start.Data.Input, &in)
	_ = json.Unmarshal(end.Data.Output, &out)
	if in["for"] != "the test" || out["type"] != "tool" || out["content"] != "released" || out["tool_call_id"] != "call-1" {
		t.Fatalf("tool input %s, output %s", start.Data.Input, end.Data.Output)
	}
}

// chatterGraph emits message chunks that name their provider and model, as a model adapter
// that knows them does.
var chatterGraph = GraphSpec{ID: "chatter", Build: func(d Deps) (graph.Runnable, error) {
	g := graph.New[react.State]()
	g.AddNode("talk", func(ctx context.Context, s react.State) (react.State, error) {
		for _, piece := range []string{"hel", "lo"} {
			graph.EmitMessage(ctx, graph.MessageChunk{Message: message.Message{ID: "m-1", Role: message.RoleAssistant, Content: piece},
				Metadata: map[string]any{"provider": "acme", "model": "acme-small"}})
		}
		return react.State{Messages: []message.Message{{ID: "m-1", Role: message.RoleAssistant, Content: "hello"}}}, nil
	})
	g.AddEdge(graph.START, "talk").AddEdge("talk", graph.END)
	return graph.Erase(g.Compile(graph.CompileOptions{Saver: d.Saver}))
}}

// TestMessagesTupleMetadata checks the metadata of messages-tuple chunks against what LangGraph
// sends: the run's metadata and IDs, where in the graph the chunk was written, and the model.
func TestMessagesTupleMetadata(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{extra: []GraphSpec{chatterGraph}})
	tid := b.newThread(nil)
	body := map[string]any{"assistant_id": "chatter", "stream_mode": []string{"messages-tuple", "messages"},
		"metadata": map[string]any{"team": "blue", "run_id": "not-this"},
		"config":   map[string]any{"configurable": map[string]any{"style": "terse", "depth": 2, "nested": map[string]any{"no": 1}}},
		"input":    map[string]any{"messages": []any{map[string]any{"type": "human", "content": "hi"}}}}
	_, evs := b.stream("POST", "/threads/"+tid+"/runs/stream", body, nil, nil)
	var runID string
	var tuples [][2]json.RawMessage
	var partialMeta map[string]map[string]map[string]any
	for _, e := range evs {
		switch e.Event {
		case "metadata":
			var md struct {
				RunID string `json:"run_id"`
			}
			_ = json.Unmarshal(e.Data, &md)
			runID = md.RunID
		case "messages":
			var pair [2]json.RawMessage
			if err := json.Unmarshal(e.Data, &pair); err != nil {
				t.Fatalf("messages event %s: %v", e.Data, err)
			}
			tuples = append(tuples, pair)
		case "messages/metadata":
			_ = json.Unmarshal(e.Data, &partialMeta)
		}
	}
	if len(tuples) != 2 {
		t.Fatalf("stream %v", names(evs))
	}
	for _, pair := range tuples {
		var md map[string]any
		if err := json.Unmarshal(pair[1], &md); err != nil {
			t.Fatal(err)
		}
		ns, _ := md["langgraph_checkpoint_ns"].(string)
		want := map[string]any{
			"team": "blue", "run_id": runID, "thread_id": tid, "assistant_id": AssistantID("chatter"), "graph_id": "chatter",
			"style": "terse", "depth": 2.0,
			"langgraph_node": "talk", "langgraph_step": 1.0, // the first node's superstep: step 0 applies the input
			"langgraph_checkpoint_ns": ns, "checkpoint_ns": ns,
			"ls_provider": "acme", "ls_model_name": "acme-small", "ls_model_type": "chat",
		}
		for k, v := range want {
			if md[k] != v {
				t.Errorf("metadata %q is %v, want %v (all: %s)", k, md[k], v, pair[1])
			}
		}
		if len(ns) < len("talk:x") || ns[:5] != "talk:" {
			t.Errorf("langgraph_checkpoint_ns %q", ns)
		}
		if _, ok := md["nested"]; ok {
			t.Errorf("a configurable object was copied into the metadata: %s", pair[1])
		}
		var triggers, path []string
		raw, _ := json.Marshal(md["langgraph_triggers"])
		_ = json.Unmarshal(raw, &triggers)
		raw, _ = json.Marshal(md["langgraph_path"])
		_ = json.Unmarshal(raw, &path)
		if !slices.Equal(triggers, []string{"branch:to:talk"}) || !slices.Equal(path, []string{"__pregel_pull", "talk"}) {
			t.Errorf("triggers %v, path %v", triggers, path)
		}
	}
	// The messages mode sends the same metadata once per message.
	if m := partialMeta["m-1"]["metadata"]; m["graph_id"] != "chatter" || m["team"] != "blue" || m["langgraph_node"] != "talk" {
		t.Fatalf("messages/metadata: %v", partialMeta)
	}
}

// TestEventsCarryRunMetadata checks that callback events carry the run's metadata too.
func TestEventsCarryRunMetadata(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{extra: []GraphSpec{chatterGraph}})
	body := map[string]any{"assistant_id": "chatter", "stream_mode": "events", "metadata": map[string]any{"team": "red"},
		"input": map[string]any{"messages": []any{map[string]any{"type": "human", "content": "hi"}}}}
	_, evs := b.stream("POST", "/runs/stream", body, nil, nil)
	n := 0
	for _, e := range evs {
		if e.Event != "events" {
			continue
		}
		var ev lcEv
		_ = json.Unmarshal(e.Data, &ev)
		n++
		if ev.Metadata["team"] != "red" || ev.Metadata["graph_id"] != "chatter" || ev.Metadata["assistant_id"] != AssistantID("chatter") {
			t.Fatalf("%s without the run's metadata: %v", ev.Event, ev.Metadata)
		}
		if ev.Event == "on_chat_model_stream" && (ev.Metadata["ls_provider"] != "acme" || ev.Metadata["langgraph_node"] != "talk") {
			t.Fatalf("model stream metadata %v", ev.Metadata)
		}
	}
	if n < 4 {
		t.Fatalf("stream %v", names(evs))
	}
}
