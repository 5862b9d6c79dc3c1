package tools

import (
	_ "embed"
	"github.com/trellis-go/trellis/apps/vesper/pack"
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
	// MilestoneAliases map what people call a milestone (lower case) to a milestone column's
	// name in any case ("cod": "commercial operation").
	MilestoneAliases map[string]string `json:"milestone_aliases"`
	// FieldAliases map what people call a changed field (lower case, without spaces, "_" or
	// "-") to the change log's field ("duedate": "FinishDate").
	FieldAliases map[string]string `json:"field_aliases"`
}

// SearchedNames are the phrases the tools write (Texts.Searched).
var SearchedNames = []string{"every_vendor", "average_price", "as_of", "hourly", "vendors", "and", "hub_zones",
	"top_reports", "top_users", "trend", "project", "health", "milestones", "budget", "risks", "curves", "curves_for",
	"by_vendor", "by_market", "by_hub_zone", "of_vendor", "of_report", "in_project", "at_level", "portfolio", "by_technology",
	"by_stage", "by_status", "by_sponsor", "by_buyer", "changes_since", "changes_from", "changes_in", "changes_to", "changes_of", "range"}

// ParseTexts reads a texts file: every name of [SearchedNames] must be given, and no unknown
// field.
func ParseTexts(b []byte) (*Texts, error) { return pack.Read(textsFile, b, checkTexts) }

const textsFile = "vesper tools: texts.json"

func checkTexts(t *Texts) error {
	return pack.Need("searched", t.Searched, SearchedNames, "tools.SearchedNames")
}

var texts = pack.MustRead(textsFile, textsData, checkTexts)

// searchWords is the phrase of texts.json by that name, filled ([Fill]).
func searchWords(name string, pairs ...string) string {
	return Fill(texts.Searched[name], pairs...)
}

// Searched is the phrase of texts.json by that name (one of [SearchedNames]), filled: what the
// formatter reads of the tools' phrases ("curves" with no filters, to say the filters apart).
func Searched(name string, pairs ...string) string { return searchWords(name, pairs...) }

// Fill replaces each {name} of a text with its value, in one pass (appkit.Fill); pairs are
// name, value. The tools' phrases and the formatter's sentences (package synth) are filled with it.
func Fill(text string, pairs ...string) string { return appkit.Fill(text, pairs...) }
