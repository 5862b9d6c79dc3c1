package offline_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
)

func TestAnswerFromRowsIsMarkdownTable(t *testing.T) {
	m := setup(t)
	call := message.ToolCall{ID: "c1", Name: "get_average_fare", Arguments: json.RawMessage(`{}`)}
	resp := ask(t, m, opsTools,
		message.User("average fare for Aerolux LIS-OPO 2025"),
		message.Assistant("", call),
		message.ToolResult("c1", call.Name, `{"data":[{"Carrier":"Aerolux","AvgFare_EUR":41.2,"AsOf":"Jan_2025"},{"Carrier":"Aerolux","AvgFare_EUR":43.9,"AsOf":"Feb|2025"}],"report_key":"fares_curve_report"}`),
	)
	want := "- **report_key**: fares_curve_report\n\n| Carrier | AvgFare_EUR | AsOf |\n| --- | --- | --- |\n| Aerolux | 41.2 | Jan_2025 |\n| Aerolux | 43.9 | Feb\\|2025 |"
	if !strings.Contains(resp.Message.Content, want) {
		t.Fatalf("table missing; got:\n%s", resp.Message.Content)
	}
	if len(resp.Message.ToolCalls) != 0 || resp.Message.Metadata["offline_rule"] != "tool_results" {
		t.Errorf("after results the model must answer, got %+v", resp.Message)
	}
}

func TestAnswerFromErrorAndText(t *testing.T) {
	m := setup(t)
	a := message.ToolCall{ID: "a", Name: "search_notes", Arguments: json.RawMessage(`{}`)}
	b := message.ToolCall{ID: "b", Name: "web_search_tool", Arguments: json.RawMessage(`{}`)}
	resp := ask(t, m, researchTools,
		message.User("research EV charging"),
		message.Assistant("", a, b),
		message.ToolError("a", "search_notes", "index unavailable"),
		message.ToolResult("b", "web_search_tool", "plain text finding"),
	)
	for _, want := range []string{"**search_notes** reported an error", "index unavailable", "**web_search_tool**", "plain text finding"} {
		if !strings.Contains(resp.Message.Content, want) {
			t.Errorf("answer lacks %q:\n%s", want, resp.Message.Content)
		}
	}
}

func TestMissingRequiredArgumentAsks(t *testing.T) {
	resp := ask(t, setup(t), noteTools, message.User("What does the snapshot say about this note?"))
	if len(resp.Message.ToolCalls) != 0 {
		t.Fatalf("called %v without a note ID", resp.Message.ToolCalls)
	}
	if !strings.Contains(resp.Message.Content, "`noteId` (uuid)") {
		t.Errorf("question does not name the missing argument: %q", resp.Message.Content)
	}
}

func TestNoMatchingToolExplains(t *testing.T) {
	resp := ask(t, setup(t), deskTools, message.User("hello"))
	if len(resp.Message.ToolCalls) != 0 || !strings.Contains(resp.Message.Content, "`search_flights`") {
		t.Errorf("got %+v", resp.Message)
	}
}

func TestToolChoiceForcesTool(t *testing.T) {
	m := setup(t)
	resp, err := m.Generate(context.Background(), &model.Request{Messages: []message.Message{message.User("hello")}, Tools: researchTools, ToolChoice: "Question"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Name != "Question" {
		t.Fatalf("got %+v", resp.Message)
	}
	resp, err = m.Generate(context.Background(), &model.Request{Messages: []message.Message{message.User("Search the web for Go")}, Tools: researchTools, ToolChoice: model.ToolChoiceNone})
	if err != nil || len(resp.Message.ToolCalls) != 0 {
		t.Fatalf("ToolChoiceNone still called: %+v %v", resp, err)
	}
}

func TestParallelCallsForJoinedClauses(t *testing.T) {
	resp := ask(t, setup(t), opsTools, message.User("What is the status of team Blue Harbor and the open issues for team Blue Harbor?"))
	if len(resp.Message.ToolCalls) != 2 || resp.Message.ToolCalls[0].Name != "get_team_status" || resp.Message.ToolCalls[1].Name != "get_open_issues" {
		t.Fatalf("got %+v", resp.Message.ToolCalls)
	}
	if resp.Message.ToolCalls[0].ID == resp.Message.ToolCalls[1].ID {
		t.Error("call IDs must differ")
	}
}

const supervisorPrompt = `You route questions.

### fares
Air fare forecasts by carrier, route and year; average annual fares; carrier comparison.

### site_usage
Website usage: most viewed pages, top visitors, usage trends.

### team_ops
Team tracking: team status, milestone dates, budget vs actuals, risks.

### general
Greetings, help requests, clarifications.`

const routingSchema = `{"type":"object","properties":{
 "intent":{"type":"string","enum":["fares","site_usage","team_ops","multi_domain","general"]},
 "active_agents":{"type":"array","items":{"type":"string","enum":["fares_agent","site_usage_agent","team_ops_agent"]}},
 "filters":{"type":"object","properties":{
   "carrier":{"type":["string","null"],"description":"'Aerolux' or 'Skyway'"},
   "year":{"type":["integer","null"]},
   "team_name":{"type":["string","null"]},
   "date_range_start":{"type":["string","null"],"format":"date"},
   "date_range_end":{"type":["string","null"],"format":"date"}}},
 "clarification_needed":{"type":["string","null"]}},
 "required":["intent","active_agents","filters","clarification_needed"]}`

func TestStructuredRoutingFillsSchema(t *testing.T) {
	m := setup(t)
	cases := []struct{ q, want string }{
		{"What milestones changed for Blue Harbor?", `{"active_agents":["team_ops_agent"],"clarification_needed":null,"filters":{"team_name":"Blue Harbor"},"intent":"team_ops"}`},
		{"Which pages were viewed most this quarter?", `{"active_agents":["site_usage_agent"],"clarification_needed":null,"filters":{"date_range_end":"2025-03-19","date_range_start":"2025-01-01"},"intent":"site_usage"}`},
		{"average forecast fare from aerolux in 2026", `{"active_agents":["fares_agent"],"clarification_needed":null,"filters":{"carrier":"Aerolux","year":2026},"intent":"fares"}`},
		{"hi there", `{"active_agents":[],"clarification_needed":null,"filters":{},"intent":"general"}`},
	}
	for _, c := range cases {
		resp, err := m.Generate(context.Background(), &model.Request{
			Messages: []message.Message{message.System(supervisorPrompt), message.User(c.q)},
			Schema:   &model.Schema{Name: "routing", JSON: json.RawMessage(routingSchema)},
		})
		if err != nil {
			t.Fatalf("%q: %v", c.q, err)
		}
		if string(resp.Structured) != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.q, resp.Structured, c.want)
		}
		if resp.Message.Metadata["offline"] != true {
			t.Error("structured answer not labelled")
		}
	}
}

func TestUtilityTasks(t *testing.T) {
	m := setup(t)
	conv := []message.Message{
		message.User(`What is the health status of "Blue Harbor"?`),
		message.Assistant("It is green. All milestones are on track."),
	}
	gen := func(instr string) string {
		resp, err := m.Generate(context.Background(), &model.Request{Messages: append(append([]message.Message{}, conv...), message.User(instr))})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Message.Content
	}
	if got := gen("Write a short title for this conversation."); got != "Health status of \"Blue Harbor\" "+offline.Marker {
		t.Errorf("title = %q", got)
	}
	if got := gen("Summarize the conversation above."); !strings.Contains(got, "- User: What is the health status") || !strings.Contains(got, "- Assistant: It is green.") {
		t.Errorf("summary = %q", got)
	}
	if got := gen("Suggest three follow-up questions."); strings.Count(got, "Blue Harbor") != 3 {
		t.Errorf("hints = %q", got)
	}
	resp, err := m.Generate(context.Background(), &model.Request{
		Messages: append(append([]message.Message{}, conv...), message.User("Give three follow-up hints.")),
		Schema:   &model.Schema{JSON: json.RawMessage(`{"type":"object","properties":{"hints":{"type":"array","items":{"type":"string"},"maxItems":3}},"required":["hints"]}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Hints []string }
	if err := json.Unmarshal(resp.Structured, &out); err != nil || len(out.Hints) != 3 {
		t.Errorf("structured hints = %s (%v)", resp.Structured, err)
	}
}

func TestStreamMatchesGenerate(t *testing.T) {
	m := setup(t)
	req := &model.Request{Messages: []message.Message{message.User("Compare warehouses W12 and W15 in 2025")}, Tools: opsTools}
	want, err := m.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	chunks := 0
	got, err := model.Collect(func(yield func(model.Chunk, error) bool) {
		for c, err := range m.Stream(context.Background(), req) {
			chunks++
			if !yield(c, err) {
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Message.Content != want.Message.Content || len(got.Message.ToolCalls) != 1 || string(got.Message.ToolCalls[0].Arguments) != string(want.Message.ToolCalls[0].Arguments) {
		t.Errorf("stream %+v != generate %+v", got.Message, want.Message)
	}
	if chunks < 3 || got.Message.Metadata["offline"] != true || got.Usage.InputTokens == 0 {
		t.Errorf("chunks=%d metadata=%v usage=%+v", chunks, got.Message.Metadata, got.Usage)
	}
}

func TestBadRequestAndCancel(t *testing.T) {
	m := setup(t)
	if _, err := m.Generate(context.Background(), &model.Request{}); !errors.Is(err, model.ErrInvalidRequest) {
		t.Errorf("empty request: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Generate(ctx, &model.Request{Messages: []message.Message{message.User("hi")}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestUnfillableSchemaGetsPlausibleDefault: structured output always validates; a required date
// the text does not give is today's.
func TestUnfillableSchemaGetsPlausibleDefault(t *testing.T) {
	schema := &model.Schema{Name: "pick", JSON: json.RawMessage(`{"type":"object","properties":{"when":{"type":"string","format":"date"}},"required":["when"]}`)}
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	resp, err := offline.New(&offline.Options{Now: func() time.Time { return now }}).Generate(context.Background(), &model.Request{Messages: []message.Message{message.User("no date here")}, Schema: schema})
	if err != nil || string(resp.Structured) != `{"when":"2026-03-04"}` {
		t.Fatalf("structured = %s, %v", resp.Structured, err)
	}
}

func TestUnitsWrittenOutAndSharedEnums(t *testing.T) {
	units := []model.ToolSpec{spec("convert_units", "Convert a value between units: kilometres and miles, kilograms and pounds.",
		`{"type":"object","properties":{"value":{"type":"number"},"from":{"type":"string","enum":["km","mi","kg","lb"]},"to":{"type":"string","enum":["km","mi","kg","lb"]}},"required":["value","from","to"]}`)}
	for text, want := range map[string]string{
		"Convert 42 km to miles":           `{"from":"km","to":"mi","value":42}`,
		"Convert 10 miles into kilometres": `{"from":"mi","to":"km","value":10}`,
		"Convert to lb 3 kg":               `{"from":"kg","to":"lb","value":3}`,
	} {
		resp := ask(t, setup(t), units, message.User(text))
		if len(resp.Message.ToolCalls) != 1 {
			t.Fatalf("%q: no single tool call: %+v", text, resp.Message)
		}
		var got, exp any
		_ = json.Unmarshal(resp.Message.ToolCalls[0].Arguments, &got)
		_ = json.Unmarshal([]byte(want), &exp)
		if g, _ := json.Marshal(got); string(g) != mustJSON(exp) {
			t.Errorf("%q: arguments %s, want %s", text, g, want)
		}
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }
