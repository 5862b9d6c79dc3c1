package react_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model/scripted"
	"github.com/trellis-go/trellis/tool"
)

// TestReActContextHookIsPerCallAndNeverStored: the hook runs before every model call with the
// state of that moment and the run's config; every request carries the context built for it, and
// none of it lands in the stored conversation.
func TestReActContextHookIsPerCallAndNeverStored(t *testing.T) {
	t.Parallel()
	m := scripted.New(
		scripted.ToolCalls(call("c1", "get_price", `{"year":2025,"zone":"NP15"}`)),
		scripted.Text("NP15 averaged 41.2."),
	)
	calls := 0
	hook := func(_ context.Context, in react.PromptInput) ([]message.Message, error) {
		calls++
		user, _ := in.Config["user"].(string)
		return []message.Message{
			message.System(fmt.Sprintf("You help %s. Call %d.", user, in.Call)),
			message.User(fmt.Sprintf("[memory] %s prefers NP15; the conversation has %d messages.", user, len(in.State.Messages))),
		}, nil
	}
	g, err := react.New(m, &react.Options{Tools: []tool.Tool{priceTool()}, Prompt: "Base prompt.", Context: hook})
	if err != nil {
		t.Fatal(err)
	}
	out, err := g.Invoke(context.Background(), react.State{Messages: []message.Message{message.User("NP15 in 2025?")}}, graph.WithConfig(map[string]any{"user": "ana"}))
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Fatalf("hook ran %d times, want once per model call (2)", calls)
	}
	reqs := m.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	for i, want := range []struct{ sys, mem string }{
		{"You help ana. Call 0.", "has 1 messages"},
		{"You help ana. Call 1.", "has 3 messages"},
	} {
		msgs := reqs[i].Messages
		if msgs[0].Text() != "Base prompt." || msgs[1].Text() != want.sys || !strings.Contains(msgs[2].Text(), want.mem) {
			t.Errorf("call %d starts with %q / %q / %q, want the base prompt, %q and memory saying %q", i, msgs[0].Text(), msgs[1].Text(), msgs[2].Text(), want.sys, want.mem)
		}
		if n := strings.Count(fmtMsgs(msgs), "[memory]"); n != 1 {
			t.Errorf("call %d carries the injected context %d times, want 1 (fresh, not accumulated)", i, n)
		}
	}
	for _, msg := range out.Messages {
		if msg.Role == message.RoleSystem || strings.Contains(msg.Text(), "[memory]") || strings.Contains(msg.Text(), "You help") {
			t.Errorf("stored conversation holds injected context: %+v", msg)
		}
	}
	if len(out.Messages) != 4 {
		t.Errorf("stored %d messages, want 4 (user, call, result, answer)", len(out.Messages))
	}
}

func TestReActContextHookErrorFailsTheRun(t *testing.T) {
	t.Parallel()
	g, err := react.New(scripted.New(scripted.Text("x")), &react.Options{Context: func(context.Context, react.PromptInput) ([]message.Message, error) {
		return nil, fmt.Errorf("memory store down")
	}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Invoke(context.Background(), react.State{Messages: []message.Message{message.User("hi")}})
	if err == nil || !strings.Contains(err.Error(), "memory store down") || !strings.Contains(err.Error(), "context") {
		t.Fatalf("err = %v, want the hook's error explained", err)
	}
}

func fmtMsgs(msgs []message.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Text())
		b.WriteString("\n")
	}
	return b.String()
}

// TestReActReturnDirect: a return-direct tool's result is the answer; the model is not called again.
func TestReActReturnDirect(t *testing.T) {
	t.Parallel()
	m := scripted.New(
		scripted.ToolCalls(call("c1", "get_price", `{"year":2025,"zone":"NP15"}`)),
		scripted.Text("must not be reached"),
	)
	g, err := react.New(m, &react.Options{Tools: []tool.Tool{priceTool()}, ReturnDirect: []string{"get_price"}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := g.Invoke(context.Background(), react.State{Messages: []message.Message{message.User("NP15 in 2025?")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Requests()) != 1 || m.Remaining() != 1 {
		t.Fatalf("model called %d times, want 1", len(m.Requests()))
	}
	last := out.Messages[len(out.Messages)-1]
	if last.Role != message.RoleAssistant || last.Text() != "NP15 averaged 41.2" || last.Metadata["return_direct"] != "get_price" {
		t.Fatalf("last message = %+v, want the tool's result as the answer", last)
	}
	if _, err := react.New(m, &react.Options{Tools: []tool.Tool{priceTool()}, ReturnDirect: []string{"nope"}}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("unknown return-direct tool: err = %v", err)
	}
}
