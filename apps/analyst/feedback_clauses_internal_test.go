package analyst

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Feedback on the plan as analysts write it in one breath: several changes in one sentence
// joined by commas and "but"/"and", a competitor named once and then referred to by a pronoun,
// a drop followed by an addition. Each change is applied, an addition asks about what the
// sentence names, and sub-question IDs stay unique (a duplicate ID loses a question's findings).
func TestPlanFeedbackOfSeveralClauses(t *testing.T) {
	t.Parallel()
	a := offlineAnalyst()
	for _, c := range []struct {
		feedback string
		gone     string // a word no sub-question may keep ("" for none)
		added    string // a word the added sub-question must name
	}{
		{"Looks okay, but leave out our own position question, and bring UrbanHop into the comparison as well.", "own position", "UrbanHop"},
		{"Fine overall but skip the market sizing, and throw Cityglide in too", "market", "Cityglide"},
		{"You missed Spinlane, include them too please.", "", "Spinlane"},
		{"We should not forget Cityglide - add it as well", "", "Cityglide"},
		{"Not quite - put the pricing angle first, and we do not need our own position question.", "own position", "pricing"},
	} {
		base := revisedPlan
		base.SubQuestions = slices.Clone(revisedPlan.SubQuestions)
		got, err := a.revise(context.Background(), base, c.feedback)
		if err != nil {
			t.Fatalf("%q: %v", c.feedback, err)
		}
		ids := map[string]bool{}
		for _, q := range got.SubQuestions {
			if ids[q.ID] {
				t.Errorf("%q: sub-question ID %s given twice: %s", c.feedback, q.ID, planSummary(&got))
			}
			ids[q.ID] = true
			if c.gone != "" && strings.Contains(strings.ToLower(q.Question), c.gone) {
				t.Errorf("%q: %q kept: %s", c.feedback, q.Question, planSummary(&got))
			}
		}
		added := slices.IndexFunc(got.SubQuestions, func(q SubQuestion) bool {
			return q.FromUser && strings.Contains(q.Question, c.added)
		})
		if added < 0 {
			t.Errorf("%q: no question on %s added: %s", c.feedback, c.added, planSummary(&got))
		}
		for _, q := range got.SubQuestions {
			if q.FromUser && (!strings.Contains(q.Question, c.added) || strings.Contains(q.Question, " first?")) {
				t.Errorf("%q: a question about something else added: %q", c.feedback, q.Question)
			}
		}
	}
}

// TestRevisedRationaleCountsNoStaleQuestions: after feedback removes a sub-question, the plan's
// rationale states no count of sub-questions other than the plan's.
func TestRevisedRationaleCountsNoStaleQuestions(t *testing.T) {
	t.Parallel()
	a := offlineAnalyst()
	p := basePlan("How do Voltra and Spinlane price their passes?", Mem{}, nil)
	got, err := a.revise(context.Background(), p, "Drop the Spinlane question please.")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.SubQuestions) != len(p.SubQuestions)-1 {
		t.Fatalf("not dropped: %s", planSummary(&got))
	}
	for _, m := range regexp.MustCompile(`(\d+) sub-questions`).FindAllStringSubmatch(got.Rationale, -1) {
		if m[1] != strconv.Itoa(len(got.SubQuestions)) {
			t.Errorf("the rationale says %s sub-questions, the plan has %d: %q", m[1], len(got.SubQuestions), got.Rationale)
		}
	}
}
