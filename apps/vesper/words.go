package vesper

import (
	"github.com/trellis-go/trellis/apps/vesper/pack"
	"slices"
	"strings"

	"github.com/trellis-go/trellis/apps/vesper/warehouse"
)

// This file holds the rules that read the words of the project and usage domains: stages by
// name, milestone dates, and the words that ask for people rather than views. The words are data,
// in pack/words.json (pack.Vocabulary): a deployment with other stage names or milestones changes
// that file, not the rules.

// stageNumbers are the number words and Roman numerals people write after
// "stage".
var stageNumbers = pack.Vocabulary.StageNumbers

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
var stagePhrases = pack.Vocabulary.StagePhrases

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
var milestonePhrases = pack.Vocabulary.Milestones

// milestoneDatesWords ask for a project's dates without naming one
// milestone; they bring keyMilestones.
var milestoneDatesWords = pack.Vocabulary.MilestoneDates

// keyMilestones are the dates listed when a question asks for milestones
// in general: the stage-gating agreements, financing, construction start
// and COD.
var keyMilestones = pack.Vocabulary.KeyMilestones

// milestonesAsked returns the milestone dates a question asks to see, in
// the snapshot's column order; none when it asks for no date.
func milestonesAsked(lower string) []string {
	want := map[string]bool{}
	for _, m := range milestonesNamed(lower) {
		want[m] = true
	}
	if len(want) == 0 && has(lower, milestoneDatesWords...) {
		for _, m := range keyMilestones {
			want[m] = true
		}
	}
	if len(want) == 0 && (hasCue(lower, "asks_date") && hasCue(lower, "project")) {
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

// milestonesNamed are the milestones a text (lower case) names by one of their phrases
// ("cod", "financial close"), in the order of the milestone list; not the key milestones that
// "milestones" or "timeline" stand for.
func milestonesNamed(lower string) []string {
	var out []string
	for _, m := range milestonePhrases {
		if slices.ContainsFunc(m.Phrases, func(p string) bool { return containsPhrase(lower, p) }) && !slices.Contains(out, m.Milestone) {
			out = append(out, m.Milestone)
		}
	}
	return out
}

// viewerWords ask how many people, or who, rather than how many views.
var viewerWords = pack.Vocabulary.Viewer

// byViewersWords ask for reports ranked by their viewers.
var byViewersWords = pack.Vocabulary.ByViewers

// hasCue reports whether text (lower case) holds a phrase of the pack's cue list name
// (pack.CueNames; TestCueNamesKnown checks the names the rules use).
func hasCue(text, name string) bool { return has(text, pack.Vocabulary.Cues[name]...) }

// set makes a lookup of a word list.
func set(words []string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
