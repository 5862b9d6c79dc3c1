package offline_test

import (
	"testing"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/model/offline/packtest"
)

// Cues point to a tool with the words an example's coverage cannot see (stopwords, numbers,
// links), at the start of a message only with "^", with typos forgiven, through synonyms, and a
// negative weight counts against a tool.
func TestPackCues(t *testing.T) {
	t.Parallel()
	p, err := offline.ParsePack([]byte(`{"name": "library",
		"synonyms": {"hm": ["how"]},
		"intents": [
			{"tool": "count_loans", "weight": 6, "cues": ["how many", "number of"]},
			{"tool": "explain_fine", "weight": 6, "cues": ["why", "explain*"]},
			{"tool": "check_fee", "weight": 6, "cues": ["is # ok", "<url>"]},
			{"tool": "renew_loan", "weight": 6, "cues": ["^renew", "^keep"]},
			{"tool": "renew_loan", "weight": -12, "cues": ["renewals"]},
			{"tool": "renew_loan", "weight": 6, "args": {"weeks": 2}, "cues": ["^keep it longer"]}
		]}`))
	if err != nil {
		t.Fatal(err)
	}
	none := `{"type":"object","properties":{}}`
	tools := []model.ToolSpec{
		packtest.Spec("list_books", "List the books in the catalogue.", none),
		packtest.Spec("count_loans", "Loans of the member.", none),
		packtest.Spec("explain_fine", "The member's fine.", none),
		packtest.Spec("check_fee", "A fee.", none),
		packtest.Spec("renew_loan", "Renew a loan.", `{"type":"object","properties":{"weeks":{"type":"integer"}}}`),
	}
	m := packtest.Model(p)
	for text, want := range map[string]string{
		"how many do I have out?":           "count_loans",
		"hm many do I have":                 "count_loans", // a synonym
		"why?":                              "explain_fine",
		"can you expliain the books fine":   "explain_fine", // a typo
		"is $4 ok for the books":            "check_fee",
		"https://example.org/fees/12 books": "check_fee",
		"renew the books please":            "renew_loan",
		"keep it longer":                    "renew_loan",
		"can I keep them":                   "list_books", // "^keep" opens a message only
		"keep renewals of the books":        "list_books", // the negative cue
	} {
		resp := packtest.Ask(t, m, tools, message.User(text))
		got := ""
		if len(resp.Message.ToolCalls) > 0 {
			got = resp.Message.ToolCalls[0].Name
		}
		if want == "list_books" && got == "renew_loan" {
			t.Errorf("%q: called renew_loan", text)
		} else if want != "list_books" && got != want {
			t.Errorf("%q: called %q (%s), want %s", text, got, resp.Message.Content, want)
		}
	}
	if _, args := packtest.ArgsOf(t, packtest.Ask(t, m, tools, message.User("keep it longer"))); args["weeks"] != 2.0 {
		t.Errorf("the cue's intent args: %v", args)
	}
	if err := (&offline.Pack{Name: "x", Intents: []offline.Intent{{Tool: "t"}}}).Validate(); err == nil {
		t.Error("an intent without examples or cues passed")
	}
}

// WordsMatch forgives a typo from five letters (two from nine), after a stem's '*' too, never
// for a known word nor for a word holding a digit.
func TestWordsMatch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		w, c  string
		exact bool
		want  bool
	}{
		{"casa", "casa", false, true},
		{"detalhes", "detalh*", false, true},
		{"detlhes", "detalh*", false, true},    // a typo in the stem
		{"dtalhes", "deta*", false, false},     // a stem under five letters is read exactly
		{"recalcla", "recalcula", false, true}, // one edit
		{"recalclaa", "recalcula", false, true},
		{"comparar", "compara", false, true},
		{"compramos", "compara", true, false}, // a known word is no typo
		{"mesa", "meas", false, false},        // under five letters: exact only
		{"tarefa", "tarefas", false, true},
		{"tarfea", "tarefa", false, true}, // a swap of adjacent letters
		{"tarefinhas", "tarefa", false, false},
		{"12345", "12346", false, false}, // numbers are never typos
		{"t2abcd", "t3abcd", false, false},
		{"2023ano", "2023an*", false, true},
		{"2024xx", "2023x*", false, false},
		{"portefolio", "portfolio", false, true},
		{"portifolio", "portfolio", false, true},
		{"apartamento", "apartamentos", false, true},
		{"anuncio", "anuncios", true, false},
	} {
		if got := offline.WordsMatch(c.w, c.c, c.exact); got != c.want {
			t.Errorf("WordsMatch(%q, %q, %v) = %v, want %v", c.w, c.c, c.exact, got, c.want)
		}
	}
}
