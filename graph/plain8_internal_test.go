package graph

import (
	"math/rand/v2"
	"testing"
)

func TestPlain8Exhaustive(t *testing.T) {
	for c := 0; c < 256; c++ {
		want := c >= 0x20 && c < 0x80 && c != '"' && c != '\\'
		for pos := 0; pos < 8; pos++ {
			for _, fill := range []byte{'a', ' ', '~', '!'} {
				b := []byte{fill, fill, fill, fill, fill, fill, fill, fill}
				b[pos] = byte(c)
				if got := plain8(string(b)); got != want {
					t.Fatalf("byte %#x at %d among %q: plain8 %v", c, pos, fill, got)
				}
			}
		}
	}
}

func TestPlain8Random(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var b [8]byte
	for range 1_000_000 {
		want := true
		for i := range b {
			// Mostly printable ASCII, so that runs of plain bytes with one or two others are common.
			b[i] = byte(0x20 + rng.IntN(0x60))
			if rng.IntN(6) == 0 {
				b[i] = byte(rng.IntN(256))
			}
			if c := b[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
				want = false
			}
		}
		if got := plain8(string(b[:])); got != want {
			t.Fatalf("%q: plain8 %v", b, got)
		}
	}
}
