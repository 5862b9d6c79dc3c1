package react_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model/scripted"
	"github.com/trellis-go/trellis/tool"
)

func approvalAgent(t *testing.T) *graph.Compiled[react.State] {
	t.Helper()
	m := scripted.New(
		scripted.ToolCalls(call("c1", "get_price", `{"year":2025,"zone":"NP15"}`)),
		scripted.Text("done"),
	)
	g, err := react.New(m, &react.Options{Tools: []tool.Tool{priceTool()}, Approve: []string{"get_price"},
		Compile: graph.CompileOptions{Saver: checkpoint.NewMemorySaver()}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestInboxWireShape: the run pauses with a one-element list in the Agent Inbox's shape, and a
// one-element list of responses resumes it.
func TestInboxWireShape(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	in := react.State{Messages: []message.Message{message.User("NP15 in 2025?")}}
	cases := []struct {
		resume   string
		wantTool string // the tool message's content
		wantErr  string
	}{
		{resume: `[{"type":"accept","args":null}]`, wantTool: "NP15 averaged 41.2"},
		{resume: `[{"type":"edit","args":{"action":"get_price","args":{"year":2024,"zone":"SP15"}}}]`, wantTool: "SP15 averaged 41.2"},
		{resume: `[{"type":"response","args":"Use last year's figure."}]`, wantTool: "answered instead: Use last year's figure."},
		{resume: `{"type":"ignore"}`, wantTool: "ignored it"},
		{resume: `[{"type":"accept"},{"type":"accept"}]`, wantErr: "exactly one"},
		{resume: `[{"type":"approve"}]`, wantErr: `has type "approve"`},
		{resume: `"yes"`, wantErr: "is not a response"},
	}
	for i, c := range cases {
		g := approvalAgent(t)
		thread := graph.WithThread("t")
		_, err := g.Invoke(ctx, in, thread)
		var ie *graph.InterruptedError
		if !errors.As(err, &ie) || len(ie.Interrupts) != 1 {
			t.Fatalf("case %d: err = %v, want one interrupt", i, err)
		}
		wire, _ := json.Marshal(ie.Interrupts[0].Value)
		var reqs []map[string]any
		if err := json.Unmarshal(wire, &reqs); err != nil || len(reqs) != 1 {
			t.Fatalf("interrupt value %s is not a one-element list", wire)
		}
		want := `{"action_request":{"action":"get_price","args":{"year":2025,"zone":"NP15"}},"config":{"allow_accept":true,"allow_edit":true,"allow_ignore":true,"allow_respond":true}`
		if got := mustMarshal(reqs[0]); !strings.HasPrefix(got, want) || reqs[0]["description"] == "" {
			t.Fatalf("request %s, want %s plus a description", got, want)
		}
		out, err := g.Invoke(ctx, react.State{}, thread, graph.Resume(json.RawMessage(c.resume)))
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("resume %s: err = %v, want %q", c.resume, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("resume %s: %v", c.resume, err)
		}
		found := false
		for _, m := range out.Messages {
			if m.Role == message.RoleTool && strings.Contains(m.Content, c.wantTool) {
				found = true
			}
		}
		if !found {
			t.Errorf("resume %s: no tool message with %q in %+v", c.resume, c.wantTool, out.Messages)
		}
	}
}

func mustMarshal(v any) string { b, _ := json.Marshal(v); return string(b) }
