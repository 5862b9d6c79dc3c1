package offline

import (
	"strings"

	"github.com/trellis-go/trellis/fold"
)

// Choice gives example phrasings of one value of an enum in a structured-output schema: an app
// that asks the model to classify a message ("approve", "question", "replan") teaches it what
// each value sounds like. When a property's enum holds Value (and, if Field is set, the
// property is named Field), the value whose examples the message covers best, at least three
// quarters of an example's content words (synonyms, plurals, shared stems and typos count), is
// picked
// before the values the message names and before the system prompt's descriptions. A property
// no choice fits is filled as before; a required one the schema gives a default takes it.
type Choice struct {
	Field    string   `json:"field,omitempty"`
	Value    string   `json:"value"`
	Examples []string `json:"examples"`
}

type choice struct {
	field    string // folded, words joined by "_"; "" for any property
	value    string
	examples [][]string // content words of each example
}

func (v *vocab) addChoices(cs []Choice) {
	for _, c := range cs {
		if c.Value == "" {
			continue
		}
		ch := choice{field: strings.Join(words(c.Field), "_"), value: c.Value}
		for _, ex := range c.Examples {
			if ws := contentWords(ex); len(ws) > 0 {
				ch.examples = append(ch.examples, ws)
			}
		}
		if len(ch.examples) > 0 {
			v.choices = append(v.choices, ch)
		}
	}
}

// choice fills an enum property from the packs' choices: the value whose examples the user's
// message covers best; when choices are given for the property's values but none fits, the
// schema's default, if it has one (the app said what each value sounds like, so the system
// prompt's descriptions are not read for it).
func (f *filler) choice(name string, s map[string]any) (any, bool) {
	enum := asSlice(s["enum"])
	if len(enum) == 0 {
		return nil, false
	}
	v, ok, taught := f.v.choose(name, enum, f.v.terms(f.primary))
	if ok {
		return v, true
	}
	if d, has := s["default"]; has && taught {
		return d, true
	}
	return nil, false
}

// choose picks the value of enum whose choices' examples the user's terms cover best (three
// quarters of an example at least); on a tie, the example with more words wins, then the first choice given.
// taught reports whether any choice is given for one of the enum's values.
func (v *vocab) choose(name string, enum []any, user []string) (pick any, ok, taught bool) {
	if len(v.choices) == 0 {
		return nil, false, false
	}
	field := strings.Join(words(name), "_")
	best, bestLen := 0.0, 0
	for _, c := range v.choices {
		if c.field != "" && c.field != field {
			continue
		}
		var val any
		for _, e := range enum {
			if s, ok := e.(string); ok && fold.String(s) == fold.String(c.value) {
				val = e
				break
			}
		}
		if val == nil {
			continue
		}
		taught = true
		for _, ex := range c.examples {
			cov := typoCoverage(ex, user)
			if cov < 0.75 {
				continue
			}
			if cov > best || (cov == best && len(ex) > bestLen) {
				best, bestLen, pick = cov, len(ex), val
			}
		}
	}
	return pick, pick != nil, taught
}

// typoCoverage is [coverage] where a word of five letters or more written with a typo (within
// the edit distance names are allowed) counts for 0.8.
func typoCoverage(example, user []string) float64 {
	if len(example) == 0 {
		return 0
	}
	got := 0.0
	for _, e := range example {
		b := 0.0
		for _, u := range user {
			b = max(b, similar(u, e))
			if b < 0.8 && len(e) >= 5 && !hasDigit(e) {
				if c := typoCutoff(len([]rune(e))); editDistance(u, e, c) <= c {
					b = 0.8
				}
			}
		}
		got += b
	}
	return got / float64(len(example))
}
