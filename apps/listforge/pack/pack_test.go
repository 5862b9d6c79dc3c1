package pack_test

// What listforge asks of the offline model, with its pack (moved here from model/offline's tests).

import (
	"testing"

	"github.com/trellis-go/trellis/apps/listforge/pack"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline/packtest"
)

// TestPackIsValid: the embedded pack parses and validates.
func TestPackIsValid(t *testing.T) {
	if err := pack.Pack.Validate(); err != nil {
		t.Fatal(err)
	}
}

var listforgeTools = []model.ToolSpec{
	packtest.Spec("getItemSnapshot", "Get current state of an item including title, description, attributes, media, and status",
		`{"type":"object","properties":{"itemId":{"type":"string","format":"uuid"}},"required":["itemId"]}`),
	packtest.Spec("updateItemField", "Update a single field on an item with an audit reason",
		`{"type":"object","properties":{"itemId":{"type":"string","format":"uuid"},"field":{"type":"string","enum":["title","description","condition","defaultPrice","attributes"]},"value":{},"reason":{"type":"string"}},"required":["itemId","field","value","reason"]}`),
	packtest.Spec("startResearchJob", "Queue a new research job for an item. Use when data is stale or user requests fresh research.",
		`{"type":"object","properties":{"itemId":{"type":"string","format":"uuid"},"type":{"type":"string","enum":["pricing_refresh","manual_request"]},"priority":{"type":"string","enum":["low","normal","high"],"default":"normal"}},"required":["itemId","type"]}`),
	packtest.Spec("getResearch", "Get the most recent research conclusions for an item",
		`{"type":"object","properties":{"itemId":{"type":"string","format":"uuid"}},"required":["itemId"]}`),
}

// TestSeedTools: requests from the specification reach the right tool with their arguments.
func TestSeedTools(t *testing.T) {
	const item = "3f2b8c1e-9a4d-4e6f-8b7a-1c2d3e4f5a6b"
	packtest.CheckCalls(t, pack.Pack, []packtest.Case{
		{Name: "listforge update title", Tools: listforgeTools,
			Msgs: []message.Message{message.System("You help with item " + item + "."), message.User(`Change the title to "Vintage Nikon F3 Camera"`)},
			Tool: "updateItemField", Args: `{"field":"title","itemId":"` + item + `","reason":"Requested by the user: Change the title to \"Vintage Nikon F3 Camera\"","value":"Vintage Nikon F3 Camera"}`},
		{Name: "listforge fresh research", Tools: listforgeTools,
			Msgs: []message.Message{message.System("Item " + item), message.User("Please start a fresh pricing research job with high priority")},
			Tool: "startResearchJob", Args: `{"itemId":"` + item + `","priority":"high","type":"pricing_refresh"}`},
	})
}
