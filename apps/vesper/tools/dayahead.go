package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/trellis-go/trellis/apps/vesper/entity"
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
	Vendor  string `json:"vendor" jsonschema:"Vendor name: Ascend or Hitachi"`
	Market  string `json:"market" jsonschema:"Market: CAISO, ERCOT, MISO, PJM, NYISO or ISO-NE"`
	HubZone string `json:"hub_zone" jsonschema:"Hub-zone, e.g. NP15, SP15, HB_NORTH"`
	Year    int    `json:"year" jsonschema:"Forecast year, e.g. 2025"`
	AsOf    string `json:"asof,omitempty" jsonschema:"As-Of file identifier, e.g. Jan_2025; empty for every file"`
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

// GetAverageAnnualPrice returns the average day-ahead price ($/MWh) of a
// vendor's curve for a market, hub-zone and year, one row per As-Of file.
func (k *Toolkit) GetAverageAnnualPrice(ctx context.Context, a AveragePriceArgs) (*AveragePriceResult, error) {
	const name = "get_average_annual_price"
	p, err := caller(ctx, name)
	if err != nil {
		return nil, err
	}
	if err := required(name, map[string]string{"vendor": a.Vendor, "market": a.Market, "hub_zone": a.HubZone}); err != nil {
		return nil, err
	}
	if err := checkYear(name, a.Year); err != nil {
		return nil, err
	}
	vendor, market, hub := resolve(entity.Vendor, a.Vendor), resolve(entity.Market, a.Market), resolve(entity.HubZone, a.HubZone)
	var q query
	q.where("vf.vendor = ?", vendor)
	q.where("vf.market = ?", market)
	q.where("vf.hubzone = ?", hub)
	q.where("da.year = ?", a.Year)
	if a.AsOf != "" {
		q.where("vf.asof = ?", strings.TrimSpace(a.AsOf))
	}
	res, err := k.w.Query(ctx, p.Tenant, `SELECT vf.vendor, vf.market, vf.hubzone, vf.asof, da.year, `+meanPrice+`, SUM(da.hours)
		`+priceFrom+` `+q.clause()+`
		GROUP BY vf.vendor, vf.market, vf.hubzone, vf.asof, da.year ORDER BY vf.asof`, q.args...)
	if err != nil {
		return nil, err
	}
	out := &AveragePriceResult{Prices: []AnnualPrice{}, Meta: Meta{ReportKey: "dayahead_curve_report",
		Searched: fmt.Sprintf("%s day-ahead prices for %s in %s for %d%s", vendor, hub, market, a.Year, asofWords(a.AsOf))}}
	out.fromResult(res)
	for _, r := range res.Rows {
		out.Prices = append(out.Prices, AnnualPrice{Vendor: str(r[0]), Market: str(r[1]), HubZone: str(r[2]), AsOf: str(r[3]),
			Year: int(integer(r[4])), AvgPrice: round2(num(r[5])), DataPoints: integer(r[6])})
	}
	return out, nil
}

func asofWords(asof string) string {
	if asof == "" {
		return ""
	}
	return " (As-Of " + asof + ")"
}

// HourlyPriceArgs are the arguments of get_hourly_price_distribution.
type HourlyPriceArgs struct {
	Market  string `json:"market" jsonschema:"Market, e.g. CAISO"`
	HubZone string `json:"hub_zone" jsonschema:"Hub-zone, e.g. NP15"`
	Year    int    `json:"year" jsonschema:"Year, e.g. 2025"`
	Month   int    `json:"month,omitempty" jsonschema:"Month 1-12; 0 or absent for the whole year"`
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
	Hours []HourPrice `json:"data"`
	// PeakAvg and OffPeakAvg average the hourly means of peak hours 7-22
	// and off-peak hours 0-6 and 23.
	PeakAvg    float64 `json:"peak_avg"`
	OffPeakAvg float64 `json:"off_peak_avg"`
	Meta
}

// GetHourlyPriceDistribution returns the average, minimum and maximum
// price by hour of day for a market, hub-zone and year (or month).
func (k *Toolkit) GetHourlyPriceDistribution(ctx context.Context, a HourlyPriceArgs) (*HourlyPriceResult, error) {
	const name = "get_hourly_price_distribution"
	p, err := caller(ctx, name)
	if err != nil {
		return nil, err
	}
	if err := required(name, map[string]string{"market": a.Market, "hub_zone": a.HubZone}); err != nil {
		return nil, err
	}
	if err := checkYear(name, a.Year); err != nil {
		return nil, err
	}
	if a.Month < 0 || a.Month > 12 {
		return nil, &ArgError{Tool: name, Arg: "month", Problem: fmt.Sprintf("%d is not a month", a.Month), Hint: "give 1-12, or leave it out for the whole year"}
	}
	market, hub := resolve(entity.Market, a.Market), resolve(entity.HubZone, a.HubZone)
	var q query
	q.where("vf.market = ?", market)
	q.where("vf.hubzone = ?", hub)
	q.where("da.year = ?", a.Year)
	if a.Month != 0 {
		q.where("da.month = ?", a.Month)
	}
	if a.Vendor != "" {
		q.where("vf.vendor = ?", resolve(entity.Vendor, a.Vendor))
	}
	if a.AsOf != "" {
		q.where("vf.asof = ?", strings.TrimSpace(a.AsOf))
	}
	res, err := k.w.Query(ctx, p.Tenant, `SELECT da.hour, `+meanPrice+`, MIN(da.price_min), MAX(da.price_max)
		`+priceFrom+` `+q.clause()+` GROUP BY da.hour ORDER BY da.hour`, q.args...)
	if err != nil {
		return nil, err
	}
	period := fmt.Sprint(a.Year)
	if a.Month != 0 {
		period = fmt.Sprintf("%s %d", time.Month(a.Month), a.Year)
	}
	out := &HourlyPriceResult{Hours: []HourPrice{}, Meta: Meta{ReportKey: "price_curve_hourly_report",
		Searched: fmt.Sprintf("hourly day-ahead prices for %s in %s for %s", hub, market, period)}}
	out.fromResult(res)
	var peak, off []float64
	for _, r := range res.Rows {
		h := HourPrice{Hour: int(integer(r[0])), AvgPrice: round2(num(r[1])), MinPrice: round2(num(r[2])), MaxPrice: round2(num(r[3]))}
		out.Hours = append(out.Hours, h)
		if h.Hour >= 7 && h.Hour <= 22 {
			peak = append(peak, num(r[1]))
		} else {
			off = append(off, num(r[1]))
		}
	}
	out.PeakAvg, out.OffPeakAvg = round2(mean(peak)), round2(mean(off))
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
		words = append(words, "vendor "+v)
	}
	if a.Market != "" {
		v := resolve(entity.Market, a.Market)
		q.where("market = ?", v)
		words = append(words, "market "+v)
	}
	if a.HubZone != "" {
		v := resolve(entity.HubZone, a.HubZone)
		q.where("hubzone = ?", v)
		words = append(words, "hub-zone "+v)
	}
	res, err := k.w.Query(ctx, p.Tenant, `SELECT DISTINCT vendor, market, hubzone, asof, yr, reference, selection
		FROM mc_vendor_files `+q.clause()+` ORDER BY vendor, market, hubzone, yr, asof`, q.args...)
	if err != nil {
		return nil, err
	}
	searched := "curve files"
	if len(words) > 0 {
		searched += " for " + strings.Join(words, ", ")
	}
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
	Market  string        `json:"market"`
	HubZone string        `json:"hub_zone"`
	Year    int           `json:"year"`
	Prices  []VendorPrice `json:"data"`
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
	p, err := caller(ctx, name)
	if err != nil {
		return nil, err
	}
	if err := required(name, map[string]string{"market": a.Market, "hub_zone": a.HubZone}); err != nil {
		return nil, err
	}
	if err := checkYear(name, a.Year); err != nil {
		return nil, err
	}
	vendors := a.Vendors
	if len(vendors) == 0 {
		vendors = []string{"Ascend", "Hitachi"}
	}
	if len(vendors) > 10 {
		return nil, &ArgError{Tool: name, Arg: "vendors", Problem: "too many vendors", Hint: "compare up to ten"}
	}
	market, hub := resolve(entity.Market, a.Market), resolve(entity.HubZone, a.HubZone)
	var q query
	q.where("vf.market = ?", market)
	q.where("vf.hubzone = ?", hub)
	q.where("da.year = ?", a.Year)
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
	out := &CompareVendorsResult{Market: market, HubZone: hub, Year: a.Year, Prices: []VendorPrice{}, Meta: Meta{ReportKey: "dayahead_curve_report",
		Searched: fmt.Sprintf("day-ahead prices of %s for %s in %s for %d", strings.Join(names, " and "), hub, market, a.Year)}}
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
	ha, hb := resolve(entity.HubZone, a.HubZones[0]), resolve(entity.HubZone, a.HubZones[1])
	if ha == hb {
		return nil, &ArgError{Tool: name, Arg: "hub_zones", Problem: "both are " + ha, Hint: "give two different hub-zones"}
	}
	var q query
	pa, pb := q.arg(ha), q.arg(hb)
	q.conds = append(q.conds, "vf.hubzone IN ("+pa+", "+pb+")")
	q.where("da.year = ?", a.Year)
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
		Searched: fmt.Sprintf("hourly prices of %s and %s for %d", ha, hb, a.Year)}}
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
