package realty

import "testing"

// The words next to an amount say which end of the range it is, whichever end the model put it
// at: a budget written as a ceiling is never saved or searched as a minimum.
func TestPriceRangeFromTheWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		text           string
		lo, hi         float64 // as the model read them
		wantLo, wantHi float64
	}{
		{"please remember that my budget is no more than $650k and I want 3 bedrooms", 650000, 0, 0, 650000},
		{"keep in mind I can spend 480k tops", 480000, 0, 0, 480000},
		{"Seattle, $1.2M max, at least 2 baths", 1200000, 1200000, 0, 1200000},
		{"a condo for 300k or less", 300000, 0, 0, 300000},
		{"nothing under 2 beds, and not more than 900,000", 900000, 0, 0, 900000},
		{"we'd go 500k or more for the right place", 0, 500000, 500000, 0},
		{"no less than $350,000 please", 0, 350000, 350000, 0},
		{"homes at least 3 beds under 500k", 500000, 500000, 0, 500000},
		{"somewhere upwards of 700k", 700000, 700000, 700000, 0},
		{"between 400k and 600k", 400000, 600000, 400000, 600000},
		{"my budget is about 550k", 550000, 0, 0, 550000},
		// an end the words state and the model left out
		{"for later: a townhouse, 2 baths or more, $700k at most", 0, 0, 0, 700000},
		{"keep an eye out for places from $300k up to 450k", 0, 450000, 300000, 450000},
	} {
		lo, hi := lexicon.PriceRange(c.text, c.lo, c.hi)
		if lo != c.wantLo || hi != c.wantHi {
			t.Errorf("%q (%g, %g): got %g, %g, want %g, %g", c.text, c.lo, c.hi, lo, hi, c.wantLo, c.wantHi)
		}
	}
}
