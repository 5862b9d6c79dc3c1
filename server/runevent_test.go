package server_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/trellis-go/trellis/server"
)

func TestRunEventChunkText(t *testing.T) {
	t.Parallel()
	ev := func(name, data string) server.RunEvent {
		return server.RunEvent{Event: name, Data: json.RawMessage(data)}
	}
	for _, tc := range []struct {
		name string
		ev   server.RunEvent
		want string
	}{
		{"a model's token", ev("messages", `[{"type":"AIMessageChunk","content":"Hel"},{"langgraph_node":"agent"}]`), "Hel"},
		{"text blocks", ev("messages", `[{"type":"ai","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"b"}]},{}]`), "ab"},
		{"trellis's shape", ev("messages", `[{"role":"assistant","content":"hi"}]`), "hi"},
		{"a subgraph's", ev("messages|research:1", `[{"type":"AIMessageChunk","content":"sub"},{}]`), "sub"},
		{"a tool result", ev("messages", `[{"type":"tool","content":"42"},{}]`), ""},
		{"the user's message", ev("messages", `[{"role":"user","content":"question"}]`), ""},
		{"another mode", ev("values", `{"messages":[]}`), ""},
		{"accumulated partial", ev("messages/partial", `[{"type":"ai","content":"whole"}]`), ""},
		{"not a pair", ev("messages", `{"content":"x"}`), ""},
		{"empty", ev("messages", `[]`), ""},
	} {
		if got := tc.ev.ChunkText(); got != tc.want {
			t.Errorf("%s: ChunkText() = %q, want %q", tc.name, got, tc.want)
		}
	}
	c, ok := ev("messages|outer|inner", `[{"type":"AIMessageChunk","content":"x"},{"langgraph_node":"write"}]`).MessageChunk()
	if !ok || c.Node != "write" || !slices.Equal(c.Namespace, []string{"outer", "inner"}) || c.Type != "AIMessageChunk" || !c.FromAssistant() {
		t.Fatalf("MessageChunk() = %+v, %v", c, ok)
	}
	if c, ok := ev("messages", `[{"type":"tool","content":"42"},{"langgraph_node":"tools"}]`).MessageChunk(); !ok || c.FromAssistant() || c.Text != "42" || c.Node != "tools" {
		t.Fatalf("tool chunk: %+v, %v", c, ok)
	}
}
