package server

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestStreamPayloadsLikeLangGraph checks the stream payloads issue 18 item 12 names against the
// shapes LangGraph (1.7.3, and its API server) gives them, on the example ReAct agent.
func TestStreamPayloadsLikeLangGraph(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tid := b.newThread(nil)
	body := map[string]any{"assistant_id": "example", "input": map[string]any{"messages": []any{map[string]any{"role": "user", "content": "Convert 42 km to miles"}}},
		"config":      map[string]any{"tags": []string{"side-by-side"}},
		"stream_mode": []string{"messages-tuple", "messages", "tasks", "checkpoints", "debug"}}
	_, evs := b.stream("POST", "/threads/"+tid+"/runs/stream", body, nil, nil)
	type lcMsg struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	var (
		toolTuples   int
		chunkIDs     = map[string]bool{}
		completeIDs  = map[string]string{} // id -> type
		taskStarts   int
		taskResults  int
		checkpoints  int
		debugCPs     int
		metadataSeen bool
	)
	for _, e := range evs {
		var m map[string]any
		_ = json.Unmarshal(e.Data, &m)
		switch e.Event {
		case "metadata":
			metadataSeen = true
			if m["thread_id"] != tid || m["run_id"] == nil {
				t.Errorf("metadata event %s lacks thread_id %s", e.Data, tid)
			}
		case "messages":
			var pair []json.RawMessage
			if err := json.Unmarshal(e.Data, &pair); err != nil || len(pair) != 2 {
				t.Fatalf("messages event is not a pair: %s", e.Data)
			}
			var msg lcMsg
			var md map[string]any
			_ = json.Unmarshal(pair[0], &msg)
			_ = json.Unmarshal(pair[1], &md)
			tags, _ := md["tags"].([]any)
			if !slices.Contains(tags, any("side-by-side")) {
				t.Errorf("messages-tuple metadata without the run's tags: %s", pair[1])
			}
			switch msg.Type {
			case "tool":
				toolTuples++
			case "AIMessageChunk":
				chunkIDs[msg.ID] = true
			}
		case "messages/complete":
			var msgs []lcMsg
			if err := json.Unmarshal(e.Data, &msgs); err != nil || len(msgs) == 0 {
				t.Fatalf("messages/complete is not a list of messages: %s", e.Data)
			}
			for _, msg := range msgs {
				if _, dup := completeIDs[msg.ID]; dup {
					t.Errorf("message %s completed twice", msg.ID)
				}
				completeIDs[msg.ID] = msg.Type
			}
		case "tasks":
			if _, ok := m["finished"]; ok {
				t.Errorf("tasks event has trellis's own finished key: %s", e.Data)
			}
			if _, ok := m["result"]; ok {
				taskResults++
				pairs, ok := m["result"].([]any)
				if !ok {
					t.Errorf("task result is not a list of writes: %s", e.Data)
				}
				for _, p := range pairs {
					if pair, ok := p.([]any); !ok || len(pair) != 2 {
						t.Errorf("task result's write is not a [channel, value] pair: %s", e.Data)
					} else if _, ok := pair[0].(string); !ok {
						t.Errorf("task result's write names no channel: %s", e.Data)
					}
				}
				if _, ok := m["error"]; !ok {
					t.Errorf("task result without error: %s", e.Data)
				}
				if _, ok := m["interrupts"].([]any); !ok {
					t.Errorf("task result without interrupts: %s", e.Data)
				}
			} else {
				taskStarts++
				if _, ok := m["interrupts"].([]any); !ok {
					t.Errorf("task start without interrupts: %s", e.Data)
				}
				tr, _ := m["triggers"].([]any)
				if len(tr) != 1 || tr[0] != "branch:to:"+m["name"].(string) {
					t.Errorf("task start triggers: %s", e.Data)
				}
			}
		case "checkpoints":
			checkpoints++
			checkCheckpointPayload(t, m, false)
		case "debug":
			if m["type"] == "checkpoint" {
				debugCPs++
				checkCheckpointPayload(t, m["payload"].(map[string]any), true)
			}
		}
	}
	if !metadataSeen || toolTuples == 0 || taskStarts == 0 || taskStarts != taskResults || checkpoints == 0 || debugCPs != checkpoints {
		t.Fatalf("metadata %v, tool tuples %d, task starts %d results %d, checkpoints %d, debug checkpoints %d: %v",
			metadataSeen, toolTuples, taskStarts, taskResults, checkpoints, debugCPs, names(evs))
	}
	types := map[string]int{}
	for _, typ := range completeIDs {
		types[typ]++
	}
	if types["human"] != 1 || types["tool"] == 0 || types["ai"] < 2 {
		t.Errorf("messages/complete types %v", types)
	}
	// Every streamed chunk's ID is the ID of a message the state holds at the end.
	for id := range chunkIDs {
		if completeIDs[id] != "ai" {
			t.Errorf("chunks of message %s, which never completed (the final message has another ID)", id)
		}
	}
}

func checkCheckpointPayload(t *testing.T, m map[string]any, debug bool) {
	t.Helper()
	cfg, _ := m["config"].(map[string]any)
	if _, ok := cfg["configurable"].(map[string]any); !ok {
		t.Errorf("checkpoint payload config %v", m["config"])
	}
	for _, k := range []string{"values", "metadata", "next", "parent_config"} {
		if _, ok := m[k]; !ok {
			t.Errorf("checkpoint payload without %s", k)
		}
	}
	tasks, ok := m["tasks"].([]any)
	next, _ := m["next"].([]any)
	if !ok || len(tasks) != len(next) {
		t.Errorf("checkpoint payload tasks %v for next %v", m["tasks"], m["next"])
	}
	for i, task := range tasks {
		tm, _ := task.(map[string]any)
		if tm["id"] == "" || tm["name"] != next[i] {
			t.Errorf("checkpoint task %v for next %v", task, next)
		}
		for _, k := range []string{"error", "state", "interrupts"} {
			if _, ok := tm[k]; !ok {
				t.Errorf("checkpoint task without %s: %v", k, task)
			}
		}
	}
	// The checkpoints themselves, in both modes, as LangGraph's server adds them.
	cp, _ := m["checkpoint"].(map[string]any)
	if cp["checkpoint_id"] == nil || cp["thread_id"] == nil {
		t.Errorf("checkpoint payload's checkpoint %v (debug %v)", m["checkpoint"], debug)
	}
	if _, ok := m["parent_checkpoint"]; !ok {
		t.Errorf("checkpoint payload without parent_checkpoint (debug %v)", debug)
	}
}
