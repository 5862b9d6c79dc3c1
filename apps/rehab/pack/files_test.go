package pack

import (
	"slices"
	"strings"
	"testing"
)

// The text files' lines are checked, with errors that say the line and the format.
func TestFilesBadLines(t *testing.T) {
	if _, err := parseSpellings([]byte("# ok\nvc tu\npq\n")); err == nil || !strings.Contains(err.Error(), "spellings.txt line 3") {
		t.Errorf("a spelling without its words: %v", err)
	}
	if _, err := parsePlaces([]byte("city Lisboa\nAlfama\n")); err == nil || !strings.Contains(err.Error(), "places.txt line 2: want city <name> or neighbourhood <name>") {
		t.Errorf("a place without its kind: %v", err)
	}
	if _, err := ParseFacts([]byte("fiscal idade @age x tenho\n")); err == nil || !strings.Contains(err.Error(), "confidence") {
		t.Errorf("a fact with a bad confidence: %v", err)
	}
}

// Each word is written once: the spellings reach the pack's synonyms and the places its exact
// words; the cities are not neighbourhoods.
func TestFilesReachThePack(t *testing.T) {
	if len(Spellings) == 0 || len(Places) == 0 {
		t.Fatal("no spellings or places read")
	}
	for w, as := range Spellings {
		if !slices.Contains(Pack.Synonyms[w], as) {
			t.Errorf("spelling %q → %q is not among the pack's synonyms", w, as)
		}
	}
	for _, p := range Places {
		if !slices.Contains(Pack.Exact, p.Name) {
			t.Errorf("place %q is not among the pack's exact words", p.Name)
		}
		if slices.Contains(Neighbourhoods(), p.Name) == p.City {
			t.Errorf("place %q (city %v) in Neighbourhoods: %v", p.Name, p.City, !p.City)
		}
	}
}

// words.json is read strictly: a list left out or misspelt is an error naming it.
func TestWordsFile(t *testing.T) {
	if len(Words.Negations) == 0 || len(Words.Numbers) == 0 {
		t.Fatal("words.json read no negations or numbers")
	}
	if _, err := parseVocabulary([]byte(`{"age_lead": ["tenho"]}`)); err == nil || !strings.Contains(err.Error(), "words.json") || !strings.Contains(err.Error(), `"age_unit" is missing`) {
		t.Errorf("a words file without age_unit: %v", err)
	}
	if _, err := parseVocabulary([]byte(`{"negation": ["nao"]}`)); err == nil || !strings.Contains(err.Error(), `"negations"`) {
		t.Errorf("a misspelt field: %v", err)
	}
	bad := strings.Replace(string(wordsJSON), `{"value": "kitchen", "words": ["cozinha"]}`, `{"value": "kitchen"}`, 1)
	if _, err := parseVocabulary([]byte(bad)); err == nil || !strings.Contains(err.Error(), "rooms[0] needs a value and its words") {
		t.Errorf("a room without its words: %v", err)
	}
	bad = strings.Replace(string(wordsJSON), `"by": "area", "order": "most"`, `"by": "size", "order": "most"`, 1)
	if _, err := parseVocabulary([]byte(bad)); err == nil || !strings.Contains(err.Error(), `superlatives[2] needs words, says, by "price" or "area"`) {
		t.Errorf("a superlative by an unknown number: %v", err)
	}
}
