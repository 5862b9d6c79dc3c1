package rehab_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/rehab"
)

// Every sentence the Go code asks for is in prompts/answers.json, and every one there is asked
// for: answer("name") literally, or by a prefix and a tool action ("task_" + action).
func TestAnswersAreTheCodes(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	used := map[string]bool{}
	var prefixes []string
	callRE := regexp.MustCompile(`answer\("([a-z0-9_]+)"(\s*\+)?`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range callRE.FindAllStringSubmatch(string(src), -1) {
			if m[2] != "" {
				prefixes = append(prefixes, m[1])
				continue
			}
			used[m[1]] = true
			if !slices.Contains(rehab.AnswerNames, m[1]) {
				t.Errorf("%s asks for answer %q, which AnswerNames (and so prompts/answers.json) lacks", f, m[1])
			}
		}
	}
	for _, n := range rehab.AnswerNames {
		byPrefix := slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(n, p) })
		if !used[n] && !byPrefix {
			t.Errorf("answer %q is in prompts/answers.json but no code writes it", n)
		}
	}
	for _, action := range []string{"add", "complete", "reopen", "remove"} {
		if got := rehab.Answers.Say("pt", "task_"+action, "task", "x"); strings.Contains(got, "{") {
			t.Errorf("task_%s: %q", action, got)
		}
	}
}

func TestParseAnswersNamesWhatIsMissing(t *testing.T) {
	data, err := os.ReadFile("prompts/answers.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rehab.ParseAnswers(data); err != nil {
		t.Fatalf("the embedded answers: %v", err)
	}
	noHello := strings.Replace(string(data), `"hello":`, `"hullo":`, 1)
	if _, err := rehab.ParseAnswers([]byte(noHello)); err == nil || !strings.Contains(err.Error(), `"hello" is missing`) {
		t.Errorf("a missing answer: %v", err)
	}
	oneEnglish := strings.Replace(string(data), `"hello": { "pt": "Olá!" }`, `"hello": { "pt": "Olá!", "en": "Hello!" }`, 1)
	if _, err := rehab.ParseAnswers([]byte(oneEnglish)); err == nil || !strings.Contains(err.Error(), `has no text in "en"`) {
		t.Errorf("an answer missing a language: %v", err)
	}
}
