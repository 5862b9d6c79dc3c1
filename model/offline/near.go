package offline

import "github.com/trellis-go/trellis/fold"

// Near reports whether written is word but for a typo the offline model forgives in names: one
// edit for 4 to 6 letters, two for 7 to 12, three beyond, case and accents ignored. Shorter
// words, and words with digits, must match exactly. Apps that read their own users' words
// beside the model (taking a pack's words off a message) use it to forgive the same typos.
func Near(written, word string) bool {
	a, b := fold.String(written), fold.String(word)
	if a == b {
		return true
	}
	if hasDigit(a) || hasDigit(b) {
		return false
	}
	c := typoCutoff(len([]rune(b)))
	return c > 0 && editDistance(a, b, c) <= c
}
