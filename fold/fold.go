// Package fold writes text the way word matching compares it: in lower case, with the accents
// of Latin letters taken off ("Ação" is "acao", "Março" is "marco", "3º" is "3o").
//
// The offline model, the period reader and the apps' own readers fold what people write
// before they look for words in it, so "proxima", "próxima" and "PRÓXIMA" are one word.
// Folding decomposes each letter (Unicode compatibility decomposition, NFKD, from
// golang.org/x/text) and drops the combining marks, from a table for the Latin letters; text that is already ASCII is only lower-cased, without allocating when it
// is lower case already.
package fold

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// String is s in lower case without accents.
func String(s string) string {
	if isASCII(s) {
		return lowerASCII(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			b.WriteByte(byte(unicode.ToLower(r)))
		case r < rune(len(latin)):
			b.WriteString(latin[r])
		default:
			b.WriteString(decompose(string(unicode.ToLower(r))))
		}
	}
	return b.String()
}

// latin holds the folded form of every letter below U+0250 (Latin-1 and Latin Extended-A
// and B), which covers the accents of the languages the apps read; other runes are decomposed
// as they come.
var latin = func() (t [0x250]string) {
	for r := range t {
		t[r] = decompose(string(unicode.ToLower(rune(r))))
	}
	return t
}()

// decompose is s with its compatibility decomposition's combining marks dropped.
func decompose(s string) string {
	var b strings.Builder
	var it norm.Iter
	it.InitString(norm.NFKD, s)
	for !it.Done() {
		seg := it.Next()
		for len(seg) > 0 {
			r, n := utf8.DecodeRune(seg)
			if !unicode.Is(unicode.Mn, r) {
				b.WriteRune(r)
			}
			seg = seg[n:]
		}
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// lowerASCII lower-cases ASCII text, returning s itself when it has no upper-case letter.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}
