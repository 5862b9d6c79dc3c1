package vesper

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/vesper/synth"
	"github.com/trellis-go/trellis/apps/vesper/warehousetest"
)

// The questions people actually ask: each class of issue 20 in many
// phrasings, offline, with the figures the answer must hold computed by SQL
// over the generated data's base tables (never by the app's tools).
//
// A question names the tool that must answer it and the arguments that call
// must carry; want returns the substrings the answer must hold. Every answer
// also passes the hygiene checks of checkAnswer: no tool or agent names, no
// ISO or numeric dates.

type question struct {
	q    string
	tool string         // "" when no tool may run (a refusal, a question back)
	args map[string]any // a subset of the call's arguments
	want func(t *testing.T, db *sql.DB) []string
	// not are substrings the answer must not hold.
	not []string
}

// sqlOne runs a query over the base tables and returns its first row.
func sqlOne(t *testing.T, db *sql.DB, q string, args ...any) []any {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	if !rows.Next() {
		t.Fatalf("%s %v: no row", q, args)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	return vals
}

func sqlStrings(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func asInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	}
	return 0
}

func asFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	}
	return 0
}

// views is "**N views**" of a report in a range.
func views(report, from, to string) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string {
		n := asInt(sqlOne(t, db, `SELECT COUNT(*) FROM base_pbi_activity_events WHERE tenant_id = 'vesper'
			AND activity_type = 'ViewReport' AND report_name = ? AND activity_date BETWEEN ? AND ?`, report, from, to)[0])
		return []string{"**" + report + "**", "**" + synth.Int(n) + " views**"}
	}
}

// topUser is the most active user of a report (or of all, report "") in a range.
func topUser(report, from, to string) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string {
		r := sqlOne(t, db, `SELECT user_email, COUNT(*) AS n FROM base_pbi_activity_events WHERE tenant_id = 'vesper'
			AND activity_type = 'ViewReport' AND (? = '' OR report_name = ?) AND activity_date BETWEEN ? AND ?
			GROUP BY user_email ORDER BY n DESC, user_email LIMIT 1`, report, report, from, to)
		return []string{"**" + r[0].(string) + "**", "**" + synth.Int(asInt(r[1])) + " views**"}
	}
}

// topReport is the most viewed report in a range.
func topReport(from, to string) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string {
		r := sqlOne(t, db, `SELECT report_name, COUNT(*) AS n FROM base_pbi_activity_events WHERE tenant_id = 'vesper'
			AND activity_type = 'ViewReport' AND activity_date BETWEEN ? AND ?
			GROUP BY report_name ORDER BY n DESC, report_name LIMIT 1`, from, to)
		return []string{"**" + r[0].(string) + "**", "**" + synth.Int(asInt(r[1])) + " views**"}
	}
}

// risks is the count of tasks flagged at a level (for a project, or all).
func risks(level, project string) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string {
		n := asInt(sqlOne(t, db, `SELECT COUNT(*) FROM base_per_tasks WHERE tenant_id = 'vesper' AND risk = ? AND (? = '' OR projectname = ?)`,
			level, project, project)[0])
		switch n {
		case 0:
			return []string{"I found no"}
		case 1:
			return []string{"**1 task**", "is flagged", fmt.Sprintf("(1 %s)", strings.ToLower(level))}
		}
		return []string{fmt.Sprintf("**%d tasks**", n), "are flagged", fmt.Sprintf("(%d %s)", n, strings.ToLower(level))}
	}
}

// projectsWhere are the names of the active projects a condition selects,
// each of which the answer's table must list.
func projectsWhere(cond string, args ...any) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string {
		names := sqlStrings(t, db, `SELECT name FROM base_per_project WHERE tenant_id = 'vesper'
			AND (is_archived = 0 OR is_archived IS NULL) AND `+cond, args...)
		if len(names) == 0 {
			t.Fatalf("the condition %s selects no project: the question tests nothing", cond)
		}
		out := []string{}
		for _, n := range names {
			// a table row, or the bullets of a single project
			out = append(out, anyOf+"| "+n+" |\x00**"+n+"**")
		}
		return out
	}
}

// hourly are the hourly means of a hub-zone's prices in a year (and month).
func hourly(t *testing.T, db *sql.DB, market, hub string, year, month int) map[int]float64 {
	out := hourMeans(t, db, `SELECT da.hour, AVG(da.dayahead_price) FROM base_mc_dayahead da
		JOIN base_mc_vendor_files vf ON da.file_info_key = vf.file_info_key AND da.hubzone_key = vf.hubzone_key
		WHERE vf.market = ? AND vf.hubzone = ? AND da.year = ? AND (? = 0 OR da.month = ?) GROUP BY da.hour`, market, hub, year, month, month)
	if len(out) == 0 {
		t.Fatalf("no prices for %s %s %d", market, hub, year)
	}
	return out
}

// hourMeans runs a query whose rows are an hour and a mean price, and returns the means by hour.
func hourMeans(t *testing.T, db *sql.DB, q string, args ...any) map[int]float64 {
	t.Helper()
	out := map[int]float64{}
	for _, r := range keyedMeans(t, db, q, args...) {
		h, err := strconv.Atoi(r.key)
		if err != nil {
			t.Fatalf("%s: hour %q", q, r.key)
		}
		out[h] = r.mean
	}
	return out
}

// keyedMean is one row of a query of a key (an hour, an As-Of file) and a mean price.
type keyedMean struct {
	key  string
	mean float64
}

// keyedMeans runs a query whose rows are a key and a mean price, in the query's order.
func keyedMeans(t *testing.T, db *sql.DB, q string, args ...any) []keyedMean {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []keyedMean
	for rows.Next() {
		var k any
		var m float64
		if err := rows.Scan(&k, &m); err != nil {
			t.Fatal(err)
		}
		if b, ok := k.([]byte); ok {
			k = string(b)
		}
		out = append(out, keyedMean{fmt.Sprint(k), m})
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// highLow returns the hours of the highest and the lowest of hourly means.
func highLow(m map[int]float64) (hi, lo int) {
	hi, lo = -1, -1
	for h, p := range m {
		if hi < 0 || p > m[hi] {
			hi = h
		}
		if lo < 0 || p < m[lo] {
			lo = h
		}
	}
	return hi, lo
}

// extremeHours are the highest and lowest hours of a hub-zone's year (or month).
func extremeHours(market, hub string, year, month int) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string {
		m := hourly(t, db, market, hub, year, month)
		hi, lo := highLow(m)
		return []string{fmt.Sprintf("**%s in HE %d**", synth.PerMWh(m[hi]), hi+1), fmt.Sprintf("%s in HE %d", synth.PerMWh(m[lo]), lo+1)}
	}
}

// spread is the average hourly spread of two markets' main hubs.
func spread(marketA, hubA, marketB, hubB string, year int) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string {
		a, b := hourly(t, db, marketA, hubA, year, 0), hourly(t, db, marketB, hubB, year, 0)
		var s, n float64
		for h := 0; h < 24; h++ {
			pa, okA := a[h]
			pb, okB := b[h]
			if okA && okB {
				s, n = s+pa-pb, n+1
			}
		}
		avg := s / n
		dir := "above"
		if avg < 0 {
			dir, avg = "below", -avg
		}
		return []string{fmt.Sprintf("**%s (%s)**", hubA, marketA), fmt.Sprintf("**%s %s**", synth.PerMWh(avg), dir), fmt.Sprintf("%s (%s)", hubB, marketB)}
	}
}

// offtake is a project's buyer, tenor and PPA price.
func offtake(project string) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string {
		r := sqlOne(t, db, `SELECT buyer, tenor, price FROM base_per_project WHERE tenant_id = 'vesper' AND name = ?`, project)
		out := []string{"**" + project + "**", r[0].(string), fmt.Sprintf("%d-year", asInt(r[1]))}
		if p := asFloat(r[2]); p > 0 {
			out = append(out, synth.PerMWh(p))
		}
		return out
	}
}

// annualAnyOf is the average price of one of a vendor's As-Of files for a
// hub-zone and year: the answer names one file and must give its figure.
func annualAnyOf(vendor, market, hub string, year int) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string {
		var alts []string
		for _, r := range keyedMeans(t, db, `SELECT vf.asof, AVG(da.dayahead_price) FROM base_mc_dayahead da
			JOIN base_mc_vendor_files vf ON da.file_info_key = vf.file_info_key AND da.hubzone_key = vf.hubzone_key
			WHERE vf.vendor = ? AND vf.market = ? AND vf.hubzone = ? AND da.year = ? GROUP BY vf.asof`, vendor, market, hub, year) {
			alts = append(alts, "**"+synth.PerMWh(r.mean)+"**")
		}
		return []string{anyOf + strings.Join(alts, "\x00")}
	}
}

// anyOf marks a want that holds when any one of its \x00-separated parts does.
const anyOf = "\x01"

func fixed(s ...string) func(*testing.T, *sql.DB) []string {
	return func(*testing.T, *sql.DB) []string { return s }
}

// projectName is a project's name in bold, resolved from what was typed.
func projectName(name string) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string {
		sqlOne(t, db, `SELECT name FROM base_per_project WHERE tenant_id = 'vesper' AND name = ?`, name)
		return []string{"**" + name + "**"}
	}
}

var unknownProject = []string{"No project matches", "Did you mean"}

var questions = []question{
	// 1. A report's name and a period: the report's own views.
	{q: "How many views did the Budget Tracker get in December?", tool: "get_report_usage_trend", args: map[string]any{"report_name": "Budget Tracker", "date_range_start": "2025-12-01", "date_range_end": "2025-12-31"}, want: views("Budget Tracker", "2025-12-01", "2025-12-31")},
	{q: "budget tracker views in january 2026", tool: "get_report_usage_trend", args: map[string]any{"report_name": "Budget Tracker"}, want: views("Budget Tracker", "2026-01-01", "2026-01-31")},
	{q: "How often was the Executive Summary viewed last month?", tool: "get_report_usage_trend", want: views("Executive Summary", "2026-01-01", "2026-01-31")},
	{q: "views of the exec summary between 2025-11-01 and 2025-11-30", tool: "get_report_usage_trend", want: views("Executive Summary", "2025-11-01", "2025-11-30")},
	{q: "How many times was the Project Health Report opened in Q4 2025?", tool: "get_report_usage_trend", want: views("Project Health Report", "2025-10-01", "2025-12-31")},
	{q: "usage of the Interconnection Queue report since February 1", tool: "get_report_usage_trend", want: views("Interconnection Queue", "2026-02-01", "2026-02-27")},
	{q: "How much traffic did the PER dashboard get in the last 30 days?", tool: "get_report_usage_trend", args: map[string]any{"report_name": "PER Project Overview"}, want: views("PER Project Overview", "2026-01-28", "2026-02-27")},
	{q: "Day-Ahead Curves Dashboard views from Dec 1 to Dec 31 2025", tool: "get_report_usage_trend", want: views("Day-Ahead Curves Dashboard", "2025-12-01", "2025-12-31")},
	{q: "views for the hub-zone spread monitor in November 2025", tool: "get_report_usage_trend", want: views("Hub-Zone Spread Monitor", "2025-11-01", "2025-11-30")},
	{q: "How many views did Portfolio Milestones get this year?", tool: "get_report_usage_trend", want: views("Portfolio Milestones", "2026-01-01", "2026-02-27")},
	{q: "How popular was the Price Curves - Hourly Shape report in January?", tool: "get_report_usage_trend", want: views("Price Curves - Hourly Shape", "2026-01-01", "2026-01-31")},
	{q: "Budjet Trackr views last month", tool: "get_report_usage_trend", want: views("Budget Tracker", "2026-01-01", "2026-01-31")},
	{q: "How many views did the PBI Usage Dashboard have in 2025?", tool: "get_report_usage_trend", want: views("PBI Usage Dashboard", "2025-01-01", "2025-12-31")},
	{q: "How many views did the Executive Summary get in the past 2 weeks?", tool: "get_report_usage_trend", want: views("Executive Summary", "2026-02-13", "2026-02-27")},
	{q: "Budget Tracker usage in Oct 2025", tool: "get_report_usage_trend", want: views("Budget Tracker", "2025-10-01", "2025-10-31")},
	{q: "views of the Interconnection Queue in September 2025", tool: "get_report_usage_trend", want: views("Interconnection Queue", "2025-09-01", "2025-09-30")},
	{q: "how many people opened the project health report yesterday?", tool: "get_top_users", args: map[string]any{"report_name": "Project Health Report", "date_range_start": "2026-02-26"}},

	// 2. Who viewed a report most, in a period.
	{q: "Who viewed the Day-Ahead Curves Dashboard most in January 2026?", tool: "get_top_users", args: map[string]any{"report_name": "Day-Ahead Curves Dashboard"}, want: topUser("Day-Ahead Curves Dashboard", "2026-01-01", "2026-01-31")},
	{q: "Top users of the Budget Tracker last month", tool: "get_top_users", want: topUser("Budget Tracker", "2026-01-01", "2026-01-31")},
	{q: "who uses the executive summary the most this quarter?", tool: "get_top_users", want: topUser("Executive Summary", "2026-01-01", "2026-02-27")},
	{q: "Which people looked at the Project Health Report in December 2025?", tool: "get_top_users", want: topUser("Project Health Report", "2025-12-01", "2025-12-31")},
	{q: "top 5 viewers of the PER Project Overview in 2025", tool: "get_top_users", args: map[string]any{"top_n": 5.0}, want: topUser("PER Project Overview", "2025-01-01", "2025-12-31")},
	{q: "Who are the top Power BI users in November 2025?", tool: "get_top_users", want: topUser("", "2025-11-01", "2025-11-30")},

	// 3. Explicit months and ranges for the most viewed reports.
	{q: "Which reports were most viewed in December 2025?", tool: "get_top_reports_by_views", want: topReport("2025-12-01", "2025-12-31")},
	{q: "most popular reports between 2026-01-15 and 2026-02-15", tool: "get_top_reports_by_views", want: topReport("2026-01-15", "2026-02-15")},
	{q: "top reports by views in Q3 2025", tool: "get_top_reports_by_views", want: topReport("2025-07-01", "2025-09-30")},
	{q: "What were the most viewed Power BI reports last year?", tool: "get_top_reports_by_views", want: topReport("2025-01-01", "2025-12-31")},
	{q: "most viewed reports from Nov 1 to Nov 15, 2025", tool: "get_top_reports_by_views", want: topReport("2025-11-01", "2025-11-15")},
	{q: "top 3 reports in the last 14 days", tool: "get_top_reports_by_views", args: map[string]any{"top_n": 3.0}, want: topReport("2026-02-13", "2026-02-27")},
	{q: "which reports got the most views in January?", tool: "get_top_reports_by_views", want: topReport("2026-01-01", "2026-01-31")},
	{q: "top 10 reports this month", tool: "get_top_reports_by_views", want: topReport("2026-02-01", "2026-02-27")},
	{q: "Most viewed Power BI reports in the first quarter of 2025", tool: "get_top_reports_by_views", want: topReport("2025-01-01", "2025-03-31")},

	// 4. Risk levels.
	{q: "Show me high risk tasks", tool: "get_task_risks", args: map[string]any{"risk_level": "High"}, want: risks("High", "")},
	{q: "Which tasks are high-risk?", tool: "get_task_risks", args: map[string]any{"risk_level": "High"}, want: risks("High", "")},
	{q: "list medium risk tasks", tool: "get_task_risks", args: map[string]any{"risk_level": "Medium"}, want: risks("Medium", "")},
	{q: "tasks with risk level low", tool: "get_task_risks", args: map[string]any{"risk_level": "Low"}, want: risks("Low", "")},
	{q: "Show low risk tasks for the portfolio", tool: "get_task_risks", args: map[string]any{"risk_level": "Low"}, want: risks("Low", "")},
	{q: "What are the medium-risk tasks on Chesapeake BESS?", tool: "get_task_risks", args: map[string]any{"project_name": "Chesapeake BESS", "risk_level": "Medium"}, want: risks("Medium", "Chesapeake BESS")},
	{q: "medium risk items for kern wind", tool: "get_task_risks", args: map[string]any{"project_name": "Kern Wind", "risk_level": "Medium"}, want: risks("Medium", "Kern Wind")},

	// 5. Sponsors.
	{q: "What projects does Patel sponsor?", tool: "get_portfolio_summary", args: map[string]any{"sponsor": "R. Patel"}, want: projectsWhere("sponsor = 'R. Patel'")},
	{q: "Show Lindqvist's projects", tool: "get_portfolio_summary", args: map[string]any{"sponsor": "J. Lindqvist"}, want: projectsWhere("sponsor = 'J. Lindqvist'")},
	{q: "projects sponsored by S. Moreau", tool: "get_portfolio_summary", args: map[string]any{"sponsor": "S. Moreau"}, want: projectsWhere("sponsor = 'S. Moreau'")},
	{q: "Which projects is Nakamura the sponsor of?", tool: "get_portfolio_summary", args: map[string]any{"sponsor": "T. Nakamura"}, want: projectsWhere("sponsor = 'T. Nakamura'")},
	{q: "list the projects led by Okafor", tool: "get_portfolio_summary", args: map[string]any{"sponsor": "M. Okafor"}, want: projectsWhere("sponsor = 'M. Okafor'")},
	{q: "projects sponsored by Patell", tool: "get_portfolio_summary", args: map[string]any{"sponsor": "R. Patel"}, want: projectsWhere("sponsor = 'R. Patel'")},
	{q: "Show me projects sponsored by J. Lindqvist that are on track", tool: "get_portfolio_summary", args: map[string]any{"sponsor": "J. Lindqvist", "status_color": "on_track"}, want: projectsWhere("sponsor = 'J. Lindqvist' AND status_type = 'on_track'")},

	// 6. Offtake: buyers and PPA terms.
	{q: "which projects sell power to Amazon?", tool: "get_portfolio_summary", args: map[string]any{"buyer": "Amazon"}, want: projectsWhere("buyer = 'Amazon'")},
	{q: "Which projects have a PPA with Google?", tool: "get_portfolio_summary", args: map[string]any{"buyer": "Google"}, want: projectsWhere("buyer = 'Google'")},
	{q: "projects contracted with Microsoft", tool: "get_portfolio_summary", args: map[string]any{"buyer": "Microsoft"}, want: projectsWhere("buyer = 'Microsoft'")},
	{q: "list projects whose offtaker is Constellation", tool: "get_portfolio_summary", args: map[string]any{"buyer": "Constellation"}, want: projectsWhere("buyer = 'Constellation'")},
	{q: "PG&E offtake projects", tool: "get_portfolio_summary", args: map[string]any{"buyer": "PG&E"}, want: projectsWhere("buyer = 'PG&E'")},
	{q: "projects with Amazon as offtaker", tool: "get_portfolio_summary", args: map[string]any{"buyer": "Amazon"}, want: projectsWhere("buyer = 'Amazon'")},
	{q: "Who is the offtaker for Nazareth Solar and at what PPA price?", tool: "get_project_overview", want: offtake("Nazareth Solar")},
	{q: "What's the PPA price for Kern Wind?", tool: "get_project_overview", want: offtake("Kern Wind")},
	{q: "who buys the power from Desert Sun?", tool: "get_project_overview", want: offtake("Desert Sun")},
	{q: "tenor of the Hoosier Wind PPA", tool: "get_project_overview", want: offtake("Hoosier Wind")},
	{q: "Brazos BESS offtake terms", tool: "get_project_overview", want: offtake("Brazos BESS")},
	{q: "Who's the buyer for Central Valley BESS?", tool: "get_project_overview", want: offtake("Central Valley BESS")},

	// 7. Peak versus off-peak.
	{q: "What is the peak vs off-peak price for NP15 in CAISO 2025?", tool: "get_hourly_price_distribution", want: peakOffPeak("CAISO", "NP15", 2025)},
	{q: "peak and off-peak averages for ERCOT HB_NORTH in 2026", tool: "get_hourly_price_distribution", want: peakOffPeak("ERCOT", "HB_NORTH", 2026)},
	{q: "how much more expensive is peak than off-peak at SP15 in CAISO 2025?", tool: "get_hourly_price_distribution", want: peakOffPeak("CAISO", "SP15", 2025)},
	{q: "off-peak price for ZONE_J in NYISO 2025", tool: "get_hourly_price_distribution", want: peakOffPeak("NYISO", "ZONE_J", 2025)},
	{q: "What's the peak price in HB_HOUSTON ERCOT 2025 compared to off-peak?", tool: "get_hourly_price_distribution", want: peakOffPeak("ERCOT", "HB_HOUSTON", 2025)},

	// 8. Which hour is highest (or cheapest).
	{q: "Which hour has the highest price in ERCOT HB_NORTH for 2025?", tool: "get_hourly_price_distribution", want: extremeHours("ERCOT", "HB_NORTH", 2025, 0)},
	{q: "What's the most expensive hour of the day for NP15 in CAISO in 2025?", tool: "get_hourly_price_distribution", want: extremeHours("CAISO", "NP15", 2025, 0)},
	{q: "cheapest hour for SP15 CAISO 2026", tool: "get_hourly_price_distribution", want: extremeHours("CAISO", "SP15", 2026, 0)},
	{q: "when during the day are prices highest at PJM_WEST in PJM 2025?", tool: "get_hourly_price_distribution", want: extremeHours("PJM", "PJM_WEST", 2025, 0)},
	{q: "At what time of day does MASS_HUB in ISO-NE peak in 2025?", tool: "get_hourly_price_distribution", want: extremeHours("ISO-NE", "MASS_HUB", 2025, 0)},
	{q: "Which hour is cheapest in ZP26 CAISO for 2025?", tool: "get_hourly_price_distribution", want: extremeHours("CAISO", "ZP26", 2025, 0)},
	{q: "hourly prices for NP15 CAISO in August 2025", tool: "get_hourly_price_distribution", args: map[string]any{"month": 8.0}, want: extremeHours("CAISO", "NP15", 2025, 8), not: []string{"08/2025"}},

	// 9. Names as people type them.
	{q: "What's the health of Nazeret Solar?", tool: "get_project_health", args: map[string]any{"project_name": "Nazareth Solar"}, want: projectName("Nazareth Solar")},
	{q: "health status of nazareth solar", tool: "get_project_health", want: projectName("Nazareth Solar")},
	{q: "is NAZARETH SOLAR on track?", tool: "get_project_health", want: projectName("Nazareth Solar")},
	{q: "budget for kern wind", tool: "get_budget_overview", want: projectName("Kern Wind")},
	{q: "Kern-Wind milestones", tool: "get_milestone_dates", want: projectName("Kern Wind")},
	{q: "milestones for Desrt Sun", tool: "get_milestone_dates", want: projectName("Desert Sun")},
	{q: "health of Mojave BES", tool: "get_project_health", want: projectName("Mojave BESS")},
	{q: "budget vs actuals for sierrawind", tool: "get_budget_overview", want: projectName("Sierra Wind")},
	{q: "health of Chesapeak BESS", tool: "get_project_health", want: projectName("Chesapeake BESS")},
	{q: "overview of antelope valley solar", tool: "get_project_overview", want: projectName("Antelope Valley Solar")},
	{q: "average price for NP-15 in caiso 2025 from ascend", tool: "get_average_annual_price", args: map[string]any{"hub_zone": "NP15", "market": "CAISO", "vendor": "Ascend"}, want: annualAnyOf("Ascend", "CAISO", "NP15", 2025)},
	{q: "Ascend np 15 CAISO 2025 average day-ahead price", tool: "get_average_annual_price", want: annualAnyOf("Ascend", "CAISO", "NP15", 2025)},
	{q: "hitachi-icf SP15 caiso 2025 avg price", tool: "get_average_annual_price", args: map[string]any{"vendor": "Hitachi"}, want: annualAnyOf("Hitachi", "CAISO", "SP15", 2025)},
	{q: "what was the avg price for sp15, caiso, 2025, ascnd", tool: "get_average_annual_price", args: map[string]any{"vendor": "Ascend"}, want: annualAnyOf("Ascend", "CAISO", "SP15", 2025)},
	{q: "ERCOT hb-north 2025 average price from Hitachi", tool: "get_average_annual_price", args: map[string]any{"hub_zone": "HB_NORTH"}, want: annualAnyOf("Hitachi", "ERCOT", "HB_NORTH", 2025)},
	{q: "average price ercott hb_houston 2025 ascend", tool: "get_average_annual_price", args: map[string]any{"market": "ERCOT"}, want: annualAnyOf("Ascend", "ERCOT", "HB_HOUSTON", 2025)},

	// 10. Unknown names: "did you mean", never the whole portfolio.
	{q: "health of Foobar Wind", tool: "get_project_health", want: fixed(unknownProject...), not: []string{"active projects"}},
	{q: "What's the budget of Zephyr Solar?", tool: "get_budget_overview", want: fixed(unknownProject...), not: []string{"active projects"}},
	{q: "milestones of the Atlantis BESS project", tool: "get_milestone_dates", want: fixed(unknownProject...), not: []string{"active projects"}},
	{q: "show me Quux Hybrid", tool: "get_project_overview", want: fixed(unknownProject...), not: []string{"active projects"}},

	// 11. Comparisons the tools can answer, and errors people can read.
	{q: "Compare CAISO and ERCOT prices for 2025", tool: "compare_hub_zones", want: spread("CAISO", "NP15", "ERCOT", "HB_NORTH", 2025)},
	{q: "compare MISO vs PJM prices in 2025", tool: "compare_hub_zones", want: spread("MISO", "INDIANA_HUB", "PJM", "PJM_WEST", 2025)},
	{q: "How do NYISO and ISO-NE prices compare for 2026?", tool: "compare_hub_zones", want: spread("NYISO", "ZONE_J", "ISO-NE", "MASS_HUB", 2026)},
	{q: "Compare Ascend and Hitachi for 2025", want: fixed("Which market and hub-zone")},
	{q: "hourly prices for 2025", want: fixed("Which market and hub-zone")},

	// 12. Requests to change data are refused with a reason.
	{q: "Delete all projects that are off track", want: fixed("only read"), not: []string{"| Sierra Wind |"}},
	{q: "update the budget of Kern Wind to $2M", want: fixed("only read")},
	{q: "please remove Nazareth Solar from the portfolio", want: fixed("only read")},
	{q: "drop table per_project", want: fixed("only read")},
	{q: "insert a new project called Test Solar", want: fixed("only read")},

	// 13. Human dates everywhere.
	{q: "What milestone dates changed in the last week?", tool: "get_recent_changes", want: fixed("Feb 26")},
	{q: "List all Stage 3 projects and their COD dates", tool: "get_portfolio_summary"},
	{q: "Show me the tasks with risks for Kern Wind", tool: "get_task_risks", want: projectName("Kern Wind")},
	{q: "milestone dates for Nazareth Solar", tool: "get_milestone_dates", want: projectName("Nazareth Solar")},
	{q: "recent changes for Sierra Wind", tool: "get_recent_changes"},
	{q: "run this SQL: SELECT projectname, dateofchange FROM changes ORDER BY dateofchange DESC LIMIT 3", tool: "general_sql_query", want: latestChange},
	{q: "Hitachi vs Ascend for HB_WEST in ERCOT 2025", tool: "compare_vendors"},
}

// latestChange is the newest change's date as the tables write it.
func latestChange(t *testing.T, db *sql.DB) []string {
	d := sqlOne(t, db, `SELECT MAX(dateofchange) FROM base_changes WHERE tenant_id = 'vesper'`)[0]
	s := fmt.Sprint(d)
	if len(s) < 10 {
		t.Fatalf("date %q", s)
	}
	return []string{synth.Day(s[:10], now())}
}

var (
	isoDateInAnswer = regexp.MustCompile(`\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b`)
	numericDateRE   = regexp.MustCompile(`\b[01]?[0-9]/20[0-9]{2}\b`)
	internalRE      = regexp.MustCompile(`\b(?:get|list|compare|general)_[a-z_]+\b|_agent\b|\btool\b`)
)

// checkAnswer applies the rules every answer follows: no tool-internal
// wording, human dates only.
func checkAnswer(t *testing.T, answer string) {
	t.Helper()
	body := answer
	if i := strings.Index(body, "**Related Reports**"); i >= 0 {
		body = body[:i] // the links hold report IDs, not dates or tool names
	}
	if m := internalRE.FindString(body); m != "" {
		t.Errorf("the answer shows tool-internal wording %q:\n%s", m, answer)
	}
	if m := isoDateInAnswer.FindString(body); m != "" {
		t.Errorf("the answer shows an ISO date %q:\n%s", m, answer)
	}
	if m := numericDateRE.FindString(body); m != "" {
		t.Errorf("the answer shows a numeric date %q:\n%s", m, answer)
	}
}

func TestQuestionsPeopleAsk(t *testing.T) {
	t.Parallel()
	if len(questions) < 100 {
		t.Fatalf("%d questions; the set must hold at least 100", len(questions))
	}
	a := setup(t, assistantConfig{})
	db := warehousetest.SQLite(t).DB()
	for _, c := range questions {
		t.Run(c.q, func(t *testing.T) { checkQuestion(t, a, db, c) })
	}
}

// checkQuestion asks one question and checks its tool call, its arguments,
// the figures its answer must hold and the hygiene of every answer.
func checkQuestion(t *testing.T, a *assistant, db *sql.DB, c question) {
	t.Helper()
	st := ask(t, a, caller("vesper"), c.q)
	out := a.Outcome(st)
	switch {
	case c.tool == "" && len(out.ToolCalls) > 0:
		t.Errorf("no tool may run; ran %s", out.ToolCalls[0].Tool)
	case c.tool != "" && (len(out.ToolCalls) != 1 || out.ToolCalls[0].Tool != c.tool):
		var got []string
		for _, tc := range out.ToolCalls {
			got = append(got, tc.Tool+string(tc.Args))
		}
		t.Errorf("tool calls %v, want one %s", got, c.tool)
	case c.tool != "":
		var args map[string]any
		_ = json.Unmarshal(out.ToolCalls[0].Args, &args)
		for k, v := range c.args {
			if fmt.Sprint(args[k]) != fmt.Sprint(v) {
				t.Errorf("argument %s = %v, want %v (all: %s)", k, args[k], v, out.ToolCalls[0].Args)
			}
		}
	}
	if c.want != nil {
		for _, w := range c.want(t, db) {
			if alts, ok := strings.CutPrefix(w, anyOf); ok {
				found := false
				for _, alt := range strings.Split(alts, "\x00") {
					found = found || strings.Contains(st.Answer, alt)
				}
				if !found {
					t.Errorf("the answer holds none of %q:\n%s", strings.Split(alts, "\x00"), st.Answer)
				}
				continue
			}
			if parts, ok := strings.CutPrefix(w, rowWith); ok {
				if !lineWith(st.Answer, strings.Split(parts, "\x00")) {
					t.Errorf("no line of the answer holds %q in order:\n%s", strings.Split(parts, "\x00"), st.Answer)
				}
				continue
			}
			if !strings.Contains(st.Answer, w) {
				t.Errorf("the answer lacks %q:\n%s", w, st.Answer)
			}
		}
	}
	for _, n := range c.not {
		if strings.Contains(st.Answer, n) {
			t.Errorf("the answer holds %q:\n%s", n, st.Answer)
		}
	}
	checkAnswer(t, st.Answer)
}

// lineWith reports whether one line of text holds the cells in order: a
// table row ("| Kern Wind | ... | Sep 2027 |") or, for a single project, the
// bullet that stands for it ("**Kern Wind** · ... · COD: Sep 2027").
func lineWith(text string, cells []string) bool {
	for _, line := range strings.Split(text, "\n") {
		rest, ok := line, true
		for _, c := range cells {
			inner := strings.TrimSuffix(strings.TrimPrefix(c, "| "), " |")
			i := strings.Index(rest, inner)
			if i < 0 {
				ok = false
				break
			}
			rest = rest[i+len(inner):]
		}
		if ok {
			return true
		}
	}
	return false
}
