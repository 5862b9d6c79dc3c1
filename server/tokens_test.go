package server

import (
	"encoding/json"
	"testing"

	"github.com/trellis-go/trellis/server/internal/stream"
)

// TestLogTail: an event appended in two parts (a token's own data and the tail it shares with
// its message's other tokens) reads back whole, in SSE and as data.
func TestLogTail(t *testing.T) {
	t.Parallel()
	l := stream.NewLog()
	tail := json.RawMessage(`{"node":"model"}]`)
	l.AppendTail("messages", json.RawMessage(`[{"content":"a"},`), tail)
	l.AppendTail("messages", json.RawMessage(`[{"content":"b"},`), tail)
	l.Append("end", json.RawMessage(`null`))
	evs, _, _ := l.Since(0)
	if len(evs) != 3 {
		t.Fatalf("%d events, want 3", len(evs))
	}
	if got := string(evs[1].WholeData()); got != `[{"content":"b"},{"node":"model"}]` {
		t.Errorf("data %s", got)
	}
	if got := string(evs[2].WholeData()); got != `null` {
		t.Errorf("data of an event without a tail: %s", got)
	}
	var sse []byte
	for _, ev := range evs {
		sse = appendSSE(sse, ev)
	}
	want := "id: 1\nevent: messages\ndata: [{\"content\":\"a\"},{\"node\":\"model\"}]\n\n" +
		"id: 2\nevent: messages\ndata: [{\"content\":\"b\"},{\"node\":\"model\"}]\n\n" +
		"id: 3\nevent: end\ndata: null\n\n"
	if string(sse) != want {
		t.Errorf("SSE:\n%s\nwant:\n%s", sse, want)
	}
}
