// Package taxes computes the taxes of buying a home in mainland Portugal: IMT (Imposto
// Municipal sobre as Transmissões Onerosas de Imóveis) and Imposto do Selo on the purchase, by
// the tables of the year of the purchase.
//
// Sources:
//   - IMT: Código do IMT, art. 17.º, n.º 1, alíneas a) (prédio urbano destinado exclusivamente a
//     habitação própria e permanente) and b) (a outra habitação). The brackets were updated by
//     2,3% by the Lei n.º 45-A/2024, de 31 de dezembro (Orçamento do Estado para 2025), and by 2%
//     by the Orçamento do Estado para 2026, as published by the Autoridade Tributária in its
//     "Tabelas Práticas de IMT" of each year (Portal das Finanças; for 2026 the Ofício-circulado
//     n.º 40129/2026, de 6 de janeiro). Above the last progressive bracket a single rate applies
//     to the whole value (6%; 7,5% above the last limit), with no deduction. Each deduction
//     (parcela a abater) is the one that makes the tax continuous at the bracket's lower limit,
//     as the published ones are (TestTablesAreContinuous).
//   - Young buyers: art. 9.º, n.º 2, of the CIMT and art. 7.º, n.º 1, alínea ae), of the Código do
//     Imposto do Selo, added by the Decreto-Lei n.º 48-A/2024, de 31 de julho (in force on 1 August
//     2024): a buyer aged 35 or less buying a first own permanent home pays neither tax up to the
//     own-home table's 4th bracket limit (324.058€ in 2025, 330.539€ in 2026); between that and
//     the 5th bracket's limit (648.022€, 660.982€) IMT is 8% and stamp duty 0,8% of the part
//     above it; above it there is no exemption.
//   - Imposto do Selo: Tabela Geral do Imposto do Selo, verba 1.1, 0,8% of the value.
//
// The taxable value is the higher of the price and the valor patrimonial tributário; pass the
// price when the VPT is not known (it is rarely higher).
package taxes

import (
	"errors"
	"math"
	"strconv"

	"github.com/trellis-go/trellis/apps/rehab/prompts"
	"github.com/trellis-go/trellis/numfmt"
)

// Bracket is a row of an IMT table: up to Limit (inclusive), Rate with Deduction (parcela a
// abater); Single marks a rate applied to the whole value.
type Bracket struct {
	Limit     float64 // math.Inf(1) for the last
	Rate      float64
	Deduction float64
	Single    bool
}

// Tables are one year's published IMT tables for mainland Portugal.
type Tables struct {
	Year int
	// OwnHome is the table of a home for the buyer's own permanent home (habitação própria e
	// permanente); OtherHome the table of other housing (secondary, or for letting).
	OwnHome, OtherHome []Bracket
	// The young buyer's limits: no tax up to YoungExemptUpTo, 8% and 0,8% of the part above it
	// up to YoungPartialUpTo.
	YoungExemptUpTo, YoungPartialUpTo float64
}

// Tables2025 are the tables of 2025 (OE 2025).
var Tables2025 = &Tables{
	Year: 2025,
	OwnHome: []Bracket{
		{104261, 0, 0, false},
		{142618, 0.02, 2085.22, false},
		{194458, 0.05, 6363.76, false},
		{324058, 0.07, 10252.92, false},
		{648022, 0.08, 13493.50, false},
		{1128287, 0.06, 0, true},
		{math.Inf(1), 0.075, 0, true},
	},
	OtherHome: []Bracket{
		{104261, 0.01, 0, false},
		{142618, 0.02, 1042.61, false},
		{194458, 0.05, 5321.15, false},
		{324058, 0.07, 9210.31, false},
		{621501, 0.08, 12450.89, false},
		{1128287, 0.06, 0, true},
		{math.Inf(1), 0.075, 0, true},
	},
	YoungExemptUpTo: 324058, YoungPartialUpTo: 648022,
}

// Tables2026 are the tables of 2026 (OE 2026: the 2025 limits raised by 2%).
var Tables2026 = &Tables{
	Year: 2026,
	OwnHome: []Bracket{
		{106346, 0, 0, false},
		{145470, 0.02, 2126.92, false},
		{198347, 0.05, 6491.02, false},
		{330539, 0.07, 10457.96, false},
		{660982, 0.08, 13763.35, false},
		{1150853, 0.06, 0, true},
		{math.Inf(1), 0.075, 0, true},
	},
	OtherHome: []Bracket{
		{106346, 0.01, 0, false},
		{145470, 0.02, 1063.46, false},
		{198347, 0.05, 5427.56, false},
		{330539, 0.07, 9394.50, false},
		{633931, 0.08, 12699.89, false},
		{1150853, 0.06, 0, true},
		{math.Inf(1), 0.075, 0, true},
	},
	YoungExemptUpTo: 330539, YoungPartialUpTo: 660982,
}

// published lists the tables by year, oldest first.
var published = []*Tables{Tables2025, Tables2026}

// For returns the tables of a year: the newest published for it or before it (the oldest for a
// year before the first), and whether they are that year's own.
func For(year int) (t *Tables, own bool) {
	t = published[0]
	for _, p := range published {
		if p.Year <= year {
			t = p
		}
	}
	return t, t.Year == year
}

// Latest are the newest published tables.
func Latest() *Tables { return published[len(published)-1] }

// The constants every year shares.
const (
	StampRate   = 0.008
	YoungMaxAge = 35
)

// Profile is the buyer's fiscal situation.
type Profile struct {
	// OwnPermanentHome: the home will be the buyer's own permanent home.
	OwnPermanentHome bool
	// FirstHome: the buyer never owned a home (required for the young-buyer exemption).
	FirstHome bool
	// Age of the buyer; zero when unknown (no young-buyer exemption).
	Age int
}

// Result is the taxes due.
type Result struct {
	Price        float64 `json:"price"`
	IMT          float64 `json:"imt"`
	Stamp        float64 `json:"imposto_selo"`
	Total        float64 `json:"total"`
	Table        string  `json:"table"`
	YoungExempt  bool    `json:"young_buyer_exemption"`
	Rate         float64 `json:"imt_rate"`
	Deduction    float64 `json:"imt_deduction"`
	SingleRate   bool    `json:"single_rate"`
	TablesOfYear int     `json:"tables_of_year"`
	// The young buyer's limits of those tables.
	YoungExemptUpTo  float64 `json:"young_exempt_up_to"`
	YoungPartialUpTo float64 `json:"young_partial_up_to"`
	// Rule is the rule applied: RuleYoungFull, RuleYoungPartial, RuleYoungOverLimit, RuleOwnHome
	// or RuleOtherHome.
	Rule string `json:"rule"`
}

// The rules Compute applies.
const (
	RuleYoungFull      = "young_full"       // young buyer, price up to Tables.YoungExemptUpTo: no IMT, no stamp duty
	RuleYoungPartial   = "young_partial"    // young buyer, up to Tables.YoungPartialUpTo: 8% and 0,8% of the part above
	RuleYoungOverLimit = "young_over_limit" // young buyer above Tables.YoungPartialUpTo: the own-home table
	RuleOwnHome        = "own_home"         // the own permanent home table
	RuleOtherHome      = "other_home"       // the other housing table
)

// Explain says in pt-PT which rule was applied and why: prompts/answers.json's sentence
// "tax_rule_<rule>".
func (r *Result) Explain() string {
	rule := r.Rule
	switch rule {
	case RuleYoungFull, RuleYoungPartial, RuleYoungOverLimit, RuleOwnHome:
	default:
		rule = RuleOtherHome
	}
	return prompts.Say("tax_rule_"+rule, "age", strconv.Itoa(YoungMaxAge), "exempt_up_to", euro(r.YoungExemptUpTo),
		"partial_up_to", euro(r.YoungPartialUpTo), "year", strconv.Itoa(r.TablesOfYear))
}

// euro writes whole euros as 324.058€.
func euro(v float64) string { return numfmt.Group(int64(math.Round(v)), ".") + "€" }

// ErrPrice is returned for a price that is not positive.
var ErrPrice = errors.New("taxes: the price must be a positive amount in euros")

// Young reports whether the young-buyer exemption applies to a profile.
func Young(p Profile) bool {
	return p.OwnPermanentHome && p.FirstHome && p.Age > 0 && p.Age <= YoungMaxAge
}

// IMTByTable computes IMT on a value with a table.
func IMTByTable(v float64, table []Bracket) (tax, rate, deduction float64, single bool) {
	for _, b := range table {
		if v <= b.Limit {
			if b.Single {
				return round2(v * b.Rate), b.Rate, 0, true
			}
			return round2(math.Max(0, v*b.Rate-b.Deduction)), b.Rate, b.Deduction, false
		}
	}
	return 0, 0, 0, false
}

// Compute returns IMT and Imposto do Selo for a purchase by the newest published tables.
func Compute(price float64, p Profile) (*Result, error) { return Latest().Compute(price, p) }

// Compute returns IMT and Imposto do Selo for a purchase by these tables.
func (t *Tables) Compute(price float64, p Profile) (*Result, error) {
	if !(price > 0) || math.IsInf(price, 0) {
		return nil, ErrPrice
	}
	r := &Result{Price: price, TablesOfYear: t.Year, YoungExemptUpTo: t.YoungExemptUpTo, YoungPartialUpTo: t.YoungPartialUpTo}
	table := t.OtherHome
	r.Table, r.Rule = prompts.Say("tax_table_other_home"), RuleOtherHome
	if p.OwnPermanentHome {
		table, r.Table, r.Rule = t.OwnHome, prompts.Say("tax_table_own_home"), RuleOwnHome
	}
	r.IMT, r.Rate, r.Deduction, r.SingleRate = IMTByTable(price, table)
	r.Stamp = round2(price * StampRate)
	if Young(p) && price > t.YoungPartialUpTo {
		r.Rule = RuleYoungOverLimit
	}
	if Young(p) && price <= t.YoungPartialUpTo {
		r.YoungExempt, r.Rule = true, RuleYoungPartial
		excess := math.Max(0, price-t.YoungExemptUpTo)
		r.IMT, r.Rate, r.Deduction, r.SingleRate = round2(excess*0.08), 0.08, 0, false
		r.Stamp = round2(excess * StampRate)
		if excess == 0 {
			r.Rate, r.Rule = 0, RuleYoungFull
		}
	}
	r.Total = round2(r.IMT + r.Stamp)
	return r, nil
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }
