package analyst

import "testing"

// A direction becomes a question about its subject, never the user's sentence in a template.
func TestQuestionOfDirections(t *testing.T) {
	cases := map[string]string{
		"Please look into Spinlane's courier battery subscription in Vienna": "What do we know about Spinlane's courier battery subscription in Vienna?",
		"check whether Voltra is hiring enterprise sales staff":              "Is Voltra hiring enterprise sales staff?",
		"I think we should find out if the battery prices will rise again":   "Will the battery prices rise again?",
		"we are losing share to Voltra in leasing, look at that":             "What do we know about Voltra in B2B fleet leasing?",
		"Can you research the Madrid tender":                                 "What do we know about the Madrid tender?",
		"How big is the campus market?":                                      "How big is the campus market?",
		"please":                                                             "What else should we know?",
	}
	for in, want := range cases {
		if got := questionOf(in); got != want {
			t.Errorf("questionOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// A short answer to the supervisor's question narrows the question it answers.
func TestSubjectOfQuestions(t *testing.T) {
	cases := map[string]string{
		"What is Voltra doing in B2B fleet leasing?":        "Voltra in B2B fleet leasing",
		"What do we know about the campus market?":          "the campus market",
		"What does Project Tidewater assume about pricing?": "Project Tidewater in pricing",
		"How fast is it growing?":                           "",
	}
	for in, want := range cases {
		if got := subjectOf(in); got != want {
			t.Errorf("subjectOf(%q) = %q, want %q", in, got, want)
		}
	}
}
