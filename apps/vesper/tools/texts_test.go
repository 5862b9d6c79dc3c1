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
}
