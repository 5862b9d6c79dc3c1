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
