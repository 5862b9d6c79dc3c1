package analyst

import (
	"strings"
	"testing"
)

// Every prompt file renders with the values its caller gives, into the specification's XML
// sections, and a value left out is an error, not an empty string.
func TestPromptsRender(t *testing.T) {
	t.Parallel()
	data := map[string]map[string]any{
		"greeting":            {"Query": "battery costs"},
		"memory_update":       {"NS": "user_preferences", "Reason": "feedback", "Memory": "[]"},
		"planner":             {"Previous": "", "Edited": "", "Feedback": "add pricing"},
		"report_outline":      {"Topic": "leasing"},
		"writer":              {"Section": "Pricing", "Topic": "leasing", "Brief": "Compare.", "Citation": "footnotes", "Framework": "SWOT", "Note": ""},
		"supervisor_research": {"Given": "the plan"},
		"supervisor_report":   {"Given": "the findings"},
		"supervisor_episodic": {"Summary": "two findings"},
	}
	if len(prompts) < 16 {
		t.Fatalf("%d prompt files, want 16", len(prompts))
	}
	for name := range prompts {
		got := prompt(name, nil, data[name])
		for _, tag := range []string{"<Role>\n", "<Instructions>\n", "<Rules>\n"} {
			if !strings.Contains(got, tag) {
				t.Errorf("%s: no %q in %q", name, tag, got)
			}
		}
		if strings.Contains(got, "{{") || strings.Contains(got, "<no value>") {
			t.Errorf("%s: unrendered template in %q", name, got)
		}
	}
	if got := prompt("planner", nil, data["planner"]); !strings.Contains(got, "<Feedback>\nadd pricing\n</Feedback>") || strings.Contains(got, "<PreviousPlan>") {
		t.Errorf("planner: %q", got)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("writer without its values rendered")
			}
		}()
		prompt("writer", nil, nil)
	}()
}
