package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/trellis-go/trellis/apps/vesper/entity"
	"github.com/trellis-go/trellis/apps/vesper/rbac"
)

// The join of the hourly prices, rolled up by file, hub-zone, year, month
// and hour of day (warehouse.PriceRollup), to their file dimension, used by
// every price tool. A mean is the sum of prices over the priced hours, so it
// equals AVG over the hourly rows; the number of hours is SUM(hours).
const priceFrom = `FROM mc_dayahead_hourly da JOIN mc_vendor_files vf
	ON da.file_info_key = vf.file_info_key AND da.hubzone_key = vf.hubzone_key`

// meanPrice is the mean price of the rolled-up rows a group holds.
const meanPrice = `SUM(da.price_sum) / NULLIF(SUM(da.priced), 0)`

// meanWhen is the mean price of the rolled-up rows of a group that meet cond.
func meanWhen(cond string) string {
	return `SUM(CASE WHEN ` + cond + ` THEN da.price_sum END) / NULLIF(SUM(CASE WHEN ` + cond + ` THEN da.priced END), 0)`
}

// AveragePriceArgs are the arguments of get_average_annual_price.
type AveragePriceArgs struct {
	Vendor  string `json:"vendor,omitempty" jsonschema:"Vendor name: Ascend or Hitachi; empty for every vendor's files"`
	Market  string `json:"market,omitempty" jsonschema:"Market: CAISO, ERCOT, MISO, PJM, NYISO or ISO-NE; may be left out when the hub-zone names one market's hub"`
	HubZone string `json:"hub_zone" jsonschema:"Hub-zone, e.g. NP15, SP15, HB_NORTH"`
	Year    int    `json:"year" jsonschema:"Forecast year, e.g. 2025"`
	AsOf    string `json:"asof,omitempty" jsonschema:"As-Of file identifier, e.g. Jan_2025; empty for every file"`
	Months  []int  `json:"months,omitempty" jsonschema:"Months of the year (1-12) to average, e.g. [7] for July or [7,8,9] for the third quarter; empty for the whole year"`
}

// AnnualPrice is the average price of one As-Of file for one year.
type AnnualPrice struct {
	Vendor     string  `json:"vendor"`
	Market     string  `json:"market"`
	HubZone    string  `json:"hub_zone"`
	AsOf       string  `json:"asof"`
	Year       int     `json:"year"`
	AvgPrice   float64 `json:"avg_price_per_mwh"`
	DataPoints int64   `json:"data_points"`
}

// AveragePriceResult is the result of get_average_annual_price.
type AveragePriceResult struct {
	Prices []AnnualPrice `json:"data"`
	// Period is the year, or the months of it, in words: "2025", "July 2025".
	Period string `json:"period"`
	Months []int  `json:"months,omitempty"`
	// Vendor is the vendor asked for; "" means every vendor's files.
	Vendor string `json:"vendor,omitempty"`
	// AllFiles is the mean over every file's hours together (the rows of
	// Prices pooled), when more than one file answered.
	AllFiles *AnnualPrice `json:"all_files,omitempty"`
	Meta
}

func required(toolName string, args map[string]string) error {
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range args {
			if !yield(k) {
				return
			}
		}
	}) {
		if strings.TrimSpace(args[name]) == "" {
			return &ArgError{Tool: toolName, Arg: name, Problem: "missing", Hint: "call list_available_curves to see the vendors, markets and hub-zones there are"}
		}
	}
	return nil
}

func checkYear(toolName string, year int) error {
	if year < 2000 || year > 2100 {
		return &ArgError{Tool: toolName, Arg: "year", Problem: fmt.Sprintf("%d is not a forecast year", year), Hint: "give a year such as 2025"}
	}
	return nil
}

// priceCall checks what the price tools ask first: a caller who may run the tool, a hub-zone, a
// curve year, and the month and months (merged; none means the whole year).
func priceCall(ctx context.Context, name, hubZone string, year, month int, months []int) (rbac.Principal, []int, error) {
	p, err := caller(ctx, name)
	if err != nil {
		return p, nil, err
	}
	if err := required(name, map[string]string{"hub_zone": hubZone}); err != nil {
		return p, nil, err
	}
	if err := checkYear(name, year); err != nil {
		return p, nil, err
	}
	if month < 0 || month > 12 {
		return p, nil, &ArgError{Tool: name, Arg: "month", Problem: fmt.Sprintf("%d is not a month", month), Hint: "give 1-12, or leave it out for the whole year"}
	}
	ms, err := monthsOf(name, month, months)
	return p, ms, err
}

// GetAverageAnnualPrice returns the average day-ahead price ($/MWh) of a
// vendor's curve for a market, hub-zone and year, one row per As-Of file.
func (k *Toolkit) GetAverageAnnualPrice(ctx context.Context, a AveragePriceArgs) (*AveragePriceResult, error) {
	const name = "get_average_annual_price"
	p, months, err := priceCall(ctx, name, a.HubZone, a.Year, 0, a.Months)
	if err != nil {
		return nil, err
	}
	hub := resolve(entity.HubZone, a.HubZone)
	market, err := k.marketOf(ctx, p.Tenant, name, a.Market, hub)
	if err != nil {
		return nil, err
	}
	var q query
	vendor := ""
	if strings.TrimSpace(a.Vendor) != "" {
		vendor = resolve(entity.Vendor, a.Vendor)
		q.where("vf.vendor = ?", vendor)
	}
	q.where("vf.market = ?", market)
	q.where("vf.hubzone = ?", hub)
	q.where("da.year = ?", a.Year)
	q.inMonths(months)
	if a.AsOf != "" {
		q.where("vf.asof = ?", strings.TrimSpace(a.AsOf))
	}
	res, err := k.w.Query(ctx, p.Tenant, `SELECT vf.vendor, vf.market, vf.hubzone, vf.asof, da.year, `+meanPrice+`, SUM(da.hours),
		SUM(da.price_sum), SUM(da.priced)
		`+priceFrom+` `+q.clause()+`
		GROUP BY vf.vendor, vf.market, vf.hubzone, vf.asof, da.year ORDER BY vf.vendor, vf.asof`, q.args...)
	if err != nil {
		return nil, err
	}
	period := PeriodWords(a.Year, months)
	who := vendor
	if who == "" {
		who = searchWords("every_vendor")
	}
	out := &AveragePriceResult{Prices: []AnnualPrice{}, Period: period, Months: months, Vendor: vendor, Meta: Meta{ReportKey: "dayahead_curve_report",
		Searched: searchWords("average_price", "vendor", who, "hub_zone", hub, "market", market, "period", period, "as_of", asofWords(a.AsOf))}}
	out.fromResult(res)
	var sum, priced float64
	var hours int64
	for _, r := range res.Rows {
		out.Prices = append(out.Prices, AnnualPrice{Vendor: str(r[0]), Market: str(r[1]), HubZone: str(r[2]), AsOf: str(r[3]),
			Year: int(integer(r[4])), AvgPrice: round2(num(r[5])), DataPoints: integer(r[6])})
		sum, priced, hours = sum+num(r[7]), priced+num(r[8]), hours+integer(r[6])
	}
	if len(res.Rows) > 1 && priced > 0 {
		out.AllFiles = &AnnualPrice{Vendor: vendor, Market: market, HubZone: hub, Year: a.Year, AvgPrice: round2(sum / priced), DataPoints: hours}
	}
	return out, nil
}

func asofWords(asof string) string {
	if asof == "" {
		return ""
	}
	return searchWords("as_of", "as_of", asof)
}

// HourlyPriceArgs are the arguments of get_hourly_price_distribution.
type HourlyPriceArgs struct {
	Market  string `json:"market,omitempty" jsonschema:"Market, e.g. CAISO; may be left out when the hub-zone names one market's hub"`
	HubZone string `json:"hub_zone" jsonschema:"Hub-zone, e.g. NP15"`
	Year    int    `json:"year" jsonschema:"Year, e.g. 2025"`
	Month   int    `json:"month,omitempty" jsonschema:"Month 1-12; 0 or absent for the whole year"`
	Months  []int  `json:"months,omitempty" jsonschema:"Several months of the year (1-12), e.g. [6,7,8] for the summer; empty for the whole year"`
	Vendor  string `json:"vendor,omitempty" jsonschema:"Vendor; empty for all vendors"`
	AsOf    string `json:"asof,omitempty" jsonschema:"As-Of file; empty for all files"`
}

// HourPrice is the price statistics of one hour of the day (0-23).
type HourPrice struct {
	Hour     int     `json:"hour"`
	AvgPrice float64 `json:"avg_price_per_mwh"`
	MinPrice float64 `json:"min_price"`
	MaxPrice float64 `json:"max_price"`
}

// HourlyPriceResult is the result of get_hourly_price_distribution.
type HourlyPriceResult struct {
	Market  string      `json:"market"`
	HubZone string      `json:"hub_zone"`
	Period  string      `json:"period"`
	Hours   []HourPrice `json:"data"`
	// PeakFirstHE and PeakLastHE are the market's on-peak hours
	// (entity.PeakHours), hour-ending, both included; PeakDefined is false
	// when the market defines none and the default window was used.
	PeakFirstHE int  `json:"peak_first_he"`
	PeakLastHE  int  `json:"peak_last_he"`
	PeakDefined bool `json:"peak_defined"`
	// PeakAvg and OffPeakAvg are the mean prices of the on-peak and
	// off-peak hours (every hourly price of those hours, all days);
	// PeakSpread is PeakAvg - OffPeakAvg, from the unrounded means.
	PeakAvg    float64 `json:"peak_avg"`
	OffPeakAvg float64 `json:"off_peak_avg"`
	PeakSpread float64 `json:"peak_spread"`
	Meta
}

// GetHourlyPriceDistribution returns the average, minimum and maximum
// price by hour of day for a market, hub-zone and year (or month).
func (k *Toolkit) GetHourlyPriceDistribution(ctx context.Context, a HourlyPriceArgs) (*HourlyPriceResult, error) {
	const name = "get_hourly_price_distribution"
	p, months, err := priceCall(ctx, name, a.HubZone, a.Year, a.Month, a.Months)
	if err != nil {
		return nil, err
	}
	hub := resolve(entity.HubZone, a.HubZone)
	market, err := k.marketOf(ctx, p.Tenant, name, a.Market, hub)
	if err != nil {
		return nil, err
	}
	var q query
	q.where("vf.market = ?", market)
	q.where("vf.hubzone = ?", hub)
	q.where("da.year = ?", a.Year)
	q.inMonths(months)
	if a.Vendor != "" {
		q.where("vf.vendor = ?", resolve(entity.Vendor, a.Vendor))
	}
	if a.AsOf != "" {
		q.where("vf.asof = ?", strings.TrimSpace(a.AsOf))
	}
	res, err := k.w.Query(ctx, p.Tenant, `SELECT da.hour, `+meanPrice+`, MIN(da.price_min), MAX(da.price_max), SUM(da.price_sum), SUM(da.priced)
		`+priceFrom+` `+q.clause()+` GROUP BY da.hour ORDER BY da.hour`, q.args...)
	if err != nil {
		return nil, err
	}
	period := PeriodWords(a.Year, months)
	searched := searchWords("hourly", "hub_zone", hub, "market", market, "period", period)
	if a.Vendor != "" {
		searched += searchWords("of_vendor", "vendor", resolve(entity.Vendor, a.Vendor))
	}
	searched += asofWords(a.AsOf)
	peak, defined := entity.PeakOf(market)
	out := &HourlyPriceResult{Market: market, HubZone: hub, Period: period, Hours: []HourPrice{},
		PeakFirstHE: peak.FirstHE, PeakLastHE: peak.LastHE, PeakDefined: defined,
		Meta: Meta{ReportKey: "price_curve_hourly_report", Searched: searched}}
	out.fromResult(res)
	// The peak and off-peak means pool every hourly price of their hours:
	// the sum of prices over the priced hours, as AVG over the rows.
	var peakSum, peakN, offSum, offN float64
	for _, r := range res.Rows {
		h := HourPrice{Hour: int(integer(r[0])), AvgPrice: round2(num(r[1])), MinPrice: round2(num(r[2])), MaxPrice: round2(num(r[3]))}
		out.Hours = append(out.Hours, h)
		if peak.Contains(h.Hour) {
			peakSum, peakN = peakSum+num(r[4]), peakN+num(r[5])
		} else {
			offSum, offN = offSum+num(r[4]), offN+num(r[5])
		}
	}
	if peakN > 0 && offN > 0 {
		pm, om := peakSum/peakN, offSum/offN
		out.PeakAvg, out.OffPeakAvg, out.PeakSpread = round2(pm), round2(om), round2(pm-om)
	}
	return out, nil
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// ListCurvesArgs are the arguments of list_available_curves.
type ListCurvesArgs struct {
	Vendor  string `json:"vendor,omitempty" jsonschema:"Filter by vendor"`
	Market  string `json:"market,omitempty" jsonschema:"Filter by market"`
	HubZone string `json:"hub_zone,omitempty" jsonschema:"Filter by hub-zone"`
}

// CurveFile is one available vendor curve.
type CurveFile struct {
	Vendor    string `json:"vendor"`
	Market    string `json:"market"`
	HubZone   string `json:"hub_zone"`
	AsOf      string `json:"asof"`
	Year      int    `json:"yr"`
	Reference string `json:"reference"`
	Selected  bool   `json:"selected"`
}

// ListCurvesResult is the result of list_available_curves.
type ListCurvesResult struct {
	Curves []CurveFile `json:"data"`
	Meta
}

// ListAvailableCurves lists the vendor curve files, optionally filtered.
func (k *Toolkit) ListAvailableCurves(ctx context.Context, a ListCurvesArgs) (*ListCurvesResult, error) {
	p, err := caller(ctx, "list_available_curves")
	if err != nil {
		return nil, err
	}
	var q query
	var words []string
	if a.Vendor != "" {
		v := resolve(entity.Vendor, a.Vendor)
		q.where("vendor = ?", v)
		words = append(words, searchWords("by_vendor", "vendor", v))
	}
	if a.Market != "" {
		v := resolve(entity.Market, a.Market)
		q.where("market = ?", v)
		words = append(words, searchWords("by_market", "market", v))
	}
	if a.HubZone != "" {
		v := resolve(entity.HubZone, a.HubZone)
		q.where("hubzone = ?", v)
		words = append(words, searchWords("by_hub_zone", "hub_zone", v))
	}
	res, err := k.w.Query(ctx, p.Tenant, `SELECT DISTINCT vendor, market, hubzone, asof, yr, reference, selection
		FROM mc_vendor_files `+q.clause()+` ORDER BY vendor, market, hubzone, yr, asof`, q.args...)
	if err != nil {
		return nil, err
	}
	filters := ""
	if len(words) > 0 {
		filters = searchWords("curves_for", "filters", strings.Join(words, ", "))
	}
	searched := searchWords("curves", "filters", filters)
	out := &ListCurvesResult{Curves: []CurveFile{}, Meta: Meta{ReportKey: "dayahead_curve_report", Searched: searched}}
	out.fromResult(res)
	for _, r := range res.Rows {
		out.Curves = append(out.Curves, CurveFile{Vendor: str(r[0]), Market: str(r[1]), HubZone: str(r[2]), AsOf: str(r[3]),
			Year: int(integer(r[4])), Reference: str(r[5]), Selected: integer(r[6]) == 1})
	}
	return out, nil
}

// CompareVendorsArgs are the arguments of compare_vendors.
type CompareVendorsArgs struct {
	Market  string   `json:"market" jsonschema:"Market, e.g. CAISO"`
	HubZone string   `json:"hub_zone" jsonschema:"Hub-zone, e.g. SP15"`
	Year    int      `json:"year" jsonschema:"Year, e.g. 2025"`
	Vendors []string `json:"vendors,omitempty" jsonschema:"Vendors to compare; default Ascend and Hitachi"`
	Months  []int    `json:"months,omitempty" jsonschema:"Months of the year (1-12) to compare, e.g. [7] for July; empty for the whole year"`
}

// VendorPrice is one vendor file's average for the year, with its peak
// (hours 15-20, hour-ending 16-21) average.
type VendorPrice struct {
	Vendor     string  `json:"vendor"`
	AsOf       string  `json:"asof"`
	AvgPrice   float64 `json:"avg_price_per_mwh"`
	PeakPrice  float64 `json:"peak_avg_price_per_mwh"`
	DataPoints int64   `json:"data_points"`
}

// VendorDifference compares the representative files of two vendors.
type VendorDifference struct {
	BaseVendor     string  `json:"base_vendor"`
	OtherVendor    string  `json:"other_vendor"`
	Difference     float64 `json:"difference_per_mwh"` // Other - Base
	Percent        float64 `json:"difference_pct"`
	PeakDifference float64 `json:"peak_difference_per_mwh"`
}

// CompareVendorsResult is the result of compare_vendors.
type CompareVendorsResult struct {
	// Market, HubZone and Year are what was compared, as resolved.
	Market  string `json:"market"`
	HubZone string `json:"hub_zone"`
	Year    int    `json:"year"`
	Months  []int  `json:"months,omitempty"`
	// Period is the year, or the months of it, in words.
	Period string        `json:"period"`
	Prices []VendorPrice `json:"data"`
	// Representative is, per vendor, the file compared: the one covering
	// the most hours of the year, the latest on ties.
	Representative []VendorPrice     `json:"representative"`
	Difference     *VendorDifference `json:"difference,omitempty"`
	Meta
}

// CompareVendors puts vendors' average prices side by side for one market,
// hub-zone and year, and states the difference between the first two.
func (k *Toolkit) CompareVendors(ctx context.Context, a CompareVendorsArgs) (*CompareVendorsResult, error) {
	const name = "compare_vendors"
	p, months, err := priceCall(ctx, name, a.HubZone, a.Year, 0, a.Months)
	if err != nil {
		return nil, err
	}
	vendors := a.Vendors
	if len(vendors) == 0 {
		vendors = []string{"Ascend", "Hitachi"}
	}
	if len(vendors) > 10 {
		return nil, &ArgError{Tool: name, Arg: "vendors", Problem: "too many vendors", Hint: "compare up to ten"}
	}
	hub := resolve(entity.HubZone, a.HubZone)
	market, err := k.marketOf(ctx, p.Tenant, name, a.Market, hub)
	if err != nil {
		return nil, err
	}
	var q query
	q.where("vf.market = ?", market)
	q.where("vf.hubzone = ?", hub)
	q.where("da.year = ?", a.Year)
	q.inMonths(months)
	var ph []string
	var names []string
	for _, v := range vendors {
		v = resolve(entity.Vendor, v)
		if slices.Contains(names, v) {
			continue
		}
		names = append(names, v)
		ph = append(ph, q.arg(v))
	}
	q.conds = append(q.conds, "vf.vendor IN ("+strings.Join(ph, ", ")+")")
	res, err := k.w.Query(ctx, p.Tenant, `SELECT vf.vendor, vf.asof, MAX(vf.yr), `+meanPrice+`,
		`+meanWhen("da.hour BETWEEN 15 AND 20")+`, SUM(da.hours)
		`+priceFrom+` `+q.clause()+` GROUP BY vf.vendor, vf.asof ORDER BY vf.vendor, MAX(vf.yr), vf.asof`, q.args...)
	if err != nil {
		return nil, err
	}
	period := PeriodWords(a.Year, months)
	out := &CompareVendorsResult{Market: market, HubZone: hub, Year: a.Year, Months: months, Period: period, Prices: []VendorPrice{}, Meta: Meta{ReportKey: "dayahead_curve_report",
		Searched: searchWords("vendors", "vendors", strings.Join(names, searchWords("and")), "hub_zone", hub, "market", market, "period", period)}}
	out.fromResult(res)
	best := map[string]VendorPrice{}
	// Differences are taken from the unrounded means, then rounded: the
	// rounded prices shown beside them may differ from it by a cent.
	type raw struct{ avg, peak float64 }
	raws := map[VendorPrice]raw{}
	for _, r := range res.Rows {
		vp := VendorPrice{Vendor: str(r[0]), AsOf: str(r[1]), AvgPrice: round2(num(r[3])), PeakPrice: round2(num(r[4])), DataPoints: integer(r[5])}
		raws[vp] = raw{num(r[3]), num(r[4])}
		out.Prices = append(out.Prices, vp)
		// rows come oldest file first, so >= keeps the latest on ties
		if b, ok := best[vp.Vendor]; !ok || vp.DataPoints >= b.DataPoints {
			best[vp.Vendor] = vp
		}
	}
	for _, n := range names {
		if b, ok := best[n]; ok {
			out.Representative = append(out.Representative, b)
		}
	}
	if len(out.Representative) >= 2 {
		b, o := out.Representative[0], out.Representative[1]
		rb, ro := raws[b], raws[o]
		d := &VendorDifference{BaseVendor: b.Vendor, OtherVendor: o.Vendor, Difference: round2(ro.avg - rb.avg),
			PeakDifference: round2(ro.peak - rb.peak)}
		if rb.avg != 0 {
			d.Percent = round2(100 * (ro.avg - rb.avg) / rb.avg)
		}
		out.Difference = d
	}
	return out, nil
}

// CompareHubZonesArgs are the arguments of compare_hub_zones.
type CompareHubZonesArgs struct {
	HubZones []string `json:"hub_zones" jsonschema:"Exactly two hub-zones to compare, e.g. [\"NP15\", \"SP15\"]"`
	Year     int      `json:"year" jsonschema:"Year, e.g. 2025"`
	Vendor   string   `json:"vendor,omitempty" jsonschema:"Vendor; empty for all vendors"`
	Months   []int    `json:"months,omitempty" jsonschema:"Months of the year (1-12) to compare; empty for the whole year"`
}

// HourSpread is the two hub-zones' average price in one hour of the day.
type HourSpread struct {
	Hour   int     `json:"hour"`
	PriceA float64 `json:"price_a"`
	PriceB float64 `json:"price_b"`
	Spread float64 `json:"spread"` // A - B
}

// CompareHubZonesResult is the result of compare_hub_zones. The hub-zone
// names are fields, not column names: nothing the model writes ever
// becomes part of the SQL text.
type CompareHubZonesResult struct {
	HubZoneA  string       `json:"hub_zone_a"`
	HubZoneB  string       `json:"hub_zone_b"`
	MarketA   string       `json:"market_a,omitempty"`
	MarketB   string       `json:"market_b,omitempty"`
	Hours     []HourSpread `json:"data"`
	AvgSpread float64      `json:"avg_spread"`
	Meta
}

// CompareHubZones compares two hub-zones' average price hour by hour.
func (k *Toolkit) CompareHubZones(ctx context.Context, a CompareHubZonesArgs) (*CompareHubZonesResult, error) {
	const name = "compare_hub_zones"
	p, err := caller(ctx, name)
	if err != nil {
		return nil, err
	}
	if len(a.HubZones) != 2 {
		return nil, &ArgError{Tool: name, Arg: "hub_zones", Problem: fmt.Sprintf("%d hub-zones given", len(a.HubZones)), Hint: "give exactly two, e.g. [\"NP15\", \"SP15\"]"}
	}
	if err := checkYear(name, a.Year); err != nil {
		return nil, err
	}
	months, err := monthsOf(name, 0, a.Months)
	if err != nil {
		return nil, err
	}
	ha, hb := resolve(entity.HubZone, a.HubZones[0]), resolve(entity.HubZone, a.HubZones[1])
	if ha == hb {
		return nil, &ArgError{Tool: name, Arg: "hub_zones", Problem: "both are " + ha, Hint: "give two different hub-zones"}
	}
	var q query
	pa, pb := q.arg(ha), q.arg(hb)
	q.conds = append(q.conds, "vf.hubzone IN ("+pa+", "+pb+")")
	q.where("da.year = ?", a.Year)
	q.inMonths(months)
	if a.Vendor != "" {
		q.where("vf.vendor = ?", resolve(entity.Vendor, a.Vendor))
	}
	res, err := k.w.Query(ctx, p.Tenant, `SELECT da.hour,
		`+meanWhen("vf.hubzone = "+pa)+`,
		`+meanWhen("vf.hubzone = "+pb)+`
		`+priceFrom+` `+q.clause()+` GROUP BY da.hour ORDER BY da.hour`, q.args...)
	if err != nil {
		return nil, err
	}
	markets, err := k.w.Query(ctx, p.Tenant, `SELECT DISTINCT hubzone, market FROM mc_vendor_files WHERE hubzone IN ($1, $2)`, ha, hb)
	if err != nil {
		return nil, err
	}
	out := &CompareHubZonesResult{HubZoneA: ha, HubZoneB: hb, Hours: []HourSpread{}, Meta: Meta{ReportKey: "price_curve_comparison_report",
		Searched: searchWords("hub_zones", "a", ha, "b", hb, "period", PeriodWords(a.Year, months))}}
	out.fromResult(res)
	for _, r := range markets.Rows {
		switch str(r[0]) {
		case ha:
			out.MarketA = str(r[1])
		case hb:
			out.MarketB = str(r[1])
		}
	}
	var spreads []float64
	for _, r := range res.Rows {
		if r[1] == nil || r[2] == nil {
			continue // an hour only one hub-zone has
		}
		s := HourSpread{Hour: int(integer(r[0])), PriceA: round2(num(r[1])), PriceB: round2(num(r[2]))}
		s.Spread = round2(num(r[1]) - num(r[2]))
		spreads = append(spreads, num(r[1])-num(r[2]))
		out.Hours = append(out.Hours, s)
	}
	out.AvgSpread = round2(mean(spreads))
	return out, nil
}
