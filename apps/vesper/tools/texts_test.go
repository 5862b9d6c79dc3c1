package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTexts: texts.json holds every phrase the tools write, and a file without one says which.
func TestTexts(t *testing.T) {
	var m map[string]map[string]string
	if err := json.Unmarshal(textsData, &m); err != nil {
		t.Fatal(err)
	}
	delete(m["searched"], "hourly")
	b, _ := json.Marshal(m)
	if _, err := ParseTexts(b); err == nil || !strings.Contains(err.Error(), `"hourly"`) {
		t.Errorf("a missing phrase: %v", err)
	}
	if got := searchWords("hub_zones", "a", "NP15", "b", "{period}", "period", "2025"); got != "hourly prices of NP15 and {period} for 2025" {
		t.Errorf("searchWords: %q", got)
	}
	for in, want := range map[string]string{"Due Date": "FinishDate", "risk": "Risk Assessment", "notes": "NotesForPER", "budget": "Budget", "colour": "colour"} {
		if got := canonicalField(in); got != want {
			t.Errorf("canonicalField(%q) = %q, want %q", in, got, want)
		}
	}
	if c, ok := milestoneColumn("COD"); !ok || c != "Commercial Operation" {
		t.Errorf("milestoneColumn(COD) = %q %v", c, ok)
	}
	if _, ok := milestoneColumn("groundbreaking"); ok {
		t.Error("an unknown milestone was taken")
	}
	if got := PeriodWords(2025, []int{1, 2, 12}); got != "January, February and December 2025" {
		t.Errorf("PeriodWords: %q", got)
	}
}
