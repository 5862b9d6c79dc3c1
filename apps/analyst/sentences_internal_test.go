package analyst

import (
	"regexp"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/model/offline/packtest"
)

// TestSentencesRender: every sentence the Go code names is in prompts/offline/sentences.md and
// every sentence there is named by the code; the questions the analyst writes read back
// through aboutRe; a malformed file is refused with what is wrong.
func TestSentencesRender(t *testing.T) {
	t.Parallel()
	used := packtest.NamesInCode(t, ".", regexp.MustCompile(`(?:sentence|readBack)\("([a-z_]+)"`))
	for name := range used {
		if offlineSentences[name] == nil {
			t.Errorf("the code names sentence %q, which sentences.md does not give", name)
		}
	}
	for name := range offlineSentences {
		if used[name] == nil {
			t.Errorf("sentences.md gives %q, which no code names", name)
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
		if _, err := parseSentences(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseSentences(%q) = %v, want an error saying %q", c.in, err, c.want)
		}
	}
}
