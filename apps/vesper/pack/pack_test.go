package pack_test

// What vesper asks of the offline model, with its pack (moved here from model/offline's tests).

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/vesper/pack"
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

// TestSeedTools: requests from the specification reach the right tool with their arguments.
func TestSeedTools(t *testing.T) {
	packtest.CheckCalls(t, pack.Pack, []packtest.Case{
		{Name: "vesper average price", Tools: vesperTools, Msgs: []message.Message{message.User("What is the average day-ahead price for hitachi in CAISO NP15 for 2026?")},
			Tool: "get_average_annual_price", Args: `{"hub_zone":"NP15","market":"CAISO","vendor":"Hitachi","year":2026}`},
		{Name: "vesper project health", Tools: vesperTools, Msgs: []message.Message{message.User("What is the health status of Nazareth Solar?")},
			Tool: "get_project_health", Args: `{"project_name":"Nazareth Solar"}`},
		{Name: "vesper hub comparison", Tools: vesperTools, Msgs: []message.Message{message.User("Compare hub zones NP15 and SP15 in 2025")},
			Tool: "compare_hub_zones", Args: `{"hub_zones":["NP15","SP15"],"year":2025}`},
		{Name: "vesper top reports last month", Tools: vesperTools, Msgs: []message.Message{message.User("Which were the top 5 most viewed reports last month?")},
			Tool: "get_top_reports_by_views", Args: `{"date_range_end":"2025-02-28","date_range_start":"2025-02-01","top_n":5}`},
		{Name: "vesper risks by enum-like description", Tools: vesperTools, Msgs: []message.Message{message.User("Show me all high risks")},
			Tool: "get_task_risks", Args: `{"risk_level":"High"}`},
	})
}

// TestWords: the vocabulary file parses, every list is there, and a bad file says what is wrong.
func TestWords(t *testing.T) {
	w := pack.Vocabulary
	if len(w.StagePhrases) == 0 || len(w.Milestones) == 0 || w.StageNumbers["iv"] != "4" || w.StagePhrases["under construction"] != 5 {
		t.Fatalf("vocabulary read as %+v", w)
	}
	for _, m := range w.Milestones {
		if m.Milestone == "" || len(m.Phrases) == 0 {
			t.Errorf("milestone %+v has no column or no phrase", m)
		}
	}
	if _, err := pack.ParseWords([]byte(`{"usage": ["view"], "colour": ["red"]}`)); err == nil || !strings.Contains(err.Error(), "colour") {
		t.Errorf("an unknown field: %v", err)
	}
	if _, err := pack.ParseWords([]byte(`{"usage": ["view"]}`)); err == nil || !strings.Contains(err.Error(), "missing or empty") {
		t.Errorf("missing lists: %v", err)
	}
}

// TestDomainTexts: the built-in domains' texts and the rules' sentences are in words.json, and a
// file without one says which.
func TestDomainTexts(t *testing.T) {
	w := pack.Vocabulary
	for _, name := range []string{"dayahead_agent", "price_curve_agent", "pbi_metrics_agent", "per_agent"} {
		if d := w.Domains[name]; d.Description == "" || len(d.Examples) == 0 {
			t.Errorf("domain %s has no text: %+v", name, d)
		}
	}
	if !strings.Contains(w.Texts.GreetingDomain, "{description}") || !strings.Contains(w.Texts.GreetingDomain, "{example}") {
		t.Errorf("greeting_domain has lost its placeholders: %q", w.Texts.GreetingDomain)
	}
	data, err := os.ReadFile("words.json")
	if err != nil {
		t.Fatal(err)
	}
	edit := func(change func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		change(m)
		b, _ := json.Marshal(m)
		return b
	}
	noGreeting := edit(func(m map[string]any) { delete(m["texts"].(map[string]any), "greeting") })
	if _, err := pack.ParseWords(noGreeting); err == nil || !strings.Contains(err.Error(), "texts.greeting") {
		t.Errorf("a missing text: %v", err)
	}
	noExamples := edit(func(m map[string]any) {
		m["domains"].(map[string]any)["per_agent"].(map[string]any)["examples"] = []string{}
	})
	if _, err := pack.ParseWords(noExamples); err == nil || !strings.Contains(err.Error(), `"per_agent"`) {
		t.Errorf("a domain without examples: %v", err)
	}
	noDisabled := edit(func(m map[string]any) { delete(m["texts"].(map[string]any), "tool_disabled") })
	if _, err := pack.ParseWords(noDisabled); err == nil || !strings.Contains(err.Error(), "texts.tool_disabled") {
		t.Errorf("a missing refusal: %v", err)
	}
	if b := w.Domains["per_agent"].Boosts; len(b) == 0 || b[0].Add == 0 {
		t.Errorf("per_agent has no boosts: %+v", b)
	}
	emptyBoost := edit(func(m map[string]any) {
		m["domains"].(map[string]any)["pbi_metrics_agent"].(map[string]any)["boosts"] = []any{map[string]any{"when": []string{"report_name"}}}
	})
	if _, err := pack.ParseWords(emptyBoost); err == nil || !strings.Contains(err.Error(), `"pbi_metrics_agent" boost 0`) || !strings.Contains(err.Error(), "veto") {
		t.Errorf("a boost that adds nothing: %v", err)
	}
}

// TestRead: pack.Read says which file and which name is wrong.
func TestRead(t *testing.T) {
	type file struct {
		Names map[string]string `json:"names"`
	}
	check := func(f *file) error { return pack.Need("name", f.Names, []string{"a", "b"}, "the test's list") }
	if f, err := pack.Read("test.json", []byte(`{"names": {"a": "x", "b": "y"}}`), check); err != nil || f.Names["b"] != "y" {
		t.Fatalf("a good file: %v %+v", err, f)
	}
	if _, err := pack.Read("test.json", []byte(`{"names": {"a": "x"}}`), check); err == nil || !strings.HasPrefix(err.Error(), "test.json: ") || !strings.Contains(err.Error(), `name "b"`) {
		t.Errorf("a missing name: %v", err)
	}
	if _, err := pack.Read[file]("test.json", []byte(`{"names": {"a": "x"}, "nmaes": {}}`), nil); err == nil || !strings.Contains(err.Error(), "nmaes") {
		t.Errorf("an unknown field: %v", err)
	}
}

// FuzzParseWords: a vocabulary file, however broken, is read or refused with an error, never a
// panic.
func FuzzParseWords(f *testing.F) {
	data, err := os.ReadFile("words.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"domains": {"x": {"description": "d", "examples": ["e"], "boosts": [{"when": [], "add": 1}]}}}`))
	f.Add([]byte(`{"usage": ["view"]} {}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if w, err := pack.ParseWords(b); err == nil && w == nil {
			t.Fatal("no vocabulary and no error")
		}
	})
}
