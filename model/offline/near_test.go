package offline

import "testing"

func TestNear(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		written, word string
		want          bool
	}{
		{"Investgate", "investigate", true}, {"procede", "proceed", true}, {"omitt", "omit", true},
		{"Café", "cafe", true}, {"dorp", "drop", false}, {"yse", "yes", false}, {"W15", "W16", false},
		{"ignore", "ignore", true}, {"research", "rehearse", false},
	} {
		if got := Near(c.written, c.word); got != c.want {
			t.Errorf("Near(%q, %q) = %v, want %v", c.written, c.word, got, c.want)
		}
	}
}
