package appkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Texts are the sentences an app shows its users (its tools' answers, its replies, its
// reports), by name and language, read from a data file the app embeds:
//
//	{"saved": {"pt": "Guardado no portfólio: {property}.", "en": "Saved to the portfolio: {property}."}}
//
// Go keeps the logic and the formatting of numbers; the words are the file's. [ParseTexts]
// reads the file strictly, so that a missing sentence is found when the app starts, not when a
// user reaches it; [Texts.Say] fills one.
type Texts struct {
	file  string
	lang  string // the default
	langs []string
	by    map[string]map[string]string
}

var placeholderRE = regexp.MustCompile(`\{[a-z_][a-z0-9_]*\}`)

// ParseTexts reads a texts file named file (for the errors): a JSON object of names, each an
// object of language codes and non-empty texts with {placeholders}. Every name of names must be
// there, and no other; every name must be written in every language any name is written in,
// with the same placeholders in each; lang (the default language) must be one of them.
func ParseTexts(file string, data []byte, lang string, names []string) (*Texts, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var by map[string]map[string]string
	if err := dec.Decode(&by); err != nil {
		return nil, fmt.Errorf("%s: %w; want {\"<name>\": {\"<language>\": \"<text>\"}}", file, err)
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
		if _, ok := by[n]; !ok {
			return nil, fmt.Errorf("%s: %q is missing; the app writes it, so give its text in every language", file, n)
		}
	}
	langSet := map[string]bool{}
	for n, texts := range by {
		if !want[n] {
			return nil, fmt.Errorf("%s: %q is not a text the app writes; remove it or correct its name", file, n)
		}
		for l := range texts {
			langSet[l] = true
		}
	}
	if !langSet[lang] {
		return nil, fmt.Errorf("%s: no text is in %q, the default language; write every text in it", file, lang)
	}
	langs := make([]string, 0, len(langSet))
	for l := range langSet {
		langs = append(langs, l)
	}
	sort.Strings(langs)
	sorted := slices.Clone(names)
	sort.Strings(sorted)
	for _, n := range sorted {
		ref := placeholders(by[n][lang])
		for _, l := range langs {
			t, ok := by[n][l]
			if !ok || strings.TrimSpace(t) == "" {
				return nil, fmt.Errorf("%s: %q has no text in %q; every text needs every language of the file", file, n, l)
			}
			if got := placeholders(t); !slices.Equal(got, ref) {
				return nil, fmt.Errorf("%s: %q in %q has the placeholders %v, but in %q %v; give every language the same ones", file, n, l, got, lang, ref)
			}
		}
	}
	return &Texts{file: file, lang: lang, langs: langs, by: by}, nil
}

func placeholders(text string) []string {
	ps := placeholderRE.FindAllString(text, -1)
	sort.Strings(ps)
	return slices.Compact(ps)
}

// Languages are the languages the texts are written in, sorted.
func (t *Texts) Languages() []string { return slices.Clone(t.langs) }

// Has reports whether the texts are written in lang.
func (t *Texts) Has(lang string) bool { return slices.Contains(t.langs, lang) }

// Say is the text of name in lang (in the default language when the texts are not written in
// lang) with its placeholders filled ([Fill]). A name the file does not have, which
// ParseTexts rules out for the names it was given, is written as "{name}" so that a test sees it.
func (t *Texts) Say(lang, name string, pairs ...string) string {
	texts, ok := t.by[name]
	if !ok {
		return "{" + name + "}"
	}
	text, ok := texts[lang]
	if !ok {
		text = texts[t.lang]
	}
	return Fill(text, pairs...)
}

// Fill replaces each {name} of a text with its value, in one pass (a value holding "{name}"
// stays as it is); pairs are name, value.
func Fill(text string, pairs ...string) string {
	var old []string
	for i := 0; i+1 < len(pairs); i += 2 {
		old = append(old, "{"+pairs[i]+"}", pairs[i+1])
	}
	return strings.NewReplacer(old...).Replace(text)
}
