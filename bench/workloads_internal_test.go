package bench

import "testing"

func TestRandomLettersSpread(t *testing.T) {
	var counts [26]int
	s := randomLetters(260_000)
	if len(s) != 260_000 {
		t.Fatal(len(s))
	}
	for _, c := range []byte(s) {
		if c < 'a' || c > 'z' {
			t.Fatalf("%q", c)
		}
		counts[c-'a']++
	}
	for i, n := range counts {
		if n < 9000 || n > 11000 {
			t.Errorf("letter %c: %d of 260000", 'a'+i, n)
		}
	}
}
