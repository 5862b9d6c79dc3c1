package vesper

import (
	"regexp"
	"slices"
	"testing"

	"github.com/trellis-go/trellis/apps/vesper/pack"
	"github.com/trellis-go/trellis/model/offline/packtest"
)

// TestCueNamesKnown: every cue list the rules name is one pack.ParseWords requires, so a
// misspelt name cannot silently read an empty list.
func TestCueNamesKnown(t *testing.T) {
	used := packtest.NamesInCode(t, ".", regexp.MustCompile(`(?:hasCue\([^,()]+, |Cues\[)"([a-z_]+)"`))
	n := 0
	for name, files := range used {
		n += len(files)
		if !slices.Contains(pack.CueNames, name) {
			t.Errorf("%v: cue %q is not in pack.CueNames", files, name)
		}
	}
	if n < 20 {
		t.Errorf("found %d cue uses; the pattern no longer sees the rules' calls", n)
	}
}
