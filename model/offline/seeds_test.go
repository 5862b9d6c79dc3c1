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

func spec(name, desc, params string) model.ToolSpec {
	return model.ToolSpec{Name: name, Description: desc, Parameters: json.RawMessage(params)}
}

// Generic tools of the kinds applications offer: figures by quoted values, a named thing's
// status, a comparison of codes, rankings over dates, items by UUID, web search, tasks, orders.
var opsTools = []model.ToolSpec{
	spec("get_average_fare", "Returns the average fare (EUR) for a given carrier, route and year.",
		`{"type":"object","properties":{"carrier":{"type":"string","description":"Carrier name: 'Aerolux' or 'Skyway'"},"route":{"type":"string","description":"Route: 'LIS-OPO', 'LIS-FAO', 'OPO-FAO'"},"year":{"type":"integer","description":"Year, e.g. 2025"}},"required":["carrier","route","year"]}`),
	spec("get_team_status", "Returns the status (green/yellow/red) of a team with its reasons.",
		`{"type":"object","properties":{"team_name":{"type":"string","description":"Team name or partial name, e.g. 'Blue Harbor'"}},"required":["team_name"]}`),
	spec("compare_warehouses", "Compares stock levels between two warehouses for the same year.",
		`{"type":"object","properties":{"warehouses":{"type":"array","items":{"type":"string"},"description":"Two warehouse codes, e.g. ['W12','W15']"},"year":{"type":"integer"}},"required":["warehouses","year"]}`),
	spec("get_top_pages_by_views", "Returns the pages with the most views in a given date range.",
		`{"type":"object","properties":{"date_range_start":{"type":"string","description":"ISO date, e.g. '2025-01-01'"},"date_range_end":{"type":"string","description":"ISO date, e.g. '2025-01-31'"},"top_n":{"type":"integer","default":10,"description":"How many top pages to return"}},"required":["date_range_start","date_range_end"]}`),
	spec("get_open_issues", "Lists open issues, optionally filtered by severity.",
		`{"type":"object","properties":{"team_name":{"type":["string","null"]},"severity":{"type":["string","null"],"description":"'High', 'Medium', 'Low'"}}}`),
}

var noteTools = []model.ToolSpec{
	spec("getNoteSnapshot", "Get current state of a note including title, body and tags",
		`{"type":"object","properties":{"noteId":{"type":"string","format":"uuid"}},"required":["noteId"]}`),
	spec("updateNoteField", "Update a single field on a note with an audit reason",
		`{"type":"object","properties":{"noteId":{"type":"string","format":"uuid"},"field":{"type":"string","enum":["title","body","tags"]},"value":{},"reason":{"type":"string"}},"required":["noteId","field","value","reason"]}`),
	spec("startSyncJob", "Queue a new sync job for a note. Use when data is stale or user requests a fresh sync.",
		`{"type":"object","properties":{"noteId":{"type":"string","format":"uuid"},"type":{"type":"string","enum":["full_sync","manual_request"]},"priority":{"type":"string","enum":["low","normal","high"],"default":"normal"}},"required":["noteId","type"]}`),
}

var researchTools = []model.ToolSpec{
	spec("search_notes", "Search the team's notes by similarity.",
		`{"type":"object","properties":{"query":{"type":"string"},"top_k":{"type":"integer","default":5}},"required":["query"]}`),
	spec("web_search_tool", "Search the web for current information.",
		`{"type":"object","properties":{"query":{"type":"string"},"max_results":{"type":"integer","default":5}},"required":["query"]}`),
	spec("Question", "Ask the user a clarifying question.",
		`{"type":"object","properties":{"content":{"type":"string"}},"required":["content"]}`),
}

var deskTools = []model.ToolSpec{
	spec("analyze_page", "Run the full analysis (fetch, classify, summarise) for a web page URL.",
		`{"type":"object","properties":{"url":{"type":"string","description":"the page's URL"}},"required":["url"]}`),
	spec("manage_tasks", "Add, complete, or list tasks for multi-step requests.",
		`{"type":"object","properties":{"action":{"type":"string","enum":["add","complete","list"]},"task":{"type":"string"}},"required":["action"]}`),
	spec("web_search_tool", "Search the web for current information.",
		`{"type":"object","properties":{"query":{"type":"string"},"max_results":{"type":"integer","default":5}},"required":["query"]}`),
	spec("get_order", "Get details of one order by its ID.",
		`{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}`),
	spec("search_flights", "Search flights to a city by maximum price and stops.",
		`{"type":"object","properties":{"city":{"type":"string"},"max_price":{"type":"number"},"stops":{"type":"integer"}},"required":["city"]}`),
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
		{"quoted values as enum", opsTools, []message.Message{message.User("What is the average fare for skyway on LIS-OPO for 2026?")},
			"get_average_fare", `{"carrier":"Skyway","route":"LIS-OPO","year":2026}`},
		{"capitalised name", opsTools, []message.Message{message.User("What is the status of team Blue Harbor?")},
			"get_team_status", `{"team_name":"Blue Harbor"}`},
		{"codes compared", opsTools, []message.Message{message.User("Compare warehouses W12 and W15 in 2025")},
			"compare_warehouses", `{"warehouses":["W12","W15"],"year":2025}`},
		{"top pages last month", opsTools, []message.Message{message.User("Which were the top 5 pages by views last month?")},
			"get_top_pages_by_views", `{"date_range_end":"2025-02-28","date_range_start":"2025-02-01","top_n":5}`},
		{"enum-like description", opsTools, []message.Message{message.User("Show me all high severity issues")},
			"get_open_issues", `{"severity":"High"}`},
		{"update title", noteTools, []message.Message{message.System("You help with note " + item + "."), message.User(`Change the title to "Weekly Plan"`)},
			"updateNoteField", `{"field":"title","noteId":"` + item + `","reason":"Requested by the user: Change the title to \"Weekly Plan\"","value":"Weekly Plan"}`},
		{"fresh sync", noteTools, []message.Message{message.System("Note " + item), message.User("Please start a full sync job with high priority")},
			"startSyncJob", `{"noteId":"` + item + `","priority":"high","type":"full_sync"}`},
		{"portuguese url", deskTools, []message.Message{message.User("Analisa esta página: https://example.com/pagina/33445566/")},
			"analyze_page", `{"url":"https://example.com/pagina/33445566/"}`},
		{"tasks", deskTools, []message.Message{message.User("list my tasks")},
			"manage_tasks", `{"action":"list"}`},
		{"web", deskTools, []message.Message{message.User("Search the web for EV charging market share in Europe")},
			"web_search_tool", `{"query":"EV charging market share in Europe"}`},
		{"search with bounds", deskTools, []message.Message{message.User("Search flights to Boston with 1 stops under 500 EUR")},
			"search_flights", `{"city":"Boston","max_price":500,"stops":1}`},
		{"id after its name", deskTools, []message.Message{message.User("Show details for order 2077123")},
			"get_order", `{"order_id":"2077123"}`},
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
