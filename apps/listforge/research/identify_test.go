package research_test

import (
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/listforge/catalog"
	"github.com/trellis-go/trellis/apps/listforge/research"
)

// Identification from what the seller wrote: brand, model, variant and MPN when written.
func TestIdentifyFromText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		title, description         string
		brand, model, variant, mpn string
	}{
		{"Apple iPhone 13 128GB Midnight Unlocked", "", "Apple", "iPhone 13", "128gb", ""},
		{"Sony PlayStation 5 Disc Edition Console", "Model CFI-1215A with one controller", "Sony", "PlayStation 5", "disc edition", "CFI-1215A"},
		{"Canon EF 50mm f/1.8 STM Lens", "", "Canon", "STM", "50mm", ""},
		{"Used Sony WH-1000XM4 noise cancelling headphones, black", "", "Sony", "WH-1000XM4", "", "WH-1000XM4"},
		{"Nike Air Jordan 1 Retro High OG Chicago Size 10", "", "Nike", "Air Jordan 1 Retro OG Chicago", "size 10", ""},
		{"Apple Watch Series 7 45mm GPS", "", "Apple", "Watch", "series 7", ""},
		{"DeWalt DCD791 20V MAX XR drill kit", "", "DeWalt", "DCD791 MAX XR drill", "20v", "DCD791"},
		{"Cordless stick vacuum", "Dyson V8 Absolute, MPN: V8ABS, all tools included", "Dyson", "stick vacuum", "", "V8ABS"},
	} {
		id := research.IdentifyText(c.title, c.description, nil)
		if id == nil {
			t.Errorf("%q: not identified", c.title)
			continue
		}
		variant, _ := id.Attributes["variant"].(string)
		if id.Brand != c.brand || id.Model != c.model || !strings.Contains(variant, c.variant) || id.MPN != c.mpn || id.Source != "text" {
			t.Errorf("%q: %+v (variant %q), want brand %q model %q variant %q mpn %q", c.title, id, variant, c.brand, c.model, c.variant, c.mpn)
		}
	}
	if id := research.IdentifyText("", "", nil); id != nil {
		t.Errorf("nothing written identified %+v", id)
	}
}

// An item whose photos carry no label is identified from its title: the brand is not asked
// for, and research searches for the model.
func TestTitleIdentifiesWithoutLabels(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	out := f.run(t, catalog.DemoTitleOnly)
	id := out.ProductIdentification
	if id == nil || id.Brand != "Sony" || !strings.Contains(id.Model, "PlayStation 5") || id.Source != "text" {
		t.Fatalf("identification %+v", id)
	}
	for _, h := range out.MissingInfo {
		if h.Field == "brand" || (h.Field == "model_number" && h.Importance == "required") {
			t.Errorf("asked for %s (%s) although the title names it", h.Field, h.Importance)
		}
	}
	if len(out.PriceBands) != 3 || out.Comparables == nil || out.Comparables.Dropped == 0 {
		t.Fatalf("bands %+v comparables %+v", out.PriceBands, out.Comparables)
	}
	// The digital edition, also found by the search, is not this item's variant.
	for _, c := range out.Comps {
		if strings.Contains(c.Title, "Digital") && c.RelevanceScore >= research.Priced {
			t.Errorf("another edition priced: %s %.2f", c.Title, c.RelevanceScore)
		}
	}
}
