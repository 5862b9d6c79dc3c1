package swarm_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/agent/swarm"
	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model/scripted"
	"github.com/trellis-go/trellis/tool"
)

func handoffCall(id, to string) scripted.Step {
	return scripted.ToolCalls(message.ToolCall{ID: id, Name: "transfer_to_" + to, Arguments: json.RawMessage(`{}`)})
}

func agentOf(t *testing.T, name string, m *scripted.Model, peers ...string) swarm.Agent {
	t.Helper()
	var tools []tool.Tool
	for _, p := range peers {
		tools = append(tools, swarm.Handoff(p, nil))
	}
	g, err := react.New(m, &react.Options{Name: name, Prompt: "You are " + name + ".", Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	return swarm.Agent{Name: name, Graph: g}
}

// TestSwarmHandoffsAcrossTurns: three agents; a handoff passes the turn to another agent at once,
// the thread remembers who is active, and the next turn goes straight to that agent.
func TestSwarmHandoffsAcrossTurns(t *testing.T) {
	t.Parallel()
	triage := scripted.New(handoffCall("h1", "billing"))
	billing := scripted.New(scripted.Text("Billing here: your invoice is paid."), handoffCall("h2", "tech"))
	tech := scripted.New(scripted.Text("Tech here: restart the router."), scripted.Text("Tech again: it should work now."))
	g, err := swarm.New([]swarm.Agent{
		agentOf(t, "triage", triage, "billing", "tech"),
		agentOf(t, "billing", billing, "tech"),
		agentOf(t, "tech", tech, "billing"),
	}, &swarm.Options{Compile: graph.CompileOptions{Saver: checkpoint.NewMemorySaver()}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, thread := context.Background(), graph.WithThread("swarm")
	turn := func(text, wantActive, wantAnswer string) swarm.State {
		t.Helper()
		out, err := g.Invoke(ctx, swarm.State{Messages: []message.Message{message.User(text)}}, thread)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if out.ActiveAgent != wantActive {
			t.Fatalf("%q: active agent %q, want %q", text, out.ActiveAgent, wantActive)
		}
		if last := out.Messages[len(out.Messages)-1].Text(); last != wantAnswer {
			t.Fatalf("%q: answered %q, want %q", text, last, wantAnswer)
		}
		return out
	}
	out := turn("Is my invoice paid?", "billing", "Billing here: your invoice is paid.")
	var handoff bool
	for _, m := range out.Messages {
		if m.Role == message.RoleTool && m.ToolCallID == "h1" && strings.Contains(m.Text(), "Transferred to billing") {
			handoff = true
		}
	}
	if !handoff {
		t.Fatalf("no tool message answers the handoff call: %+v", out.Messages)
	}
	turn("And my internet is down.", "tech", "Tech here: restart the router.")
	out = turn("Still down.", "tech", "Tech again: it should work now.")
	if n := len(triage.Requests()); n != 1 {
		t.Fatalf("triage answered %d times, want only the first message", n)
	}
	// Billing saw the whole conversation, the handoff included, with its own prompt.
	req := billing.Requests()[0]
	if req.Messages[0].Text() != "You are billing." || !strings.Contains(req.Messages[len(req.Messages)-1].Text(), "Transferred to billing") {
		t.Fatalf("billing's first request: %+v", req.Messages)
	}
	snap, err := g.State(ctx, checkpoint.Ref{ThreadID: "swarm"})
	if err != nil || snap.Values.ActiveAgent != "tech" {
		t.Fatalf("stored active agent %q (%v), want tech", snap.Values.ActiveAgent, err)
	}
	if len(out.Messages) < 8 {
		t.Fatalf("conversation has %d messages, want every turn kept", len(out.Messages))
	}
}

// TestSwarmChecks: mistakes in the agents are reported by New.
func TestSwarmChecks(t *testing.T) {
	t.Parallel()
	a := agentOf(t, "a", scripted.New())
	for _, c := range []struct {
		agents []swarm.Agent
		opts   *swarm.Options
	}{
		{nil, nil},
		{[]swarm.Agent{{Name: "", Graph: a.Graph}}, nil},
		{[]swarm.Agent{{Name: "b"}}, nil},
		{[]swarm.Agent{a, a}, nil},
		{[]swarm.Agent{a}, &swarm.Options{Default: "ghost"}},
	} {
		if _, err := swarm.New(c.agents, c.opts); err == nil {
			t.Errorf("agents %+v options %+v accepted", c.agents, c.opts)
		}
	}
}

// TestToolGotoEndsTheLoop: a tool's react.Command with a Goto sends the graph there instead of
// back to the model, and its update is applied.
func TestToolGotoEndsTheLoop(t *testing.T) {
	t.Parallel()
	done := tool.Must(tool.New("finish", "Ends the conversation.", func(context.Context, struct{}) (*tool.Result, error) {
		return &tool.Result{Content: "finished", Command: &react.Command{
			Update: tool.Update{"messages": []message.Message{message.Assistant("Goodbye.")}},
			Goto:   []graph.Target{graph.To(graph.END)},
		}}, nil
	}))
	m := scripted.New(scripted.ToolCalls(message.ToolCall{ID: "f1", Name: "finish", Arguments: json.RawMessage(`{}`)}))
	g, err := react.New(m, &react.Options{Tools: []tool.Tool{done}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := g.Invoke(context.Background(), react.State{Messages: []message.Message{message.User("bye")}})
	if err != nil {
		t.Fatalf("%v (a second model call means the goto was not followed)", err)
	}
	if last := out.Messages[len(out.Messages)-1].Text(); last != "Goodbye." {
		t.Fatalf("ended with %q", last)
	}
}

// TestSupervisorByHandoff: the lead hands to a worker, the worker's answer comes back to the lead,
// and the lead answers the user with it in view.
func TestSupervisorByHandoff(t *testing.T) {
	t.Parallel()
	lead := scripted.New(handoffCall("h1", "math"), scripted.Text("The answer is 42."))
	math := scripted.New(scripted.Text("6 times 7 is 42."))
	g, err := swarm.NewSupervisor(agentOf(t, "lead", lead, "math"), []swarm.Agent{agentOf(t, "math", math)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := g.Invoke(context.Background(), swarm.State{Messages: []message.Message{message.User("What is 6 times 7?")}})
	if err != nil {
		t.Fatal(err)
	}
	if last := out.Messages[len(out.Messages)-1].Text(); last != "The answer is 42." || out.ActiveAgent != "lead" {
		t.Fatalf("ended with %q by %q, want the lead's answer", last, out.ActiveAgent)
	}
	second := lead.Requests()[1].Messages
	if !strings.Contains(second[len(second)-1].Text(), "6 times 7 is 42.") {
		t.Fatalf("the lead's second request ends with %q, want the worker's answer", second[len(second)-1].Text())
	}
}
