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
	a, g := harness(t, analyst.Config{}, nil)
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
