package analyst_test

import (
	"context"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/analyst"
)

// On the offline model the research supervisor asks, through an inbox Question, what a vague
// sub-question of an edited plan should answer; the answer is what the task agent researches,
// and the round's key findings reach episodic memory through its write_memory_tool.
func TestOfflineSupervisorAsksAboutAVagueQuestion(t *testing.T) {
	t.Parallel()
	a, g := harness(t, analyst.Options{}, nil)
	r := &run{t: t, g: g, thread: "vague", user: "vic"}
	r.ask("Research Voltra's move into B2B fleet leasing", map[string]string{"name": "Vic"})
	if r.action != "Review research plan" {
		t.Fatalf("at %q", r.action)
	}
	r.resume("edit", map[string]any{"action": "Review research plan", "args": map[string]any{"plan": map[string]any{
		"topic": "Voltra and Madrid", "output_format": "markdown", "rationale": "Mine.",
		"sub_questions": []any{map[string]any{"question": "What is Voltra doing in B2B fleet leasing?", "sources": []any{"web", "company_db"}},
			map[string]any{"question": "Madrid?", "sources": []any{"web"}}}}}})
	if r.action != "Review research plan" {
		t.Fatalf("at %q", r.action)
	}
	r.resume("accept", nil)
	if r.action != "Question" {
		t.Fatalf("the supervisor did not ask about the vague question: at %q", r.action)
	}
	r.resume("response", "How many operators will Madrid license for shared e-bikes?")
	if r.action != "Review discoveries" {
		t.Fatalf("at %q", r.action)
	}
	asked := false
	for _, f := range r.state.ResearchFindings {
		asked = asked || strings.Contains(f.Question, "How many operators will Madrid license")
		if f.Question == "Madrid?" {
			t.Errorf("the vague question was researched as it was")
		}
	}
	if !asked {
		t.Errorf("the answer was not researched: %+v", r.state.ResearchFindings)
	}
	eps, err := a.Memory().Load(context.Background(), "vic", analyst.NSEpisodic)
	if err != nil || !strings.Contains(toJSONString(eps), "researching 'Research Voltra") {
		t.Errorf("the round's key finding is not in episodic memory: %v %s", err, toJSONString(eps))
	}
}

// The final gate offers the specification's pdf format: the report is saved as such, the user
// is told where to download it, and the choice is remembered.
func TestApproveAsPDF(t *testing.T) {
	t.Parallel()
	a, g := harness(t, analyst.Options{}, nil)
	r := &run{t: t, g: g, thread: "pdf", user: "pia"}
	r.ask("Research Voltra's move into B2B fleet leasing", map[string]string{"name": "Pia"})
	r.resume("accept", nil)
	if r.action != "Review discoveries" {
		t.Fatalf("at %q", r.action)
	}
	r.resume("accept", nil)
	if r.action != "Review final report" {
		t.Fatalf("at %q", r.action)
	}
	r.resume("response", "Approve as PDF")
	if r.action != "" || r.state.ReportFormat != "pdf" || r.state.ReportID == "" {
		t.Fatalf("at %q, format %q, report %q", r.action, r.state.ReportFormat, r.state.ReportID)
	}
	last := r.state.Messages[len(r.state.Messages)-1].Text()
	if !strings.Contains(last, "/api/v1/reports/"+r.state.ReportID+"/pdf") {
		t.Errorf("no PDF link: %q", last)
	}
	prefs, err := a.Memory().Load(context.Background(), "pia", analyst.NSPreferences)
	if err != nil || !strings.Contains(toJSONString(prefs), "[FORMAT] report: pdf") {
		t.Errorf("the format is not remembered: %v %s", err, toJSONString(prefs))
	}
}
