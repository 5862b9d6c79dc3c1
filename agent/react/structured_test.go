package react_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/scripted"
	"github.com/trellis-go/trellis/tool"
)

var answerSchema = &model.Schema{Name: "answer", JSON: json.RawMessage(`{"type":"object","properties":{"zone":{"type":"string"},"price":{"type":"number"}},"required":["zone","price"]}`)}

// anthropicLike is a scripted model that says it is Anthropic, for the automatic choice.
type anthropicLike struct{ *scripted.Model }

func (anthropicLike) Identity() (string, string) { return "anthropic", "claude" }

// TestStructuredByTool: with the tool strategy the schema is offered as a tool; a call with bad
// arguments is sent back with what was wrong, a good one is the answer, with no extra call.
func TestStructuredByTool(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		m    func(*scripted.Model) model.Model
		opt  react.StructuredStrategy
	}{
		{"explicit", func(s *scripted.Model) model.Model { return s }, react.StructuredTool},
		{"auto for anthropic", func(s *scripted.Model) model.Model { return anthropicLike{s} }, react.StructuredAuto},
	} {
		s := scripted.New(
			scripted.ToolCalls(call("c1", "get_price", `{"year":2025,"zone":"NP15"}`)),
			scripted.ToolCalls(call("s1", "answer", `{"zone":"NP15"}`)),
			scripted.ToolCalls(call("s2", "answer", `{"zone":"NP15","price":41.2}`)),
		)
		g, err := react.New(c.m(s), &react.Options{Tools: []tool.Tool{priceTool()}, ResponseSchema: answerSchema, Structured: c.opt})
		if err != nil {
			t.Fatal(err)
		}
		out, err := g.Invoke(context.Background(), userState("NP15 price?"))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if string(out.Structured) != `{"zone":"NP15","price":41.2}` {
			t.Fatalf("%s: structured %s", c.name, out.Structured)
		}
		reqs := s.Requests()
		if len(reqs) != 3 {
			t.Fatalf("%s: %d model calls, want 3 (no extra structured call)", c.name, len(reqs))
		}
		if !hasTool(reqs[0].Tools, "answer") || reqs[0].Schema != nil {
			t.Fatalf("%s: the first request should offer the schema as a tool", c.name)
		}
		if s := fmtMsgs(reqs[2].Messages); !strings.Contains(s, "does not match the schema") {
			t.Fatalf("%s: the retry does not say what was wrong: %s", c.name, s)
		}
	}
}

// TestStructuredNativeStaysTheDefault: a model that is not Anthropic gets the last call with the
// schema, as before.
func TestStructuredNativeStaysTheDefault(t *testing.T) {
	t.Parallel()
	s := scripted.New(scripted.Text("NP15 is 41.2"), scripted.Text(`{"zone":"NP15","price":41.2}`))
	g, _ := react.New(s, &react.Options{ResponseSchema: answerSchema})
	out, err := g.Invoke(context.Background(), userState("NP15 price?"))
	if err != nil {
		t.Fatal(err)
	}
	if string(out.Structured) != `{"zone":"NP15","price":41.2}` || s.Requests()[1].Schema == nil || hasTool(s.Requests()[0].Tools, "answer") {
		t.Fatalf("structured %s; want the native second call", out.Structured)
	}
	if _, err := react.New(s, &react.Options{Structured: "json"}); err == nil {
		t.Fatal("an unknown strategy was accepted")
	}
	if _, err := react.New(s, &react.Options{ResponseSchema: &model.Schema{Name: "get_price", JSON: answerSchema.JSON}, Tools: []tool.Tool{priceTool()}}); err == nil {
		t.Fatal("a schema named like a tool was accepted")
	}
}

func hasTool(specs []model.ToolSpec, name string) bool {
	for _, s := range specs {
		if s.Name == name {
			return true
		}
	}
	return false
}
