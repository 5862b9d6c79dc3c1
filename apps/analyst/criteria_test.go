package analyst_test

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/analyst"
	"github.com/trellis-go/trellis/server"
)

// danaKey authenticates dana, whose reports the routes then show (the routes act for the
// authenticated caller only).
const danaKey = "key-dana-0123456789ab"

var danaAuth = serveOpts{keys: map[string]server.Principal{danaKey: {User: "dana", Tenant: "default"}}}

// The specification's twelve success criteria, through the Agent Protocol on SQLite with the
// offline model.

// 1. The agent greets the user by name on session start (and 12: a new session recalls
// episodic memory). 2. It loads all four namespaces before it responds.
func TestGreetsByNameAndRecallsEpisodesInANewSession(t *testing.T) {
	t.Parallel()
	hs := served(t, analyst.Options{})
	s := newSession(t, hs, "")
	s.ask("hello", dana)
	if act, _ := s.gate(); act != "" {
		t.Fatalf("a greeting should not plan; waits at %s", act)
	}
	greet := s.lastMessage()
	if !strings.Contains(greet, "Hello Dana!") || !strings.Contains(greet, "Project Tidewater") || !strings.Contains(greet, "What would you like to research today?") {
		t.Fatalf("greeting %q", greet)
	}
	mc, _ := s.values["memory_context"].(map[string]any)
	for _, ns := range analyst.Namespaces {
		if _, ok := mc[ns]; !ok {
			t.Errorf("namespace %s not loaded before the greeting: %v", ns, mc)
		}
	}
	if factsIn(s.values, analyst.NSCompanyProfile) == 0 || factsIn(s.values, analyst.NSUserProfile) < 2 {
		t.Errorf("memory context %v", mc)
	}
	// The research request on the same thread goes on to the plan without greeting again.
	s.ask(voltraQuestion, map[string]any{"user_id": "dana"})
	s.wantGate("Review research plan")
	s.resume("accept", nil)
	s.resume("accept", nil)
	s.resume("accept", nil)
	id, _ := s.values["report_id"].(string)
	if id == "" {
		t.Fatal("no report")
	}

	// 12. A new session recalls what the last one did.
	s2 := newSession(t, hs, "")
	s2.ask("good morning", map[string]any{"user_id": "dana"})
	g := s2.lastMessage()
	if !strings.Contains(g, "Hello Dana!") || !strings.Contains(g, "Last time: On ") || !strings.Contains(g, id) {
		t.Fatalf("new session's greeting does not recall the saved report %s: %q", id, g)
	}
	eps, _ := s2.values["memory_context"].(map[string]any)[analyst.NSEpisodic].(string)
	for _, want := range []string{"accepted a research plan", "contradicts assumption A1", "approved the discoveries", "approved and saved report"} {
		if !strings.Contains(eps, want) {
			t.Errorf("episodic memory lacks %q:\n%s", want, eps)
		}
	}
}

// 3. RAG returns relevant company chunks within 3 seconds.
func TestRAGIsRelevantAndFast(t *testing.T) {
	t.Parallel()
	hs := served(t, analyst.Options{})
	for _, c := range []struct{ q, filter, want string }{
		{"Voltra B2B leasing", "", "Competitor profile Voltra"},
		{"battery pack cost decline", "", "Battery cost outlook"},
		{"permit cap Madrid Lisbon", "&project=Northstar", "Northstar"},
		{"pricing of the leasing subscription", "&document_type=project_file", "Tidewater pricing study"},
	} {
		start := time.Now()
		code, raw := request(t, "", "GET", hs.URL+"/apps/analyst/api/v1/search?top_k=3&q="+url.QueryEscape(c.q)+c.filter, nil)
		took := time.Since(start)
		if code != 200 || !strings.Contains(string(raw), c.want) || !strings.Contains(string(raw), "similarity_score") {
			t.Errorf("%q: %d %s", c.q, code, raw)
		}
		if took > 3*time.Second {
			t.Errorf("%q took %v", c.q, took)
		}
		if strings.HasPrefix(c.filter, "&project=") && strings.Contains(string(raw), `"project":"Tidewater"`) {
			t.Errorf("%q: the filter let other projects through: %s", c.q, raw)
		}
	}
	if code, raw := request(t, "", "GET", hs.URL+"/apps/analyst/api/v1/search?q=", nil); code != 400 || !strings.Contains(string(raw), "q is required") {
		t.Errorf("empty query: %d %s", code, raw)
	}
	if code, raw := request(t, "", "GET", hs.URL+"/apps/analyst/api/v1/search?q=x&top_k=99", nil); code != 400 || !strings.Contains(string(raw), "top_k") {
		t.Errorf("top_k 99: %d %s", code, raw)
	}
}

// 4. The plan gate loops back on feedback: respond and edit re-plan; ignore stops; accept goes on.
func TestPlanGateRoutes(t *testing.T) {
	t.Parallel()
	hs := served(t, analyst.Options{})
	s := newSession(t, hs, "")
	s.ask(voltraQuestion, dana)
	req := s.wantGate("Review research plan")
	cfg := req["config"].(map[string]any)
	for _, k := range []string{"allow_accept", "allow_edit", "allow_respond", "allow_ignore"} {
		if cfg[k] != true {
			t.Errorf("config %s = %v", k, cfg[k])
		}
	}
	if d, _ := req["description"].(string); !strings.HasPrefix(d, "# Research plan (v1)") || !strings.Contains(d, "## Rationale") {
		t.Errorf("description %q", d)
	}
	before := factsIn(s.values, analyst.NSEpisodic)

	// respond: re-plan with the feedback, back at the gate with v2.
	s.resume("response", "Add a question on the Madrid permit tender. I prefer Porter's five forces")
	req = s.wantGate("Review research plan")
	plan := s.values["research_plan"].(map[string]any)
	if !strings.Contains(req["description"].(string), "(v2)") || !strings.Contains(fmt.Sprint(plan["sub_questions"]), "Madrid permit tender") {
		t.Fatalf("feedback not planned: %v", plan)
	}
	if fmt.Sprint(plan["frameworks"]) != "[Porter's five forces]" {
		t.Errorf("frameworks %v", plan["frameworks"])
	}

	// edit: the edited plan is kept, back at the gate with v3.
	s.resume("edit", map[string]any{"action": "Review research plan", "args": map[string]any{"plan": map[string]any{
		"topic": "Voltra and B2B leasing", "output_format": "markdown", "rationale": "Mine.",
		"sub_questions": []any{map[string]any{"question": "What is Voltra doing in B2B fleet leasing?", "sources": []any{"web", "company_db"}},
			map[string]any{"question": "What does Project Tidewater assume about competitors?", "sources": []any{"company_db"}}}}}})
	req = s.wantGate("Review research plan")
	plan = s.values["research_plan"].(map[string]any)
	if qs := plan["sub_questions"].([]any); len(qs) != 2 || !strings.Contains(req["description"].(string), "(v3)") || !strings.Contains(plan["rationale"].(string), "Edited by you") {
		t.Fatalf("edit not kept: %v", plan)
	}
	// a bad edit is refused with what to send
	s.resume("edit", map[string]any{"action": "x", "args": map[string]any{"plan": "nope"}})
	req = s.wantGate("Review research plan")
	if !strings.Contains(s.values["gate_error"].(string), "args.plan with sub_questions") || !strings.HasPrefix(req["description"].(string), "> **Could not apply") {
		t.Errorf("bad edit: %v", s.values["gate_error"])
	}

	// accept: research runs on the edited plan, to the discovery gate.
	s2 := newSession(t, hs, "")
	s2.ask(voltraQuestion, map[string]any{"user_id": "dana"})
	s2.resume("accept", nil)
	s2.wantGate("Review discoveries")
	if s2.values["plan_approved"] != true {
		t.Error("plan_approved not set")
	}

	// ignore: the session stops.
	s3 := newSession(t, hs, "")
	s3.ask(voltraQuestion, map[string]any{"user_id": "dana"})
	s3.resume("ignore", nil)
	if act, _ := s3.gate(); act != "" || s3.values["current_phase"] != "end" {
		t.Fatalf("ignore: waits at %q, phase %v", act, s3.values["current_phase"])
	}
	if after := factsIn(s3.values, analyst.NSEpisodic); after <= before {
		t.Errorf("episodic memory did not grow: %d → %d", before, after)
	}
}

// 6. The research supervisor rejects and re-dispatches insufficient findings.
func TestSupervisorRedispatchesWithCritique(t *testing.T) {
	t.Parallel()
	s := askedVoltra(t)
	s.resume("accept", nil)
	s.wantGate("Review discoveries")
	redone := 0
	for id, f := range s.findings() {
		f := f.(map[string]any)
		if f["approved"] != true {
			t.Errorf("%s not approved", id)
		}
		if n := f["attempts"].(float64); n > 1 {
			redone++
			crit := fmt.Sprint(f["critiques"])
			if !strings.Contains(crit, "corroborate") && !strings.Contains(crit, "No evidence") {
				t.Errorf("%s: critique %s", id, crit)
			}
		}
	}
	if redone == 0 {
		t.Fatalf("no finding was sent back: %v", s.findings())
	}
}

// 7. The discovery gate loops for follow-up research; ignoring a discovery is noted in episodic
// memory; accept goes to the report.
func TestDiscoveryGateRoutes(t *testing.T) {
	t.Parallel()
	hs := served(t, analyst.Options{})
	s := newSession(t, hs, "")
	s.ask(voltraQuestion, dana)
	s.resume("accept", nil)
	req := s.wantGate("Review discoveries")
	desc := req["description"].(string)
	if !strings.Contains(desc, "appears to contradict the firm's assumption A1") || !strings.Contains(desc, "Should we investigate?") {
		t.Fatalf("no contradiction question: %s", desc)
	}
	n := len(s.findings())

	// a follow-up direction dispatches a targeted task agent, then the gate asks again
	s.resume("response", "Look at Spinlane's courier battery subscription in Vienna")
	s.wantGate("Review discoveries")
	f, ok := s.findings()["f2-1"].(map[string]any)
	if !ok || len(s.findings()) != n+1 || !strings.Contains(fmt.Sprint(f["sources"]), "Spinlane") {
		t.Fatalf("follow-up not researched: %v", s.findings())
	}
	if s.values["research_rounds"].(float64) != 2 {
		t.Errorf("rounds %v", s.values["research_rounds"])
	}
	// "yes" to the supervisor's first question investigates it
	s.resume("response", "yes, investigate")
	s.wantGate("Review discoveries")
	if _, ok := s.findings()["f3-1"]; !ok {
		t.Fatalf("the affirmative answer dispatched nothing: %v", s.findings())
	}

	// ignore drops the first discovery, notes it, and asks again
	eps := factsIn(s.values, analyst.NSEpisodic)
	_, req = s.gate()
	focus := req["action_request"].(map[string]any)["args"].(map[string]any)["focus"].(string)
	s.resume("ignore", nil)
	s.wantGate("Review discoveries")
	if ign := fmt.Sprint(s.values["ignored_findings"]); !strings.Contains(ign, focus) {
		t.Fatalf("ignored %s, want %s", ign, focus)
	}
	// a finding's task ID names its discovery
	q1 := ""
	for _, d := range s.values["discoveries"].([]any) {
		if d.(map[string]any)["task_id"] == "q1" {
			q1 = d.(map[string]any)["id"].(string)
		}
	}
	s.resume("response", "ignore q1")
	s.wantGate("Review discoveries")
	if ign := s.values["ignored_findings"].([]any); q1 == "" || ign[len(ign)-1] != q1 {
		t.Fatalf("ignored %v, want %s", ign, q1)
	}
	// an unknown discovery is refused with the known ones
	s.resume("edit", map[string]any{"action": "x", "args": map[string]any{"ignore": []any{"zz9"}}})
	s.wantGate("Review discoveries")
	if ge, _ := s.values["gate_error"].(string); !strings.Contains(ge, `no discovery "zz9"`) {
		t.Errorf("unknown id: %q", ge)
	}

	s2 := newSession(t, hs, "")
	s2.ask("good morning", map[string]any{"user_id": "dana"})
	mem, _ := s2.values["memory_context"].(map[string]any)[analyst.NSEpisodic].(string)
	if !strings.Contains(mem, "chose to ignore the discovery "+focus) || factsIn(s2.values, analyst.NSEpisodic) <= eps {
		t.Fatalf("ignore not in episodic memory:\n%s", mem)
	}

	s.resume("accept", nil)
	s.wantGate("Review final report")
	if strings.Contains(s.values["report_draft"].(string), "our own position and plan") {
		t.Error("the ignored finding q1 is in the report")
	}
}

// The final gate: a question answered from the research, re-research, re-plan, approve with a
// format, ignore.
func TestFinalGateRoutes(t *testing.T) {
	t.Parallel()
	hs := served(t, analyst.Options{}, danaAuth)
	toFinal := func() *session {
		s := newSession(t, hs, danaKey)
		s.ask(voltraQuestion, dana)
		s.resume("accept", nil)
		s.resume("accept", nil)
		s.wantGate("Review final report")
		return s
	}
	s := toFinal()
	s.resume("response", "How many bikes does the Voltra Fleet pilot supply?")
	req := s.wantGate("Review final report")
	if ans := s.values["last_answer"].(string); !strings.Contains(ans, "500 bikes") || !strings.Contains(req["description"].(string), "**Answer:**") {
		t.Fatalf("answer %q", ans)
	}
	s.resume("response", "Research further the Madrid tender licences")
	s.wantGate("Review discoveries")
	if _, ok := s.findings()["r2-1"]; !ok {
		t.Fatalf("re-research dispatched nothing: %v", s.findings())
	}
	s.resume("accept", nil)
	s.wantGate("Review final report")
	s.resume("response", "Re-plan: focus on battery costs for Project Ember")
	req = s.wantGate("Review research plan")
	if !strings.Contains(req["description"].(string), "battery costs") {
		t.Fatalf("re-plan did not take the direction: %s", req["description"])
	}
	s.resume("accept", nil)
	s.resume("accept", nil)
	s.wantGate("Review final report")
	s.resume("edit", map[string]any{"action": "Review final report", "args": map[string]any{"format": "json"}})
	if s.values["report_format"] != "json" || !strings.HasPrefix(s.values["final_report"].(string), "{") {
		t.Fatalf("format %v: %.80s", s.values["report_format"], s.values["final_report"])
	}
	id := s.values["report_id"].(string)
	rep := call(t, danaKey, "GET", hs.URL+"/apps/analyst/api/v1/reports/"+id, nil)
	if rep["format"] != "json" {
		t.Errorf("stored format %v", rep["format"])
	}

	s2 := toFinal()
	s2.resume("response", "approve as markdown")
	if s2.values["report_id"] == nil || s2.values["report_format"] != "markdown" {
		t.Fatalf("approve by response: %v", s2.lastMessage())
	}
	s3 := toFinal()
	s3.resume("ignore", nil)
	if act, _ := s3.gate(); act != "" || s3.values["report_id"] != nil || s3.values["current_phase"] != "end" {
		t.Fatalf("ignore saved or waits: %v %v", act, s3.values["report_id"])
	}
}

// 8. The report matches the user's documented style preferences.
func TestReportFollowsStylePreferences(t *testing.T) {
	t.Parallel()
	hs := served(t, analyst.Options{})
	for _, c := range []struct {
		profile           map[string]any
		section, citation string
	}{
		{map[string]any{"name": "Ana Costa", "frameworks": "Porter's five forces", "citation": "author-date", "verbosity": "concise"}, "## Porter's Five Forces", ", 2026-03-17)"},
		{map[string]any{"name": "Ben Ode", "frameworks": "gap analysis", "citation": "footnotes", "verbosity": "detailed"}, "## Gap Analysis", "[^1]:"},
		{map[string]any{"name": "Cy Lund", "frameworks": "SWOT", "citation": "numeric"}, "## SWOT Analysis", " [1]"},
	} {
		s := newSession(t, hs, "")
		s.ask(voltraQuestion, map[string]any{"user_id": strings.ToLower(c.profile["name"].(string)[:2]), "profile": c.profile})
		s.resume("accept", nil)
		s.resume("accept", nil)
		s.wantGate("Review final report")
		draft := s.values["report_draft"].(string)
		if !strings.Contains(draft, c.section) || !strings.Contains(draft, c.citation) || !strings.Contains(draft, "Prepared for "+c.profile["name"].(string)) {
			t.Errorf("%v: report does not follow the style:\n%s", c.profile, draft)
		}
		exec := draft[strings.Index(draft, "## Executive Summary"):]
		exec = exec[:strings.Index(exec[3:], "## ")+3]
		limit := 5
		if c.profile["verbosity"] == "detailed" {
			limit = 8
		}
		if n := strings.Count(exec, "\n- "); n > limit || n == 0 {
			t.Errorf("%v: %d executive summary bullets", c.profile, n)
		}
		if js, _ := s.values["report_json"].(map[string]any); js["citation_style"] != orStr(c.profile["citation"], "numeric") {
			t.Errorf("json %v", js["citation_style"])
		}
	}
}

func orStr(v any, d string) string {
	if s, _ := v.(string); s != "" {
		return s
	}
	return d
}

// 9. The report is stored with its metadata; 10. its chunks are embedded back and a later
// session's research finds them.
func TestReportStoredAndFoundLater(t *testing.T) {
	t.Parallel()
	hs := served(t, analyst.Options{}, danaAuth)
	s := newSession(t, hs, danaKey)
	s.ask(voltraQuestion, dana)
	s.resume("accept", nil)
	s.resume("accept", nil)
	s.resume("accept", nil)
	id := s.values["report_id"].(string)
	if !strings.Contains(s.lastMessage(), id) {
		t.Errorf("the user is not shown the ID: %q", s.lastMessage())
	}
	rep := call(t, danaKey, "GET", hs.URL+"/apps/analyst/api/v1/reports/"+id, nil)
	if rep["user_id"] != "dana" {
		t.Errorf("user_id %v", rep["user_id"])
	}
	if rep["session_id"] != s.thread || rep["format"] != "markdown" || rep["project_name"] != "Tidewater" ||
		!strings.Contains(fmt.Sprint(rep["topic_tags"]), "voltra") || !strings.Contains(fmt.Sprint(rep["topic_tags"]), "assumption_a1") ||
		rep["chunks"].(float64) < 3 || !strings.HasPrefix(rep["content"].(string), "# Strategic analysis") || rep["created_at"] == "" {
		t.Fatalf("metadata: %v", rep)
	}
	// The PDF output of the report.
	if code, raw := request(t, danaKey, "GET", hs.URL+"/apps/analyst/api/v1/reports/"+id+"/pdf", nil); code != 200 || !bytes.HasPrefix(raw, []byte("%PDF-")) ||
		!bytes.Contains(raw, []byte("(Executive Summary)")) || !bytes.Contains(raw, []byte("%%EOF")) {
		t.Errorf("report PDF: %d %.120q", code, raw)
	}
	if code, _ := request(t, danaKey, "GET", hs.URL+"/apps/analyst/api/v1/reports/nope/pdf", nil); code != 404 {
		t.Errorf("an unknown report's PDF: %d", code)
	}
	code, raw := request(t, danaKey, "GET", hs.URL+"/apps/analyst/api/v1/search?document_type=report&q="+url.QueryEscape("Voltra Fleet leasing pilot threat"), nil)
	if code != 200 || !strings.Contains(string(raw), id) {
		t.Fatalf("report chunks not searchable: %s", raw)
	}
	s2 := newSession(t, hs, danaKey)
	s2.ask("What did we conclude about Voltra and B2B leasing?", map[string]any{"user_id": "dana"})
	if !strings.Contains(fmt.Sprint(s2.values["retrieved_context"]), "report/"+id) {
		t.Fatalf("a new session does not retrieve the saved report: %v", s2.values["retrieved_context"])
	}
}

// 11. Memory is updated after every HITL interaction.
func TestMemoryUpdatedAfterEveryGateAnswer(t *testing.T) {
	t.Parallel()
	hs := served(t, analyst.Options{})
	s := newSession(t, hs, "")
	s.ask(voltraQuestion, dana)
	count := func() int {
		probe := newSession(t, hs, "")
		probe.ask("hi", map[string]any{"user_id": "dana"})
		return factsIn(probe.values, analyst.NSEpisodic) + factsIn(probe.values, analyst.NSPreferences)
	}
	prev := count()
	for i, step := range []struct {
		typ  string
		args any
	}{
		{"response", "Add a question on Spinlane. Keep it concise"},
		{"accept", nil},
		{"response", "Look at Spinlane's courier battery subscription in Vienna"},
		{"ignore", nil},
		{"accept", nil},
		{"response", "How many bikes does the Voltra Fleet pilot supply?"},
		{"accept", nil},
	} {
		s.resume(step.typ, step.args)
		now := count()
		if now <= prev {
			t.Errorf("step %d (%s): memory did not change (%d facts)", i, step.typ, now)
		}
		prev = now
	}
	if s.values["report_id"] == nil {
		t.Fatal("not saved at the end")
	}
	ctx := context.Background()
	_ = ctx
}
