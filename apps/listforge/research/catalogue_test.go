package research_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/listforge/pricing"
	"github.com/trellis-go/trellis/apps/listforge/research"
	"github.com/trellis-go/trellis/apps/listforge/store"
)

// confusable is a listing that shares most words with the item but is not it: another
// variant, an accessory, parts, a lot, a bundle. Factor is its price relative to the item's.
type confusable struct {
	title  string
	factor float64
}

// relevanceCase is an item as a seller types it, how sellers title the same variant, and the
// listings a marketplace search returns along with them.
type relevanceCase struct {
	category  string
	item      store.Item
	own       []string
	price     float64
	confusers []confusable
}

// catalogue are realistic confusable listings in eight categories.
var relevanceCatalogue = []relevanceCase{
	{"phones", store.Item{Title: "Apple iPhone 13 128GB Midnight Unlocked", Condition: "Used", Description: "Works perfectly, battery 89%."},
		[]string{"Apple iPhone 13 128GB Midnight Unlocked", "iPhone 13 128 GB Blue Unlocked - Excellent", "Apple iPhone 13 - 128GB - Starlight (Unlocked) A2482",
			"Apple iPhone 13 128GB Pink Verizon Unlocked Good Condition", "iPhone 13 128GB Green unlocked"}, 410,
		[]confusable{{"Apple iPhone 13 256GB Midnight Unlocked", 1.18}, {"Apple iPhone 13 512GB Blue Unlocked", 1.4}, {"Apple iPhone 13 Pro 128GB Graphite Unlocked", 1.3},
			{"Apple iPhone 13 Pro Max 128GB Sierra Blue", 1.55}, {"Apple iPhone 13 mini 128GB Pink Unlocked", 0.8}, {"Apple iPhone 12 128GB Black Unlocked", 0.72},
			{"Case for iPhone 13 128GB clear silicone", 0.03}, {"Apple iPhone 13 128GB for parts cracked screen", 0.3}, {"Lot of 3 Apple iPhone 13 128GB Unlocked", 2.9},
			{"Screen protector tempered glass for iPhone 13", 0.02}}},
	{"consoles", store.Item{Title: "Sony PlayStation 5 Disc Edition Console", Condition: "Used", Description: "PS5 with one controller and cables."},
		[]string{"Sony PlayStation 5 Disc Edition Console", "PlayStation 5 Console Disc Edition CFI-1215A White", "Sony PS5 PlayStation 5 Disc Edition 825GB",
			"Sony PlayStation 5 Console (Disc Edition) with controller"}, 390,
		[]confusable{{"Sony PlayStation 5 Digital Edition Console", 0.78}, {"Sony PlayStation 5 Slim Disc Edition Console", 1.15}, {"Sony PlayStation 5 Pro Console 2TB", 1.7},
			{"Sony PlayStation 5 Disc Edition Console Bundle with 3 games", 1.3}, {"DualSense controller for PlayStation 5", 0.15}, {"Sony PlayStation 5 Disc Edition for parts not working", 0.35},
			{"PlayStation 5 Disc Edition box only no console", 0.05}, {"Sony PlayStation 4 Slim 1TB Console", 0.45}}},
	{"lenses", store.Item{Title: "Canon EF 50mm f/1.8 STM Lens", Condition: "Used", Description: "Clean glass, both caps."},
		[]string{"Canon EF 50mm f/1.8 STM Lens", "Canon EF 50mm f1.8 STM prime lens - excellent", "Canon 50mm f/1.8 STM EF lens with caps", "Canon EF 50mm 1:1.8 STM"}, 95,
		[]confusable{{"Canon EF 50mm f/1.4 USM Lens", 2.6}, {"Canon EF 50mm f/1.2L USM Lens", 9.5}, {"Canon EF 85mm f/1.8 USM Lens", 2.9}, {"Canon RF 50mm f/1.8 STM Lens", 1.3},
			{"Canon EF 50mm f/1.8 II Lens", 0.7}, {"Lens hood for Canon EF 50mm f/1.8 STM", 0.12}, {"Canon EF 50mm f/1.8 STM lens for parts fungus", 0.3},
			{"Canon EOS Rebel T7 with EF 50mm f/1.8 STM lens bundle", 4.5}}},
	{"headphones", store.Item{Title: "Sony WH-1000XM4 Wireless Noise Cancelling Headphones Black", Condition: "Used", Description: "Light wear on the pads, case included."},
		[]string{"Sony WH-1000XM4 Wireless Noise Cancelling Headphones Black", "Sony WH1000XM4 headphones silver", "Sony WH-1000XM4 noise canceling over-ear headphones",
			"SONY WH-1000XM4 Bluetooth headphones - black - with case"}, 175,
		[]confusable{{"Sony WH-1000XM5 Wireless Noise Cancelling Headphones", 1.45}, {"Sony WH-1000XM3 Wireless Noise Cancelling Headphones", 0.65},
			{"Sony WF-1000XM4 earbuds", 0.75}, {"Replacement ear pads for Sony WH-1000XM4", 0.1}, {"Sony WH-1000XM4 case only", 0.12},
			{"Sony WH-1000XM4 headphones for parts not charging", 0.3}, {"Lot of 2 Sony WH-1000XM4 headphones", 1.9}}},
	{"sneakers", store.Item{Title: "Nike Air Jordan 1 Retro High OG Chicago Size 10", Condition: "Used", Description: "Worn a few times, original box."},
		[]string{"Nike Air Jordan 1 Retro High OG Chicago Size 10", "Air Jordan 1 High OG Chicago Lost and Found sz 10", "Nike Jordan 1 Retro High OG Chicago Men's US 10",
			"Jordan 1 Retro High Chicago OG size 10 DZ5485-612"}, 300,
		[]confusable{{"Nike Air Jordan 1 Retro High OG Chicago Size 13", 0.85}, {"Nike Air Jordan 1 Retro High OG Chicago Size 8", 1.2}, {"Nike Air Jordan 1 Low Chicago Size 10", 0.45},
			{"Nike Air Jordan 1 Mid Chicago Size 10", 0.42}, {"Nike Air Jordan 1 Retro High OG Chicago GS Size 6Y", 0.6}, {"Nike Air Jordan 1 High Chicago box only", 0.08},
			{"Replacement laces for Air Jordan 1 Chicago", 0.04}}},
	{"watches", store.Item{Title: "Apple Watch Series 7 45mm GPS Midnight Aluminum", Condition: "Used", Description: "Screen has light scratches, with charger."},
		[]string{"Apple Watch Series 7 45mm GPS Midnight Aluminum", "Apple Watch Series 7 GPS 45mm Green Aluminium Case", "Apple Watch S7 45mm GPS blue",
			"Apple Watch Series 7 (GPS) 45 mm starlight aluminum sport band"}, 190,
		[]confusable{{"Apple Watch Series 7 41mm GPS Midnight Aluminum", 0.85}, {"Apple Watch Series 8 45mm GPS Midnight", 1.25}, {"Apple Watch Series 6 44mm GPS", 0.75},
			{"Apple Watch Series 7 45mm GPS + Cellular Stainless Steel", 1.6}, {"Apple Watch Ultra 49mm Titanium", 2.8}, {"Sport band strap for Apple Watch Series 7 45mm", 0.06},
			{"Apple Watch Series 7 45mm for parts cracked", 0.3}, {"Charger cable for Apple Watch Series 7", 0.05}}},
	{"tools", store.Item{Title: "DeWalt DCD791 20V MAX XR Brushless Drill Driver Kit with 2 batteries", Condition: "Used", Description: "Drill, two 2Ah batteries, charger and bag."},
		[]string{"DeWalt DCD791 20V MAX XR Brushless Drill Driver Kit with 2 batteries", "DEWALT DCD791D2 20V XR brushless drill kit 2 batteries charger",
			"DeWalt 20V MAX XR DCD791 cordless drill kit", "Dewalt DCD791 XR 20 volt drill driver kit w/ batteries and charger"}, 130,
		[]confusable{{"DeWalt DCD791 20V MAX XR Brushless Drill Driver tool only", 0.55}, {"DeWalt DCD791B bare tool 20V XR drill", 0.55},
			{"DeWalt DCD996 20V MAX XR hammer drill kit", 1.45}, {"DeWalt DCD771 20V MAX drill driver kit", 0.6}, {"DeWalt 20V MAX battery only DCB203", 0.3},
			{"DeWalt DCD791 drill for parts not working", 0.25}, {"Lot of 2 DeWalt DCD791 20V drills", 1.8}}},
	{"books", store.Item{Title: "The Hobbit by J.R.R. Tolkien Hardcover", Condition: "Used", Description: "Dust jacket with small tears, 1966 printing."},
		[]string{"The Hobbit by J.R.R. Tolkien Hardcover", "The Hobbit J.R.R. Tolkien hardcover with dust jacket", "The Hobbit - Tolkien - Hardback",
			"THE HOBBIT by JRR Tolkien hardcover Houghton Mifflin"}, 24,
		[]confusable{{"The Hobbit by J.R.R. Tolkien Paperback", 0.35}, {"The Hobbit by J.R.R. Tolkien first edition 1937 hardcover", 60},
			{"The Hobbit J.R.R. Tolkien signed hardcover", 25}, {"The Hobbit and The Lord of the Rings box set Tolkien", 2.5},
			{"Lot of 5 Tolkien books The Hobbit Silmarillion hardcover", 3.2}, {"The Hobbit audiobook audio CD Tolkien", 0.8}}},
}

// listings makes the sold listings a search returns for the case: the item's own variant
// (and two price outliers of it: a typo and a mislabelled bundle), and each confusable; the
// own variant's normal prices are returned apart, the truth the target is checked against.
func (c relevanceCase) listings(rng *rand.Rand, now time.Time) (comps []store.Evidence, truth []float64) {
	n := 0
	add := func(title string, price float64) {
		n++
		p := float64(int(price*100)) / 100
		comps = append(comps, store.Evidence{ID: fmt.Sprintf("ebay:%s-%d", c.category, n), Type: "sold_listing", Source: "ebay", Title: title,
			Price: &p, Currency: "USD", Condition: "Used", SoldDate: now.Add(-time.Duration(1+rng.IntN(60)) * 24 * time.Hour).Format(time.RFC3339)})
	}
	for i := 0; i < 16; i++ {
		p := c.price * (0.88 + 0.24*rng.Float64())
		truth = append(truth, p)
		add(c.own[i%len(c.own)], p)
	}
	add(c.own[0], c.price*3.2)
	add(c.own[1%len(c.own)], c.price*0.2)
	for _, f := range c.confusers {
		for i := 0; i < 4; i++ {
			add(f.title, c.price*f.factor*(0.9+0.2*rng.Float64()))
		}
	}
	rng.Shuffle(len(comps), func(i, j int) { comps[i], comps[j] = comps[j], comps[i] })
	sort.Float64s(truth)
	return comps, truth
}

// The relevance catalogue: for an item of each category, the comparables of other variants,
// accessories, parts, lots and bundles are scored down or dropped with a reason, and the
// target price lies within the item's own variant's sold-price interquartile range.
func TestRelevanceCatalogue(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	categories := map[string]bool{}
	for i, c := range relevanceCatalogue {
		t.Run(c.category, func(t *testing.T) {
			categories[c.category] = true
			rng := rand.New(rand.NewPCG(uint64(i)+7, 99))
			comps, truth := c.listings(rng, now)
			item := c.item
			scored, sum, _, err := research.ScoreCompRelevance(context.Background(), comps, nil, &item, nil)
			if err != nil {
				t.Fatal(err)
			}
			st := pricing.Compute(research.PricingComps(scored, &item), now)
			bands := pricing.Bands(st, 0.8, "USD")
			if len(bands) != 3 {
				t.Fatalf("no bands: %+v", sum)
			}
			q1, q3 := pricing.Quantile(truth, 0.25), pricing.Quantile(truth, 0.75)
			target := bands[1].Amount
			if target < q1 || target > q3 {
				for _, s := range scored {
					if s.RelevanceScore >= research.Priced {
						t.Logf("priced %.2f %7.2f %s %v", s.RelevanceScore, *s.Price, s.Title, s.ExtractedData["relevance"])
					}
				}
				t.Errorf("%s: target %.2f outside the variant's IQR %.2f-%.2f (floor %.2f ceiling %.2f) %+v", c.item.Title, target, q1, q3, bands[0].Amount, bands[2].Amount, sum)
			}
			// No confusable listing prices the item.
			own := map[string]bool{}
			for _, o := range c.own {
				own[o] = true
			}
			for _, s := range scored {
				if !own[s.Title] && s.RelevanceScore >= research.Priced {
					t.Errorf("%s: confusable %q priced at relevance %.2f: %v", c.category, s.Title, s.RelevanceScore, s.ExtractedData["relevance"])
				}
				if own[s.Title] && s.RelevanceScore < research.Kept {
					t.Errorf("%s: own listing %q dropped at %.2f: %v", c.category, s.Title, s.RelevanceScore, s.ExtractedData["relevance"])
				}
			}
			if sum.Dropped == 0 || len(sum.Reasons) == 0 || sum.Considered != len(comps) {
				t.Errorf("summary %+v", sum)
			}
			t.Logf("%s: target %.2f in %.2f-%.2f; kept %d priced %d dropped %d %v", c.category, target, q1, q3, sum.Kept, sum.Priced, sum.Dropped, sum.Reasons)
		})
	}
	if len(categories) < 8 {
		t.Fatalf("%d categories", len(categories))
	}
}
