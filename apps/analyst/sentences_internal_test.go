package analyst

import (
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestSentencesRender: every sentence the Go code names is in prompts/offline/sentences.md or
// prompts/messages/messages.md and every sentence there is named by the code; the questions the
// analyst writes read back through aboutRe; a malformed file is refused with what is wrong.
func TestSentencesRender(t *testing.T) {
	t.Parallel()
	called := regexp.MustCompile(`(?:sentence|readBack)\("([a-z_]+)"`)
	used := map[string]bool{}
	for _, text := range codeFiles(t) {
		for _, m := range called.FindAllStringSubmatch(text, -1) {
			used[m[1]] = true
		}
	}
	for name := range used {
		if offlineSentences[name] == nil {
			t.Errorf("the code names sentence %q, which neither sentences.md nor messages.md gives", name)
		}
	}
	for name := range offlineSentences {
		if !used[name] {
			t.Errorf("sentences.md or messages.md gives %q, which no code names", name)
		}
	}
	for _, c := range []struct{ subject, want string }{
		{"battery costs", "battery costs"},
		{"Project Falcon in leasing", "Project Falcon in leasing"},
	} {
		q := sentence("question_about", map[string]any{"Subject": c.subject})
		if got := subjectOf(q); got != c.want {
			t.Errorf("subjectOf(%q) = %q, want %q", q, got, c.want)
		}
		if got := subjectOf(strings.TrimSuffix(strings.ToLower(q), "?")); got != strings.ToLower(c.want) {
			t.Errorf("subjectOf(%q) without its \"?\" = %q", q, got)
		}
	}
	if got := joinAnd([]string{"A", "B", "C"}); got != "A, B and C" {
		t.Errorf("joinAnd = %q", got)
	}
	for _, c := range []struct{ in, want string }{
		{"intro\n## \nx", "needs a name and a text"},
		{"intro\n## a\n", "needs a name and a text"},
		{"intro\n## a\nx\n## a\ny", "given twice"},
		{"intro\n## a\n{{.X", "sentences.md"},
	} {
		if _, err := parseSentences("sentences.md", c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseSentences(%q) = %v, want an error saying %q", c.in, err, c.want)
		}
	}
	if _, err := mergeSentences("a.md", "## x\none", "b.md", "## x\ntwo"); err == nil || !strings.Contains(err.Error(), `"x" is given in both a.md and b.md`) {
		t.Errorf("a sentence given in two files: %v", err)
	}
}

// TestSentenceCallsRender: every call of sentence in the code gives the values its sentence
// names: each is rendered with the keys of the call's map (nil: none) set to a placeholder, so a
// sentence naming a value its caller does not give fails here rather than at run time.
func TestSentenceCallsRender(t *testing.T) {
	t.Parallel()
	call := regexp.MustCompile(`(?s)sentence\("([a-z_]+)", (nil|map\[string\]any\{(.*?)\}\))`)
	key := regexp.MustCompile(`"([A-Z][A-Za-z]*)":`)
	lists := map[string]bool{"list.Names": true, "task_brief.Steps": true} // values that are lists
	calls := 0
	for f, text := range codeFiles(t) {
		for _, m := range call.FindAllStringSubmatch(text, -1) {
			name, data := m[1], map[string]any{}
			for _, k := range key.FindAllStringSubmatch(m[3], -1) {
				data[k[1]] = "x"
				if lists[name+"."+k[1]] {
					data[k[1]] = []string{"x", "y"}
				}
			}
			tpl := offlineSentences[name]
			if tpl == nil {
				t.Errorf("%s: no sentence %q", f, name)
				continue
			}
			calls++
			if err := tpl.Execute(io.Discard, data); err != nil {
				t.Errorf("%s: sentence %q with the values %v: %v", f, name, slices.Sorted(maps.Keys(data)), err)
			}
		}
	}
	if calls < 100 {
		t.Errorf("read %d calls of sentence; the pattern misses some", calls)
	}
}

// codeFiles are the package's Go files but its tests, their text by name.
func codeFiles(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = string(b)
	}
	return out
}
