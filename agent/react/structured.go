package react

import (
	"context"
	"fmt"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
)

// StructuredStrategy is how a ReAct agent asks for its structured answer (Options.Structured).
type StructuredStrategy string

// The strategies of Options.Structured.
const (
	StructuredAuto   StructuredStrategy = ""
	StructuredNative StructuredStrategy = "native"
	StructuredTool   StructuredStrategy = "tool"
)

// resolve chooses the strategy for one call to m.
func (s StructuredStrategy) resolve(m model.Model) StructuredStrategy {
	if s != StructuredAuto {
		return s
	}
	if provider, _ := model.IdentityOf(m); provider == "anthropic" {
		return StructuredTool // its native structured output is a forced tool call: one in the loop saves a call
	}
	return StructuredNative
}

// schemaTool offers the response schema as a tool whose arguments are the answer.
func schemaTool(s *model.Schema) model.ToolSpec {
	desc := s.Description
	if desc == "" {
		desc = "Give your final answer in this structured form, once you have everything you need."
	}
	return model.ToolSpec{Name: s.SchemaName(), Description: desc, Parameters: s.JSON}
}

func findCall(calls []message.ToolCall, name string) (message.ToolCall, bool) {
	for _, c := range calls {
		if c.Name == name {
			return c, true
		}
	}
	return message.ToolCall{}, false
}

// answerSchemaCall answers the model's call of the response-schema tool: a valid answer ends the
// agent (the other calls of the turn are not run); an invalid one goes back to the model with
// what was wrong.
func answerSchemaCall(ctx context.Context, schema *model.Schema, c message.ToolCall, pending []message.ToolCall, modelEntry, exit string) (*graph.Command[State], error) {
	var msgs []message.Message
	next := exit
	if _, err := model.CheckStructured(schema, string(c.Arguments)); err != nil {
		msgs = append(msgs, message.ToolError(c.ID, c.Name, fmt.Sprintf("The answer does not match the schema: %v. Call %s again with arguments that match it.", err, c.Name)))
		next = modelEntry
	} else {
		msgs = append(msgs, message.ToolResult(c.ID, c.Name, "Structured answer recorded."))
	}
	for _, p := range pending {
		if p.ID != c.ID {
			msgs = append(msgs, message.ToolError(p.ID, p.Name, "Not run: it was called with the final answer."))
		}
	}
	if err := graph.Write(ctx, "messages", msgs); err != nil {
		return nil, err
	}
	return &graph.Command[State]{Goto: []graph.Target{graph.To(next)}}, nil
}
