package offline_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/fold"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/telemetry"
)

// A made-up library application: its tools, and the pack that teaches the offline model its words.
var libraryTools = []model.ToolSpec{
	spec("search_catalogue", "Search the catalogue by author or title.",
		`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`),
	spec("renew_loan", "Renew a loan.",
		`{"type":"object","properties":{"isbn":{"type":"string"},"weeks":{"type":"integer"}},"required":["isbn"]}`),
	spec("reserve_copy", "Reserve a copy on a shelf.",
		`{"type":"object","properties":{"shelf":{"type":"string"},"isbn":{"type":"string"}},"required":["shelf"]}`),
	spec("list_loans", "List the loans of the member.", `{"type":"object","properties":{}}`),
}

const libraryPack = `{
  "name": "library",
  "synonyms": {"novel": ["catalogue"], "livros": ["catalogue"], "reserva": ["reserve"], "copia": ["copy"],
    "renova": ["renew"], "emprestimo": ["loan"]},
  "languages": {"pt": ["livro", "livros", "estante"]},
  "intents": [
    {"tool": "renew_loan", "examples": ["keep the book longer", "I need more time with it"], "args": {"weeks": 3}},
    {"tool": "list_loans", "examples": ["what did I borrow", "o que tenho emprestado"]}
  ],
  "id_words": ["isbn"],
  "id_fields": ["isbn"],
  "entities": [{"arg": "shelf", "pattern": "(?i)\\bshelf\\s+([A-Z]\\d{1,2})\\b|\\bestante\\s+([A-Z]\\d{1,2})\\b"}],
  "references": {"superlatives": {"oldest": {"field": "year", "lowest": true}, "newest": {"field": "year"}}},
  "answers": {"list_loans": {"en": "Your loans:", "pt": "Os seus empréstimos:"}}
}`

func library(t *testing.T) *offline.Model {
	t.Helper()
	p, err := offline.ParsePack([]byte(libraryPack))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2025, 3, 19, 10, 0, 0, 0, time.UTC)
	return offline.New(&offline.Options{Now: func() time.Time { return now }, Packs: []*offline.Pack{p}})
}

func calls(resp *model.Response) string {
	var b strings.Builder
	for _, c := range resp.Message.ToolCalls {
		b.WriteString(c.Name + string(c.Arguments))
	}
	return b.String()
}

// TestPackTeachesTheDomain: without the pack the model misses what the library's users say; with
// it, synonyms, intents (and their default arguments), ID words, entity patterns and language
// words reach the right tool with the right arguments.
func TestPackTeachesTheDomain(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"find the novel 'Dune'", `search_catalogue{"query":"Dune"}`},
		{"I want to keep the book longer, isbn 9780441013593", `renew_loan{"isbn":"9780441013593","weeks":3}`},
		{"I need more time with isbn 9780441013593", `renew_loan{"isbn":"9780441013593","weeks":3}`},
		{"what did I borrow?", `list_loans{}`},
		{"reserve a copy on shelf B12", `reserve_copy{"shelf":"B12"}`},
	} {
		if got := calls(ask(t, library(t), libraryTools, message.User(c.text))); got != c.want {
			t.Errorf("with the pack, %q called %s, want %s", c.text, got, c.want)
		}
	}
	// Without the pack, the intent's phrasing finds no tool: the pack is what taught it.
	if got := calls(ask(t, setup(t), libraryTools, message.User("what did I borrow?"))); got != "" {
		t.Errorf("without the pack, %q called %s", "what did I borrow?", got)
	}
	// The pack's words mark Portuguese: the announcement is in Portuguese.
	resp := ask(t, library(t), libraryTools, message.User("reserva a cópia na estante C3"))
	if calls(resp) != `reserve_copy{"shelf":"C3"}` || !strings.HasPrefix(resp.Message.Content, "A chamar") {
		t.Errorf("Portuguese request: %s, %q", calls(resp), resp.Message.Content)
	}
}

// TestPackReferencesAndAnswers: ordinals, the pack's superlatives and "that one" pick an item a
// tool listed; the pack's opening line starts the answer from its tool's results.
func TestPackReferencesAndAnswers(t *testing.T) {
	listed := `[{"isbn":"111","title":"Dune","year":1965},{"isbn":"222","title":"Solaris","year":1961},{"isbn":"333","title":"Hyperion","year":1989}]`
	call := message.ToolCall{ID: "c1", Name: "search_catalogue", Arguments: json.RawMessage(`{"query":"sf"}`)}
	history := []message.Message{message.User("search the catalogue for sf"), message.Assistant("", call), message.ToolResult("c1", "search_catalogue", listed),
		message.Assistant("Three books: Dune (111), Solaris (222) and Hyperion (333).")}
	for text, want := range map[string]string{
		"renew the loan of the second one": "222",
		"renew the loan of the last one":   "333",
		"renew the loan of the oldest":     "222",
		"renew the loan of the newest":     "333",
		"renova o empréstimo do primeiro":  "111",
	} {
		_, args := argsOf(t, ask(t, library(t), libraryTools[1:2], append(history, message.User(text))...))
		if args["isbn"] != want {
			t.Errorf("%q: isbn = %v, want %s", text, args["isbn"], want)
		}
	}
	// "that one" is the only item listed.
	one := []message.Message{message.User("search dune"), message.Assistant("", call), message.ToolResult("c1", "search_catalogue", `[{"isbn":"111","title":"Dune"}]`)}
	_, args := argsOf(t, ask(t, library(t), libraryTools[1:2], append(one, message.User("renew the loan of that one"))...))
	if args["isbn"] != "111" {
		t.Errorf("that one: isbn = %v", args["isbn"])
	}
	// Nothing points at an item: the model asks for the ID.
	resp := ask(t, library(t), libraryTools[1:2], append(history, message.User("renew the loan please"))...)
	if len(resp.Message.ToolCalls) != 0 || !strings.Contains(resp.Message.Content, "`isbn`") {
		t.Errorf("no reference: %s %q", calls(resp), resp.Message.Content)
	}
	// The pack's answer line, in the user's language.
	lc := message.ToolCall{ID: "l1", Name: "list_loans", Arguments: json.RawMessage(`{}`)}
	for text, want := range map[string]string{"what did I borrow?": "Your loans:", "o que tenho emprestado?": "Os seus empréstimos:"} {
		resp := ask(t, library(t), libraryTools, message.User(text), message.Assistant("", lc), message.ToolResult("l1", "list_loans", `[{"title":"Dune"}]`))
		if !strings.HasPrefix(resp.Message.Content, want) {
			t.Errorf("%q: answer %q does not open with %q", text, resp.Message.Content, want)
		}
	}
}

// TestExtendAndPacksOf: Extend adds packs to the offline model (not to other models or wrappers),
// refuses invalid packs, and PacksOf finds them through wrappers.
func TestExtendAndPacksOf(t *testing.T) {
	p, err := offline.ParsePack([]byte(libraryPack))
	if err != nil {
		t.Fatal(err)
	}
	m, ok, err := offline.Extend(setup(t), p)
	if !ok || err != nil {
		t.Fatalf("Extend(offline) = %v, %v", ok, err)
	}
	resp, err := m.Generate(context.Background(), &model.Request{Messages: []message.Message{message.User("what did I borrow?")}, Tools: libraryTools})
	if err != nil || calls(resp) != "list_loans{}" {
		t.Errorf("extended model: %v %v", calls(resp), err)
	}
	traced := telemetry.Model(m, telemetry.ModelInfo{})
	if got := offline.PacksOf(traced); len(got) != 1 || got[0] != p {
		t.Errorf("PacksOf(traced) = %v", got)
	}
	if _, ok, _ := offline.Extend(traced, p); ok {
		t.Error("Extend went into a wrapper it cannot rebuild")
	}
	if _, _, err := offline.Extend(setup(t), &offline.Pack{Name: "bad", Entities: []offline.Entity{{Arg: "x", Pattern: "("}}}); err == nil || !strings.Contains(err.Error(), "does not compile") {
		t.Errorf("invalid pattern: %v", err)
	}
	for data, want := range map[string]string{
		`{"name":"x","languages":{"it":["ciao"]}}`:                 `language "it"`,
		`{"name":"x","intents":[{"examples":["a"]}]}`:              "has no tool",
		`{"name":"x","intents":[{"tool":"t"}]}`:                    "has no examples",
		`{"name":"x","references":{"superlatives":{"best":{}}}}`:   "has no field",
		`{"name":"x","synonym":{}}`:                                `unknown field "synonym"`,
		`{"name":"x","answers":{"t":{"xx":"Hello"}}}`:              `language "xx"`,
		`{"name":"x","entities":[{"pattern":"a"}]}`:                "has no arg",
		`{"name":"x","entities":[{"arg":"a","pattern":"[a"}]}`:     "does not compile",
		`{"name":"x","references":{"superlatives":{"b":{"f":1}}}}`: `unknown field "f"`,
	} {
		if _, err := offline.ParsePack([]byte(data)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParsePack(%s) = %v, want an error about %s", data, err, want)
		}
	}
}

// appWords are words of the applications' domains. The offline model keeps only what is
// language-general: these arrive in the apps' packs, never in its source. Beside them,
// TestNoAppWordsInTheModel bans every word the apps' own packs teach (packWords).
var appWords = []string{
	"imovel", "imoveis", "zpid", "zillow", "idealista", "listing", "listings", "todo", "todos", "imt",
	"comparable", "comparables", "comps", "portfolio", "portefolio", "carteira", "renovation", "renovate",
	"remodelar", "remodel", "refurbish", "obras", "bedroom", "bedrooms", "quartos", "apartment", "apartamento",
	"vivienda", "immobilie", "taxes", "impostos", "imposto", "impuestos", "steuern", "fiscal", "milestone",
	"milestones", "hourly", "anuncio", "anuncios", "rehab", "realty", "vesper", "listforge", "nazareth",
	"caiso", "ercot", "hitachi", "ascend", "pbi", "rag", "np15", "sp15",
	// the to-do words of rehab's pack, and the words its tools are named with
	"tarefa", "tarefas", "tareas", "taches", "aufgaben", "contexto", "mudar",
}

// packGeneral are words an app's pack teaches that are also the model's own, language-general
// words: "property" is JSON Schema's word for an object's field; "perfil" and "orcamento" are
// Portuguese words of the model's synonyms (for "profile", "budget"), "zona" one of its words
// for a place, "meta" the model's metadata.
var packGeneral = map[string]bool{"property": true, "perfil": true, "orcamento": true, "zona": true, "meta": true}

// packWords are the words and phrases the applications' packs (apps/*/pack/pack.json) teach the
// offline model: their ID words and fields, language words, superlatives, words for the item in
// view, tool names and the phrases of their values, folded, each with the app that teaches it.
func packWords(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "apps", "*", "pack", "pack.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no apps/*/pack/pack.json found from model/offline: the test cannot see the apps' packs")
	}
	out := map[string]string{}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		p, err := offline.ParsePack(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		app := filepath.Base(filepath.Dir(filepath.Dir(name)))
		add := func(ws ...string) {
			for _, w := range ws {
				if w = strings.Join(strings.Fields(fold.String(w)), " "); w != "" && !packGeneral[w] {
					out[w] = app
				}
			}
		}
		add(p.IDWords...)
		add(p.IDFields...)
		for _, ws := range p.Languages {
			add(ws...)
		}
		for w := range p.References.Superlatives {
			add(w)
		}
		for w := range p.References.Ordinals {
			add(w)
		}
		add(p.References.This...)
		for _, in := range p.Intents {
			add(in.Tool)
		}
		// the words that name arguments' values (the values are the tools' own words)
		for _, byValue := range p.Values {
			for _, phrases := range byValue {
				for _, ph := range phrases {
					add(strings.Trim(strings.ReplaceAll(ph, "*", ""), "!^ "))
				}
			}
		}
	}
	return out
}

// TestNoAppWordsInTheModel fails when an application's word reappears in the package's non-test
// source and data (code, tables, comments): the fixed list above, and every word and phrase the
// apps' packs teach.
func TestNoAppWordsInTheModel(t *testing.T) {
	files, err := filepath.Glob("*")
	if err != nil {
		t.Fatal(err)
	}
	word := regexp.MustCompile(`[\p{L}\d]+`)
	ident := regexp.MustCompile(`[\p{L}\d_]+`)
	banned := map[string]string{}
	for _, w := range appWords {
		banned[w] = "the applications"
	}
	var phrases []string
	for w, app := range packWords(t) {
		if strings.Contains(w, " ") {
			phrases = append(phrases, w)
		}
		banned[w] = app + "'s pack"
	}
	checked := 0
	for _, name := range files {
		if st, err := os.Stat(name); err != nil || st.IsDir() || strings.HasSuffix(name, "_test.go") {
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for i, line := range strings.Split(string(data), "\n") {
			report := func(w, whose string) {
				t.Errorf("%s:%d: %q belongs in an app's pack (%s): %s", name, i+1, w, whose, strings.TrimSpace(line))
			}
			for _, w := range ident.FindAllString(line, -1) {
				if whose, ok := banned[fold.String(w)]; ok && strings.Contains(w, "_") {
					report(w, whose)
				}
			}
			for _, w := range word.FindAllString(line, -1) {
				for _, part := range splitCase(w) {
					if whose, ok := banned[fold.String(part)]; ok {
						report(part, whose)
					}
				}
			}
			folded := " " + strings.Join(word.FindAllString(fold.String(line), -1), " ") + " "
			for _, p := range phrases {
				if strings.Contains(folded, " "+p+" ") {
					report(p, banned[p])
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no source files checked")
	}
}

// splitCase breaks snake_case and camelCase words apart.
func splitCase(w string) []string {
	var out []string
	start := 0
	r := []rune(w)
	for i := 1; i < len(r); i++ {
		if r[i] >= 'A' && r[i] <= 'Z' && r[i-1] >= 'a' && r[i-1] <= 'z' {
			out = append(out, string(r[start:i]))
			start = i
		}
	}
	return append(out, string(r[start:]))
}
