package rehab_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/rehab"
	"github.com/trellis-go/trellis/model/offline/packtest"
)

// Every sentence the Go code (of rehab, its knowledge base and its tax tables) asks for is in
// prompts/answers.json, and every one there is asked for: answer("name"), prompts.Say("name") or
// prompts.Lead("name") literally, or by a prefix and a tool action or a rule ("task_" + action).
func TestAnswersAreTheCodes(t *testing.T) {
	used := map[string][]string{}
	var prefixes []string
	for _, dir := range []string{".", "kb", "taxes"} {
		for n, files := range packtest.NamesInCode(t, dir, regexp.MustCompile(`(?:answer|Lead|Say)\("([a-z0-9_]+)"[),]`)) {
			used[n] = append(used[n], files...)
		}
		for p := range packtest.NamesInCode(t, dir, regexp.MustCompile(`(?:answer|Say)\("([a-z0-9_]+)"\s*\+`)) {
			prefixes = append(prefixes, p)
		}
	}
	for n, files := range used {
		if !slices.Contains(rehab.AnswerNames, n) {
			t.Errorf("%v ask for answer %q, which AnswerNames (and so prompts/answers.json) lacks", files, n)
		}
	}
	if len(used) < 100 || len(prefixes) == 0 {
		t.Errorf("found %d answers and %d prefixes; the pattern no longer sees the code's calls", len(used), len(prefixes))
	}
	for _, n := range rehab.AnswerNames {
		byPrefix := slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(n, p) })
		if used[n] == nil && !byPrefix {
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
