package pack_test

// What analyst asks of the offline model, with its pack (moved here from model/offline's tests).

import (
	"testing"

	"github.com/trellis-go/trellis/apps/analyst/pack"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline/packtest"
)

var spec = packtest.Spec

// seedCase is one request and the call it must make.
type seedCase struct {
	name       string
	tools      []model.ToolSpec
	msgs       []message.Message
	tool, args string
}

func checkCalls(t *testing.T, cases []seedCase) {
	t.Helper()
	cs := make([]packtest.Case, len(cases))
	for i, c := range cases {
		cs[i] = packtest.Case{Name: c.name, Tools: c.tools, Msgs: c.msgs, Tool: c.tool, Args: c.args}
	}
	packtest.CheckCalls(t, pack.Pack, cs)
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
