package packtest

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// NamesInCode are the names the Go code of dir (its files but the tests) asks its data files
// for: the first group of each match of use, e.g. `answer\("([a-z0-9_]+)"` for the sentences of
// an answers file, or a cue list's name. Each name comes with the files that write it. An app's
// test checks them against the names its data files give, both ways, so that a misspelt name or
// a sentence no code writes is found.
func NamesInCode(t testing.TB, dir string, use *regexp.Regexp) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string][]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range use.FindAllStringSubmatch(string(src), -1) {
			if len(m) < 2 {
				t.Fatalf("packtest.NamesInCode: %s has no group for the name", use)
			}
			if fs := names[m[1]]; len(fs) == 0 || fs[len(fs)-1] != filepath.Base(f) {
				names[m[1]] = append(fs, filepath.Base(f))
			}
		}
	}
	for _, fs := range names {
		sort.Strings(fs)
	}
	return names
}
