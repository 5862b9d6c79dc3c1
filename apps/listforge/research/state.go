// Package research is listforge's ResearchGraph (the specification's §4): nine nodes from
// load_context to persist_results with a refine loop chosen by should_refine, checkpointed
// after every step so a failed or killed job resumes without running finished nodes again.
//
// The nodes call the eBay client (package ebay; offline, the generated catalogue through the
// same client), the models for vision, identification, pricing and missing information when a
// real model is configured, and deterministic logic where the offline model cannot do the job
// (reading labels from photos, scoring relevance, statistics in package pricing).
package research

import (
	"github.com/trellis-go/trellis/apps/listforge/store"
	"github.com/trellis-go/trellis/message"
)

// MediaAnalysis is what the photos show (the specification's media analysis prompt).
type MediaAnalysis struct {
	Category       string            `json:"category,omitempty"`
	Brand          string            `json:"brand,omitempty"`
	Model          string            `json:"model,omitempty"`
	ConditionScore float64           `json:"conditionScore,omitempty"`
	ConditionNotes string            `json:"conditionNotes,omitempty"`
	Features       map[string]string `json:"features,omitempty"`
	ExtractedText  map[string]string `json:"extractedText,omitempty"`
	Completeness   string            `json:"completeness,omitempty"`
	Confidence     float64           `json:"confidence,omitempty"`
	Images         int               `json:"images"`
}

// State is the ResearchGraph's state (the specification's §4.3).
type State struct {
	ItemID         string `json:"itemId"`
	ResearchRunID  string `json:"researchRunId"`
	OrganizationID string `json:"organizationId"`

	Messages []message.Message `json:"messages" reduce:"messages"`

	Item             *store.Item         `json:"item"`
	ExistingResearch *store.ResearchData `json:"existingResearch"`

	MediaAnalysis         *MediaAnalysis               `json:"mediaAnalysis"`
	ProductIdentification *store.ProductIdentification `json:"productIdentification"`

	// Comps are merged by ID: a comp seen again (a refine query finds it, analyze_comps
	// scores it) replaces the earlier entry instead of being added twice.
	Comps []store.Evidence `json:"comps"`
	// SearchQueries are kept as a set.
	SearchQueries []string `json:"searchQueries"`

	PriceBands    []store.PriceBand       `json:"priceBands"`
	DemandSignals []store.DemandSignal    `json:"demandSignals"`
	MissingInfo   []store.MissingInfoHint `json:"missingInfo"`

	Iteration           int     `json:"iteration"`
	MaxIterations       int     `json:"maxIterations"`
	ConfidenceThreshold float64 `json:"confidenceThreshold"`
	OverallConfidence   float64 `json:"overallConfidence"`
	Done                bool    `json:"done"`
	Error               string  `json:"error"`
	// Notes are what the user is told besides the numbers ("Limited data available, ...");
	// each pricing pass replaces them.
	Notes []string `json:"notes"`
	// Comparables says what relevance scoring kept and dropped, and why (and the outliers
	// trimmed before the bands).
	Comparables *store.CompSummary `json:"comparables"`
}

// MergeComps is the comps reducer: an update's comp replaces the one with its ID, in place;
// new comps are appended in order.
func MergeComps(cur, upd []store.Evidence) []store.Evidence {
	if len(upd) == 0 {
		return cur
	}
	at := make(map[string]int, len(cur))
	out := make([]store.Evidence, len(cur), len(cur)+len(upd))
	copy(out, cur)
	for i, c := range out {
		at[c.ID] = i
	}
	for _, c := range upd {
		if i, ok := at[c.ID]; ok && c.ID != "" {
			out[i] = c
			continue
		}
		at[c.ID] = len(out)
		out = append(out, c)
	}
	return out
}

// UnionQueries is the searchQueries reducer: a set, in first-seen order.
func UnionQueries(cur, upd []string) []string {
	seen := make(map[string]bool, len(cur)+len(upd))
	out := make([]string, 0, len(cur)+len(upd))
	for _, q := range append(append([]string{}, cur...), upd...) {
		if !seen[q] {
			seen[q] = true
			out = append(out, q)
		}
	}
	return out
}
