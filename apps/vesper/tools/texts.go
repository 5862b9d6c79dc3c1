package tools

import (
	_ "embed"
	"fmt"

	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/server/appkit"
)

// What each tool says it searched (Meta.Searched: "hourly day-ahead prices for NP15 in CAISO
// for 2025"), which an empty answer repeats, is data, in texts.json; Go fills the placeholders.
//
//go:embed texts.json
var textsData []byte

// Texts are the tools' phrases, read from texts.json.
type Texts struct {
	// Searched are the phrases by name (the names of [SearchedNames]), each with its
	// {placeholders}.
	Searched map[string]string `json:"searched"`
}

// SearchedNames are the phrases the tools write (Texts.Searched).
var SearchedNames = []string{"every_vendor", "average_price", "as_of", "hourly", "vendors", "and", "hub_zones",
	"top_reports", "top_users", "trend", "project", "health", "milestones", "budget", "risks"}

// ParseTexts reads a texts file: every name of [SearchedNames] must be given, and no unknown
// field.
func ParseTexts(b []byte) (*Texts, error) {
	var t Texts
	if err := offline.ParseWords(b, &t); err != nil {
		return nil, fmt.Errorf("vesper tools: texts.json: %w", err)
	}
	for _, name := range SearchedNames {
		if t.Searched[name] == "" {
			return nil, fmt.Errorf("vesper tools: texts.json: searched %q is missing or empty; the tools read every name of tools.SearchedNames", name)
		}
	}
	return &t, nil
}

var texts = mustTexts(textsData)

func mustTexts(b []byte) *Texts {
	t, err := ParseTexts(b)
	if err != nil {
		panic(err)
	}
	return t
}

// searchWords is the phrase of texts.json by that name, filled ([Fill]).
func searchWords(name string, pairs ...string) string {
	return Fill(texts.Searched[name], pairs...)
}

// Fill replaces each {name} of a text with its value, in one pass (appkit.Fill); pairs are
// name, value. The tools' phrases and the formatter's sentences (package synth) are filled with it.
func Fill(text string, pairs ...string) string { return appkit.Fill(text, pairs...) }
