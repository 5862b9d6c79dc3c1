package entity

// Ratio is the similarity of a and b in [0, 1], computed like Python's
// difflib.SequenceMatcher.ratio (the measure the specification's
// get_close_matches uses): twice the number of characters in matching
// blocks over the total length, where matching blocks are found by taking
// the longest common substring and recursing on both sides of it.
func Ratio(a, b string) float64 {
	ra, rb := []rune(a), []rune(b)
	if len(ra)+len(rb) == 0 {
		return 1
	}
	return 2 * float64(matching(ra, rb)) / float64(len(ra)+len(rb))
}

func matching(a, b []rune) int {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	// longest common substring, earliest in a then in b on ties (as difflib)
	best, bi, bj := 0, 0, 0
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			if a[i-1] == b[j-1] {
				cur[j] = prev[j-1] + 1
				if cur[j] > best {
					best, bi, bj = cur[j], i-cur[j], j-cur[j]
				}
			} else {
				cur[j] = 0
			}
		}
		prev, cur = cur, prev
	}
	if best == 0 {
		return 0
	}
	return best + matching(a[:bi], b[:bj]) + matching(a[bi+best:], b[bj+best:])
}

// CloseMatches returns up to n candidates whose Ratio to word is at least
// cutoff, best first (ties keep the candidates' order), like difflib's
// get_close_matches.
func CloseMatches(word string, candidates []string, n int, cutoff float64) []string {
	type scored struct {
		s string
		r float64
		i int
	}
	var hits []scored
	for i, c := range candidates {
		if r := Ratio(word, c); r >= cutoff {
			hits = append(hits, scored{c, r, i})
		}
	}
	// insertion sort: the lists are short
	for i := 1; i < len(hits); i++ {
		for j := i; j > 0 && (hits[j].r > hits[j-1].r); j-- {
			hits[j], hits[j-1] = hits[j-1], hits[j]
		}
	}
	out := make([]string, 0, min(n, len(hits)))
	for _, h := range hits {
		if len(out) == n {
			break
		}
		out = append(out, h.s)
	}
	return out
}
