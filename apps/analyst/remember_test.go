package analyst_test

import (
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/analyst"
)

// A consultant introduces herself after a greeting and asks the analyst to keep a standing
// scope in mind, in the same message as her first request. The name and the note are
// remembered (the greeting of her next session uses the name, as the analyst's own hint says it
// would); the request the plan is titled by is the request, not the introduction; and a later
// request that names no theme is planned within the remembered scope.
func TestIntroductionAndStandingNoteRemembered(t *testing.T) {
	t.Parallel()
	hs := served(t, analyst.Options{})
	user := map[string]any{"user_id": "priya"}
	first := newSession(t, hs, "")
	first.ask("Hello, I'm Priya Nair, head of strategy. Keep in mind that I only care about corporate (B2B) customers. How is Cityglide positioned against us?", user)
	req := first.wantGate("Review research plan")
	greet := messageText(first.values, 1)
	if !strings.Contains(greet, "Priya") {
		t.Errorf("greeting without the name she gave: %q", greet)
	}
	if q, _ := first.values["query"].(string); strings.Contains(q, "Priya") || strings.Contains(strings.ToLower(q), "keep in mind") || !strings.Contains(q, "Cityglide") {
		t.Errorf("the request read as %q; want the question about Cityglide only", q)
	}
	mc, _ := first.values["memory_context"].(map[string]any)
	if prefs, _ := mc[analyst.NSPreferences].(string); !strings.Contains(prefs, "only care about corporate (B2B) customers") {
		t.Errorf("standing note not in the preferences: %q", prefs)
	}
	_ = req

	second := newSession(t, hs, "")
	second.ask("What has Spinlane been up to lately?", user)
	second.wantGate("Review research plan")
	if greet := messageText(second.values, 1); !strings.Contains(greet, "Priya") {
		t.Errorf("a new session does not greet her by name: %q", greet)
	}
	plan, _ := second.values["research_plan"].(map[string]any)
	qs, _ := plan["sub_questions"].([]any)
	scoped := false
	for _, q := range qs {
		text, _ := q.(map[string]any)["question"].(string)
		scoped = scoped || (strings.Contains(text, "Spinlane") && strings.Contains(text, "B2B"))
	}
	if !scoped {
		t.Errorf("the plan ignores the remembered B2B scope: %v", qs)
	}
}
