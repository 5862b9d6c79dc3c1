package pricing

import (
	"errors"
	"testing"
	"time"
)

var now = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func sold(p, rel float64, daysAgo int) Comp {
	return Comp{Price: p, Relevance: rel, Sold: true, SoldAt: now.AddDate(0, 0, -daysAgo), ListedAt: now.AddDate(0, 0, -daysAgo-7)}
}

// The specification's unit test: three comps give floor, target and ceiling, in that order,
// with an overall confidence above one half.
func TestBandsFromThreeComps(t *testing.T) {
	t.Parallel()
	comps := []Comp{sold(100, 0.9, 3), sold(120, 0.8, 10), sold(90, 0.85, 5)}
	st := Compute(comps, now)
	conf := Confidence(st.N, st.Spread, 0.9)
	bands := Bands(st, conf, "USD")
	if len(bands) != 3 || bands[0].Label != "floor" || bands[1].Label != "target" || bands[2].Label != "ceiling" {
		t.Fatalf("bands %+v", bands)
	}
	if !(bands[0].Amount <= bands[1].Amount && bands[1].Amount <= bands[2].Amount) {
		t.Fatalf("bands out of order: %+v", bands)
	}
	if conf <= 0.5 {
		t.Fatalf("confidence %v, want > 0.5", conf)
	}
	if st.Median != 100 || st.Q1 != 95 || st.Q3 != 110 {
		t.Fatalf("stats %+v", st)
	}
}

func TestTrimDropsOutliers(t *testing.T) {
	t.Parallel()
	comps := []Comp{sold(100, 1, 1), sold(104, 1, 1), sold(98, 1, 1), sold(101, 1, 1), sold(99, 1, 1), sold(600, 1, 1), sold(5, 1, 1)}
	st := Compute(comps, now)
	if st.Trimmed != 2 || st.Max != 104 || st.Min != 98 {
		t.Fatalf("stats %+v", st)
	}
}

func TestRecencyWeighting(t *testing.T) {
	t.Parallel()
	// Old sales at 50, recent ones at 100: the weighted median follows the recent ones.
	comps := []Comp{sold(50, 1, 85), sold(52, 1, 80), sold(51, 1, 88), sold(100, 1, 1), sold(98, 1, 2)}
	st := Compute(comps, now)
	if st.Median != 52 || st.WeightedMedian < 98 {
		t.Fatalf("median %v weighted %v", st.Median, st.WeightedMedian)
	}
	if w := Weight(sold(10, 1, 30), now); w < 0.49 || w > 0.51 {
		t.Fatalf("weight after one half-life %v", w)
	}
}

func TestNoCompsLowConfidence(t *testing.T) {
	t.Parallel()
	st := Compute(nil, now)
	if Bands(st, 0.1, "USD") != nil || Confidence(0, 0, 1) != 0.1 {
		t.Fatal("no comps should give no bands and confidence 0.1")
	}
}

func TestConfidenceGrowsWithVolumeAndAgreement(t *testing.T) {
	t.Parallel()
	if !(Confidence(10, 0.1, 0.9) > Confidence(3, 0.1, 0.9)) || !(Confidence(10, 0.1, 0.9) > Confidence(10, 0.8, 0.9)) {
		t.Fatal("confidence should grow with comps and shrink with spread")
	}
}

func TestDemandSignals(t *testing.T) {
	t.Parallel()
	comps := []Comp{sold(100, 1, 3), sold(100, 1, 20), sold(100, 1, 200), {Price: 110, Relevance: 1}}
	d := DemandSignals(comps, "ebay", 90*24*time.Hour, now)
	got := map[string]float64{}
	for _, s := range d {
		got[s.Metric] = s.Value
	}
	if got["sell_through_rate"] != 0.67 || got["days_to_sell"] != 7 || got["active_competition"] != 1 {
		t.Fatalf("signals %+v", d)
	}
}

func TestCheckRefined(t *testing.T) {
	t.Parallel()
	comps := []Comp{sold(100, 1, 1), sold(110, 1, 1), sold(90, 1, 1), sold(105, 1, 1), sold(95, 1, 1)}
	st := Compute(comps, now)
	base := Bands(st, 0.8, "USD")
	ok := []Band{{Label: "floor", Amount: 94, Confidence: 0.99, Reasoning: "quick"}, {Label: "target", Amount: 101}, {Label: "ceiling", Amount: 108}}
	got, err := CheckRefined(base, ok, st)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Amount != 94 || got[0].Confidence != base[0].Confidence || got[0].Reasoning != "quick" {
		t.Fatalf("refined %+v", got)
	}
	for name, bad := range map[string][]Band{
		"too far":   {{Label: "floor", Amount: 40}, {Label: "target", Amount: 101}, {Label: "ceiling", Amount: 108}},
		"disorder":  {{Label: "floor", Amount: 104}, {Label: "target", Amount: 100}, {Label: "ceiling", Amount: 108}},
		"missing":   {{Label: "floor", Amount: 94}, {Label: "target", Amount: 101}, {Label: "high", Amount: 108}},
		"not price": {{Label: "floor", Amount: -1}, {Label: "target", Amount: 101}, {Label: "ceiling", Amount: 108}},
	} {
		if _, err := CheckRefined(base, bad, st); !errors.Is(err, ErrOutOfBounds) {
			t.Errorf("%s: err %v", name, err)
		}
	}
}
