package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/trellis-go/trellis/agent"
	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model/scripted"
	"github.com/trellis-go/trellis/tool"
	"github.com/trellis-go/trellis/tool/mcp"
)

type reportState struct {
	Messages []message.Message `json:"messages" reduce:"messages"`
	Topic    string            `json:"topic,omitempty"`
	Count    int               `json:"count,omitempty"`
	Extra    json.RawMessage   `json:"extra,omitempty"`
	Answer   string            `json:"answer,omitempty"`
	Internal string            `json:"internal,omitempty"`
}

// reportGraph answers from its input; topic "ask" makes it pause for a person.
func reportGraph(t *testing.T) *graph.Compiled[reportState] {
	t.Helper()
	g := graph.New[reportState]()
	g.AddNode("write", func(ctx context.Context, s reportState) (reportState, error) {
		if s.Topic == "ask" {
			if _, err := graph.Interrupt(ctx, "Which region?"); err != nil {
				return reportState{}, err
			}
		}
		info, _ := graph.InfoFrom(ctx)
		var question string
		if n := len(s.Messages); n > 0 {
			question = s.Messages[n-1].Content
		}
		return reportState{Answer: fmt.Sprintf("%d notes on %s for %v (asked: %s)", s.Count, s.Topic, info.Config["user"], question), Internal: "secret"}, nil
	})
	g.AddEdge(graph.START, "write")
	g.AddEdge("write", graph.END)
	c, err := g.Compile(graph.CompileOptions{Name: "report", Saver: checkpoint.NewMemorySaver(), InputKeys: []string{"messages", "topic", "count", "extra"}, OutputKeys: []string{"answer"}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// serveOverMCP serves tools over an in-memory MCP transport and returns them as the client sees them.
func serveOverMCP(t *testing.T, tools ...tool.Tool) map[string]tool.Tool {
	t.Helper()
	ctx := context.Background()
	exec, err := tool.NewExecutor(tools, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcp.NewServer(exec, &mcp.ServerOptions{
		CallInfo: func(context.Context, *sdk.CallToolRequest) (tool.CallInfo, error) {
			return tool.CallInfo{User: "ana", Tenant: "acme"}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	c, err := mcp.Connect(ctx, mcp.SDKTransport{Transport: ct, Name: "graphs"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	remote, err := c.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]tool.Tool{}
	for _, r := range remote {
		out[r.Spec().Name] = r
	}
	return out
}

func TestGraphToolSchema(t *testing.T) {
	gt, err := agent.GraphTool(reportGraph(t).Runnable(), nil)
	if err != nil {
		t.Fatal(err)
	}
	spec := gt.Spec()
	if spec.Name != "report" || !strings.Contains(spec.Description, `"report" graph`) || !strings.Contains(spec.Description, "answer") {
		t.Errorf("spec = %s: %s", spec.Name, spec.Description)
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(spec.Parameters, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Properties) != 4 || s.Properties["answer"] != nil || s.Properties["internal"] != nil || len(s.Required) != 0 {
		t.Errorf("parameters = %s", spec.Parameters)
	}
	if string(s.Properties["extra"]) != `{"description":"any JSON value"}` || !strings.Contains(string(s.Properties["count"]), `"integer"`) || !strings.Contains(string(s.Properties["messages"]), "anyOf") {
		t.Errorf("parameters = %s", spec.Parameters)
	}
	if _, err := agent.GraphTool(nil, nil); err == nil {
		t.Error("nil graph accepted")
	}
}

func TestGraphToolServedOverMCP(t *testing.T) {
	gt, err := agent.GraphTool(reportGraph(t).Runnable(), &agent.GraphToolOptions{Name: "write_report", Description: "Writes a short report on a topic.", NewThread: true})
	if err != nil {
		t.Fatal(err)
	}
	remote := serveOverMCP(t, gt)["write_report"]
	if remote == nil {
		t.Fatal("the MCP client does not list write_report")
	}
	if remote.Spec().Description != "Writes a short report on a topic." || !strings.Contains(string(remote.Spec().Parameters), `"topic"`) {
		t.Errorf("remote spec = %+v", remote.Spec())
	}
	ctx := context.Background()
	res, err := remote.Call(ctx, json.RawMessage(`{"messages":"How are we doing?","topic":"solar","count":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || string(res.Structured) != `{"answer":"2 notes on solar for ana (asked: How are we doing?)"}` {
		t.Fatalf("result = %+v (structured %s)", res, res.Structured)
	}
	// Messages as a list work too.
	res, err = remote.Call(ctx, json.RawMessage(`{"messages":[{"role":"user","content":"listed"}],"topic":"wind"}`))
	if err != nil || !strings.Contains(string(res.Structured), "(asked: listed)") {
		t.Fatalf("result = %+v, %v", res, err)
	}
	// Bad arguments are caught with a precise message before the graph runs.
	_, err = remote.Call(ctx, json.RawMessage(`{"topic":"solar","count":"two"}`))
	if !errors.Is(err, tool.ErrInvalidArguments) || !strings.Contains(err.Error(), "count") {
		t.Errorf("bad count: %v", err)
	}
	res, err = remote.Call(ctx, json.RawMessage(`{"answer":"forged"}`))
	if err == nil && !res.IsError {
		t.Errorf("an output key was accepted as input: %+v", res)
	}
	// An interrupt becomes an error result that says what was asked.
	res, err = remote.Call(ctx, json.RawMessage(`{"topic":"ask"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Content, "for human input") || !strings.Contains(res.Content, "Which region?") || !strings.Contains(res.Content, `on thread "tool-`) {
		t.Errorf("interrupt result = %+v", res)
	}
}

func TestReActAgentAsMCPTool(t *testing.T) {
	helper, err := react.New(scripted.New(scripted.Text("Hello from the agent.")), &react.Options{Name: "helper"})
	if err != nil {
		t.Fatal(err)
	}
	gt, err := agent.GraphTool(helper.Runnable(), &agent.GraphToolOptions{Description: "Asks the helper agent."})
	if err != nil {
		t.Fatal(err)
	}
	remote := serveOverMCP(t, gt)["helper"]
	res, err := remote.Call(context.Background(), json.RawMessage(`{"messages":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	var out react.State
	if err := json.Unmarshal(res.Structured, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Messages) != 2 || out.Messages[1].Content != "Hello from the agent." {
		t.Errorf("output = %s", res.Structured)
	}
}
