package pack_test

// What listforge asks of the offline model, with its pack (moved here from model/offline's tests).

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/listforge/pack"
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

var listforgeTools = []model.ToolSpec{
	spec("getItemSnapshot", "Get current state of an item including title, description, attributes, media, and status",
		`{"type":"object","properties":{"itemId":{"type":"string","format":"uuid"}},"required":["itemId"]}`),
	spec("updateItemField", "Update a single field on an item with an audit reason",
		`{"type":"object","properties":{"itemId":{"type":"string","format":"uuid"},"field":{"type":"string","enum":["title","description","condition","defaultPrice","attributes"]},"value":{},"reason":{"type":"string"}},"required":["itemId","field","value","reason"]}`),
	spec("startResearchJob", "Queue a new research job for an item. Use when data is stale or user requests fresh research.",
		`{"type":"object","properties":{"itemId":{"type":"string","format":"uuid"},"type":{"type":"string","enum":["pricing_refresh","manual_request"]},"priority":{"type":"string","enum":["low","normal","high"],"default":"normal"}},"required":["itemId","type"]}`),
	spec("getResearch", "Get the most recent research conclusions for an item",
		`{"type":"object","properties":{"itemId":{"type":"string","format":"uuid"}},"required":["itemId"]}`),
}

// TestSeedTools: requests from the specification reach the right tool with their arguments.
func TestSeedTools(t *testing.T) {
	const item = "3f2b8c1e-9a4d-4e6f-8b7a-1c2d3e4f5a6b"
	checkCalls(t, []seedCase{
		{"listforge update title", listforgeTools, []message.Message{message.System("You help with item " + item + "."), message.User(`Change the title to "Vintage Nikon F3 Camera"`)},
			"updateItemField", `{"field":"title","itemId":"` + item + `","reason":"Requested by the user: Change the title to \"Vintage Nikon F3 Camera\"","value":"Vintage Nikon F3 Camera"}`},
		{"listforge fresh research", listforgeTools, []message.Message{message.System("Item " + item), message.User("Please start a fresh pricing research job with high priority")},
			"startResearchJob", `{"itemId":"` + item + `","priority":"high","type":"pricing_refresh"}`},
	})
}
