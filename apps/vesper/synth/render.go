package synth

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/trellis-go/trellis/apps/vesper/tools"
)

func (f *Formatter) averagePrice(r *tools.AveragePriceResult) Block {
	if len(r.Prices) == 0 {
		return emptyBlock(r.Meta, texts.TryInstead["average_price"])
	}
	period := r.Period
	if period == "" {
		period = fmt.Sprint(r.Prices[0].Year)
	}
	if r.Vendor == "" && r.AllFiles != nil {
		return f.allFilesPrice(r, period)
	}
	latest := r.Prices[len(r.Prices)-1]
	for _, p := range r.Prices {
		if p.DataPoints > latest.DataPoints {
			latest = p
		}
	}
	b := Block{ReportKey: r.ReportKey}
	b.Lead = say("average_price", "hub_zone", latest.HubZone, "market", latest.Market, "period", period, "vendor", latest.Vendor,
		"as_of", strings.ReplaceAll(latest.AsOf, "_", " "), "price", PerMWh(latest.AvgPrice), "points", Int(latest.DataPoints))
	// Several As-Of files may cover the year. The answer is the file with
	// the most data (the latest on ties), as in the specification's example
	// B.1, which shows one figure; the older files are named in one
	// sentence, not a table (tables are for more than three rows).
	var others []string
	for _, p := range r.Prices {
		if p.AsOf != latest.AsOf {
			others = append(others, say("as_of_gives", "as_of", p.AsOf, "price", PerMWh(p.AvgPrice)))
		}
	}
	span := "year"
	if len(r.Months) > 0 {
		span = "period"
	}
	switch {
	case len(others) > 3:
		b.Paras = append(b.Paras, say("other_as_of_many", "count", strconv.Itoa(len(others)), "span", span))
	case len(others) > 0:
		b.Paras = append(b.Paras, say("other_as_of", "span", span, "files", strings.Join(others, "; ")))
	}
	return truncNote(r.Meta, b)
}

// allFilesPrice answers for every vendor's files: the mean over all their
// hours, then each file's own figure, since vendors' forecasts differ.
func (f *Formatter) allFilesPrice(r *tools.AveragePriceResult, period string) Block {
	all := r.AllFiles
	t := &Table{Headers: headers("average_prices")}
	lo, hi := r.Prices[0], r.Prices[0]
	for _, p := range r.Prices {
		t.Rows = append(t.Rows, []string{p.Vendor, p.AsOf, Price(p.AvgPrice), Int(p.DataPoints)})
		if p.AvgPrice < lo.AvgPrice {
			lo = p
		}
		if p.AvgPrice > hi.AvgPrice {
			hi = p
		}
	}
	b := Block{ReportKey: r.ReportKey, Table: t}
	b.Lead = say("average_price_all", "count", strconv.Itoa(len(r.Prices)), "hub_zone", all.HubZone, "market", all.Market, "period", period,
		"price", PerMWh(all.AvgPrice), "points", Int(all.DataPoints))
	if hi.AvgPrice != lo.AvgPrice {
		b.Paras = append(b.Paras, say("files_differ", "low", PerMWh(lo.AvgPrice), "low_vendor", lo.Vendor, "low_as_of", lo.AsOf,
			"high", PerMWh(hi.AvgPrice), "high_vendor", hi.Vendor, "high_as_of", hi.AsOf))
	}
	return truncNote(r.Meta, b)
}

func (f *Formatter) hourly(r *tools.HourlyPriceResult) Block {
	if len(r.Hours) == 0 {
		return emptyBlock(r.Meta, texts.TryInstead["hourly"])
	}
	hi, lo := r.Hours[0], r.Hours[0]
	t := &Table{Headers: headers("hourly")}
	ch := &Chart{Kind: "line", Title: say("chart_hourly", "searched", r.Searched), XLabel: label("hour_ending"), YLabel: label("per_mwh"),
		Series: []Series{{Name: label("average")}, {Name: label("min")}, {Name: label("max")}}}
	for _, h := range r.Hours {
		if h.AvgPrice > hi.AvgPrice {
			hi = h
		}
		if h.AvgPrice < lo.AvgPrice {
			lo = h
		}
		t.Rows = append(t.Rows, []string{HourEnding(h.Hour), Price(h.AvgPrice), Price(h.MinPrice), Price(h.MaxPrice)})
		ch.X = append(ch.X, HourEnding(h.Hour))
		ch.Series[0].Values = append(ch.Series[0].Values, h.AvgPrice)
		ch.Series[1].Values = append(ch.Series[1].Values, h.MinPrice)
		ch.Series[2].Values = append(ch.Series[2].Values, h.MaxPrice)
	}
	b := Block{ReportKey: r.ReportKey, Table: t, Chart: ch}
	b.Lead = say("hourly", "searched", r.Searched, "high", PerMWh(hi.AvgPrice), "high_hour", HourEnding(hi.Hour),
		"low", PerMWh(lo.AvgPrice), "low_hour", HourEnding(lo.Hour), "peak", peakWords(r))
	return truncNote(r.Meta, b)
}

// peakWords states the peak and off-peak means, their spread, and which
// hours are peak in the market.
func peakWords(r *tools.HourlyPriceResult) string {
	window := say("hours_ending", "first", strconv.Itoa(r.PeakFirstHE), "last", strconv.Itoa(r.PeakLastHE))
	whose := say("market_peak_hours", "market", r.Market, "window", window)
	if !r.PeakDefined || r.Market == "" {
		whose = say("peak_hours", "window", window)
	}
	dir := label("above")
	spread := r.PeakSpread
	if spread < 0 {
		dir, spread = label("below"), -spread
	}
	return say("peak_vs_off_peak", "whose", whose, "peak", PerMWh(r.PeakAvg), "off_peak", PerMWh(r.OffPeakAvg),
		"spread", PerMWh(spread), "direction", dir)
}

func (f *Formatter) curves(r *tools.ListCurvesResult) Block {
	if len(r.Curves) == 0 {
		return emptyBlock(r.Meta, texts.TryInstead["curves"])
	}
	t := &Table{Headers: headers("curves")}
	for _, c := range r.Curves {
		latest := ""
		if c.Selected {
			latest = "✓"
		}
		t.Rows = append(t.Rows, []string{c.Vendor, c.Market, c.HubZone, c.AsOf, latest})
	}
	return truncNote(r.Meta, Block{ReportKey: r.ReportKey, Table: t,
		Lead: sayN(len(r.Curves), "curves", "count", strconv.Itoa(len(r.Curves)), "filters", strings.TrimPrefix(r.Searched, tools.Searched("curves", "filters", "")))})
}

func (f *Formatter) vendors(r *tools.CompareVendorsResult) Block {
	if len(r.Representative) == 0 {
		return emptyBlock(r.Meta, texts.TryInstead["vendors"])
	}
	t := &Table{Headers: headers("vendors")}
	for _, p := range r.Representative {
		t.Rows = append(t.Rows, []string{p.Vendor, p.AsOf, Price(p.AvgPrice)})
	}
	b := Block{ReportKey: r.ReportKey, Table: t}
	period := r.Period
	if period == "" {
		period = fmt.Sprint(r.Year)
	}
	b.Lead = say("vendor_comparison", "hub_zone", r.HubZone, "market", r.Market, "period", period)
	if d := r.Difference; d != nil {
		dir := label("higher")
		if d.Difference < 0 {
			dir = label("lower")
		}
		abs := d.Difference
		pct := d.Percent
		if abs < 0 {
			abs, pct = -abs, -pct
		}
		para := say("vendor_difference", "other", d.OtherVendor, "difference", PerMWh(abs), "percent", Percent(pct), "direction", dir,
			"base", d.BaseVendor, "hub_zone", r.HubZone, "period", period)
		if absf(d.PeakDifference) > absf(d.Difference) {
			para += " " + say("vendor_peak_difference", "difference", PerMWh(absf(d.PeakDifference)))
		}
		b.Paras = append(b.Paras, para)
	} else {
		b.Paras = append(b.Paras, say("one_vendor"))
	}
	return truncNote(r.Meta, b)
}

func absf(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func (f *Formatter) hubZones(r *tools.CompareHubZonesResult) Block {
	if len(r.Hours) == 0 {
		return emptyBlock(r.Meta, texts.TryInstead["hub_zones"])
	}
	t := &Table{Headers: headers("hub_zones", "a", r.HubZoneA, "b", r.HubZoneB)}
	ch := &Chart{Kind: "line", Title: say("chart_hub_zones", "a", r.HubZoneA, "b", r.HubZoneB), XLabel: label("hour_ending"), YLabel: label("per_mwh"),
		Series: []Series{{Name: r.HubZoneA}, {Name: r.HubZoneB}}}
	widest := r.Hours[0]
	for _, h := range r.Hours {
		if absf(h.Spread) > absf(widest.Spread) {
			widest = h
		}
		t.Rows = append(t.Rows, []string{HourEnding(h.Hour), Price(h.PriceA), Price(h.PriceB), Price(h.Spread)})
		ch.X = append(ch.X, HourEnding(h.Hour))
		ch.Series[0].Values = append(ch.Series[0].Values, h.PriceA)
		ch.Series[1].Values = append(ch.Series[1].Values, h.PriceB)
	}
	dir := label("above")
	if r.AvgSpread < 0 {
		dir = label("below")
	}
	name := func(hub, market string) string {
		if market != "" && r.MarketA != r.MarketB { // two markets: say which is which
			return hub + " (" + market + ")"
		}
		return hub
	}
	return truncNote(r.Meta, Block{ReportKey: r.ReportKey, Table: t, Chart: ch,
		Lead: say("hub_spread", "a", name(r.HubZoneA, r.MarketA), "spread", PerMWh(absf(r.AvgSpread)), "direction", dir,
			"b", name(r.HubZoneB, r.MarketB), "widest_hour", HourEnding(widest.Hour), "widest", PerMWh(widest.Spread))})
}

func rangeWords(start, end string, now time.Time) string {
	return say("range", "start", Day(start, now), "end", Day(end, now))
}

func (f *Formatter) topReports(r *tools.TopReportsResult, now time.Time) Block {
	if len(r.Reports) == 0 {
		return emptyBlock(r.Meta, texts.TryInstead["top_reports"])
	}
	t := &Table{Headers: headers("top_reports")}
	for i, x := range r.Reports {
		t.Rows = append(t.Rows, []string{fmt.Sprint(i + 1), x.ReportName, x.Workspace, Int(x.TotalViews), Int(x.UniqueViewers)})
	}
	top := r.Reports[0]
	lead := sayN(int(top.UniqueViewers), "top_report", "report", top.ReportName, "range", rangeWords(r.Start, r.End, now),
		"views", Int(top.TotalViews), "viewers", Int(top.UniqueViewers))
	if r.SortBy == "viewers" {
		lead = sayN(int(top.UniqueViewers), "top_report_viewers", "report", top.ReportName, "range", rangeWords(r.Start, r.End, now),
			"viewers", Int(top.UniqueViewers), "views", Int(top.TotalViews))
	}
	b := Block{ReportKey: r.ReportKey, Table: t, Lead: lead}
	if r.Totals.TotalViews > 0 {
		b.Paras = append(b.Paras, totalsWords(r.Totals, say("all_reports")))
	}
	return truncNote(r.Meta, b)
}

// totalsWords says how many views a range had and how many distinct people
// made them.
func totalsWords(t tools.UsageTotals, subject string) string {
	return sayN(int(t.UniqueViewers), "totals", "subject", subject, "views", Int(t.TotalViews), "viewers", Int(t.UniqueViewers))
}

func (f *Formatter) topUsers(r *tools.TopUsersResult, now time.Time) Block {
	if len(r.Users) == 0 {
		return emptyBlock(r.Meta, texts.TryInstead["top_users"])
	}
	t := &Table{Headers: headers("top_users")}
	for i, u := range r.Users {
		t.Rows = append(t.Rows, []string{fmt.Sprint(i + 1), u.UserEmail, Int(u.TotalViews), Int(u.UniqueReports), Day(u.LastActivity, now)})
	}
	top := r.Users[0]
	what := say("reports")
	if r.ReportName != "" {
		what = "**" + r.ReportName + "**"
	}
	people := r.Totals.UniqueViewers
	if people == 0 {
		people = int64(len(r.Users))
	}
	lead := sayN(int(people), "top_users", "people", Int(people), "what", what, "range", rangeWords(r.Start, r.End, now),
		"views", Int(r.Totals.TotalViews))
	return truncNote(r.Meta, Block{ReportKey: r.ReportKey, Table: t,
		Lead: lead, Paras: []string{say("most_active_user", "user", top.UserEmail, "views", Int(top.TotalViews))}})
}

func (f *Formatter) trend(r *tools.UsageTrendResult, now time.Time) Block {
	if len(r.Points) == 0 {
		return emptyBlock(r.Meta, texts.TryInstead["trend"])
	}
	t := &Table{Headers: headers("trend", "period", strings.ToUpper(r.Period[:1])+r.Period[1:])}
	ch := &Chart{Kind: "bar", Title: say("chart_trend", "period", r.Period), XLabel: r.Period, YLabel: label("views_axis"), Series: []Series{{Name: label("views")}}}
	var total int64
	for _, p := range r.Points {
		label := ShortMonthYear(p.Period)
		if r.Period == "week" {
			label = say("week_of", "day", FullDay(p.Period))
		}
		t.Rows = append(t.Rows, []string{label, Int(p.Views)})
		ch.X = append(ch.X, label)
		ch.Series[0].Values = append(ch.Series[0].Values, float64(p.Views))
		total += p.Views
	}
	subject := say("trend_all_reports")
	if r.ReportName != "" {
		subject = "**" + r.ReportName + "**"
	}
	first, last := r.Points[0], r.Points[len(r.Points)-1]
	if len(r.Points) > 2 { // a partial first or last period would distort the trend
		first, last = r.Points[1], r.Points[len(r.Points)-2]
	}
	change := ""
	if first.Views > 0 && first.Period != last.Period {
		change = say("trend_change", "direction", trendWord(float64(last.Views-first.Views)/float64(first.Views)*100),
			"first", ShortMonthYear(first.Period), "last", ShortMonthYear(last.Period))
	}
	when := say("trend_over")
	if r.Start != "" && r.End != "" {
		when = say("trend_from", "range", rangeWords(r.Start, r.End, now))
	}
	by := ""
	if r.Totals.UniqueViewers > 0 {
		by = sayN(int(r.Totals.UniqueViewers), "trend_by", "count", Int(r.Totals.UniqueViewers))
	}
	b := Block{ReportKey: r.ReportKey, Table: t, Chart: ch,
		Lead: say("trend", "subject", subject, "views", Int(total), "by", by, "when", when, "change", change)}
	if len(r.Points) == 1 {
		b.Table, b.Chart = nil, nil // one figure: the sentence says it
	}
	return b
}

func trendWord(pct float64) string {
	switch {
	case pct > 2:
		return say("trend_up", "percent", Percent(pct))
	case pct < -2:
		return say("trend_down", "percent", Percent(-pct))
	}
	return say("trend_flat")
}

func (f *Formatter) overview(r *tools.ProjectOverviewResult) Block {
	if len(r.Candidates) > 0 || (r.Note != "" && !r.Found) {
		return candidatesBlock(r.Meta)
	}
	if !r.Found || r.Project == nil {
		return emptyBlock(r.Meta, "")
	}
	p := r.Project
	size := []string{}
	if p.GenCapMW > 0 {
		size = append(size, say("capacity", "mw", fmt.Sprintf("%g", p.GenCapMW)))
	}
	if p.StoreCapMW > 0 {
		size = append(size, say("storage_capacity", "mw", fmt.Sprintf("%g", p.StoreCapMW)))
	}
	b := Block{ReportKey: r.ReportKey}
	b.Lead = say("overview", "project", p.Name, "size", strings.Join(size, say("capacity_and")), "technology", p.Technology,
		"market", p.Market, "stage", StageWords(p.Stage), "status", Status(p.Status), "summary", p.Summary)
	switch {
	case p.Buyer != "" && p.Tenor > 0 && p.PPAPrice != nil:
		b.Lead += " " + say("sells_ppa_price", "buyer", p.Buyer, "tenor", strconv.FormatInt(p.Tenor, 10), "price", PerMWh(*p.PPAPrice))
	case p.Buyer != "" && p.Tenor > 0:
		b.Lead += " " + say("sells_ppa", "buyer", p.Buyer, "tenor", strconv.FormatInt(p.Tenor, 10))
	case p.Buyer != "":
		b.Lead += " " + say("sells", "buyer", p.Buyer)
	default:
		b.Lead += " " + say("no_offtake")
	}
	t := &Table{Headers: headers("overview")}
	add := func(k, v string) {
		if v != "" {
			t.Rows = append(t.Rows, []string{k, v})
		}
	}
	spent := ""
	if p.Budget > 0 {
		spent = say("of_budget", "percent", Percent(100*p.ActualsLTD/p.Budget))
	}
	add(label("budget"), Money(p.Budget))
	add(label("actuals_to_date"), Money(p.ActualsLTD)+spent)
	add(label("forecast"), Money(p.Forecast))
	add(label("location"), p.Location)
	add(label("utility"), p.Utility)
	add(label("sponsor"), p.Sponsor)
	if p.Buyer != "" {
		terms := p.Buyer
		if p.Tenor > 0 {
			terms += say("tenor", "years", strconv.FormatInt(p.Tenor, 10))
		}
		if p.PPAPrice != nil {
			terms += ", " + PerMWh(*p.PPAPrice)
		}
		add(label("offtake"), terms)
	}
	b.Table = t
	return b
}

func (f *Formatter) health(r *tools.ProjectHealthResult) Block {
	if len(r.Candidates) > 0 || (r.Note != "" && len(r.Rows) == 0) {
		return candidatesBlock(r.Meta)
	}
	if len(r.Rows) == 0 {
		return emptyBlock(r.Meta, texts.TryInstead["health"])
	}
	t := &Table{Headers: headers("health")}
	var risk string
	for _, h := range r.Rows {
		pct := ""
		if h.PctComplete != nil {
			pct = fmt.Sprintf("%g%%", *h.PctComplete)
		}
		t.Rows = append(t.Rows, []string{h.Area, HealthBadge(h.Color), pct, ShortMonthYear(h.Due), h.Notes})
		if risk == "" && h.Color == "red" && h.Notes != "" {
			risk = say("key_risk", "area", h.Area, "notes", h.Notes)
		}
	}
	// The project overview report goes with the health one, as in B.2.
	b := Block{ReportKey: r.ReportKey, Related: []string{"per_project_report"}, Table: t,
		Lead: say("health", "project", r.Project, "stage", StageWords(r.Stage), "status", StatusBold(r.Status))}
	if risk != "" {
		b.Paras = append(b.Paras, risk)
	}
	return b
}

func (f *Formatter) milestones(r *tools.MilestoneResult) Block {
	if len(r.Candidates) > 0 || (r.Note != "" && len(r.Milestones) == 0) {
		return candidatesBlock(r.Meta)
	}
	if len(r.Milestones) == 0 {
		return emptyBlock(r.Meta, texts.TryInstead["milestones"])
	}
	t := &Table{Headers: headers("milestones")}
	for _, m := range r.Milestones {
		t.Rows = append(t.Rows, []string{m.Name, MonthYear(m.Date)})
	}
	lead := say("cod", "project", r.Project, "stage", StageWords(r.Stage), "cod", MonthYear(r.COD))
	if r.COD == "" {
		lead = say("no_cod", "project", r.Project, "stage", StageWords(r.Stage))
	}
	return Block{ReportKey: r.ReportKey, Table: t, Lead: lead,
		Paras: []string{say("milestones_source", "day", FullDay(r.AsOf), "commercialization", r.Commercialization)}}
}

func (f *Formatter) budget(r *tools.BudgetResult) Block {
	if len(r.Candidates) > 0 || (r.Note != "" && r.Project == "") {
		return candidatesBlock(r.Meta)
	}
	if r.Project == "" {
		return emptyBlock(r.Meta, "")
	}
	pct := ""
	if r.Budget > 0 {
		pct = " (" + Percent(100*r.Actuals/r.Budget) + ")"
	}
	b := Block{ReportKey: r.ReportKey,
		Lead: say("budget", "project", r.Project, "actuals", Money(r.Actuals), "budget", Money(r.Budget), "percent", pct,
			"forecast", Money(r.Forecast))}
	t := &Table{Headers: headers("budget")}
	for _, l := range r.Lines {
		v := MonthYear(l.Date)
		if l.Amount != nil {
			if l.Metric == "Levered IRR" {
				v = Percent(*l.Amount * 100)
			} else {
				v = Money(*l.Amount)
			}
		}
		t.Rows = append(t.Rows, []string{l.Group, l.SubGroup, l.Metric, v})
	}
	b.Table = t
	b.Paras = append(b.Paras, say("letters_of_credit", "interconnection", Money(r.ICLC), "ppa", Money(r.PPALC)))
	return b
}

func (f *Formatter) risks(r *tools.TaskRisksResult, now time.Time) Block {
	if len(r.Candidates) > 0 {
		return candidatesBlock(r.Meta)
	}
	if len(r.Tasks) == 0 {
		return emptyBlock(r.Meta, texts.TryInstead["risks"])
	}
	count := map[string]int{}
	t := &Table{Headers: headers("risks")}
	for _, x := range r.Tasks {
		count[x.Risk]++
		t.Rows = append(t.Rows, []string{x.Project, x.Task, Day(x.Due, now), x.Status, x.Risk, x.Notes})
	}
	var parts []string
	for _, lvl := range []string{"High", "Medium", "Low"} {
		if count[lvl] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[lvl], strings.ToLower(lvl)))
		}
	}
	of := ""
	if one := r.Tasks[0].Project; len(r.Tasks) > 0 {
		of = say("of_project", "project", one)
		for _, x := range r.Tasks {
			if x.Project != one {
				of = ""
				break
			}
		}
	}
	return truncNote(r.Meta, Block{ReportKey: r.ReportKey, Table: t,
		Lead: sayN(len(r.Tasks), "risks", "count", strconv.Itoa(len(r.Tasks)), "of", of, "levels", strings.Join(parts, ", "))})
}

func (f *Formatter) portfolio(r *tools.PortfolioResult) Block {
	if len(r.Projects) == 0 {
		return emptyBlock(r.Meta, texts.TryInstead["portfolio"])
	}
	t := &Table{Headers: headers("portfolio")}
	if len(r.Milestones) > 0 {
		// The dates asked for take the money columns' place.
		t.Headers = headers("portfolio_dates")
		for _, m := range r.Milestones {
			t.Headers = append(t.Headers, milestoneHeader(m))
		}
	}
	statuses := map[string]int{}
	for _, p := range r.Projects {
		statuses[p.Status]++
		if len(r.Milestones) == 0 {
			t.Rows = append(t.Rows, []string{p.Name, StageShort(p.Stage), p.Technology, p.Market, Money(p.Budget), Money(p.ActualsLTD), p.Summary})
			continue
		}
		row := []string{p.Name, StageShort(p.Stage), p.Technology, p.Market, Status(p.Status)}
		for _, m := range r.Milestones {
			row = append(row, ShortMonthYear(p.Dates[m]))
		}
		t.Rows = append(t.Rows, row)
	}
	n := len(r.Projects)
	var lead string
	if len(statuses) == 1 {
		lead = sayN(n, "portfolio_status", "count", strconv.Itoa(n), "status", StatusBold(r.Projects[0].Status))
	} else {
		var parts []string
		for _, s := range []string{"off_track", "at_risk", "on_hold", "on_track"} {
			if statuses[s] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", statuses[s], Status(s)))
			}
		}
		in := ""
		if r.Stage != "" {
			in = say("in_stage", "stage", r.Stage)
		}
		lead = sayN(n, "portfolio", "count", strconv.Itoa(n), "stage", in, "statuses", strings.Join(parts, ", "))
	}
	b := Block{ReportKey: r.ReportKey, Table: t, Lead: lead}
	if len(r.Milestones) > 0 && r.SnapshotDay != "" {
		b.Paras = append(b.Paras, say("portfolio_source", "day", FullDay(r.SnapshotDay)))
	}
	return truncNote(r.Meta, b)
}

// milestoneHeader is a milestone's column header: COD for the commercial
// operation date, the stage's number for a stage.
func milestoneHeader(m string) string {
	if m == "Commercial Operation" {
		return label("cod")
	}
	return m
}

func (f *Formatter) changes(r *tools.RecentChangesResult, now time.Time) Block {
	if len(r.Candidates) > 0 {
		return candidatesBlock(r.Meta)
	}
	if len(r.Changes) == 0 {
		return emptyBlock(r.Meta, texts.TryInstead["changes"])
	}
	allDates := true
	for _, c := range r.Changes {
		if c.Field != "FinishDate" {
			allDates = false
		}
	}
	var t *Table
	var later int
	if allDates {
		t = &Table{Headers: headers("date_changes")}
		for _, c := range r.Changes {
			t.Rows = append(t.Rows, []string{Day(c.Date, now), c.Project, c.Task, ShortMonthYear(c.Previous), ShortMonthYear(c.New), Shift(c.Previous, c.New)})
			if c.ShiftDays != nil && *c.ShiftDays > 0 {
				later++
			}
		}
	} else {
		t = &Table{Headers: headers("changes")}
		for _, c := range r.Changes {
			t.Rows = append(t.Rows, []string{Day(c.Date, now), c.Project, c.Task, c.Field, changeValue(c.Previous), changeValue(c.New)})
		}
	}
	what := "changes"
	if allDates {
		what = "date_changes"
	}
	since := say("changes_since", "day", Day(r.Since, now))
	if s, err := time.Parse("2006-01-02", r.Since); err == nil {
		if days := int(midnight(now).Sub(s).Hours() / 24); days >= 1 && days <= 31 {
			since = sayN(days, "changes_last", "count", strconv.Itoa(days))
		}
	}
	if r.Until != "" && r.Until < midnight(now).Format("2006-01-02") {
		since = say("changes_from", "range", rangeWords(r.Since, r.Until, now))
	}
	b := Block{ReportKey: r.ReportKey, Table: t,
		Lead: sayN(len(r.Changes), what, "count", strconv.Itoa(len(r.Changes)), "since", since)}
	if allDates && later >= 2 {
		b.Paras = append(b.Paras, say("pattern", "pattern", slipPattern(r.Changes, len(r.Changes))))
	}
	return truncNote(r.Meta, b)
}

func (f *Formatter) generalSQL(r *tools.GeneralSQLResult) Block {
	if len(r.Rows) == 0 {
		return emptyBlock(r.Meta, "")
	}
	t := &Table{Headers: r.Columns}
	now := f.now()
	for _, row := range r.Rows {
		var cells []string
		for _, c := range r.Columns {
			cells = append(cells, cell(row[c], now))
		}
		t.Rows = append(t.Rows, cells)
	}
	lead := sayN(len(r.Rows), "rows", "count", strconv.Itoa(len(r.Rows)))
	if r.Description != "" {
		lead = r.Description + ": " + lead
	}
	return truncNote(r.Meta, Block{Table: t, Lead: lead})
}

// cell writes one value of a query's result; dates read as people write
// them (Feb 26, or Feb 26, 2025 in another year), as in every other table.
func cell(v any, now time.Time) string {
	switch x := v.(type) {
	case nil:
		return ""
	case float64:
		return fmt.Sprintf("%.2f", x)
	case int64:
		return Int(x)
	case time.Time:
		return Day(x.Format(time.DateOnly), now)
	case string:
		if isoDay.MatchString(x) {
			return Day(x[:10], now)
		}
		return x
	}
	return fmt.Sprint(v)
}

// changeValue writes a changed field's value; a date reads as the
// milestone dates do ("Mar 2026").
func changeValue(v string) string {
	if isoDay.MatchString(v) {
		return ShortMonthYear(v)
	}
	return v
}

// isoDay is a date (or a timestamp's date) as SQLite returns it.
var isoDay = regexp.MustCompile(`^[0-9]{4}-[01][0-9]-[0-3][0-9](?:[T ][0-9:.]+Z?)?$`)

func midnight(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// slipPattern says, from the data only, how many projects moved dates
// later, by how much, and which kinds of milestone moved: "4 of 5
// projects moved milestones later by 2-3 months (interconnection,
// financing, construction and COD milestones)."
func slipPattern(changes []tools.ChangeRow, total int) string {
	projects, moved := map[string]bool{}, map[string]bool{}
	minM, maxM := 0, 0
	var kinds []string
	for _, c := range changes {
		projects[c.Project] = true
		if c.ShiftDays == nil || *c.ShiftDays <= 0 {
			continue
		}
		moved[c.Project] = true
		m := int((float64(*c.ShiftDays) + 15) / 30.44)
		if m < 1 {
			m = 1
		}
		if minM == 0 || m < minM {
			minM = m
		}
		if m > maxM {
			maxM = m
		}
		task := strings.ToLower(c.Task)
		for _, k := range texts.MilestoneKinds {
			if strings.Contains(task, k.Word) {
				if !contains(kinds, k.Kind) {
					kinds = append(kinds, k.Kind)
				}
				break
			}
		}
	}
	by := say("slip_months_range", "min", strconv.Itoa(minM), "max", strconv.Itoa(maxM))
	if minM == maxM {
		by = sayN(minM, "slip_months", "count", strconv.Itoa(minM))
	}
	of := ""
	if len(kinds) > 0 {
		of = say("slip_kinds", "kinds", joinAnd(kinds))
	}
	return say("slip", "moved", strconv.Itoa(len(moved)), "projects", strconv.Itoa(len(projects)), "by", by, "kinds", of)
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func joinAnd(xs []string) string {
	if len(xs) <= 1 {
		return strings.Join(xs, "")
	}
	return say("and", "list", strings.Join(xs[:len(xs)-1], ", "), "last", xs[len(xs)-1])
}
