package graph

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/message"
)

func TestMessageEncodingMatchesEncodingJSON(t *testing.T) {
	// The encoder writes message.Message's fields by hand: a new field must be added there.
	for typ, n := range map[reflect.Type]int{
		reflect.TypeFor[message.Message]():  9,
		reflect.TypeFor[message.Part]():     4,
		reflect.TypeFor[message.ToolCall](): 3,
	} {
		if typ.NumField() != n {
			t.Fatalf("%v has %d fields, the checkpoint encoder (encode_message.go) knows %d: encode the new ones there", typ, typ.NumField(), n)
		}
	}
	weird := "quote\" back\\ nl\n tab\t ctl\x01 bad\xff sep\u2028 é <html> & " + strings.Repeat("plain text ", 10)
	ms := []message.Message{
		{},
		message.User("hello"),
		{ID: "m1", Role: message.RoleAssistant, Content: weird, ToolCalls: []message.ToolCall{
			{ID: "c1", Name: "search", Arguments: json.RawMessage(` { "q" : "a <b>",  "n": [1, 2] } `)},
			{ID: "c2", Name: "none"},
		}},
		{ID: "m2", Role: message.RoleTool, Content: weird, ToolCallID: "c1", Name: "search", IsError: true,
			Metadata: map[string]any{"offline": true, "n": 3.5, "nested": map[string]any{"k": []any{"v", nil}}}},
		{Role: message.RoleUser, Parts: []message.Part{
			{Type: message.PartText, Text: weird},
			{Type: message.PartImage, ImageURL: "data", MIMEType: "image/png"},
		}},
		{Role: message.RoleSystem, Metadata: map[string]any{}},
	}
	var e blobEncoder
	got, err := e.marshal(ms)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(ms)
	var a, b []message.Message
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatalf("invalid JSON %s: %v", got, err)
	}
	if err := json.Unmarshal(want, &b); err != nil {
		t.Fatal(err)
	}
	// Arguments are raw JSON: the same value, though encoding/json escapes < > & in it.
	for i := range a {
		for j := range a[i].ToolCalls {
			var x, y any
			_ = json.Unmarshal(a[i].ToolCalls[j].Arguments, &x)
			_ = json.Unmarshal(b[i].ToolCalls[j].Arguments, &y)
			if !reflect.DeepEqual(x, y) {
				t.Fatalf("arguments %s, want %s", a[i].ToolCalls[j].Arguments, b[i].ToolCalls[j].Arguments)
			}
			a[i].ToolCalls[j].Arguments, b[i].ToolCalls[j].Arguments = nil, nil
		}
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("decoded differently:\n got %s\nwant %s", got, want)
	}
	if n := messagesSize(ms); n < len(got) {
		t.Logf("estimated %d bytes for %d (escapes): the buffer grew once", n, len(got))
	}

	// Updates of a messages channel are encoded alike, one message or a list of them.
	delta, err := e.marshalList([]reflect.Value{reflect.ValueOf(ms[2]), reflect.ValueOf(ms[3:])})
	if err != nil {
		t.Fatal(err)
	}
	var d []json.RawMessage
	if err := json.Unmarshal(delta, &d); err != nil || len(d) != 2 {
		t.Fatalf("delta %s: %v", delta, err)
	}

	bad := []message.Message{{Role: message.RoleAssistant, ToolCalls: []message.ToolCall{{ID: "c", Name: "n", Arguments: json.RawMessage(`{"unterminated":`)}}}}
	if _, err := e.marshal(bad); err == nil {
		t.Error("tool call arguments that are not JSON were stored")
	}
}
