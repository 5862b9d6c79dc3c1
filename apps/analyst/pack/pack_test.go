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
	packtest.CheckCalls(t, pack.Pack, []packtest.Case{
		{Name: "analyst web", Tools: analystTools, Msgs: []message.Message{message.User("Search the web for EV charging market share in Europe")},
			Tool: "web_search_tool", Args: `{"query":"EV charging market share in Europe"}`},
	})
}
