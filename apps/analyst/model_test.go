package analyst_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/trellis-go/trellis/apps/analyst"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/scripted"
)

// With a model configured, the strong role plans, composes findings, reviews them, synthesises
// and writes, and the fast role routes the final gate and proposes memory updates; every prompt
// is in the XML sections with the user's memory injected.
func TestRealModelPath(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	rejected := map[string]bool{}
	prompts := map[string]string{}
	m := scripted.New(scripted.Rule(func(req *model.Request) *model.Response {
		mu.Lock()
		defer mu.Unlock()
		sys, user := req.Messages[0].Text(), req.Messages[len(req.Messages)-1].Text()
		name := "text"
		if req.Schema != nil {
			name = req.Schema.Name
		}
		if strings.Contains(sys, "greeting a consultant") {
			prompts["greeting"] = sys
			return &model.Response{Message: message.Assistant("Hello Dana, the model greets you.")}
		}
		if len(req.Tools) > 0 && req.Schema == nil {
			// a task agent: search the company DB, then the web, then stop
			tools := 0
			for _, m := range req.Messages {
				if m.Role == message.RoleTool {
					tools++
				}
			}
			q := strings.TrimPrefix(strings.SplitN(req.Messages[1].Text(), "\n", 2)[0], "Sub-question: ")
			switch tools {
			case 0:
				return &model.Response{Message: message.Assistant("", message.ToolCall{ID: "c1", Name: "rag_tool", Arguments: []byte(`{"query":` + jsonString(q) + `}`)})}
			case 1:
				return &model.Response{Message: message.Assistant("", message.ToolCall{ID: "c2", Name: "web_search_tool", Arguments: []byte(`{"query":"Voltra leasing"}`)})}
			}
			return &model.Response{Message: message.Assistant("Found it.")}
		}
		prompts[name] = sys
		var out string
		switch name {
		case "research_plan":
			out = `{"topic":"Voltra and B2B leasing (model)","sub_questions":[{"question":"What is Voltra doing in B2B fleet leasing?","sources":["web","company_db"]},
				{"question":"What does Project Tidewater assume about Voltra?","sources":["company_db"]}],"output_format":"markdown","frameworks":["SWOT"],"rationale":"The model's plan."}`
		case "finding":
			out = `{"answer":"The model's answer from the sources.","confidence":0.8,"key_quotes":["Voltra leases bikes in Hamburg."]}`
		case "verdict":
			q := strings.SplitN(user, "\n", 2)[0]
			if !rejected[q] {
				rejected[q] = true
				out = `{"approved":false,"critique":"Model critique: find a second source."}`
			} else {
				out = `{"approved":true,"critique":""}`
			}
		case "discoveries":
			out = `{"summary":"The model's summary.","follow_up_questions":["Should we size Voltra's Benelux push?"]}`
		case "fact_operations":
			out = `{"operations":[{"op":"add","text":"Prefers data tables"}]}`
		case "report_outline":
			out = `{"sections":[{"name":"Voltra's leasing moves","findings":["q1"]},{"name":"Unknown","findings":["q9"]}]}`
		case "final_route":
			out = `{"route":"approve","format":"json"}`
		default:
			out = "The model's section, citing [1]."
		}
		return &model.Response{Message: message.Assistant(out)}
	}))
	m.Repeat = true
	_, g := harness(t, analyst.Options{}, model.NewRoles(m, "scripted"))
	r := &run{t: t, g: g, thread: "model", user: "dana"}
	r.ask(voltraQuestion, map[string]string{"name": "Dana Whitfield", "project": "Tidewater"})
	if g := r.state.Messages[1].Text(); g != "Hello Dana, the model greets you." {
		t.Errorf("greeting %q", g)
	}
	if r.action != "Review research plan" || r.state.ResearchPlan.Topic != "Voltra and B2B leasing (model)" || r.state.ResearchPlan.SubQuestions[1].ID != "q2" {
		t.Fatalf("plan: %q %+v", r.action, r.state.ResearchPlan)
	}
	r.resume("accept", nil)
	if r.action != "Review discoveries" || r.state.SupervisorSummary != "The model's summary." {
		t.Fatalf("research: %q %q", r.action, r.state.SupervisorSummary)
	}
	for id, f := range r.state.ResearchFindings {
		kinds := map[string]bool{}
		for _, src := range f.Sources {
			kinds[src.Kind] = true
		}
		if !kinds["web"] || !kinds["company_db"] {
			t.Errorf("%s: the task agent's tool calls are not its sources: %+v", id, f.Sources)
		}
		if f.Attempts != 2 || len(f.Critiques) == 0 || !strings.Contains(f.Critiques[0], "Model critique") || f.Answer != "The model's answer from the sources." {
			t.Errorf("%s: %+v", id, f)
		}
	}
	r.resume("accept", nil)
	if r.action != "Review final report" || !strings.Contains(r.state.ReportDraft, "The model's section, citing [1].") {
		t.Fatalf("report: %q\n%s", r.action, r.state.ReportDraft)
	}
	// The model planned the finding sections; a finding it left out is not lost, an unknown
	// finding ID is dropped.
	if !strings.Contains(r.state.ReportDraft, "## Voltra's leasing moves") || !strings.Contains(r.state.ReportDraft, "## Other findings") || strings.Contains(r.state.ReportDraft, "## Unknown") {
		t.Errorf("the report's sections are not the model's plan:\n%s", r.state.ReportDraft)
	}
	r.resume("response", "Looks fine, keep it as data")
	if r.state.ReportID == "" || r.state.ReportFormat != "json" {
		t.Fatalf("the fast model's route was not followed: %q %q", r.state.ReportID, r.state.ReportFormat)
	}
	for _, name := range []string{"research_plan", "verdict", "discoveries", "text"} {
		p := prompts[name]
		if !strings.Contains(p, "<Role>") || !strings.Contains(p, "<Instructions>") || !strings.Contains(p, "<Rules>") {
			t.Errorf("%s prompt not in XML sections: %q", name, p)
		}
	}
	for _, name := range []string{"research_plan", "discoveries", "text", "greeting"} {
		if p := prompts[name]; !strings.Contains(p, "<Background>\n- [NAME] full: Dana Whitfield") || !strings.Contains(p, "<CompanyContext>") || !strings.Contains(p, "<EpisodicContext>") {
			t.Errorf("%s prompt lacks the memory: %q", name, p)
		}
	}
}

func jsonString(s string) string {
	raw, _ := json.Marshal(s)
	return string(raw)
}
