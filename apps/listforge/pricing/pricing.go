// Package pricing turns comparable listings into a price recommendation: statistics over the
// relevant comps (median, quartiles, outlier trimming, recency weighting), floor/target/ceiling
// bands with a confidence and a reason each, demand signals (sell-through, days to sell, active
// competition) and an overall confidence. It is plain Go with no I/O, so a model's proposal can
// be checked against it (see [CheckRefined]).
package pricing

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"
)

// Comp is one comparable listing, reduced to what pricing needs.
type Comp struct {
	// Price is the listing's price in the item's currency, already adjusted for condition.
	Price float64
	// Relevance is how close the listing is to the item, 0 to 1.
	Relevance float64
	// Sold is true for a sold listing, false for an active one.
	Sold bool
	// SoldAt is when a sold listing sold; ListedAt when a listing was put up (zero if unknown).
	SoldAt, ListedAt time.Time
}

// Stats are the statistics of a set of prices after outlier trimming.
type Stats struct {
	// N is how many prices were kept; Trimmed how many were dropped as outliers.
	N, Trimmed                     int
	Min, Q1, Median, Q3, Max, Mean float64
	// WeightedMedian weighs each price by its relevance and how recent it is (half-life
	// RecencyHalfLife).
	WeightedMedian float64
	// Spread is the interquartile range over the median (0 when N < 2): how much prices disagree.
	Spread float64
}

// RecencyHalfLife is the age at which a sale counts half as much as one made today.
const RecencyHalfLife = 30 * 24 * time.Hour

// Quantile returns the q-quantile (0..1) of sorted values by linear interpolation.
func Quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	if len(sorted) == 1 {
		return sorted[0]
	}
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	frac := pos - float64(lo)
	return sorted[lo] + (sorted[hi]-sorted[lo])*frac
}

// Trim drops outliers outside Tukey's fences (1.5 interquartile ranges beyond the quartiles)
// and returns the comps kept and how many were dropped. Fewer than four comps are kept whole.
func Trim(comps []Comp) ([]Comp, int) {
	if len(comps) < 4 {
		return comps, 0
	}
	prices := make([]float64, len(comps))
	for i, c := range comps {
		prices[i] = c.Price
	}
	sort.Float64s(prices)
	q1, q3 := Quantile(prices, 0.25), Quantile(prices, 0.75)
	iqr := q3 - q1
	lo, hi := q1-1.5*iqr, q3+1.5*iqr
	kept := make([]Comp, 0, len(comps))
	for _, c := range comps {
		if c.Price >= lo && c.Price <= hi {
			kept = append(kept, c)
		}
	}
	return kept, len(comps) - len(kept)
}

// Compute returns the statistics of the comps' prices at time now: outliers trimmed, then
// quartiles and a median weighted by relevance and recency. Comps with no positive price are
// ignored.
func Compute(comps []Comp, now time.Time) Stats {
	var priced []Comp
	for _, c := range comps {
		if c.Price > 0 {
			priced = append(priced, c)
		}
	}
	kept, trimmed := Trim(priced)
	st := Stats{N: len(kept), Trimmed: trimmed}
	if len(kept) == 0 {
		return st
	}
	prices := make([]float64, len(kept))
	sum := 0.0
	for i, c := range kept {
		prices[i] = c.Price
		sum += c.Price
	}
	sort.Float64s(prices)
	st.Min, st.Max = prices[0], prices[len(prices)-1]
	st.Q1, st.Median, st.Q3 = Quantile(prices, 0.25), Quantile(prices, 0.5), Quantile(prices, 0.75)
	st.Mean = sum / float64(len(prices))
	if st.N >= 2 && st.Median > 0 {
		st.Spread = (st.Q3 - st.Q1) / st.Median
	}
	st.WeightedMedian = weightedMedian(kept, now)
	return st
}

// Weight is how much a comp counts: its relevance times a recency factor that halves every
// RecencyHalfLife since it sold (active listings count as of now, at a quarter less).
func Weight(c Comp, now time.Time) float64 {
	rel := c.Relevance
	if rel <= 0 {
		rel = 0.01
	}
	if !c.Sold {
		return rel * 0.75
	}
	if c.SoldAt.IsZero() {
		return rel
	}
	age := now.Sub(c.SoldAt)
	if age < 0 {
		age = 0
	}
	return rel * math.Pow(0.5, float64(age)/float64(RecencyHalfLife))
}

func weightedMedian(comps []Comp, now time.Time) float64 {
	type pw struct{ p, w float64 }
	xs := make([]pw, len(comps))
	total := 0.0
	for i, c := range comps {
		xs[i] = pw{c.Price, Weight(c, now)}
		total += xs[i].w
	}
	sort.Slice(xs, func(i, j int) bool { return xs[i].p < xs[j].p })
	acc := 0.0
	for _, x := range xs {
		acc += x.w
		if acc >= total/2 {
			return x.p
		}
	}
	return xs[len(xs)-1].p
}

// Band is one price recommendation.
type Band struct {
	Label      string  `json:"label"` // floor, target or ceiling
	Amount     float64 `json:"amount"`
	Currency   string  `json:"currency"`
	Confidence float64 `json:"confidence"`
	Reasoning  string  `json:"reasoning"`
}

// Bands returns floor, target and ceiling from the statistics and the overall confidence:
// the floor at the lower quartile (a quick sale), the target at the weighted median, the
// ceiling at the upper quartile (a patient seller). None when there are no prices.
func Bands(st Stats, confidence float64, currency string) []Band {
	if st.N == 0 {
		return nil
	}
	if currency == "" {
		currency = "USD"
	}
	target := st.WeightedMedian
	floor := math.Min(st.Q1, target)
	ceiling := math.Max(st.Q3, target)
	c := clamp01(confidence)
	return []Band{
		{Label: "floor", Amount: round2(floor), Currency: currency, Confidence: round2(clamp01(c + 0.1)),
			Reasoning: fmt.Sprintf("Lower quartile of %d comparable sales: priced to sell quickly.", st.N)},
		{Label: "target", Amount: round2(target), Currency: currency, Confidence: c,
			Reasoning: fmt.Sprintf("Median of %d comparables weighted toward recent, close matches (plain median %.2f).", st.N, st.Median)},
		{Label: "ceiling", Amount: round2(ceiling), Currency: currency, Confidence: round2(clamp01(c - 0.15)),
			Reasoning: fmt.Sprintf("Upper quartile: reachable for a patient seller with a well-presented listing (highest kept %.2f).", st.Max)},
	}
}

// Confidence is the overall confidence in a recommendation from n relevant comps, their spread
// and how sure the product identification is: more comps and tighter prices give more.
func Confidence(n int, spread, identification float64) float64 {
	if n == 0 {
		return 0.1
	}
	volume := 1 - math.Exp(-float64(n)/3) // 3 comps ≈ 0.63, 8 ≈ 0.93
	tight := 1 / (1 + 2*spread)           // spread 0.2 ≈ 0.71, 0.5 = 0.5
	id := 0.5 + 0.5*clamp01(identification)
	return round2(clamp01(volume * tight * id * 1.25))
}

// Demand is one demand signal.
type Demand struct {
	Metric string  `json:"metric"` // sell_through_rate, days_to_sell, active_competition
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Period string  `json:"period,omitempty"`
	Source string  `json:"source"`
}

// DemandSignals derives sell-through (sold over sold plus active in the period), the mean days
// from listing to sale, and the number of active competitors.
func DemandSignals(comps []Comp, source string, period time.Duration, now time.Time) []Demand {
	var sold, active int
	var days, dayN float64
	for _, c := range comps {
		if c.Sold {
			if !c.SoldAt.IsZero() && now.Sub(c.SoldAt) > period {
				continue
			}
			sold++
			if !c.ListedAt.IsZero() && c.SoldAt.After(c.ListedAt) {
				days += c.SoldAt.Sub(c.ListedAt).Hours() / 24
				dayN++
			}
		} else {
			active++
		}
	}
	p := fmt.Sprintf("%dd", int(period.Hours()/24))
	var out []Demand
	if sold+active > 0 {
		out = append(out, Demand{Metric: "sell_through_rate", Value: round2(float64(sold) / float64(sold+active)), Unit: "ratio", Period: p, Source: source})
	}
	if dayN > 0 {
		out = append(out, Demand{Metric: "days_to_sell", Value: round2(days / dayN), Unit: "days", Period: p, Source: source})
	}
	out = append(out, Demand{Metric: "active_competition", Value: float64(active), Unit: "listings", Source: source})
	return out
}

// ErrOutOfBounds is returned by CheckRefined for a proposal it refuses.
var ErrOutOfBounds = errors.New("pricing: refined bands out of bounds")

// MaxRefine is how far (as a fraction of the computed amount) a model may move a band.
const MaxRefine = 0.25

// CheckRefined accepts a model's refinement of the computed bands when it keeps the three
// labels in order (floor <= target <= ceiling), stays inside the kept comps' range widened by
// 10%, and moves no band more than MaxRefine; otherwise it returns ErrOutOfBounds saying why.
// Confidences are capped at the computed ones: a model cannot make the data look better.
func CheckRefined(computed, proposed []Band, st Stats) ([]Band, error) {
	if len(computed) != 3 || len(proposed) != 3 {
		return nil, fmt.Errorf("%w: want three bands (floor, target, ceiling), got %d", ErrOutOfBounds, len(proposed))
	}
	byLabel := map[string]Band{}
	for _, b := range proposed {
		byLabel[b.Label] = b
	}
	out := make([]Band, 3)
	lo, hi := st.Min*0.9, st.Max*1.1
	for i, c := range computed {
		p, ok := byLabel[c.Label]
		if !ok {
			return nil, fmt.Errorf("%w: no %s band", ErrOutOfBounds, c.Label)
		}
		if p.Amount <= 0 || math.IsNaN(p.Amount) || math.IsInf(p.Amount, 0) {
			return nil, fmt.Errorf("%w: %s amount %v is not a price", ErrOutOfBounds, c.Label, p.Amount)
		}
		if math.Abs(p.Amount-c.Amount) > MaxRefine*c.Amount {
			return nil, fmt.Errorf("%w: %s moved from %.2f to %.2f, more than %.0f%%", ErrOutOfBounds, c.Label, c.Amount, p.Amount, MaxRefine*100)
		}
		if p.Amount < lo || p.Amount > hi {
			return nil, fmt.Errorf("%w: %s %.2f is outside the comps' range %.2f-%.2f", ErrOutOfBounds, c.Label, p.Amount, lo, hi)
		}
		b := c
		b.Amount = round2(p.Amount)
		if p.Confidence > 0 && p.Confidence < c.Confidence {
			b.Confidence = round2(p.Confidence)
		}
		if p.Reasoning != "" {
			b.Reasoning = p.Reasoning
		}
		out[i] = b
	}
	if out[0].Amount > out[1].Amount || out[1].Amount > out[2].Amount {
		return nil, fmt.Errorf("%w: want floor <= target <= ceiling, got %.2f, %.2f, %.2f", ErrOutOfBounds, out[0].Amount, out[1].Amount, out[2].Amount)
	}
	return out, nil
}

func clamp01(x float64) float64 { return math.Max(0, math.Min(1, x)) }

func round2(x float64) float64 { return math.Round(x*100) / 100 }
