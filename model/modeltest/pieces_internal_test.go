package modeltest

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPiecesKeepCharactersWhole(t *testing.T) {
	s := "Status 🟢 on track, ação é ✓ — 日本語"
	for n := 1; n < 12; n++ {
		ps := pieces(s, n)
		if strings.Join(ps, "") != s {
			t.Fatalf("n=%d: pieces do not add up: %q", n, ps)
		}
		for _, p := range ps {
			if !utf8.ValidString(p) || p == "" {
				t.Fatalf("n=%d: piece %q cuts a character", n, p)
			}
		}
	}
}
