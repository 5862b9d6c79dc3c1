package warehouse

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Today is the date the generated data treats as now: the specification's
// own date. Relative questions ("last week") in tests use it.
var Today = time.Date(2026, 2, 27, 0, 0, 0, 0, time.UTC)

// The two tenants of the generated data.
const (
	TenantVesper    = "vesper"
	TenantNorthwind = "northwind"
)

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// Hub is one market hub-zone of the generated curves.
type Hub struct {
	Market, Name string
	Base         float64 // rough annual mean in $/MWh for 2024
}

// Hubs are the hub-zones the generated curve files cover: the catalogue's
// CAISO and ERCOT hub-zones and one hub for each other catalogue market.
var Hubs = []Hub{
	{"CAISO", "NP15", 46}, {"CAISO", "SP15", 49}, {"CAISO", "ZP26", 47},
	{"ERCOT", "HB_NORTH", 38}, {"ERCOT", "HB_HOUSTON", 40}, {"ERCOT", "HB_WEST", 33},
	{"MISO", "INDIANA_HUB", 36}, {"PJM", "PJM_WEST", 42}, {"NYISO", "ZONE_J", 58}, {"ISO-NE", "MASS_HUB", 55},
}

type fileSpec struct {
	vendor, asof string
	year         int
	markets      map[string]bool // nil: all
	start        time.Time
	level        float64 // multiplies the hub's base level
	peakBoost    float64 // extra share of the base level in hours 15-20
}

var fileSpecs = []fileSpec{
	{"Ascend", "Jan_2024", 2024, map[string]bool{"CAISO": true, "ERCOT": true}, day(2024, 1, 1), 1.00, 0.00},
	{"Ascend", "Jan_2025", 2025, nil, day(2025, 1, 1), 1.01, 0.00},
	{"Hitachi", "Q1_2025", 2025, nil, day(2025, 1, 1), 1.04, 0.12},
	{"Hitachi", "Q3_2025", 2025, map[string]bool{"CAISO": true}, day(2025, 7, 1), 1.06, 0.12},
}

var curveEnd = day(2027, 1, 1)

// calibrated fixes the annual mean of some curves to the figures of the
// specification's example conversations.
var calibrated = map[string]float64{
	"Ascend|Jan_2025|NP15|2025": 48.73,
	"Ascend|Jan_2025|SP15|2025": 52.14,
	"Hitachi|Q1_2025|SP15|2025": 54.80,
}

// AnnualTarget is the exact mean price of a curve's hours in one year.
func annualTarget(f fileSpec, h Hub, year int) float64 {
	if v, ok := calibrated[fmt.Sprintf("%s|%s|%s|%d", f.vendor, f.asof, h.Name, year)]; ok {
		return v
	}
	v := h.Base * math.Pow(1.035, float64(year-2024)) * f.level * (1 + f.peakBoost/4)
	return math.Round(v*100) / 100
}

var seasonal = map[string][12]float64{
	"west":  {1.05, 1.00, 0.88, 0.78, 0.80, 0.95, 1.22, 1.32, 1.18, 1.02, 1.00, 1.08},
	"texas": {0.95, 0.92, 0.85, 0.88, 0.95, 1.10, 1.35, 1.48, 1.15, 0.92, 0.90, 0.95},
	"east":  {1.30, 1.22, 0.98, 0.85, 0.88, 1.02, 1.18, 1.20, 0.92, 0.88, 0.98, 1.15},
}

// hourly shapes, hour 0-23, mean about 1.
var shapes = map[string][24]float64{
	// the duck: cheap solar middays, an evening ramp
	"west": {0.92, 0.88, 0.86, 0.85, 0.88, 0.95, 1.02, 0.98, 0.85, 0.72, 0.62, 0.58,
		0.56, 0.58, 0.66, 0.82, 1.08, 1.42, 1.62, 1.55, 1.35, 1.18, 1.05, 0.98},
	// afternoon air-conditioning peak
	"texas": {0.80, 0.76, 0.74, 0.74, 0.77, 0.84, 0.92, 0.96, 0.96, 0.98, 1.02, 1.08,
		1.14, 1.22, 1.32, 1.45, 1.55, 1.52, 1.36, 1.18, 1.04, 0.95, 0.88, 0.84},
	// morning and evening humps
	"east": {0.82, 0.78, 0.76, 0.76, 0.80, 0.90, 1.06, 1.18, 1.16, 1.08, 1.03, 1.00,
		0.98, 0.97, 0.98, 1.02, 1.10, 1.24, 1.30, 1.26, 1.15, 1.04, 0.94, 0.86},
}

func region(market string) string {
	switch market {
	case "CAISO":
		return "west"
	case "ERCOT":
		return "texas"
	}
	return "east"
}

// Generate returns the deterministic demonstration data set: four As-Of
// curve files of two vendors at hourly resolution from 2024 to 2026, report
// usage events for two tenants over the year to Today, and about thirty
// renewable projects with health rows, tasks, budgets, milestone snapshots
// and a change log. The same call always returns the same data.
func Generate() *Dataset {
	d := &Dataset{}
	genCurves(d)
	genEvents(d)
	genProjects(d)
	return d
}

func genCurves(d *Dataset) {
	for fi, f := range fileSpecs {
		sel := 1
		for _, later := range fileSpecs[fi+1:] {
			if later.vendor == f.vendor {
				sel = 0 // a later file of the same vendor exists
			}
		}
		for hi, h := range Hubs {
			if f.markets != nil && !f.markets[h.Market] {
				continue
			}
			s := sel
			if s == 0 {
				// still the latest for hub-zones the later file does not cover
				s = 1
				for _, later := range fileSpecs[fi+1:] {
					if later.vendor == f.vendor && (later.markets == nil || later.markets[h.Market]) {
						s = 0
					}
				}
			}
			vf := VendorFile{
				FileInfoKey: fmt.Sprint(1001 + fi), HubzoneKey: fmt.Sprint(11 + hi),
				Vendor: f.vendor, Market: h.Market, Hubzone: h.Name, AsOf: f.asof, Year: f.year,
				Reference: "Base", Selection: s,
			}
			d.Files = append(d.Files, vf)
			d.Curves = append(d.Curves, genCurve(vf, f, h, uint64(fi*100+hi)))
		}
	}
}

func genCurve(vf VendorFile, f fileSpec, h Hub, stream uint64) Curve {
	rng := rand.New(rand.NewPCG(0x7e5be2, stream))
	n := int(curveEnd.Sub(f.start) / time.Hour)
	prices := make([]float64, n)
	reg := region(h.Market)
	season, shape := seasonal[reg], shapes[reg]
	for i := range prices {
		t := f.start.Add(time.Duration(i) * time.Hour)
		hr := t.Hour()
		p := h.Base * season[t.Month()-1] * shape[hr]
		if wd := t.Weekday(); wd == time.Saturday || wd == time.Sunday {
			p *= 0.9
		}
		if hr >= 15 && hr <= 20 {
			p += h.Base * f.peakBoost
		}
		p += rng.NormFloat64() * h.Base * 0.06
		if reg == "texas" && (t.Month() == 7 || t.Month() == 8) && hr >= 14 && hr <= 18 && rng.Float64() < 0.01 {
			p += h.Base * 3 // scarcity spike
		}
		prices[i] = p
	}
	// calibrate each calendar year to its exact target mean, in cents
	for i := 0; i < n; {
		year := f.start.Add(time.Duration(i) * time.Hour).Year()
		j := i
		for j < n && f.start.Add(time.Duration(j)*time.Hour).Year() == year {
			j++
		}
		calibrate(prices[i:j], annualTarget(f, h, year))
		i = j
	}
	return Curve{File: vf, Start: f.start, Prices: prices}
}

// calibrate shifts xs to mean target, rounds to cents, and spreads the
// rounding residue one cent at a time so the mean is exact in cents.
func calibrate(xs []float64, target float64) {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	off := target - sum/float64(len(xs))
	var cents int64
	for i, x := range xs {
		c := int64(math.Round((x + off) * 100))
		xs[i] = float64(c)
		cents += c
	}
	want := int64(math.Round(target*100)) * int64(len(xs))
	diff := want - cents
	step := 1.0
	if diff < 0 {
		step, diff = -1, -diff
	}
	for i := int64(0); i < diff; i++ {
		xs[int(i)%len(xs)] += step
	}
	for i := range xs {
		xs[i] /= 100
	}
}

type reportSpec struct {
	id, name, workspace string
	weight              float64
}

var tenantReports = map[string][]reportSpec{
	TenantVesper: {
		{"rpt-dayahead", "Day-Ahead Curves Dashboard", "Market Curves", 10},
		{"rpt-hourly", "Price Curves - Hourly Shape", "Market Curves", 6},
		{"rpt-spread", "Hub-Zone Spread Monitor", "Market Curves", 3},
		{"rpt-per", "PER Project Overview", "Project Execution", 9},
		{"rpt-health", "Project Health Report", "Project Execution", 7},
		{"rpt-portfolio", "Portfolio Milestones", "Project Execution", 5},
		{"rpt-budget", "Budget Tracker", "Project Execution", 4},
		{"rpt-usage", "PBI Usage Dashboard", "Admin", 2},
		{"rpt-exec", "Executive Summary", "Leadership", 8},
		{"rpt-ix", "Interconnection Queue", "Project Execution", 2},
	},
	TenantNorthwind: {
		{"rpt-fleet", "Wind Fleet Availability", "Operations", 6},
		{"rpt-pnl", "Trading P&L", "Trading", 5},
		{"rpt-nw-dayahead", "Day-Ahead Curves Dashboard", "Trading", 4},
		{"rpt-outage", "Outage Calendar", "Operations", 2},
	},
}

var firstNames = []string{"ana", "ben", "carla", "dev", "elena", "farid", "grace", "hiro", "ines", "jamal", "kate", "luis",
	"maya", "nikhil", "olga", "pablo", "quinn", "rosa", "sam", "tara", "umar", "vera", "wes", "xena", "yusuf", "zoe",
	"amir", "beth", "chen", "dana", "emil", "fay", "gus", "hana", "ivan", "june"}
var lastNames = []string{"alvarez", "brooks", "chen", "diaz", "evans", "fischer", "garcia", "hughes", "ito", "jones", "khan", "lopez"}

func pick(rng *rand.Rand, weights []float64) int {
	var total float64
	for _, w := range weights {
		total += w
	}
	r := rng.Float64() * total
	for i, w := range weights {
		if r < w {
			return i
		}
		r -= w
	}
	return len(weights) - 1
}

func genEvents(d *Dataset) {
	start := Today.AddDate(-1, 0, 1)
	var id int64
	for ti, tenant := range []string{TenantVesper, TenantNorthwind} {
		rng := rand.New(rand.NewPCG(0xb1, uint64(ti)))
		nUsers, domain, weekday := 36, "vesper-energy.com", 34.0
		if tenant == TenantNorthwind {
			nUsers, domain, weekday = 12, "northwind-power.com", 12.0
		}
		users := make([]string, nUsers)
		userW := make([]float64, nUsers)
		for i := range users {
			users[i] = fmt.Sprintf("%s.%s@%s", firstNames[i%len(firstNames)], lastNames[(i*7)%len(lastNames)], domain)
			userW[i] = 1 / math.Pow(float64(i+1), 0.8)
		}
		reports := tenantReports[tenant]
		repW := make([]float64, len(reports))
		for i, r := range reports {
			repW[i] = r.weight
		}
		for dt := start; !dt.After(Today); dt = dt.AddDate(0, 0, 1) {
			mean := weekday
			if wd := dt.Weekday(); wd == time.Saturday || wd == time.Sunday {
				mean = weekday / 5
			}
			mean *= 0.8 + 0.4*float64(dt.Sub(start))/float64(Today.Sub(start)) // usage grows over the year
			n := int(mean + rng.NormFloat64()*math.Sqrt(mean))
			for range max(n, 0) {
				r := reports[pick(rng, repW)]
				act := "ViewReport"
				switch x := rng.Float64(); {
				case x < 0.04:
					act = "ShareReport"
				case x < 0.12:
					act = "ExportReport"
				}
				id++
				d.Events = append(d.Events, Event{ID: id, Tenant: tenant, ReportID: r.id, ReportName: r.name, Workspace: r.workspace,
					UserEmail: users[pick(rng, userW)], ActivityType: act, Date: dt})
			}
		}
	}
}
