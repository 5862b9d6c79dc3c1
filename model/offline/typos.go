package offline

import "strings"

// Names written with a typo ("Nazaret Solar", "Lisboaa", "apartmnet") still match an enum value
// or a name the conversation already holds, when they are within a small edit distance: one
// edit for 4 to 6 letters, two for 7 to 12, three beyond. Shorter names, and words with digits
// (codes such as "W15", where one character is a different thing), must match exactly.

// typoCutoff is the most edits tolerated for a name of n letters.
func typoCutoff(n int) int {
	switch {
	case n < 4:
		return 0
	case n <= 6:
		return 1
	case n <= 12:
		return 2
	}
	return 3
}

// editDistance is the Levenshtein distance between a and b (in runes), stopping early once it
// exceeds limit (then it returns limit+1).
func editDistance(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d > limit || -d > limit {
		return limit + 1
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			best = min(best, cur[j])
		}
		if best > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// closeName reports whether the words ws (folded) name target (folded words joined by spaces)
// but for a typo within the cutoff.
func closeName(ws []string, target string) bool {
	got := strings.Join(ws, " ")
	if got == target || strings.ContainsAny(target, "0123456789") || hasDigit(got) {
		return got == target
	}
	c := typoCutoff(len([]rune(target)))
	return c > 0 && editDistance(got, target, c) <= c
}

// typoMention finds value (an enum value or known name) in the words pw written with a typo, and
// returns where it starts; -1 when absent. Words that are exactly another candidate (in
// exact) are not taken for a typo of this one.
func typoMention(pw []string, value string, exact map[string]bool) int {
	vw := words(value)
	if len(vw) == 0 {
		return -1
	}
	target := strings.Join(vw, " ")
	if typoCutoff(len([]rune(target))) == 0 {
		return -1
	}
	for i := 0; i+len(vw) <= len(pw); i++ {
		win := pw[i : i+len(vw)]
		if exact[strings.Join(win, " ")] || (len(vw) == 1 && stop[win[0]]) {
			continue
		}
		if closeName(win, target) {
			return i
		}
	}
	return -1
}
