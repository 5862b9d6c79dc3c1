package server

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

type lcEv struct {
	Event     string         `json:"event"`
	Name      string         `json:"name"`
	RunID     string         `json:"run_id"`
	ParentIDs []string       `json:"parent_ids"`
	Tags      []string       `json:"tags"`
	Metadata  map[string]any `json:"metadata"`
	Data      struct {
		Input  json.RawMessage `json:"input"`
		Output json.RawMessage `json:"output"`
		Chunk  json.RawMessage `json:"chunk"`
	} `json:"data"`
}

// TestStreamEventsMode streams a ReAct run (a model turn with a tool call, the tool, a model
// answer) with stream_mode "events" over SSE and checks the LangChain callback events.
func TestStreamEventsMode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tid := b.newThread(nil)
	body := map[string]any{"assistant_id": "example", "stream_mode": "events",
		"input": map[string]any{"messages": []any{map[string]any{"type": "human", "content": "What time is it in Tokyo?"}}}}
	_, evs := b.stream("POST", "/threads/"+tid+"/runs/stream", body, nil, nil)
	if len(evs) < 3 || evs[0].Event != "metadata" || evs[len(evs)-1].Event != "end" {
		t.Fatalf("stream %v", names(evs))
	}
	var md struct {
		RunID string `json:"run_id"`
	}
	_ = json.Unmarshal(evs[0].Data, &md)
	var got []lcEv
	for _, e := range evs[1 : len(evs)-1] {
		if e.Event != "events" {
			t.Fatalf("an %q event in an events-only stream", e.Event)
		}
		var ev lcEv
		if err := json.Unmarshal(e.Data, &ev); err != nil {
			t.Fatalf("%v: %s", err, e.Data)
		}
		if ev.ParentIDs == nil || ev.Tags == nil || ev.Metadata == nil || ev.RunID == "" {
			t.Fatalf("incomplete event: %s", e.Data)
		}
		got = append(got, ev)
	}
	first, last := got[0], got[len(got)-1]
	if first.Event != "on_chain_start" || first.RunID != md.RunID || len(first.ParentIDs) != 0 || !strings.Contains(string(first.Data.Input), "Tokyo") {
		t.Fatalf("first event %+v", first)
	}
	if last.Event != "on_chain_end" || last.RunID != md.RunID || last.Name != first.Name {
		t.Fatalf("last event %+v", last)
	}
	var out struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(last.Data.Output, &out); err != nil || len(out.Messages) < 4 || out.Messages[len(out.Messages)-1]["type"] != "ai" {
		t.Fatalf("graph output %s", last.Data.Output)
	}

	// Node tasks: started, streamed and ended in that order, under the graph's run.
	started := map[string]int{}
	var nodes []string
	for i, ev := range got {
		if ev.RunID == md.RunID {
			continue
		}
		switch ev.Event {
		case "on_chain_start":
			started[ev.RunID] = i
			nodes = append(nodes, ev.Name)
			if !slices.Equal(ev.ParentIDs, []string{md.RunID}) || ev.Metadata["langgraph_node"] != ev.Name {
				t.Fatalf("node start %+v", ev)
			}
		case "on_chain_end":
			s, ok := started[ev.RunID]
			if !ok || s > i || got[i-1].Event != "on_chain_stream" || got[i-1].RunID != ev.RunID {
				t.Fatalf("node end %+v without a start and a stream before it", ev)
			}
		}
	}
	if !slices.Equal(nodes, []string{"model", "tools", "model"}) {
		t.Fatalf("node tasks %v", nodes)
	}

	// The model's tokens, and the tool.
	var streams, modelStarts, modelEnds int
	var toolStart, toolEnd *lcEv
	for i := range got {
		ev := &got[i]
		switch ev.Event {
		case "on_chat_model_start":
			modelStarts++
		case "on_chat_model_stream":
			streams++
			var c map[string]any
			_ = json.Unmarshal(ev.Data.Chunk, &c)
			if c["type"] != "AIMessageChunk" || len(ev.ParentIDs) != 2 || ev.ParentIDs[0] != md.RunID || ev.Metadata["langgraph_node"] != "model" {
				t.Fatalf("chat model stream %+v (chunk %s)", ev, ev.Data.Chunk)
			}
			if _, ok := started[ev.ParentIDs[1]]; !ok {
				t.Fatalf("chunk's parent task %q never started", ev.ParentIDs[1])
			}
		case "on_chat_model_end":
			modelEnds++
		case "on_tool_start":
			toolStart = ev
		case "on_tool_end":
			toolEnd = ev
		}
	}
	if streams == 0 || modelStarts != 2 || modelEnds != 2 {
		t.Fatalf("chat model events: %d starts, %d streams, %d ends", modelStarts, streams, modelEnds)
	}
	// Each model call: its start carries the prompt, its chunks come between its start and its
	// end, and it ends, with the prompt and the whole answer, before its task does.
	calls := 0
	for i, ev := range got {
		if ev.Event != "on_chat_model_start" {
			continue
		}
		calls++
		var in struct {
			Messages [][]map[string]any `json:"messages"`
		}
		if err := json.Unmarshal(ev.Data.Input, &in); err != nil || len(in.Messages) != 1 || len(in.Messages[0]) == 0 {
			t.Fatalf("chat model start input %s", ev.Data.Input)
		}
		prompt := in.Messages[0]
		if prompt[len(prompt)-1]["type"] != map[int]string{1: "human", 2: "tool"}[calls] || !strings.Contains(string(ev.Data.Input), "Tokyo") {
			t.Fatalf("call %d's prompt ends with %v", calls, prompt[len(prompt)-1])
		}
		end := -1
		for j := i + 1; j < len(got); j++ {
			if got[j].RunID != ev.RunID {
				continue
			}
			if got[j].Event == "on_chat_model_end" {
				end = j
				break
			}
			if got[j].Event != "on_chat_model_stream" {
				t.Fatalf("%s between the start and the end of model call %s", got[j].Event, ev.RunID)
			}
		}
		if end < 0 {
			t.Fatalf("model call %s never ended", ev.RunID)
		}
		e := got[end]
		var outMsg map[string]any
		_ = json.Unmarshal(e.Data.Output, &outMsg)
		if outMsg["type"] != "ai" || outMsg["id"] != ev.RunID || string(e.Data.Input) != string(ev.Data.Input) {
			t.Fatalf("chat model end %s / %s", e.Data.Input, e.Data.Output)
		}
		task := ev.ParentIDs[1]
		for j := i; j < end; j++ {
			if got[j].RunID == task {
				t.Fatalf("the model's task %s sent %s before the model call ended", task, got[j].Event)
			}
		}
	}
	if toolStart == nil || toolEnd == nil || toolStart.RunID != toolEnd.RunID || toolStart.Name != toolEnd.Name {
		t.Fatalf("tool events %+v %+v", toolStart, toolEnd)
	}
	var args map[string]any
	if err := json.Unmarshal(toolStart.Data.Input, &args); err != nil || len(args) == 0 {
		t.Fatalf("tool input %s", toolStart.Data.Input)
	}
	var tm map[string]any
	_ = json.Unmarshal(toolEnd.Data.Output, &tm)
	if tm["type"] != "tool" || tm["tool_call_id"] != toolStart.RunID || tm["name"] != toolStart.Name {
		t.Fatalf("tool output %s", toolEnd.Data.Output)
	}
}

// TestStreamEventsWithOtherModes asks for events and values together: both arrive, and a
// stream mode still unknown is refused.
func TestStreamEventsWithOtherModes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	body := map[string]any{"assistant_id": "flow", "stream_mode": []string{"events", "values"}, "input": map[string]any{"topic": "x"}, "interrupt_before": []string{"approve"}}
	_, evs := b.stream("POST", "/runs/stream", body, nil, nil)
	var values, events int
	var lastEv lcEv
	for _, e := range evs {
		switch e.Event {
		case "values":
			values++
		case "events":
			events++
			_ = json.Unmarshal(e.Data, &lastEv)
		}
	}
	if values == 0 || events == 0 {
		t.Fatalf("stream %v", names(evs))
	}
	// The run pauses before approve: the graph's chain still ends, with the state so far.
	if lastEv.Event != "on_chain_end" || !strings.Contains(string(lastEv.Data.Output), `"plan"`) {
		t.Fatalf("last event %+v output %s", lastEv, lastEv.Data.Output)
	}
	var e map[string]any
	b.mustDo("POST", "/runs/stream", map[string]any{"assistant_id": "flow", "stream_mode": "telepathy"}, &e, 400)
}
