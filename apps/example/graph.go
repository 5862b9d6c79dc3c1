package example

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
)

// InterviewState is the state of the assistant "interview".
type InterviewState struct {
	Messages []message.Message `json:"messages" reduce:"messages"`
	Name     string            `json:"name,omitempty"`
}

// Interview builds the assistant "interview": its node "ask" pauses at graph.Interrupt with a
// question ({"question": ...}) and goes on with the value the run is resumed with
// (Command({resume: "Ada"}) over the API), which "greet" answers. It shows and tests an
// interrupt raised from inside a node, without a model, where the example agent's approvals
// are raised by the ReAct agent's tool node.
func Interview(opts graph.CompileOptions) (*graph.Compiled[InterviewState], error) {
	g := graph.New[InterviewState]()
	g.AddNode("ask", func(ctx context.Context, s InterviewState) (InterviewState, error) {
		v, err := graph.Interrupt(ctx, map[string]any{"question": "What is your name?"})
		if err != nil {
			return InterviewState{}, err
		}
		name := strings.TrimSpace(fmt.Sprint(v))
		if m, ok := v.(map[string]any); ok { // an inbox-style answer {"name": ...} or {"args": ...}
			for _, k := range []string{"name", "args", "answer"} {
				if s, ok := m[k].(string); ok {
					name = strings.TrimSpace(s)
					break
				}
			}
		}
		if name == "" {
			return InterviewState{}, fmt.Errorf("the answer to the question is empty: resume with a name, e.g. Command({resume: \"Ada\"})")
		}
		return InterviewState{Name: name}, nil
	})
	g.AddNode("greet", func(ctx context.Context, s InterviewState) (InterviewState, error) {
		return InterviewState{Messages: []message.Message{message.Assistant("Nice to meet you, " + s.Name + ".")}}, nil
	})
	g.AddEdge(graph.START, "ask").AddEdge("ask", "greet").AddEdge("greet", graph.END)
	if opts.Name == "" {
		opts.Name = "interview"
	}
	return g.Compile(opts)
}

// ExampleConfig is what a run of the assistant "example" reads from its configurable values,
// declared as the graph's config type (its config_schema).
type ExampleConfig struct {
	// ApproveTools asks before tool calls: true before every call, a tool's name (or a list of
	// names) before those tools' calls (react.ApproveKey).
	ApproveTools any `json:"approve_tools,omitempty"`
}

var exampleConfigType = reflect.TypeFor[ExampleConfig]()
