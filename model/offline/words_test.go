package offline

import (
	"strings"
	"testing"
)

type testWords struct {
	Greetings []string          `json:"greetings"`
	Stages    map[string]int    `json:"stages"`
	Opening   string            `json:"opening"`
	Aliases   map[string]string `json:"aliases,omitempty"`
	internal  []string
}

func TestParseWords(t *testing.T) {
	var w testWords
	if err := ParseWords([]byte(`{"greetings": ["hi", "hello"], "stages": {"two": 2}, "opening": "so"}`), &w); err != nil {
		t.Fatal(err)
	}
	if len(w.Greetings) != 2 || w.Stages["two"] != 2 || w.Opening != "so" || w.Aliases != nil || w.internal != nil {
		t.Fatalf("words = %+v", w)
	}
	for _, c := range []struct{ in, want string }{
		{`{"greetings": ["hi"], "stages": {"two": 2}}`, `"opening" is missing or empty`},
		{`{"greetings": [], "stages": {"two": 2}, "opening": "so"}`, `"greetings" is missing or empty`},
		{`{"greetings": ["hi"], "stages": {"two": 2}, "opening": "so", "greeting": ["yo"]}`, `unknown field "greeting"; the fields are "greetings", "stages", "opening", "aliases"`},
		{`{"greetings": "hi"}`, `cannot unmarshal string`},
		{`{"greetings": ["hi"], "stages": {"two": 2}, "opening": "so"} {}`, `more than one JSON value`},
		{``, `EOF`},
	} {
		var w testWords
		if err := ParseWords([]byte(c.in), &w); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseWords(%s) = %v, want an error saying %q", c.in, err, c.want)
		}
	}
	var notStruct []string
	if err := ParseWords([]byte(`["a"]`), &notStruct); err == nil || !strings.Contains(err.Error(), "pointer to a struct") {
		t.Errorf("ParseWords into a slice = %v, want an error", err)
	}
}

// A contraction of a stopword ("I'm", "I’ve") is not a name, wherever it stands; a name with
// an apostrophe ("O'Brien", "Martha's Vineyard") still is.
func TestCapitalPhrasesSkipContractedStopwords(t *testing.T) {
	for text, want := range map[string]string{
		"hello, I'm after a flat in Lisbon":       "Lisbon",
		"so I’ve been looking near Porto lately":  "Porto",
		"hi there, I'd like a loft by Lake Union": "Lake Union",
		"we met with O'Brien yesterday":           "O'Brien",
		"a weekend on Martha's Vineyard":          "Martha's Vineyard",
	} {
		got := capitalPhrases(text)
		if len(got) != 1 || got[0] != want {
			t.Errorf("capitalPhrases(%q) = %q, want [%q]", text, got, want)
		}
	}
}

// A place after a preposition is never the quantity of "at least" or "at most".
func TestAfterSkipsQuantities(t *testing.T) {
	for text, want := range map[string]string{
		"a loft, 2 baths at least, somewhere around lisbon": "lisbon",
		"at most 400k, ideally near braga":                  "braga",
		"flats at least 60 m2 in porto":                     "porto",
		"something at the coast":                            "the coast",
		"homes near boulder":                                "boulder",
	} {
		if got := after(text, "in", "near", "around", "at"); got != want {
			t.Errorf("after(%q) = %q, want %q", text, got, want)
		}
	}
}
