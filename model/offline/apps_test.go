package offline_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
)

// What applications ask of the offline model, on generic tools.

func argsOf(t *testing.T, resp *model.Response) (string, map[string]any) {
	t.Helper()
	if len(resp.Message.ToolCalls) != 1 {
		t.Fatalf("want one tool call, got %+v", resp.Message)
	}
	var a map[string]any
	if err := json.Unmarshal(resp.Message.ToolCalls[0].Arguments, &a); err != nil {
		t.Fatal(err)
	}
	return resp.Message.ToolCalls[0].Name, a
}

func TestAmountsInBothConventions(t *testing.T) {
	t.Parallel()
	tools := []model.ToolSpec{spec("update_budget", "Set the budget amount.", `{"type":"object","properties":{"amount":{"type":"number"}},"required":["amount"]}`)}
	for text, want := range map[string]float64{
		"set the budget to 180.000€":        180000,
		"set the budget to 180 000 €":       180000,
		"set the budget to $1,250,000":      1250000,
		"set the budget to 180k€":           180000,
		"set the budget to 1.2M":            1200000,
		"set the budget to €1.250.000,50":   1250000.5,
		"set the budget to 1,250,000.75":    1250000.75,
		"set the budget to 2,5 milhões":     2500000,
		"set the budget to 180 mil euros":   180000,
		"set the budget to 3.5 million USD": 3500000,
		"set the budget to 0.250":           0.25,
	} {
		_, args := argsOf(t, ask(t, setup(t), tools, message.User(text)))
		if args["amount"] != want {
			t.Errorf("%q: amount = %v, want %v", text, args["amount"], want)
		}
	}
}

func TestDatesNamedInText(t *testing.T) {
	t.Parallel()
	// setup's clock is Wednesday 2025-03-19.
	tools := []model.ToolSpec{spec("get_sales", "Sales between two dates.", `{"type":"object","properties":{"start_date":{"type":"string","format":"date"},"end_date":{"type":"string","format":"date"}},"required":["start_date","end_date"]}`)}
	for text, want := range map[string][2]string{
		"get sales for March 2024":            {"2024-03-01", "2024-03-31"},
		"vendas em março":                     {"2025-03-01", "2025-03-31"},
		"sales last week":                     {"2025-03-10", "2025-03-16"},
		"vendas da semana passada":            {"2025-03-10", "2025-03-16"},
		"vendas de 15 de janeiro":             {"2025-01-15", "2025-01-15"},
		"vendas de 15 de janeiro de 2024":     {"2024-01-15", "2024-01-15"},
		"sales on January 15, 2024":           {"2024-01-15", "2024-01-15"},
		"sales on 3rd February":               {"2025-02-03", "2025-02-03"},
		"vendas do mês passado":               {"2025-02-01", "2025-02-28"},
		"sales from 2025-01-02 to 2025-01-09": {"2025-01-02", "2025-01-09"},
	} {
		_, args := argsOf(t, ask(t, setup(t), tools, message.User(text)))
		if args["start_date"] != want[0] || args["end_date"] != want[1] {
			t.Errorf("%q: %v..%v, want %v", text, args["start_date"], args["end_date"], want)
		}
	}
}

func TestTyposMatchEnumsAndKnownNames(t *testing.T) {
	t.Parallel()
	tools := []model.ToolSpec{
		spec("book_cleaning", "Book a cleaning of a room.", `{"type":"object","properties":{"scope":{"type":"string","enum":["kitchen","bathroom","whole_house"]}},"required":["scope"]}`),
		spec("get_project_health", "Health of a project.", `{"type":"object","properties":{"project_name":{"type":"string"}},"required":["project_name"]}`),
		spec("get_stock", "Stock of a warehouse.", `{"type":"object","properties":{"zone":{"type":"string","enum":["W12","W15"]}},"required":["zone"]}`),
	}
	_, args := argsOf(t, ask(t, setup(t), tools[:1], message.User("book a cleaning of the bathrom")))
	if args["scope"] != "bathroom" {
		t.Errorf("bathrom: scope = %v", args["scope"])
	}
	_, args = argsOf(t, ask(t, setup(t), tools[:1], message.User("book a cleaning of the wole house")))
	if args["scope"] != "whole_house" {
		t.Errorf("wole house: scope = %v", args["scope"])
	}
	// A name seen earlier in the conversation corrects the user's spelling.
	_, args = argsOf(t, ask(t, setup(t), tools[1:2],
		message.User("Which projects do we have?"), message.Assistant(`We have "Blue Harbor" and "Ribeira Wind".`),
		message.User("health of Blu Harbr")))
	if args["project_name"] != "Blue Harbor" {
		t.Errorf("Blu Harbr: project_name = %v", args["project_name"])
	}
	// Codes are exact: W15 is not a typo of W12.
	_, args = argsOf(t, ask(t, setup(t), tools[2:], message.User("stock of W15")))
	if args["zone"] != "W15" {
		t.Errorf("W15: zone = %v", args["zone"])
	}
	// Far-off words are not taken for names.
	resp := ask(t, setup(t), tools[:1], message.User("book a cleaning of the garage"))
	if len(resp.Message.ToolCalls) == 1 && strings.Contains(string(resp.Message.ToolCalls[0].Arguments), "bathroom") {
		t.Errorf("garage became %s", resp.Message.ToolCalls[0].Arguments)
	}
}

// TestStructuredOutputAlwaysValid: several schemas, filled from the words and the tool results,
// typed as the schema says, every required field present.
func TestStructuredOutputAlwaysValid(t *testing.T) {
	t.Parallel()
	gen := func(schema string, msgs ...message.Message) map[string]any {
		t.Helper()
		resp, err := setup(t).Generate(context.Background(), &model.Request{Messages: msgs, Schema: &model.Schema{Name: "out", JSON: json.RawMessage(schema)}})
		if err != nil {
			t.Fatalf("schema %s: %v", schema, err)
		}
		if resp.Message.Metadata["offline"] != true {
			t.Errorf("structured answer not labelled offline: %v", resp.Message.Metadata)
		}
		var out map[string]any
		if err := json.Unmarshal(resp.Structured, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	// 1. From a tool result: numbers, enums, arrays, nested objects.
	listing := `{"listing":{"title":"T2 in Alfama","price":"245.000 €","area_m2":78,"condition":"Needs Renovation","features":["balcony","river view"],"address":{"city":"Lisboa","postcode":"1100-001"}}}`
	call := message.ToolCall{ID: "c1", Name: "get_listing", Arguments: json.RawMessage(`{}`)}
	out := gen(`{"type":"object","properties":{
		"title":{"type":"string"},
		"price":{"type":"number"},
		"area_m2":{"type":"integer"},
		"condition":{"type":"string","enum":["new","good","needs_renovation","ruin"]},
		"features":{"type":"array","items":{"type":"string"}},
		"address":{"type":"object","properties":{"city":{"type":"string"},"postcode":{"type":"string"}},"required":["city","postcode"]},
		"price_per_m2":{"type":"number"},
		"verdict":{"type":"string","enum":["buy","wait","avoid"]}
	},"required":["title","price","area_m2","condition","features","address","price_per_m2","verdict"]}`,
		message.User("Analyse this listing"), message.Assistant("", call), message.ToolResult("c1", "get_listing", listing))
	want := `{"address":{"city":"Lisboa","postcode":"1100-001"},"area_m2":78,"condition":"needs_renovation","features":["balcony","river view"],"price":245000,"price_per_m2":0,"title":"T2 in Alfama","verdict":"buy"}`
	if got := mustJSON(out); got != want {
		t.Errorf("from a tool result:\n got %s\nwant %s", got, want)
	}
	// 2. From the words only, with required fields the words do not give.
	out = gen(`{"type":"object","properties":{
		"budget":{"type":"number","description":"budget amount"},
		"city":{"type":"string"},
		"move_date":{"type":"string","format":"date"},
		"rooms":{"type":"integer","minimum":1},
		"contact":{"type":"string","format":"email"},
		"tags":{"type":"array","items":{"type":"string"},"minItems":1},
		"priority":{"type":"string","enum":["low","normal","high"]}
	},"required":["budget","city","move_date","rooms","contact","tags","priority"]}`,
		message.User("My budget is $1,250,000 for a house in Boston, moving on 15 January 2026"))
	if out["budget"] != 1250000.0 || out["city"] != "Boston" || out["move_date"] != "2026-01-15" || out["rooms"] != 1.0 || out["priority"] != "normal" {
		t.Errorf("from words: %s", mustJSON(out))
	}
	if tags, _ := out["tags"].([]any); len(tags) != 1 {
		t.Errorf("tags = %v, want minItems 1 honoured", out["tags"])
	}
	// 3. A $ref'd array of objects from a tool result of records.
	rows := `[{"sku":"A-1","upc":"012345678905","brand":"Lego","price":"$49.99"},{"sku":"B-2","upc":"036000291452","brand":"Hasbro","price":"$19.50"}]`
	call = message.ToolCall{ID: "c2", Name: "list_items", Arguments: json.RawMessage(`{}`)}
	out = gen(`{"type":"object","$defs":{"item":{"type":"object","properties":{"sku":{"type":"string"},"upc":{"type":"string"},"brand":{"type":"string"},"price":{"type":"number"}},"required":["sku","upc","brand","price"]}},
		"properties":{"items":{"type":"array","items":{"$ref":"#/$defs/item"}},"count":{"type":"integer"}},"required":["items","count"]}`,
		message.User("List the items"), message.Assistant("", call), message.ToolResult("c2", "list_items", `{"items":`+rows+`,"count":2}`))
	if got := mustJSON(out); got != `{"count":2,"items":[{"brand":"Lego","price":49.99,"sku":"A-1","upc":"012345678905"},{"brand":"Hasbro","price":19.5,"sku":"B-2","upc":"036000291452"}]}` {
		t.Errorf("records: %s", got)
	}
	// 4. A non-object root.
	resp, err := setup(t).Generate(context.Background(), &model.Request{Messages: []message.Message{message.User("nothing")}, Schema: &model.Schema{Name: "n", JSON: json.RawMessage(`{"type":"integer","minimum":3}`)}})
	if err != nil || string(resp.Structured) != "3" {
		t.Errorf("integer root: %s %v", resp.Structured, err)
	}
}

func TestOfflineLabelInMetadataAndText(t *testing.T) {
	t.Parallel()
	resp := ask(t, setup(t), nil, message.User("olá, tudo bem?"))
	if !offline.IsOffline(resp.Message.Metadata) || resp.Message.Metadata["offline_rule"] != "fallback" {
		t.Errorf("metadata = %v", resp.Message.Metadata)
	}
	if !strings.HasSuffix(resp.Message.Content, offline.Marker) || offline.Unlabelled(resp.Message) == resp.Message.Content {
		t.Errorf("visible label missing or not removable: %q", resp.Message.Content)
	}
}

// TestNoAmountsInAddresses: the digits of a web or email address (an item's ID in its URL) are
// not read as an amount.
func TestNoAmountsInAddresses(t *testing.T) {
	t.Parallel()
	tools := []model.ToolSpec{spec("calculate_shipping", "Calculate shipping costs for an order price.",
		`{"type":"object","properties":{"price":{"type":"number"}}}`)}
	for _, text := range []string{
		"calculate shipping for https://shop.example.com/item/50112233/",
		"shipping costs of www.shop.example.com/item/50112233",
		"shipping for the parcel, write to seller50112233@example.com",
	} {
		resp := ask(t, setup(t), tools, message.User(text))
		for _, c := range resp.Message.ToolCalls {
			if strings.Contains(string(c.Arguments), "50112233") {
				t.Errorf("%q: %s(%s) took the address's digits as an amount", text, c.Name, c.Arguments)
			}
		}
	}
	_, args := argsOf(t, ask(t, setup(t), tools, message.User("shipping costs of https://shop.example.com/item/50112233/ for 180.000€")))
	if args["price"] != 180000.0 {
		t.Errorf("price = %v beside an address, want 180000", args["price"])
	}
}
