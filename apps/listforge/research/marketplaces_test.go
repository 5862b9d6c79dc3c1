package research_test

import (
	"slices"
	"testing"

	"github.com/trellis-go/trellis/apps/listforge/research"
	"github.com/trellis-go/trellis/apps/listforge/store"
)

// Marketplaces: Facebook Marketplace for cheap items and for the bulky categories the
// knowledge names (localPickup), not for other items.
func TestMarketplacesLocalPickup(t *testing.T) {
	t.Parallel()
	item := func(category string, target float64) research.State {
		return research.State{
			ProductIdentification: &store.ProductIdentification{Category: []string{category}},
			PriceBands:            []store.PriceBand{{Label: "target", Amount: target}},
		}
	}
	for _, c := range []struct {
		category string
		target   float64
		local    bool
	}{
		{"Stand Mixers", 300, true},
		{"Vacuum Cleaners", 250, true},
		{"Headphones", 200, false},
		{"Headphones", 40, true},
	} {
		got := research.Marketplaces(item(c.category, c.target))
		if slices.Contains(got, "facebook_marketplace") != c.local || !slices.Contains(got, "ebay") {
			t.Errorf("%s at $%.0f: %v", c.category, c.target, got)
		}
	}
}

// ConditionFactor reads eBay's condition names and what sellers write by the knowledge's cues.
func TestConditionFactor(t *testing.T) {
	t.Parallel()
	for c, want := range map[string]float64{
		"For parts or not working": 0.28, "Certified - Refurbished": 0.82, "Open box": 0.90,
		"Like New": 0.78, "New": 1, "New with tags": 1, "Used": 0.68, "": 0.68, "fair": 0.55,
		"newish": 0.68,
	} {
		if got := research.ConditionFactor(c); got != want {
			t.Errorf("ConditionFactor(%q) = %v, want %v", c, got, want)
		}
	}
	if _, err := research.LoadKnowledge([]byte(`{"conditions": {"unknown": 0.7, "factors": [{"factor": 0.5}]}}`)); err == nil {
		t.Error("a condition factor without cues was accepted")
	}
}
