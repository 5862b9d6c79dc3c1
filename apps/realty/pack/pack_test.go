package pack_test

// What realty asks of the offline model, with its pack (moved here from model/offline's tests).

import (
	"encoding/json"
	"testing"

	"github.com/trellis-go/trellis/apps/realty/pack"
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

var realtyTools = []model.ToolSpec{
	packtest.Spec("search_properties", "Search homes for sale by location, price and bedrooms.",
		`{"type":"object","properties":{"location":{"type":"string"},"min_price":{"type":"number"},"max_price":{"type":"number"},"bedrooms":{"type":"integer"}},"required":["location"]}`),
	packtest.Spec("get_property_details", "Get details of one property by its Zillow zpid.",
		`{"type":"object","properties":{"zpid":{"type":"string"}},"required":["zpid"]}`),
	packtest.Spec("save_search_criteria", "Save the user's search preferences for later.",
		`{"type":"object","properties":{"location":{"type":"string"},"max_price":{"type":"number"}}}`),
}

// TestSeedTools: requests from the specification reach the right tool with their arguments.
func TestSeedTools(t *testing.T) {
	packtest.CheckCalls(t, pack.Pack, []packtest.Case{
		{Name: "realty search", Tools: realtyTools, Msgs: []message.Message{message.User("Find 3 bedroom houses in Austin under 500k")},
			Tool: "search_properties", Args: `{"bedrooms":3,"location":"Austin","max_price":500000}`},
		{Name: "realty details by zpid", Tools: realtyTools, Msgs: []message.Message{message.User("Show details for zpid 2077123")},
			Tool: "get_property_details", Args: `{"zpid":"2077123"}`},
	})
}

// TestPointingAtListedHomes: "the cheapest", "the second one" and "that home" pick a home the
// last search listed, and fill its zpid.
func TestPointingAtListedHomes(t *testing.T) {
	found := `{"results":[{"zpid":"1001","price":"$520,000","sqft":1800},{"zpid":"1002","price":"$415,000","sqft":2400},{"zpid":"1003","price":"$610,000","sqft":1500}]}`
	call := message.ToolCall{ID: "c1", Name: "search_properties", Arguments: json.RawMessage(`{"location":"Austin"}`)}
	history := []message.Message{message.User("Find homes in Austin"), message.Assistant("", call), message.ToolResult("c1", "search_properties", found),
		message.Assistant("I found three homes: 1001, 1002 and 1003.")}
	for text, want := range map[string]string{
		"Show me details of the cheapest":    "1002",
		"details of the second one":          "1002",
		"get details for the biggest":        "1002",
		"show details of the most expensive": "1003",
		"details of the last one":            "1003",
		"show details of the first one":      "1001",
	} {
		_, args := packtest.ArgsOf(t, packtest.Ask(t, packtest.Model(pack.Pack), realtyTools[1:2], append(history, message.User(text))...))
		if args["zpid"] != want {
			t.Errorf("%q: zpid = %v, want %s", text, args["zpid"], want)
		}
	}
}
