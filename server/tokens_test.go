package server

import (
	"encoding/json"
	"testing"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/server/internal/stream"
)

// TestTokenEncoderMatchesConvert: the messages-tuple events the token encoder writes are, byte
// for byte, what convert and json.Marshal write, for plain text (including text that needs
// escaping), tool call chunks, named messages, chunk metadata that changes, several messages
// interleaved, and subgraph events.
func TestTokenEncoderMatchesConvert(t *testing.T) {
	runMeta := map[string]any{"run_id": "r1", "thread_id": "t1", "assistant_id": "a", "graph_id": "g", "tag": "x"}
	ev := func(node, task string, step int, ns []string, m message.Message, md map[string]any) graph.Event {
		return graph.Event{Mode: graph.ModeMessages, Node: node, TaskID: task, Step: step, NS: ns, Data: graph.MessageChunk{Message: m, Metadata: md}}
	}
	nodeMD := map[string]any{"node": "model"}
	provMD := map[string]any{"node": "model", "provider": "openai", "model": "gpt"}
	ai := func(id, text string) message.Message {
		return message.Message{ID: id, Role: message.RoleAssistant, Content: text}
	}
	named := ai("m3", "hi")
	named.Name = "bot"
	call := message.Message{ID: "m4", Role: message.RoleAssistant, ToolCalls: []message.ToolCall{{ID: "c1", Name: "search", Arguments: json.RawMessage(`{"q":"x"}`)}}}
	events := []graph.Event{
		ev("model", "task1", 1, nil, ai("m1", "0@123 "), nodeMD),
		ev("model", "task1", 1, nil, ai("m1", "1@124 "), nodeMD),
		ev("model", "task1", 1, nil, ai("m1", `a "quoted" <b> & \ back`), nodeMD),
		ev("model", "task1", 1, nil, ai("m1", "héllo\u2028\n\t"), nodeMD),
		ev("model", "task1", 1, nil, ai("m1", ""), nodeMD),
		ev("model", "task1", 1, nil, ai("m1", "x"), provMD),
		ev("model", "task1", 1, nil, ai("m2", "other"), nodeMD),
		ev("model", "task1", 1, nil, ai("m1", "back to one"), provMD),
		ev("model", "task1", 1, nil, named, nodeMD),
		ev("model", "task1", 1, nil, call, nodeMD),
		ev("model", "task1", 1, nil, ai("", "no id"), nil),
		ev("model", "task1", 1, nil, ai("m5", "nested md"), map[string]any{"node": "model", "extra": map[string]any{"a": 1}}),
		ev("model", "task2", 3, []string{"sub:t9"}, ai("m6", "in a subgraph"), nodeMD),
	}
	for _, subgraphs := range []bool{false, true} {
		want := newConverter([]string{"messages-tuple"}, subgraphs, runMeta)
		got := newConverter([]string{"messages-tuple"}, subgraphs, runMeta)
		if !got.tupleOnly() {
			t.Fatal("a messages-tuple converter is not tupleOnly")
		}
		enc := &tokenEncoder{c: got}
		for i, e := range events {
			outs := want.convert(e)
			if len(e.NS) > 0 && !subgraphs {
				if len(outs) != 0 {
					t.Fatalf("event %d: convert sent a subgraph event without subgraphs", i)
				}
				continue
			}
			if len(outs) != 1 {
				t.Fatalf("event %d: convert gave %d events, want 1", i, len(outs))
			}
			wantData, err := json.Marshal(outs[0].data)
			if err != nil {
				t.Fatal(err)
			}
			data, ok := enc.encode(e, e.Data.(graph.MessageChunk))
			if !ok {
				t.Fatalf("event %d: the encoder declined", i)
			}
			if string(data.join()) != string(wantData) {
				t.Errorf("event %d (subgraphs %v):\n got %s\nwant %s", i, subgraphs, data.join(), wantData)
			}
			if name := got.name("messages", e.NS); name != outs[0].event {
				t.Errorf("event %d: name %q, convert's %q", i, name, outs[0].event)
			}
		}
	}
	for _, modes := range [][]string{{"messages"}, {"messages-tuple", "messages"}, {"events"}, {"values"}} {
		if newConverter(modes, false, nil).tupleOnly() {
			t.Errorf("modes %v: tupleOnly", modes)
		}
	}
}

// BenchmarkTokenEvent: one token's data, through convert and json.Marshal and through the
// token encoder.
func BenchmarkTokenEvent(b *testing.B) {
	runMeta := map[string]any{"run_id": "r1", "thread_id": "t1", "assistant_id": "a", "graph_id": "g"}
	e := graph.Event{Mode: graph.ModeMessages, Node: "model", TaskID: "task1", Step: 1,
		Data: graph.MessageChunk{Message: message.Message{ID: "m1", Role: message.RoleAssistant, Content: "17@1700000000123456789 "}, Metadata: map[string]any{"node": "model"}}}
	b.Run("convert", func(b *testing.B) {
		c := newConverter([]string{"messages-tuple"}, false, runMeta)
		b.ReportAllocs()
		for b.Loop() {
			for _, out := range c.convert(e) {
				if _, err := json.Marshal(out.data); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("encoder", func(b *testing.B) {
		enc := &tokenEncoder{c: newConverter([]string{"messages-tuple"}, false, runMeta)}
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := enc.encode(e, e.Data.(graph.MessageChunk)); !ok {
				b.Fatal("declined")
			}
		}
	})
}

// TestLogTail: an event appended in two parts (a token's own data and the tail it shares with
// its message's other tokens) reads back whole, in SSE and as data.
func TestLogTail(t *testing.T) {
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
