package research_test

import (
	"context"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/listforge/research"
	"github.com/trellis-go/trellis/apps/listforge/store"
	"github.com/trellis-go/trellis/graph"
)

// research creates the item and runs the graph on it.
func (f *fixture) research(t *testing.T, it store.Item, thread string) research.State {
	t.Helper()
	it.LifecycleStatus = "ready"
	created, err := f.st.CreateItem(context.Background(), org, it)
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.g.Invoke(context.Background(), research.State{ItemID: created.ID, ResearchRunID: "run-" + thread, OrganizationID: org.Org},
		graph.WithThread(thread))
	if err != nil {
		t.Fatalf("%s: %v", it.Title, err)
	}
	return out
}

// Items described the way sellers write them: a product line without its brand ("iPhone",
// "Xbox", "Kindle"), their own spellings ("128 gig", "QC45", "8 qt", "11th generation"), generic
// nouns the listings do not use ("stick vac", "prime", "pressure cooker") and colours the
// listings leave out. Each is identified, finds comparables and is priced from its own variant.
func TestSellerWordsFindComparables(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	cases := []struct {
		title, desc, condition string
		brand                  string
		// every priced comparable's title holds these words (lower case)
		want []string
	}{
		{"iPhone 13 Pro Max 128 gig graphite", "Barely used, kept in a case. Light scratches on the back glass, no box.", "Lightly used", "Apple", []string{"iphone 13 pro max", "128gb"}},
		{"Bose QC45 noise cancelling headphones, white", "ANC perfect, ear pads slightly worn, no carrying case.", "fair", "Bose", []string{"quietcomfort 45"}},
		{"Dyson V11 cordless stick vac", "Battery still lasts about 40 minutes. Missing the crevice tool.", "used - good", "Dyson", []string{"v11"}},
		{"Canon 50mm 1.8 STM prime lens", "Mint, no scratches on the glass, both caps included.", "like new", "Canon", []string{"50mm", "1.8"}},
		{"Xbox Series S 512gb console", "Box missing, one controller and the power cord.", "used", "Microsoft", []string{"xbox series s"}},
		{"Kindle Paperwhite 11th generation 16GB", "Still sealed, unwanted gift.", "new in box", "Amazon", []string{"paperwhite", "16gb"}},
		{"Instant Pot Duo 8 qt pressure cooker", "Used maybe five times, all accessories included.", "excellent", "Instant Pot", []string{"duo", "8 quart"}},
		{"Apple Watch Series 7 45mm GPS midnight", "Battery health 89%, small ding on the case.", "Used", "Apple", []string{"series 7", "45mm"}},
		// held-out paraphrases
		{"galaxy s21 256 gigs phantom black", "Works fine, screen has a few micro scratches.", "Used", "Samsung", []string{"galaxy s21", "256gb"}},
		{"PS5 digital edition white", "Lightly used, one controller.", "Used", "Sony", []string{"digital"}},
	}
	for i, c := range cases {
		out := f.research(t, store.Item{Title: c.title, Description: c.desc, Condition: c.condition}, "t-seller-"+string(rune('a'+i)))
		id := out.ProductIdentification
		if id == nil || id.Brand != c.brand {
			t.Errorf("%q: identified as %+v, want brand %s", c.title, id, c.brand)
			continue
		}
		priced := 0
		for _, e := range out.Comps {
			if e.RelevanceScore < 0.7 {
				continue
			}
			priced++
			title := strings.ToLower(e.Title)
			for _, w := range c.want {
				if !strings.Contains(title, w) {
					t.Errorf("%q: priced by %q, which lacks %q", c.title, e.Title, w)
				}
			}
		}
		if priced < 3 || out.OverallConfidence < 0.5 {
			t.Errorf("%q: %d comparables priced it (queries %q), confidence %.2f; want at least 3 and 0.5", c.title, priced, out.SearchQueries, out.OverallConfidence)
		}
	}
}

// A camera sold with its kit lens is priced from kits, and a body from bodies.
func TestCameraKitVersusBody(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	for i, c := range []struct{ title, desc, want, not string }{
		{"Sony a6400 with 16-50 kit lens", "Shutter count around 4k, comes with two batteries.", "kit", "body only"},
		{"Sony Alpha a6400 mirrorless, body only", "Low shutter count, no lens included.", "body only", "kit"},
	} {
		out := f.research(t, store.Item{Title: c.title, Description: c.desc, Condition: "Used"}, "t-camera-"+string(rune('a'+i)))
		priced := 0
		for _, e := range out.Comps {
			if e.RelevanceScore < 0.7 {
				continue
			}
			priced++
			if title := strings.ToLower(e.Title); !strings.Contains(title, c.want) || strings.Contains(title, c.not) {
				t.Errorf("%q: priced by %q", c.title, e.Title)
			}
		}
		if priced < 3 {
			t.Errorf("%q: %d comparables priced it", c.title, priced)
		}
	}
}

// Sellers' ways of saying new and unopened are new; "like new" stays below new.
func TestSellerConditionWords(t *testing.T) {
	t.Parallel()
	for c, want := range map[string]float64{"new in box": 1, "NIB": 1, "Unopened": 1, "never opened, still sealed": 1, "New in package": 1,
		"like new": 0.78, "Like new in box": 0.78, "Open box": 0.9, "used": 0.68, "for parts": 0.28} {
		if got := research.ConditionFactor(c); got != want {
			t.Errorf("%q: %.2f, want %.2f", c, got, want)
		}
	}
	// A sealed e-reader is priced from new sales, above a used one.
	f := setup(t, nil)
	target := map[string]float64{}
	for i, cond := range []string{"new in box", "used"} {
		out := f.research(t, store.Item{Title: "Kindle Paperwhite 11th Gen 16GB", Description: "Unwanted gift.", Condition: cond}, "t-cond-"+string(rune('a'+i)))
		target[cond] = band(out, "target")
	}
	if target["new in box"] < target["used"]*1.3 {
		t.Errorf("targets %v: new in box should be priced as new, well above used", target)
	}
}
