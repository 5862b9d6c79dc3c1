package pack_test

// What analyst asks of the offline model, with its pack (moved here from model/offline's tests).

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/analyst/pack"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
)

func spec(name, desc, params string) model.ToolSpec {
	return model.ToolSpec{Name: name, Description: desc, Parameters: json.RawMessage(params)}
}

// setup is the offline model with the pack, on a fixed clock (a Wednesday).
func setup(t *testing.T) *offline.Model {
	t.Helper()
	now := time.Date(2025, 3, 19, 10, 0, 0, 0, time.UTC)
	return offline.New(&offline.Options{Now: func() time.Time { return now }, Packs: []*offline.Pack{pack.Pack}})
}

func ask(t *testing.T, m *offline.Model, tools []model.ToolSpec, msgs ...message.Message) *model.Response {
	t.Helper()
	resp, err := m.Generate(context.Background(), &model.Request{Messages: msgs, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// seedCase is one request and the call it must make.
type seedCase struct {
	name  string
	tools []model.ToolSpec
	msgs  []message.Message
	tool  string
	args  string
}

func checkCalls(t *testing.T, cases []seedCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := ask(t, setup(t), c.tools, c.msgs...)
			if len(resp.Message.ToolCalls) != 1 {
				t.Fatalf("want one call to %s, got %q with calls %v", c.tool, resp.Message.Content, resp.Message.ToolCalls)
			}
			tc := resp.Message.ToolCalls[0]
			if tc.Name != c.tool || string(tc.Arguments) != c.args {
				t.Errorf("got %s(%s)\nwant %s(%s)", tc.Name, tc.Arguments, c.tool, c.args)
			}
		})
	}
}

// TestPackIsValid: the embedded pack parses and validates.
func TestPackIsValid(t *testing.T) {
	if err := pack.Pack.Validate(); err != nil {
		t.Fatal(err)
	}
}

var analystTools = []model.ToolSpec{
	spec("rag_tool", "Search the company knowledge base documents by similarity.",
		`{"type":"object","properties":{"query":{"type":"string"},"top_k":{"type":"integer","default":5}},"required":["query"]}`),
	spec("web_search_tool", "Search the web for current information.",
		`{"type":"object","properties":{"query":{"type":"string"},"max_results":{"type":"integer","default":5}},"required":["query"]}`),
	spec("Question", "Ask the user a clarifying question.",
		`{"type":"object","properties":{"content":{"type":"string"}},"required":["content"]}`),
}

// TestSeedTools: requests from the specification reach the right tool with their arguments.
func TestSeedTools(t *testing.T) {
	checkCalls(t, []seedCase{
		{"analyst web", analystTools, []message.Message{message.User("Search the web for EV charging market share in Europe")},
			"web_search_tool", `{"query":"EV charging market share in Europe"}`},
	})
}
