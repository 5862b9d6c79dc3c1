package analyst_test

import (
	"regexp"
	"strings"
	"testing"
)

// The report's body is planned from the findings: one section per subject the findings are
// about (named for it, not "Key Findings"), each finding in exactly one section, and within a
// finding each source cited once.
func TestReportSectionsPlannedFromFindings(t *testing.T) {
	t.Parallel()
	s := askedVoltra(t)
	s.resume("accept", nil)
	s.wantGate("Review discoveries")
	s.resume("accept", nil)
	s.wantGate("Review final report")
	draft, _ := s.values["report_draft"].(string)
	headings := regexp.MustCompile(`(?m)^## (.+)$`).FindAllStringSubmatch(draft, -1)
	var names []string
	for _, h := range headings {
		names = append(names, h[1])
	}
	joined := strings.Join(names, " | ")
	if strings.Contains(joined, "Key Findings") || !strings.Contains(joined, "Voltra") {
		t.Errorf("the sections are not planned from the findings: %s", joined)
	}
	for id, f := range s.findings() {
		m := f.(map[string]any)
		if gap, _ := m["gap"].(bool); gap {
			continue
		}
		q := m["question"].(string)
		if n := strings.Count(draft, "**"+q+"**"); n != 1 {
			t.Errorf("finding %s (%q) is in %d sections", id, q, n)
		}
	}
	// Within each finding's block, and in the executive summary, no citation repeats.
	for _, block := range strings.Split(draft, "\n\n") {
		summary := strings.HasPrefix(block, "- ") && strings.Contains(draft, "## Executive Summary\n\n"+block)
		if !summary && (!strings.HasPrefix(block, "**") || !strings.Contains(block, "(confidence")) {
			continue
		}
		seen := map[string]bool{}
		for _, c := range regexp.MustCompile(`\[\d+\]`).FindAllString(block, -1) {
			if seen[c] {
				t.Errorf("citation %s repeats in:\n%s", c, block)
			}
			seen[c] = true
		}
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("draft:\n%s", draft)
	}
}
