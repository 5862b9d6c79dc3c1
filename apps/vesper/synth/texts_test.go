package synth

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/vesper/tools"
)

// TestTexts: texts.json parses with every sentence, a file without one says which, and fill
// replaces placeholders once.
func TestTexts(t *testing.T) {
	for _, name := range TryInsteadNames {
		if texts.TryInstead[name] == "" {
			t.Errorf("try_instead %q is empty", name)
		}
	}
	edit := func(change func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(textsData, &m); err != nil {
			t.Fatal(err)
		}
		change(m)
		b, _ := json.Marshal(m)
		return b
	}
	if _, err := ParseTexts(edit(func(m map[string]any) { delete(m, "tool_failed") })); err == nil || !strings.Contains(err.Error(), "tool_failed") {
		t.Errorf("a missing sentence: %v", err)
	}
	if _, err := ParseTexts(edit(func(m map[string]any) { delete(m["try_instead"].(map[string]any), "health") })); err == nil || !strings.Contains(err.Error(), `"health"`) {
		t.Errorf("a missing try_instead: %v", err)
	}
	if _, err := ParseTexts(edit(func(m map[string]any) { m["no_result"] = "typo" })); err == nil || !strings.Contains(err.Error(), "no_result") {
		t.Errorf("an unknown field: %v", err)
	}
	if _, err := ParseTexts(edit(func(m map[string]any) { delete(m["sentences"].(map[string]any), "budget") })); err == nil || !strings.Contains(err.Error(), `"budget"`) {
		t.Errorf("a missing sentence template: %v", err)
	}
	if _, err := ParseTexts(edit(func(m map[string]any) { delete(m["sentences"].(map[string]any), "rows_one") })); err == nil || !strings.Contains(err.Error(), `"rows_one"`) {
		t.Errorf("a missing counted form: %v", err)
	}
	if _, err := ParseTexts(edit(func(m map[string]any) { delete(m["headers"].(map[string]any), "risks") })); err == nil || !strings.Contains(err.Error(), `headers "risks"`) {
		t.Errorf("a missing table's headers: %v", err)
	}
	if _, err := ParseTexts(edit(func(m map[string]any) { delete(m["labels"].(map[string]any), "no_change") })); err == nil || !strings.Contains(err.Error(), `"no_change"`) {
		t.Errorf("a missing label: %v", err)
	}
	if got := headers("hub_zones", "a", "NP15", "b", "SP15"); strings.Join(got, "|") != "Hour|NP15 ($/MWh)|SP15 ($/MWh)|Spread" {
		t.Errorf("headers: %q", got)
	}
	if got := StatusBold("red"); got != "**off track** 🔴" {
		t.Errorf("StatusBold: %q", got)
	}
	if one, many := sayN(1, "rows", "count", "1"), sayN(2, "rows", "count", "2"); one == many || !strings.Contains(one, "1") || !strings.Contains(many, "2") {
		t.Errorf("sayN: %q, %q", one, many)
	}
	if got := tools.Fill("the {a} {b}.", "a", "{b}", "b", "x"); got != "the {b} x." {
		t.Errorf("fill: %q", got)
	}
}
