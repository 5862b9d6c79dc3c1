package offline_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
)

// The tools below follow the argument schemas of the five specifications in shared/seeds.

func spec(name, desc, params string) model.ToolSpec {
	return model.ToolSpec{Name: name, Description: desc, Parameters: json.RawMessage(params)}
}

var vesperTools = []model.ToolSpec{
	spec("get_average_annual_price", "Returns the average day-ahead price ($/MWh) for a given vendor, market, hub-zone, and forecast year. Optionally filtered by As-Of date.",
		`{"type":"object","properties":{"vendor":{"type":"string","description":"Vendor name: 'Ascend' or 'Hitachi'"},"market":{"type":"string","description":"Market: 'CAISO', 'ERCOT', 'MISO', 'PJM'"},"hub_zone":{"type":"string","description":"Hub-Zone: e.g. 'NP15', 'SP15', 'HB_NORTH'"},"year":{"type":"integer","description":"Forecast year, e.g. 2025"},"asof":{"type":["string","null"],"description":"As-Of identifier, e.g. 'Jan_2025'"}},"required":["vendor","market","hub_zone","year"]}`),
	spec("list_available_curves", "Lists available vendor curve files. Use when user wants to know what combinations are available or when required filters are missing.",
		`{"type":"object","properties":{"vendor":{"type":"string"},"market":{"type":"string"},"hub_zone":{"type":"string"}}}`),
	spec("compare_hub_zones", "Compares average day-ahead prices between two hub-zones for the same year. Shows the spread (differential) by hour.",
		`{"type":"object","properties":{"hub_zones":{"type":"array","items":{"type":"string"},"description":"Two hub-zones to compare, e.g. ['NP15','SP15']"},"year":{"type":"integer"},"vendor":{"type":"string"}},"required":["hub_zones","year"]}`),
	spec("get_top_reports_by_views", "Returns the most-viewed Power BI reports in a given date range.",
		`{"type":"object","properties":{"date_range_start":{"type":"string","description":"ISO date, e.g. '2025-01-01'"},"date_range_end":{"type":"string","description":"ISO date, e.g. '2025-01-31'"},"top_n":{"type":"integer","default":10,"description":"How many top reports to return"}},"required":["date_range_start","date_range_end"]}`),
	spec("get_project_health", "Returns the health status (green/yellow/red) of a project with its reasons.",
		`{"type":"object","properties":{"project_name":{"type":"string","description":"Project name or partial name, e.g. 'Nazareth Solar'"}},"required":["project_name"]}`),
	spec("get_budget_overview", "Budget versus actuals for a project.",
		`{"type":"object","properties":{"project_name":{"type":"string","description":"Project name or partial name"}},"required":["project_name"]}`),
	spec("get_task_risks", "Lists project tasks at risk, optionally filtered by risk level.",
		`{"type":"object","properties":{"project_name":{"type":["string","null"]},"risk_level":{"type":["string","null"],"description":"'High', 'Medium', 'Low'"}}}`),
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

var rehabTools = []model.ToolSpec{
	spec("trigger_property_analysis", "Run the full renovation pipeline (scrape, classify, estimate) for an Idealista URL.",
		`{"type":"object","properties":{"url":{"type":"string","description":"Idealista listing URL"}},"required":["url"]}`),
	spec("manage_todos", "Add, complete, or list tasks for multi-step requests.",
		`{"type":"object","properties":{"action":{"type":"string","enum":["add","complete","list"]},"task":{"type":"string"}},"required":["action"]}`),
	spec("search_portfolio", "Resolve natural language references to portfolio property IDs via keyword matching.",
		`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`),
	spec("update_user_profile", "Update a profile section (fiscal, budget, renovation, preferences, goals).",
		`{"type":"object","properties":{"section":{"type":"string","enum":["fiscal","budget","renovation","preferences","goals"]},"data":{"type":"object"}},"required":["section"]}`),
}

var analystTools = []model.ToolSpec{
	spec("rag_tool", "Search the company knowledge base documents by similarity.",
		`{"type":"object","properties":{"query":{"type":"string"},"top_k":{"type":"integer","default":5}},"required":["query"]}`),
	spec("web_search_tool", "Search the web for current information.",
		`{"type":"object","properties":{"query":{"type":"string"},"max_results":{"type":"integer","default":5}},"required":["query"]}`),
	spec("Question", "Ask the user a clarifying question.",
		`{"type":"object","properties":{"content":{"type":"string"}},"required":["content"]}`),
}

var realtyTools = []model.ToolSpec{
	spec("search_properties", "Search homes for sale by location, price and bedrooms.",
		`{"type":"object","properties":{"location":{"type":"string"},"min_price":{"type":"number"},"max_price":{"type":"number"},"bedrooms":{"type":"integer"}},"required":["location"]}`),
	spec("get_property_details", "Get details of one property by its Zillow zpid.",
		`{"type":"object","properties":{"zpid":{"type":"string"}},"required":["zpid"]}`),
	spec("save_search_criteria", "Save the user's search preferences for later.",
		`{"type":"object","properties":{"location":{"type":"string"},"max_price":{"type":"number"}}}`),
}

func setup(t *testing.T) *offline.Model {
	t.Helper()
	now := time.Date(2025, 3, 19, 10, 0, 0, 0, time.UTC) // a Wednesday
	return offline.New(&offline.Options{Now: func() time.Time { return now }})
}

func ask(t *testing.T, m *offline.Model, tools []model.ToolSpec, msgs ...message.Message) *model.Response {
	t.Helper()
	resp, err := m.Generate(context.Background(), &model.Request{Messages: msgs, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Metadata["offline"] != true {
		t.Errorf("answer not labelled offline in metadata: %v", resp.Message.Metadata)
	}
	if !strings.Contains(resp.Message.Content, offline.Marker) {
		t.Errorf("answer %q lacks the visible marker", resp.Message.Content)
	}
	return resp
}

func TestToolChoiceOnSeedTools(t *testing.T) {
	const item = "3f2b8c1e-9a4d-4e6f-8b7a-1c2d3e4f5a6b"
	cases := []struct {
		name  string
		tools []model.ToolSpec
		msgs  []message.Message
		tool  string
		args  string
	}{
		{"vesper average price", vesperTools, []message.Message{message.User("What is the average day-ahead price for hitachi in CAISO NP15 for 2026?")},
			"get_average_annual_price", `{"hub_zone":"NP15","market":"CAISO","vendor":"Hitachi","year":2026}`},
		{"vesper project health", vesperTools, []message.Message{message.User("What is the health status of Nazareth Solar?")},
			"get_project_health", `{"project_name":"Nazareth Solar"}`},
		{"vesper hub comparison", vesperTools, []message.Message{message.User("Compare hub zones NP15 and SP15 in 2025")},
			"compare_hub_zones", `{"hub_zones":["NP15","SP15"],"year":2025}`},
		{"vesper top reports last month", vesperTools, []message.Message{message.User("Which were the top 5 most viewed reports last month?")},
			"get_top_reports_by_views", `{"date_range_end":"2025-02-28","date_range_start":"2025-02-01","top_n":5}`},
		{"vesper risks by enum-like description", vesperTools, []message.Message{message.User("Show me all high risks")},
			"get_task_risks", `{"risk_level":"High"}`},
		{"listforge update title", listforgeTools, []message.Message{message.System("You help with item " + item + "."), message.User(`Change the title to "Vintage Nikon F3 Camera"`)},
			"updateItemField", `{"field":"title","itemId":"` + item + `","reason":"Requested by the user: Change the title to \"Vintage Nikon F3 Camera\"","value":"Vintage Nikon F3 Camera"}`},
		{"listforge fresh research", listforgeTools, []message.Message{message.System("Item " + item), message.User("Please start a fresh pricing research job with high priority")},
			"startResearchJob", `{"itemId":"` + item + `","priority":"high","type":"pricing_refresh"}`},
		{"rehab portuguese url", rehabTools, []message.Message{message.User("Analisa este imóvel: https://www.idealista.pt/imovel/33445566/")},
			"trigger_property_analysis", `{"url":"https://www.idealista.pt/imovel/33445566/"}`},
		{"rehab todos", rehabTools, []message.Message{message.User("list my todos")},
			"manage_todos", `{"action":"list"}`},
		{"analyst web", analystTools, []message.Message{message.User("Search the web for EV charging market share in Europe")},
			"web_search_tool", `{"query":"EV charging market share in Europe"}`},
		{"realty search", realtyTools, []message.Message{message.User("Find 3 bedroom houses in Austin under 500k")},
			"search_properties", `{"bedrooms":3,"location":"Austin","max_price":500000}`},
		{"realty details by zpid", realtyTools, []message.Message{message.User("Show details for zpid 2077123")},
			"get_property_details", `{"zpid":"2077123"}`},
	}
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
			if resp.FinishReason != model.FinishToolCalls {
				t.Errorf("finish = %s", resp.FinishReason)
			}
		})
	}
}
