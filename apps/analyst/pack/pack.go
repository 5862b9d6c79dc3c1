// Package pack is the analyst's domain pack for the offline model: the words its users write for
// the company's documents, which its knowledge-base tool (rag_tool) searches, and what each
// answer to its gates sounds like (the choices of its classification schemas: the final gate's
// route, the discovery gate's reply, the plan gate's change). The server gives it to the offline
// model of every role the analyst uses (server.App.Pack).
package pack

import (
	_ "embed"
	"strings"
	"unicode"

	"github.com/trellis-go/trellis/model/offline"
)

//go:embed pack.json
var data []byte

// Pack is the analyst's pack, read from pack.json.
var Pack = offline.MustParsePack(data)

// words splits s into lower-case words of letters and digits ("re-plan" is "re", "plan").
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// choiceWords are the words of the examples the pack gives for value of field (all), and the
// words those examples start with (first).
func choiceWords(field, value string) (all, first map[string]bool) {
	all, first = map[string]bool{}, map[string]bool{}
	for _, c := range Pack.Choices {
		if c.Field != field || c.Value != value {
			continue
		}
		for _, ex := range c.Examples {
			for i, w := range words(ex) {
				all[w] = true
				if i == 0 {
					first[w] = true
				}
			}
		}
	}
	return all, first
}

// Subject is what text is about once the words that made it the value of field are taken out:
// for the plan change "add", "Add a question on the Madrid tender" is about "Madrid tender", and
// "Re-plan: focus on battery costs" is about "battery costs" for "focus". The words taken out are
// the first run of the value's example words (pack.json) that starts with a word an example
// starts with (a word may have a typo the offline model forgives, offline.Near);
// after is what follows the run and before what precedes it ("the rival: drop it"), each with
// text's own spelling. Text without such a run is its own after.
func Subject(field, value, text string) (before, after string) {
	all, first := choiceWords(field, value)
	toks := strings.Fields(text)
	in := func(tok string, set map[string]bool) bool {
		ws := words(tok)
		for _, w := range ws {
			if !set[w] && !nearAny(w, set) {
				return false
			}
		}
		return len(ws) > 0
	}
	trim := func(ts []string) string { return strings.Trim(strings.Join(ts, " "), " ,;:.!") }
	for i, tok := range toks {
		if !in(tok, all) {
			continue
		}
		if ws := words(tok); !first[ws[0]] && !nearAny(ws[0], first) {
			continue
		}
		j := i + 1
		for j < len(toks) && in(toks[j], all) {
			j++
		}
		return trim(toks[:i]), trim(toks[j:])
	}
	return "", trim(toks)
}

// nearAny reports whether w is a word of set but for a typo the offline model forgives.
func nearAny(w string, set map[string]bool) bool {
	for x := range set {
		if offline.Near(w, x) {
			return true
		}
	}
	return false
}
