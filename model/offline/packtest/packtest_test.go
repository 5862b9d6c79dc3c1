package packtest_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/model/offline/packtest"
)

// Paraphrases counts what is understood per intent, in the intents' order, and lets a known miss
// pass.
func TestParaphrasesFigures(t *testing.T) {
	want := map[string][]string{}
	for i := range packtest.MinParaphrases {
		want["greet"] = append(want["greet"], "hello "+strconv.Itoa(i))
		want["bye"] = append(want["bye"], "bye "+strconv.Itoa(i))
	}
	misses := map[string]string{"bye 7": "read as a greeting, on purpose"}
	got := packtest.Paraphrases(t, want, misses, func(text string) string {
		if text == "bye 7" || strings.HasPrefix(text, "hello") {
			return "greet"
		}
		return "bye"
	})
	if w := []string{"bye: 29/30", "greet: 30/30"}; !slices.Equal(got, w) {
		t.Fatalf("figures %v, want %v", got, w)
	}
}
