package vesper

import (
	"github.com/trellis-go/trellis/apps/vesper/pack"
	"strings"
	"unicode"

	"github.com/trellis-go/trellis/apps/vesper/entity"
)

// This file finds the names of a tenant's data (projects, reports,
// sponsors, buyers) in free text as people type them: any case, with
// typos, missing letters, punctuation and spacing variants.

// nameMatch is a name found in a text.
type nameMatch struct {
	Name  string
	Score float64 // the fuzzy ratio of the best window, 1 for an exact one
	Start int     // word span in the text
	End   int
}

// words splits text into lower-case words: letters, digits and '&'
// (PG&E); everything else separates words, so "Day-Ahead", "day ahead" and
// "dayahead" all end up as words or one joined word that the ratio compares.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '&')
	})
}

// findName returns the name of names that the text most closely contains:
// a run of the text's words whose letters, joined without spaces, are
// within the fuzzy cutoff of the name's (so "nazeret solar", "NazarethSolar"
// and "nazareth-solar" all find "Nazareth Solar"). minScore bounds the
// ratio; names of one short word must be typed exactly.
func findName(textWords []string, names []string, minScore float64) (nameMatch, bool) {
	var best nameMatch
	for _, name := range names {
		nw := words(name)
		if len(nw) == 0 {
			continue
		}
		target := strings.Join(nw, "")
		for size := max(1, len(nw)-1); size <= len(nw)+1; size++ {
			for i := 0; i+size <= len(textWords); i++ {
				cand := strings.Join(textWords[i:i+size], "")
				var score float64
				switch {
				case cand == target:
					score = 1
				case len([]rune(target)) < 5:
					continue // "bess", "pg&e": exact only
				default:
					score = entity.Ratio(cand, target)
				}
				if score >= minScore && (score > best.Score || score == best.Score && size > best.End-best.Start) {
					best = nameMatch{Name: name, Score: score, Start: i, End: i + size}
				}
			}
		}
	}
	return best, best.Name != ""
}

// findPhrase returns the name of names of which the text holds a run of at
// least two consecutive words, in order ("the health report" finds "Project
// Health Report"), preferring the longest run; aliases (lower case, words
// separated by one space) map short names people use to a name.
func findPhrase(textWords []string, names []string, aliases map[string]string) (string, int, int, bool) {
	bestName, bestLen, bestStart := "", 1, 0
	for _, name := range names {
		nw := words(name)
		for i := 0; i < len(textWords); i++ {
			for j := 0; j < len(nw); j++ {
				n := 0
				for i+n < len(textWords) && j+n < len(nw) && closeWord(textWords[i+n], nw[j+n]) {
					n++
				}
				if n > bestLen || n == len(nw) && n == bestLen && bestName != "" && len(words(bestName)) > n {
					bestName, bestLen, bestStart = name, n, i
				}
			}
		}
	}
	if bestName != "" {
		return bestName, bestStart, bestStart + bestLen, true
	}
	joined := " " + strings.Join(textWords, " ") + " "
	for alias, name := range aliases {
		if i := strings.Index(joined, " "+alias+" "); i >= 0 {
			start := len(strings.Fields(joined[:i]))
			return name, start, start + len(strings.Fields(alias)), true
		}
	}
	return "", 0, 0, false
}

// closeWord reports whether a typed word is the name's word, allowing a
// typo in words of five letters or more.
func closeWord(typed, want string) bool {
	if typed == want {
		return true
	}
	if len(want) < 5 {
		return false
	}
	return entity.Ratio(typed, want) >= 0.8
}

// findLead returns the project the text names by its first word alone, as people shorten a
// name ("risks for nazareth" for Nazareth Solar): a word of four letters or more (a typo
// allowed from five) that begins exactly one of names, is not itself a project ending
// ("solar"), a stop word or part of a market, hub-zone or vendor the text names ("indiana hub"),
// and is not followed by a project ending: "nazareth solar" names a project that is not this
// tenant's, which the tools answer with the close names.
// A word that begins several names is no match: the question does not say which.
func findLead(textWords []string, names []string) (string, bool) {
	for i, w := range textWords {
		if len(w) < 4 || projectWords[w] || nameStopWords[w] || partOfEntity(textWords, i) ||
			i+1 < len(textWords) && projectWords[textWords[i+1]] {
			continue
		}
		found := ""
		n := 0
		for _, name := range names {
			nw := words(name)
			if len(nw) < 2 || !closeWord(w, nw[0]) {
				continue
			}
			found = name
			n++
		}
		if n == 1 {
			return found, true
		}
	}
	return "", false
}

// partOfEntity reports whether the text's word i is, alone or with a neighbour, a vendor,
// market, hub-zone or technology.
func partOfEntity(textWords []string, i int) bool {
	if k, _ := exactEntity(textWords[i]); k != "" {
		return true
	}
	if i > 0 {
		if k, _ := exactEntity(textWords[i-1] + " " + textWords[i]); k != "" {
			return true
		}
	}
	if i+1 < len(textWords) {
		if k, _ := exactEntity(textWords[i] + " " + textWords[i+1]); k != "" {
			return true
		}
	}
	return false
}

// reportAliases are names people use for reports whose words are not a run
// of the report's name.
var reportAliases = pack.Vocabulary.ReportAliases

// withoutWords returns text without the words from start to end (a name
// found in it), so that the name's own words ("Day-Ahead Curves
// Dashboard") do not count as the question's keywords.
func withoutWords(textWords []string, start, end int) string {
	out := append(append([]string{}, textWords[:start]...), textWords[end:]...)
	return strings.Join(out, " ")
}

// findPerson returns the person of names whose surname (the last word) the
// text holds, allowing a typo: "Patel's projects" finds "R. Patel".
func findPerson(textWords []string, names []string) (string, bool) {
	for _, name := range names {
		nw := words(name)
		if len(nw) == 0 {
			continue
		}
		surname := nw[len(nw)-1]
		for _, w := range textWords {
			w = strings.TrimSuffix(w, "s") // Patel's -> patel s, Patels
			if closeWord(w, surname) || closeWord(strings.TrimSuffix(w, "'"), surname) {
				return name, true
			}
		}
	}
	return "", false
}
