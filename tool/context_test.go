package tool_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/tool"
)

type caller struct {
	UserID string `json:"user_id"`
	Plan   string `json:"plan"`
}

type quota struct {
	Plan  string `json:"plan"`
	Limit int    `json:"limit"`
}

// quotaTool answers from the run's typed context, which is not among its arguments.
func quotaTool() tool.Tool {
	return tool.Must(tool.New("quota", "The caller's quota.", func(ctx context.Context, _ struct{}) (quota, error) {
		c, ok := tool.Context[caller](ctx)
		if !ok {
			return quota{}, nil
		}
		limit := 10
		if c.Plan == "pro" {
			limit = 1000
		}
		return quota{Plan: c.UserID + ":" + c.Plan, Limit: limit}, nil
	}))
}

// A tool the executor runs inside a graph's node reads the context the run was given.
func TestToolReadsTheRunContext(t *testing.T) {
	t.Parallel()
	exec, err := tool.NewExecutor([]tool.Tool{quotaTool()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	type state struct {
		Result string `json:"result"`
	}
	g := graph.New[state]()
	g.AddNode("tools", func(ctx context.Context, s state) (state, error) {
		outs, err := exec.Run(ctx, []message.ToolCall{{ID: "c1", Name: "quota", Arguments: json.RawMessage(`{}`)}})
		if err != nil {
			return state{}, err
		}
		return state{Result: outs[0].Message.Text()}, nil
	})
	g.AddEdge(graph.START, "tools").AddEdge("tools", graph.END)
	c, err := g.Compile(graph.CompileOptions{ContextType: reflect.TypeFor[caller]()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		opts []graph.RunOption
		want string
	}{
		{[]graph.RunOption{graph.WithContext(caller{UserID: "ann", Plan: "pro"})}, `{"plan":"ann:pro","limit":1000}`},
		{[]graph.RunOption{graph.WithContext(map[string]any{"user_id": "bob", "plan": "free"})}, `{"plan":"bob:free","limit":10}`},
		{nil, `{"plan":"","limit":0}`},
	} {
		out, err := c.Invoke(context.Background(), state{}, tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		if out.Result != tc.want {
			t.Errorf("result %s, want %s", out.Result, tc.want)
		}
	}
}

// Outside a graph, WithContext gives a tool the context a run would.
func TestToolWithContext(t *testing.T) {
	t.Parallel()
	q := quotaTool()
	res, err := q.Call(tool.WithContext(context.Background(), caller{UserID: "cy", Plan: "pro"}), json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Text(); got != `{"plan":"cy:pro","limit":1000}` {
		t.Fatalf("result %s", got)
	}
	if _, ok := tool.Context[caller](context.Background()); ok {
		t.Fatal("a context where none was given")
	}
	// A context of another shape is not a caller.
	if _, ok := tool.Context[caller](tool.WithContext(context.Background(), []int{1})); ok {
		t.Fatal("a list read as a caller")
	}
}
