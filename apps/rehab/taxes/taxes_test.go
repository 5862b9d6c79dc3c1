package taxes_test

import (
	"math"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/rehab/taxes"
)

// taxCase is a price, a buyer's profile and the IMT and stamp duty worked by hand.
type taxCase struct {
	name       string
	price      float64
	p          taxes.Profile
	imt, stamp float64
}

// checkCompute checks tables' taxes against cases, their total and the year they report.
func checkCompute(t *testing.T, tables *taxes.Tables, cases []taxCase) {
	t.Helper()
	for _, c := range cases {
		r, err := tables.Compute(c.price, c.p)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r.IMT-c.imt) > 0.005 || math.Abs(r.Stamp-c.stamp) > 0.005 || math.Abs(r.Total-(c.imt+c.stamp)) > 0.01 || r.TablesOfYear != tables.Year {
			t.Errorf("%s (%v€): IMT %v selo %v (tables of %d), want %v and %v", c.name, c.price, r.IMT, r.Stamp, r.TablesOfYear, c.imt, c.stamp)
		}
	}
}

// Figures worked by hand from the 2025 tables (CIMT art. 17.º as updated by the OE 2025):
// tax = value × rate − parcela a abater.
func TestCompute(t *testing.T) {
	t.Parallel()
	hpp := taxes.Profile{OwnPermanentHome: true}
	other := taxes.Profile{}
	young := taxes.Profile{OwnPermanentHome: true, FirstHome: true, Age: 30}
	checkCompute(t, taxes.Tables2025, []taxCase{
		{"own home exempt bracket", 100000, hpp, 0, 800},
		{"own home 2%", 120000, hpp, 314.78, 960},             // 2.400 − 2.085,22
		{"own home 5%", 180000, hpp, 2636.24, 1440},           // 9.000 − 6.363,76
		{"own home 7%", 250000, hpp, 7247.08, 2000},           // 17.500 − 10.252,92
		{"own home 8%", 400000, hpp, 18506.50, 3200},          // 32.000 − 13.493,50
		{"own home single 6%", 700000, hpp, 42000, 5600},      // 6% of the whole
		{"own home single 7.5%", 1500000, hpp, 112500, 12000}, // 7,5% of the whole
		{"other 1%", 100000, other, 1000, 800},                // 1%
		{"other 5%", 180000, other, 3678.85, 1440},            // 9.000 − 5.321,15
		{"other 8%", 500000, other, 27549.11, 4000},           // 40.000 − 12.450,89
		{"other single 6%", 630000, other, 37800, 5040},       // above 621.501: 6% of the whole
		{"young exempt", 300000, young, 0, 0},                 // under 324.058
		{"young partial", 400000, young, 6075.36, 607.54},     // 8% and 0,8% of 75.942
		{"young over the limit", 700000, young, 42000, 5600},  // no exemption
		{"young but not first home", 300000, taxes.Profile{OwnPermanentHome: true, Age: 30}, 10747.08, 2400},
		{"first home at 36", 300000, taxes.Profile{OwnPermanentHome: true, FirstHome: true, Age: 36}, 10747.08, 2400},
	})
	if _, err := taxes.Compute(0, hpp); err == nil {
		t.Error("zero price accepted")
	}
}

// Figures worked by hand from the 2026 tables (the OE 2026's 2% update): tax = value × rate −
// parcela a abater.
func TestCompute2026(t *testing.T) {
	t.Parallel()
	hpp := taxes.Profile{OwnPermanentHome: true}
	other := taxes.Profile{}
	young := taxes.Profile{OwnPermanentHome: true, FirstHome: true, Age: 30}
	checkCompute(t, taxes.Tables2026, []taxCase{
		{"own home exempt bracket", 106000, hpp, 0, 848},
		{"own home 2%", 120000, hpp, 273.08, 960},            // 2.400 − 2.126,92
		{"own home 5%", 180000, hpp, 2508.98, 1440},          // 9.000 − 6.491,02
		{"own home 7%", 300000, hpp, 10542.04, 2400},         // 21.000 − 10.457,96
		{"own home 8%", 400000, hpp, 18236.65, 3200},         // 32.000 − 13.763,35
		{"own home single 6%", 1150000, hpp, 69000, 9200},    // 6% of the whole, under 1.150.853
		{"own home single 7.5%", 1200000, hpp, 90000, 9600},  // 7,5% of the whole
		{"other 1%", 100000, other, 1000, 800},               // 1%
		{"other 5%", 180000, other, 3572.44, 1440},           // 9.000 − 5.427,56
		{"other 8%", 500000, other, 27300.11, 4000},          // 40.000 − 12.699,89
		{"other single 6%", 640000, other, 38400, 5120},      // above 633.931: 6% of the whole
		{"young exempt", 330000, young, 0, 0},                // under 330.539
		{"young partial", 400000, young, 5556.88, 555.69},    // 8% and 0,8% of 69.461
		{"young over the limit", 700000, young, 42000, 5600}, // above 660.982: no exemption
		{"first home at 36", 300000, taxes.Profile{OwnPermanentHome: true, FirstHome: true, Age: 36}, 10542.04, 2400},
	})
	// The average rates the 2026 own-home table publishes at its limits (taxa média).
	for limit, avg := range map[float64]float64{145470: 0.5379, 198347: 1.7274, 330539: 3.8361} {
		tax, _, _, _ := taxes.IMTByTable(limit, taxes.Tables2026.OwnHome)
		if got := math.Round(tax/limit*1e6) / 1e4; got != avg {
			t.Errorf("average rate at %v: %v%%, published %v%%", limit, got, avg)
		}
	}
}

// A year gets its own tables, or the newest before it.
func TestTablesOfTheYear(t *testing.T) {
	t.Parallel()
	for year, want := range map[int]struct {
		tables int
		own    bool
	}{2024: {2025, false}, 2025: {2025, true}, 2026: {2026, true}, 2027: {2026, false}} {
		got, own := taxes.For(year)
		if got.Year != want.tables || own != want.own {
			t.Errorf("For(%d) = %d, own %v", year, got.Year, own)
		}
	}
	if taxes.Latest() != taxes.Tables2026 {
		t.Errorf("latest tables of %d", taxes.Latest().Year)
	}
}

// The deductions are the published ones, which make the tax continuous at every limit.
func TestTablesAreContinuous(t *testing.T) {
	t.Parallel()
	for name, table := range map[string][]taxes.Bracket{
		"own 2025": taxes.Tables2025.OwnHome, "other 2025": taxes.Tables2025.OtherHome,
		"own 2026": taxes.Tables2026.OwnHome, "other 2026": taxes.Tables2026.OtherHome,
	} {
		for i := 0; i+1 < len(table) && !table[i+1].Single; i++ {
			v := table[i].Limit
			a, _, _, _ := taxes.IMTByTable(v, table)
			b := math.Max(0, v*table[i+1].Rate-table[i+1].Deduction)
			if math.Abs(a-b) > 0.02 {
				t.Errorf("%s: at %v the brackets give %v and %v", name, v, a, b)
			}
		}
	}
}

// Each case says which rule it applied.
func TestRules(t *testing.T) {
	t.Parallel()
	young := taxes.Profile{OwnPermanentHome: true, FirstHome: true, Age: 35}
	for _, c := range []struct {
		price float64
		p     taxes.Profile
		rule  string
		says  string
	}{
		{324058, young, taxes.RuleYoungFull, "isenção total"},
		{324059, young, taxes.RuleYoungPartial, "isenção parcial"},
		{648022, young, taxes.RuleYoungPartial, "acima de 324.058€"},
		{648023, young, taxes.RuleYoungOverLimit, "passa de 648.022€"},
		{300000, taxes.Profile{OwnPermanentHome: true, FirstHome: true, Age: 36}, taxes.RuleOwnHome, "habitação própria e permanente de 2025"},
		{300000, taxes.Profile{}, taxes.RuleOtherHome, "outra habitação"},
	} {
		r, err := taxes.Tables2025.Compute(c.price, c.p)
		if err != nil {
			t.Fatal(err)
		}
		if r.Rule != c.rule || !strings.Contains(r.Explain(), c.says) {
			t.Errorf("%v€ %+v: rule %s, %q", c.price, c.p, r.Rule, r.Explain())
		}
	}
}
