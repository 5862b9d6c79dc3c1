package lcwire

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/message"
)

func TestConvertMessageRoundTrip(t *testing.T) {
	for _, m := range []message.Message{
		{ID: "u1", Role: message.RoleUser, Content: "hi"},
		{ID: "s1", Role: message.RoleSystem, Content: "be brief"},
		{ID: "a1", Role: message.RoleAssistant, Content: "let me look", ToolCalls: []message.ToolCall{{ID: "c1", Name: "clock", Arguments: json.RawMessage(`{"city":"Tokyo"}`)}},
			Metadata: map[string]any{"model": "offline"}},
		{ID: "t1", Role: message.RoleTool, Content: "no such city", ToolCallID: "c1", Name: "clock", IsError: true},
		{ID: "t2", Role: message.RoleTool, Content: "12:00", ToolCallID: "c1", Name: "clock"},
		{ID: "p1", Role: message.RoleUser, Parts: []message.Part{{Type: message.PartText, Text: "what is this?"}, {Type: message.PartImage, ImageURL: "https://x/y.png"},
			{Type: message.PartImage, ImageURL: "aGVsbG8=", MIMEType: "image/png"}}},
		message.Remove("gone"),
	} {
		raw, err := json.Marshal(FromMessage(m))
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		if _, ok := v.(map[string]any)["role"]; ok {
			t.Fatalf("%s has a role field: %s", m.ID, raw)
		}
		back, err := ToMessage(v)
		if err != nil {
			t.Fatalf("%s: %v (%s)", m.ID, err, raw)
		}
		if !reflect.DeepEqual(back, m) {
			t.Fatalf("round trip of %s:\n got %+v\nwant %+v\n via %s", m.ID, back, m, raw)
		}
	}
}

func TestConvertLangChainShape(t *testing.T) {
	m := message.Assistant("", message.ToolCall{ID: "c1", Name: "calc", Arguments: json.RawMessage(`{"x": 1}`)},
		message.ToolCall{ID: "c2", Name: "calc", Arguments: json.RawMessage(`{"x": `)})
	raw, _ := json.Marshal(FromMessage(m))
	var d struct {
		Type      string `json:"type"`
		ToolCalls []struct {
			ID   string         `json:"id"`
			Args map[string]any `json:"args"`
			Type string         `json:"type"`
		} `json:"tool_calls"`
		Invalid []struct {
			ID   string `json:"id"`
			Args string `json:"args"`
		} `json:"invalid_tool_calls"`
		Kwargs map[string]any `json:"additional_kwargs"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if d.Type != "ai" || len(d.ToolCalls) != 1 || d.ToolCalls[0].Args["x"] != 1.0 || d.ToolCalls[0].Type != "tool_call" || d.Kwargs == nil {
		t.Fatalf("ai message: %s", raw)
	}
	if len(d.Invalid) != 1 || d.Invalid[0].ID != "c2" || d.Invalid[0].Args != `{"x": ` {
		t.Fatalf("a call with broken arguments is not an invalid_tool_call: %s", raw)
	}
	chunk, _ := json.Marshal(FromChunk(message.Message{ID: "a", Role: message.RoleAssistant, Content: "to"}))
	if !strings.Contains(string(chunk), `"type":"AIMessageChunk"`) || !strings.Contains(string(chunk), `"tool_call_chunks":[]`) {
		t.Fatalf("chunk: %s", chunk)
	}
}

func TestConvertMessageInputShapes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want message.Message
	}{
		{`"hi"`, message.User("hi")},
		{`["user", "hi"]`, message.User("hi")},
		{`["ai", "hello"]`, message.Assistant("hello")},
		{`{"role": "user", "content": "hi"}`, message.User("hi")},
		{`{"type": "human", "content": "hi", "id": "x"}`, message.Message{ID: "x", Role: message.RoleUser, Content: "hi"}},
		{`{"type": "chat", "role": "assistant", "content": "ok"}`, message.Assistant("ok")},
		{`{"type": "ai", "content": "", "tool_calls": [{"id": "c", "name": "f", "args": {"a": 1}}]}`,
			message.Assistant("", message.ToolCall{ID: "c", Name: "f", Arguments: json.RawMessage(`{"a":1}`)})},
		{`{"type": "ai", "content": "", "tool_calls": [{"id": "c", "name": "f", "arguments": "{\"a\":1}"}]}`,
			message.Assistant("", message.ToolCall{ID: "c", Name: "f", Arguments: json.RawMessage(`{"a":1}`)})},
		{`{"type": "human", "content": [{"type": "text", "text": "see"}, {"type": "image_url", "image_url": "https://x"}]}`,
			message.Message{Role: message.RoleUser, Parts: []message.Part{{Type: message.PartText, Text: "see"}, {Type: message.PartImage, ImageURL: "https://x"}}}},
	} {
		var v any
		dec := json.NewDecoder(strings.NewReader(tc.in))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		got, err := ToMessage(v)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Fatalf("%s:\n got %+v\nwant %+v", tc.in, got, tc.want)
		}
	}
	for in, want := range map[string]string{
		`{"type": "robot", "content": "x"}`:                       `unknown message type "robot"`,
		`{"content": "x"}`:                                        `needs "type"`,
		`{"type": "human", "content": 3}`:                         `"content" must be a string or a list`,
		`{"type": "ai", "tool_calls": [{"id": "c", "args": {}}]}`: `tool_calls[0]: a tool call needs a "name"`,
		`{"type": "ai", "tool_calls": {"id": "c"}}`:               `"tool_calls" must be a list`,
		`{"type": "human", "content": [{"type": "audio"}]}`:       `content[0]: content block type "audio"`,
		`{"type": "remove"}`:                                      `needs an "id"`,
		`["user", "hi", "there"]`:                                 `[type, content] pair`,
		`42`:                                                      `not a number`,
	} {
		var v any
		_ = json.Unmarshal([]byte(in), &v)
		_, err := ToMessage(v)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: err %v, want %q", in, err, want)
		}
	}
}

type lcInner struct {
	Note string `json:"note,omitempty"`
}

type lcState struct {
	lcInner
	Messages []message.Message            `json:"messages"`
	ByName   map[string][]message.Message `json:"by_name,omitempty"`
	Last     *message.Message             `json:"last,omitempty"`
	Any      any                          `json:"any"`
	Count    int64                        `json:"count,string"`
	When     time.Time                    `json:"when"`
	Skip     string                       `json:"-"`
	Empty    []string                     `json:"empty,omitempty"`
	Plain    string
	hidden   int
}

func TestConvertAPIValue(t *testing.T) {
	m := message.User("hi")
	m.ID = "1"
	s := lcState{lcInner: lcInner{Note: "n"}, Messages: []message.Message{m}, ByName: map[string][]message.Message{"a": {m}},
		Any: []message.Message{m}, Count: 7, When: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), Skip: "x", Plain: "p", hidden: 1}
	raw, err := json.Marshal(Value(s))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	_ = json.Unmarshal(raw, &got)
	for _, path := range [][]any{{"messages", 0}, {"by_name", "a", 0}, {"any", 0}} {
		var v any = got
		for _, p := range path {
			switch k := p.(type) {
			case string:
				v = v.(map[string]any)[k]
			case int:
				v = v.([]any)[k]
			}
		}
		if d, _ := v.(map[string]any); d["type"] != "human" || d["content"] != "hi" || d["id"] != "1" {
			t.Fatalf("%v is not a LangChain message: %s", path, raw)
		}
	}
	// Everything else is what encoding/json writes.
	plain, _ := json.Marshal(s)
	var want map[string]any
	_ = json.Unmarshal(plain, &want)
	for _, k := range []string{"messages", "by_name", "any"} {
		delete(got, k)
		delete(want, k)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Value:\n got %v\nwant %v", got, want)
	}
	// A value without messages passes through untouched.
	type plainState struct{ A int }
	if v := Value(plainState{A: 1}); v != (plainState{A: 1}) {
		t.Fatalf("passed through as %#v", v)
	}
}

func TestConvertInputFromAPI(t *testing.T) {
	typ := reflect.TypeFor[lcState]()
	out, err := Input(typ, json.RawMessage(`{"messages": {"type": "human", "content": "one"}, "by_name": {"a": ["two", ["ai", "three"]]}, "Plain": "p"}`))
	if err != nil {
		t.Fatal(err)
	}
	var s lcState
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(s.Messages) != 1 || s.Messages[0].Role != message.RoleUser || s.Messages[0].Content != "one" {
		t.Fatalf("messages %+v", s.Messages)
	}
	if b := s.ByName["a"]; len(b) != 2 || b[0].Role != message.RoleUser || b[1].Role != message.RoleAssistant || b[1].Content != "three" || s.Plain != "p" {
		t.Fatalf("by_name %+v", s)
	}
	_, err = Input(typ, json.RawMessage(`{"messages": [{"type": "human", "content": "a"}, {"type": "martian"}]}`))
	if err == nil || !strings.Contains(err.Error(), `messages[1]: unknown message type "martian"`) {
		t.Fatalf("err %v", err)
	}
}

// BenchmarkAPIValue measures rendering a state of 20 messages for the API, encoding included,
// against encoding it as it is (go test -run X -bench APIValue ./server/internal/lcwire/).
func BenchmarkAPIValue(b *testing.B) {
	s := lcState{Count: 1}
	for i := range 20 {
		m := message.Assistant("some words of an answer", message.ToolCall{ID: "c", Name: "f", Arguments: json.RawMessage(`{"a":1}`)})
		m.ID = strings.Repeat("x", i+1)
		s.Messages = append(s.Messages, m)
	}
	b.Run("langchain", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(Value(s)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(s); err != nil {
				b.Fatal(err)
			}
		}
	})
}
