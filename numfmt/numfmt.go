// Package numfmt writes numbers as people read them: digits grouped in thousands with the
// separator of the reader's convention (1,234,567 in English, 1.234.567 in Portuguese). The
// applications' answers, tables and reports use it, so that each need not write the loop again.
package numfmt

import (
	"math"
	"strconv"
	"strings"
)

// Group writes the whole number n with sep between groups of three digits:
// Group(-1234567, ",") is "-1,234,567".
func Group(n int64, sep string) string {
	s := strconv.FormatInt(n, 10)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	var b strings.Builder
	b.Grow(len(sign) + len(s) + len(s)/3*len(sep))
	b.WriteString(sign)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString(sep)
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// GroupFloat writes v rounded to the nearest whole number (halves away from zero), grouped as
// Group does. A value too large for an int64, or not a number, is written by strconv as it is.
func GroupFloat(v float64, sep string) string {
	r := math.Round(v)
	if math.IsNaN(r) || r >= math.MaxInt64 || r <= math.MinInt64 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return Group(int64(r), sep)
}
