package offline

import (
	"fmt"
	"strings"
	"unicode"
)

// Cues: phrases that point to an intent's tool wherever they appear in a message, the words an
// example's content-word coverage cannot see included ("how many", "why", "is # ok"). Each cue
// of an intent found in the user's message adds the intent's Weight to its tool's score, once.
//
// A cue is words in order, adjacent, compared with case and accents ignored. In a cue, a word
// ending in "*" matches any word it begins ("explic*" for "explica", "explicar"), "#" matches
// any number ("is # ok" for "is $350 ok"), and "<url>" matches a link; a cue that starts with
// "^" matches only at the start of the message ("^set" for "set the price to 120"). A message's word matches
// a cue word also through the pack's one-word synonyms ("vc" to "voce"), and with a typo: one
// edit or two swapped letters for words of five to eight letters, two for longer ones, never
// for a word some cue spells exactly.

// urlWord stands for a link in a message's words, so that a cue's "<url>" can match it.
const urlWord = "\x00url"

// cueWords are text's words as cues see them: folded, each link one urlWord.
func cueWords(text string) []string {
	var out []string
	last := 0
	for _, loc := range reURL.FindAllStringIndex(text, -1) {
		out = append(out, words(text[last:loc[0]])...)
		out = append(out, urlWord)
		last = loc[1]
	}
	return append(out, words(text[last:])...)
}

type cue struct {
	words    []string
	weight   float64
	anchored bool // matches at the message's start only
}

// newCue reads a cue phrase.
func newCue(phrase string, weight float64) (cue, bool) {
	phrase = strings.TrimSpace(phrase)
	anchored := strings.HasPrefix(phrase, "^")
	phrase = strings.TrimPrefix(phrase, "^")
	var ws []string
	for _, f := range strings.Fields(phrase) {
		switch {
		case f == "#" || f == "<url>":
			ws = append(ws, f)
		case strings.HasSuffix(f, "*"):
			if w := words(strings.TrimSuffix(f, "*")); len(w) > 0 {
				ws = append(ws, w[:len(w)-1]...)
				ws = append(ws, w[len(w)-1]+"*")
			}
		default:
			ws = append(ws, words(f)...)
		}
	}
	return cue{words: ws, weight: weight, anchored: anchored}, len(ws) > 0
}

// cueScore is what the cues of tool's intents found in text add to its score: the intents
// without Args add up, and so do those with the same Args, which stand for one kind of request
// ("add" or "remove" of a tool's action); of those kinds, the best counts.
func (v *vocab) cueScore(tool string, msg []string) float64 {
	plain := 0.0
	kinds := map[string]float64{}
	for _, in := range v.intents {
		if in.tool != tool || len(in.cues) == 0 {
			continue
		}
		if len(in.args) == 0 {
			plain += v.intentCueScore(in, msg)
			continue
		}
		kinds[fmt.Sprint(in.args)] += v.intentCueScore(in, msg)
	}
	best, any := 0.0, false
	for _, s := range kinds {
		if !any || s > best {
			best, any = s, true
		}
	}
	return plain + best
}

// intentCueScore is the weight of in's cues found in the message's words msg.
func (v *vocab) intentCueScore(in intent, msg []string) float64 {
	total := 0.0
	for _, c := range in.cues {
		if v.findCue(c, msg) {
			total += c.weight
		}
	}
	return total
}

func (v *vocab) findCue(c cue, msg []string) bool { return v.cueAt(c, msg) >= 0 }

// cueAt is where the cue starts in the message's words msg, -1 when it is not there.
func (v *vocab) cueAt(c cue, msg []string) int {
	for i := 0; i+len(c.words) <= len(msg); i++ {
		if c.anchored && i > 0 {
			return -1
		}
		ok := true
		for j, cw := range c.words {
			if !v.cueWordMatch(msg[i+j], cw) {
				ok = false
				break
			}
		}
		if ok {
			return i
		}
	}
	return -1
}

func (v *vocab) cueWordMatch(w, c string) bool {
	switch c {
	case "#":
		return w != "" && strings.IndexFunc(w, func(r rune) bool { return !unicode.IsDigit(r) }) < 0
	case "<url>":
		return w == urlWord
	}
	if w == urlWord {
		return false
	}
	if WordsMatch(w, c, v.cueSpelled[w]) {
		return true
	}
	for _, s := range v.synonyms[w] {
		if !strings.Contains(s, " ") && WordsMatch(s, c, true) {
			return true
		}
	}
	return false
}

// WordsMatch reports whether w, a word as a user wrote it, matches c, a word of a cue or of an
// app's vocabulary, both in lower case without accents. They match when equal; a c ending in '*'
// matches any word that starts with the rest of c. Otherwise a typo is forgiven when c has five
// letters or more: w within one edit or swap of adjacent letters (two from nine letters), or, for
// a c ending in '*', a start of w within one edit of c's stem. Words holding a digit ("t2",
// "2023", "1a") match only exactly, and so does w when exact is true (w is itself a known word,
// never read as a typo of another: "compramos" is not "compara").
func WordsMatch(w, c string, exact bool) bool {
	if p, ok := strings.CutSuffix(c, "*"); ok {
		if strings.HasPrefix(w, p) {
			return true
		}
		if len(p) < 5 || len(w) < len(p)-1 || exact || hasDigit(p) || hasDigit(w) {
			return false
		}
		for k := len(p) - 1; k <= len(p)+1 && k <= len(w); k++ {
			if swapDistance(w[:k], p) <= 1 {
				return true
			}
		}
		return false
	}
	if w == c {
		return true
	}
	if len(c) < 5 || exact || len(w)-len(c) > 1 || len(c)-len(w) > 1 || hasDigit(c) || hasDigit(w) {
		return false
	}
	limit := 1
	if len(c) >= 9 {
		limit = 2
	}
	return swapDistance(w, c) <= limit
}

// swapDistance is the edit distance of two words counting a swap of adjacent letters as one edit
// (optimal string alignment).
func swapDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 31 || len(rb) > 31 {
		if a == b {
			return 0
		}
		return 3
	}
	var d [32][32]int
	for i := 0; i <= len(ra); i++ {
		d[i][0] = i
	}
	for j := 0; j <= len(rb); j++ {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// cueArgs returns the Args of tool's intents whose cues the text matches best (intents with the
// same Args add up), nil when no cue of an intent with Args is found. They override the
// arguments the words gave: a cue names what the user asks for.
func (v *vocab) cueArgs(tool, text string) map[string]any {
	msg := cueWords(text)
	sums := map[string]float64{}
	byKey := map[string]map[string]any{}
	var keys []string
	for _, in := range v.intents {
		if in.tool != tool || len(in.args) == 0 || len(in.cues) == 0 {
			continue
		}
		k := fmt.Sprint(in.args)
		if _, ok := byKey[k]; !ok {
			byKey[k] = in.args
			keys = append(keys, k)
		}
		sums[k] += v.intentCueScore(in, msg)
	}
	var out map[string]any
	best := 0.0
	for _, k := range keys {
		if sums[k] > best {
			best, out = sums[k], byKey[k]
		}
	}
	return out
}
