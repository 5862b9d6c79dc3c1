package vesper

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/vesper/pack"
)

// TestCueNamesKnown: every cue list the rules name is one pack.ParseWords requires, so a
// misspelt name cannot silently read an empty list.
func TestCueNamesKnown(t *testing.T) {
	use := regexp.MustCompile(`(?:hasCue\([^,()]+, |Cues\[)"([a-z_]+)"`)
	files, _ := filepath.Glob("*.go")
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range use.FindAllStringSubmatch(string(src), -1) {
			n++
			if !slices.Contains(pack.CueNames, m[1]) {
				t.Errorf("%s: cue %q is not in pack.CueNames", f, m[1])
			}
		}
	}
	if n < 20 {
		t.Errorf("found %d cue uses; the pattern no longer sees the rules' calls", n)
	}
}
