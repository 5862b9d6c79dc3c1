package server

import (
	"strings"
	"testing"
)

// TestConvertRunInputBothShapes sends a turn in trellis's shape and one in LangChain's to the
// same thread and reads the thread back in LangChain's shape.
func TestConvertRunInputBothShapes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tid := b.newThread(nil)
	run := func(msg any) map[string]any {
		var out map[string]any
		b.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "example", "input": map[string]any{"messages": []any{msg}}}, &out, 200)
		return out
	}
	run(map[string]any{"role": "user", "content": "What time is it in Tokyo?"})
	out := run(map[string]any{"type": "human", "content": "Convert 42 km to miles"})
	msgs, _ := out["messages"].([]any)
	var humans []string
	for _, m := range msgs {
		d := m.(map[string]any)
		if _, ok := d["role"]; ok {
			t.Fatalf("a message in trellis's shape: %v", d)
		}
		if d["type"] == "human" {
			humans = append(humans, d["content"].(string))
		}
	}
	if len(humans) != 2 || humans[0] != "What time is it in Tokyo?" || humans[1] != "Convert 42 km to miles" {
		t.Fatalf("human turns %q in %v", humans, msgs)
	}
	if last := msgs[len(msgs)-1].(map[string]any); last["type"] != "ai" || !strings.Contains(last["content"].(string), "mi") {
		t.Fatalf("last message %v", last)
	}
	// The thread record and update-state speak the same shape.
	var th map[string]any
	b.mustDo("GET", "/threads/"+tid, nil, &th, 200)
	vals, _ := th["values"].(map[string]any)
	if tm, _ := vals["messages"].([]any); len(tm) != len(msgs) || tm[0].(map[string]any)["type"] != "human" {
		t.Fatalf("thread values %v", th["values"])
	}
	b.mustDo("POST", "/threads/"+tid+"/state", map[string]any{"values": map[string]any{"messages": []any{map[string]any{"type": "ai", "content": "noted", "id": "manual"}}}}, nil, 200)
	var st ThreadState
	b.mustDo("GET", "/threads/"+tid+"/state", nil, &st, 200)
	sm := st.Values.(map[string]any)["messages"].([]any)
	if last := sm[len(sm)-1].(map[string]any); last["id"] != "manual" || last["type"] != "ai" {
		t.Fatalf("after update-state: %v", last)
	}
	// A message of an unknown type is a 400 naming the field.
	var e map[string]any
	b.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "example", "input": map[string]any{"messages": []any{map[string]any{"type": "robot", "content": "x"}}}}, &e, 400)
	if d, _ := e["detail"].(string); !strings.Contains(d, `messages[0]: unknown message type "robot"`) {
		t.Fatalf("error %v", e)
	}
}
