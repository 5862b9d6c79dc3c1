package vesper

import (
	"strings"

	"github.com/trellis-go/trellis/apps/vesper/warehouse"
)

// This file holds the words of the project and usage domains the offline
// router reads: stages by name, milestone dates, and the words that ask
// for people rather than views. They are data: a deployment with other
// stage names or milestones changes these tables, not the rules.

// stageNumbers are the number words and Roman numerals people write after
// "stage".
var stageNumbers = map[string]string{
	"one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
	"i": "1", "ii": "2", "iii": "3", "iv": "4", "v": "5", "vi": "6", "vii": "7", "viii": "8",
}

// stageNumber returns the digit of a stage written as a digit, a word or a
// Roman numeral.
func stageNumber(s string) string {
	if n, ok := stageNumbers[strings.ToLower(s)]; ok {
		return n
	}
	return s
}

// stagePhrases name a stage without its number ("projects under
// construction", "late-stage development"), lower case.
var stagePhrases = map[string]int{
	"early dev": 1, "early development": 1, "early-stage development": 1, "early stage development": 1,
	"mid dev": 2, "mid development": 2, "mid-stage development": 2, "mid stage development": 2,
	"late dev": 3, "late development": 3, "late-stage development": 3, "late stage development": 3,
	"pre-con": 4, "precon": 4, "pre-construction": 4, "preconstruction": 4, "pre construction": 4,
	"under construction": 5, "in construction": 5, "construction stage": 5, "construction phase": 5, "being built": 5,
	"in operation": 6, "operational projects": 6, "operating projects": 6, "operation stage": 6,
	"sale stage": 7, "being sold": 7, "up for sale": 7,
	"in closing": 8, "closing stage": 8,
}

// stageByName returns the stage a text names by words, 0 for none; the
// longest phrase wins ("pre-construction" over "construction").
func stageByName(lower string) int {
	best, bestLen := 0, 0
	for phrase, n := range stagePhrases {
		if len(phrase) > bestLen && containsPhrase(lower, phrase) {
			best, bestLen = n, len(phrase)
		}
	}
	return best
}

// containsPhrase reports whether text holds phrase as whole words.
func containsPhrase(text, phrase string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], phrase)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(phrase)
		if (j == 0 || !isWordByte(text[j-1])) && (end == len(text) || !isWordByte(text[end])) {
			return true
		}
		i = j + 1
	}
}

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_'
}

// milestonePhrases map what people call a milestone to the portfolio
// snapshot's column (warehouse.MilestoneColumns).
var milestonePhrases = []struct {
	phrases   []string
	milestone string
}{
	{[]string{"cod", "cods", "commercial operation", "operation date", "online date", "go-live", "in-service date"}, "Commercial Operation"},
	{[]string{"ntp", "notice to proceed", "epc fntp", "fntp"}, "EPC FNTP"},
	{[]string{"financial close", "project finance", "finance date", "financing date"}, "Project Finance"},
	{[]string{"interconnection agreement", "ia execution", "ia date"}, "Execute Interconnection Agreement"},
	{[]string{"ppa execution", "ppa signing", "ppa date", "power purchase agreement"}, "Execute Power Purchase Agreement"},
	{[]string{"mechanical completion"}, "Mechanical Completion"},
	{[]string{"substantial completion"}, "Substantial Completion"},
	{[]string{"site control"}, "Minimum Site Control"},
	{[]string{"decisioning", "decision date"}, "Decisioning Date"},
}

// milestoneDatesWords ask for a project's dates without naming one
// milestone; they bring keyMilestones.
var milestoneDatesWords = []string{"milestone", "key dates", "timeline", "schedule", "their dates", "with dates", "and dates", "target dates"}

// keyMilestones are the dates listed when a question asks for milestones
// in general: the stage-gating agreements, financing, construction start
// and COD.
var keyMilestones = []string{"Execute Interconnection Agreement", "Execute Power Purchase Agreement", "Project Finance", "EPC FNTP", "Commercial Operation"}

// milestonesAsked returns the milestone dates a question asks to see, in
// the snapshot's column order; none when it asks for no date.
func milestonesAsked(lower string) []string {
	want := map[string]bool{}
	for _, m := range milestonePhrases {
		for _, p := range m.phrases {
			if containsPhrase(lower, p) {
				want[m.milestone] = true
			}
		}
	}
	if len(want) == 0 && has(lower, milestoneDatesWords...) {
		for _, m := range keyMilestones {
			want[m] = true
		}
	}
	if len(want) == 0 && (has(lower, "date", "when ") && has(lower, "project")) {
		want["Commercial Operation"] = true
	}
	var out []string
	for _, c := range warehouse.MilestoneColumns {
		if want[c] {
			out = append(out, c)
		}
	}
	return out
}

// viewerWords ask how many people, or who, rather than how many views.
var viewerWords = []string{"user", "who ", "who's", "whom", "people", "person", "viewers", "viewed by", "unique", "distinct",
	"individual", "colleague", "employee", "staff", "audience", "readers", "visitors", "headcount", "how many of us"}

// byViewersWords ask for reports ranked by their viewers.
var byViewersWords = []string{"most viewers", "most unique", "most users", "most people", "most distinct", "widest audience", "biggest audience", "largest audience", "most readers"}
