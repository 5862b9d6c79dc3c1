package vesper

import (
	"database/sql"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/vesper/warehouse"
	"github.com/trellis-go/trellis/apps/vesper/warehousetest"
)

// The five question classes of issue 36, each in at least ten phrasings,
// on SQLite and on Postgres: peak and off-peak, unique viewers, projects
// by stage with their dates, human dates everywhere, and a month (quarter,
// season) inside a year. The figures each answer must hold are computed
// here by SQL over the base tables ($n placeholders, which both databases
// read), never by the app's tools or its rollup.

// baseDB is a handle on which the base tables are named without a schema:
// the SQLite warehouse's own, or a Postgres connection whose search_path is
// the test's schema.
func baseDB(t *testing.T, w *warehouse.Warehouse) *sql.DB {
	t.Helper()
	if w.Dialect() != warehouse.Postgres {
		return w.DB()
	}
	dsn := warehousetest.PostgresDSN()
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	db, err := sql.Open("pgx", dsn+sep+"search_path="+w.Config().Schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// money writes dollars as the answers do, rounded to the cent: $48.73/MWh.
func money(v float64) string {
	v = math.Round(v*100) / 100
	if v < 0 {
		return fmt.Sprintf("-$%.2f/MWh", -v)
	}
	return fmt.Sprintf("$%.2f/MWh", v)
}

func count(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// dayOf reads a date value of either database as YYYY-MM-DD.
func dayOf(v any) string {
	switch x := v.(type) {
	case time.Time:
		return x.Format(time.DateOnly)
	case string:
		if len(x) >= 10 {
			return x[:10]
		}
		return x
	case []byte:
		return dayOf(string(x))
	}
	return ""
}

func parseDay(t *testing.T, s string) time.Time {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		t.Fatalf("date %q: %v", s, err)
	}
	return d
}

// monthList is a SQL list of months, or "" for the whole year.
func monthList(months []int) string {
	if len(months) == 0 {
		return ""
	}
	var ms []string
	for _, m := range months {
		ms = append(ms, fmt.Sprint(m))
	}
	return " AND da.month IN (" + strings.Join(ms, ", ") + ")"
}

// peakHE are the ISO on-peak windows (hour ending, inclusive) the answers
// must state and use: the West and Texas HE 7-22, the East HE 8-23.
var peakHE = map[string][2]int{"CAISO": {7, 22}, "ERCOT": {7, 22}, "MISO": {8, 23}, "PJM": {8, 23}, "NYISO": {8, 23}, "ISO-NE": {8, 23}}

// priceSel narrows the hourly prices.
type priceSel struct {
	market, hub  string
	year         int
	months       []int
	vendor, asof string
}

func (p priceSel) where() (string, []any) {
	return `FROM base_mc_dayahead da JOIN base_mc_vendor_files vf
		ON da.file_info_key = vf.file_info_key AND da.hubzone_key = vf.hubzone_key
		WHERE vf.market = $1 AND vf.hubzone = $2 AND da.year = $3 AND ($4 = '' OR vf.vendor = $4) AND ($5 = '' OR vf.asof = $5)` + monthList(p.months),
		[]any{p.market, p.hub, p.year, p.vendor, p.asof}
}

// peakSpread: the window stated, the peak mean, the off-peak mean and the
// spread, by AVG over every hourly price of those hours.
func peakSpread(p priceSel) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string {
		w := peakHE[p.market]
		from, args := p.where()
		r := sqlOne(t, db, fmt.Sprintf(`SELECT AVG(CASE WHEN da.hour + 1 BETWEEN %d AND %d THEN da.dayahead_price END),
			AVG(CASE WHEN da.hour + 1 BETWEEN %d AND %d THEN NULL ELSE da.dayahead_price END) `, w[0], w[1], w[0], w[1])+from, args...)
		peak, off := asFloat(r[0]), asFloat(r[1])
		if peak == 0 || off == 0 {
			t.Fatalf("no prices for %+v: the question tests nothing", p)
		}
		return []string{fmt.Sprintf("%s's peak hours, HE %d-%d", p.market, w[0], w[1]), "**" + money(peak) + "**",
			money(off) + " off-peak", "a spread of **" + money(math.Abs(peak-off)) + "**"}
	}
}

// viewers: the distinct people and the views of a report (or all) in a range.
func viewersOf(t *testing.T, db *sql.DB, report, from, to string) (people, views int64) {
	r := sqlOne(t, db, `SELECT COUNT(DISTINCT user_email), COUNT(*) FROM base_pbi_activity_events WHERE tenant_id = 'vesper'
		AND activity_type = 'ViewReport' AND ($1 = '' OR report_name = $1) AND activity_date BETWEEN $2 AND $3`, report, from, to)
	people, views = asInt(r[0]), asInt(r[1])
	if views == 0 {
		t.Fatalf("no views of %q from %s to %s: the question tests nothing", report, from, to)
	}
	return people, views
}

// uniqueViewers is a "who" or "how many people" answer: people first.
func uniqueViewers(report, from, to string) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string {
		people, views := viewersOf(t, db, report, from, to)
		what := "reports"
		if report != "" {
			what = "**" + report + "**"
		}
		return []string{fmt.Sprintf("**%s people** viewed %s", count(people), what), "**" + count(views) + " views**"}
	}
}

// viewsWithViewers is a "how many views" answer: the views, then the people.
func viewsWithViewers(report, from, to string) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string {
		people, views := viewersOf(t, db, report, from, to)
		return []string{"**" + report + "** had **" + count(views) + " views** by **" + count(people) + " unique viewers**"}
	}
}

// mostViewers is the report with the most distinct viewers in a range.
func mostViewers(from, to string) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string {
		r := sqlOne(t, db, `SELECT report_name, COUNT(DISTINCT user_email) AS people, COUNT(*) AS views FROM base_pbi_activity_events
			WHERE tenant_id = 'vesper' AND activity_type = 'ViewReport' AND activity_date BETWEEN $1 AND $2
			GROUP BY report_name ORDER BY people DESC, views DESC, report_name LIMIT 1`, from, to)
		return []string{"**" + r[0].(string) + "** had the most viewers", "**" + count(asInt(r[1])) + " people**"}
	}
}

// stageDates: each active project the condition selects is a row of the
// answer's table with the milestone dates of its latest monthly snapshot,
// written "Mar 2027".
func stageDates(cond string, milestones ...string) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string {
		cols := []string{}
		for _, m := range milestones {
			cols = append(cols, `m."`+m+`"`)
		}
		rows, err := db.Query(`SELECT p.name, ` + strings.Join(cols, ", ") + ` FROM base_per_project p
			JOIN base_activeportfolio_mm m ON m.tenant_id = p.tenant_id AND m."Project Name" = p.name AND m.monthlysnapshot = 1
			WHERE p.tenant_id = 'vesper' AND (p.is_archived = 0 OR p.is_archived IS NULL) AND ` + cond + `
			AND m.asofday = (SELECT MAX(l.asofday) FROM base_activeportfolio_mm l
				WHERE l.tenant_id = p.tenant_id AND l."Project Name" = p.name AND l.monthlysnapshot = 1)
			ORDER BY p.name`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			vals := make([]any, 1+len(milestones))
			ptrs := make([]any, len(vals))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprint(vals[0])
			if b, ok := vals[0].([]byte); ok {
				name = string(b)
			}
			cells := []string{"| " + name + " |"}
			for _, v := range vals[1:] {
				cell := "—"
				if d := dayOf(v); d != "" {
					cell = parseDay(t, d).Format("Jan 2006")
				}
				cells = append(cells, "| "+cell+" |")
			}
			out = append(out, rowWith+strings.Join(cells, "\x00"))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if len(out) == 0 {
			t.Fatalf("%s selects no project: the question tests nothing", cond)
		}
		return out
	}
}

// rowWith marks a want whose \x00-separated parts must all be on one line
// of the answer, in order (a table row holding a project and its dates).
const rowWith = "\x02"

// latestChange is the date of a project's latest change (after since),
// written as the answers write days: "Feb 26" this year, "Feb 26, 2025"
// in another.
func latestChangeOf(project, since string) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string {
		r := sqlOne(t, db, `SELECT MAX(dateofchange) FROM base_changes WHERE tenant_id = 'vesper' AND ($1 = '' OR projectname = $1)
			AND dateofchange >= $2`, project, since)
		return []string{humanDay(t, dayOf(r[0]))}
	}
}

func humanDay(t *testing.T, s string) string {
	d := parseDay(t, s)
	if d.Year() == now().Year() {
		return d.Format("Jan 2")
	}
	return d.Format("Jan 2, 2006")
}

// codOf is a project's COD as the milestone answer writes it: "September 2027".
func codOf(project string) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string {
		r := sqlOne(t, db, `SELECT m."Commercial Operation" FROM base_activeportfolio_mm m WHERE m.tenant_id = 'vesper'
			AND m."Project Name" = $1 AND m.monthlysnapshot = 1 ORDER BY m.asofday DESC LIMIT 1`, project)
		return []string{"**" + project + "**", "**" + parseDay(t, dayOf(r[0])).Format("January 2006") + "**"}
	}
}

// healthDue is a project's earliest health due date, written "Sep 2025".
func healthDue(project string) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string {
		r := sqlOne(t, db, `SELECT MIN(h.due_on) FROM base_per_projecthealth h JOIN base_per_project p
			ON p.gid = h.project_gid AND p.tenant_id = h.tenant_id WHERE p.tenant_id = 'vesper' AND p.name = $1`, project)
		return []string{parseDay(t, dayOf(r[0])).Format("Jan 2006")}
	}
}

// taskDue is the due day of a project's first flagged task, as tables write days.
func taskDue(project string) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string {
		r := sqlOne(t, db, `SELECT MIN(finishdate) FROM base_per_tasks WHERE tenant_id = 'vesper' AND projectname = $1
			AND risk IS NOT NULL AND risk <> ''`, project)
		return []string{humanDay(t, dayOf(r[0]))}
	}
}

// lastActivity is the top user's last view of a report in a range, as tables write days.
func lastActivity(report, from, to string) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string {
		r := sqlOne(t, db, `SELECT user_email, COUNT(*) AS n, MAX(activity_date) FROM base_pbi_activity_events WHERE tenant_id = 'vesper'
			AND activity_type = 'ViewReport' AND report_name = $1 AND activity_date BETWEEN $2 AND $3
			GROUP BY user_email ORDER BY n DESC, user_email LIMIT 1`, report, from, to)
		return []string{"**" + fmt.Sprint(r[0]) + "**", humanDay(t, dayOf(r[2]))}
	}
}

// monthPrice: the figure of each of a vendor's files (or every vendor's)
// for months of a year; the answer gives one per file, or the pooled one.
func monthPrice(p priceSel, pooled bool) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string {
		from, args := p.where()
		var alts []string
		for _, r := range keyedMeans(t, db, `SELECT vf.asof, AVG(da.dayahead_price) `+from+` GROUP BY vf.asof`, args...) {
			alts = append(alts, money(r.mean))
		}
		if len(alts) == 0 {
			t.Fatalf("no prices for %+v: the question tests nothing", p)
		}
		out := []string{anyOf + "**" + strings.Join(alts, "**\x00**") + "**"}
		if pooled {
			all := asFloat(sqlOne(t, db, `SELECT AVG(da.dayahead_price) `+from, args...)[0])
			out = []string{"**" + money(all) + "**"}
			for _, a := range alts {
				out = append(out, strings.TrimSuffix(a, "/MWh")) // each file in the table
			}
		}
		return out
	}
}

// hourExtremes are the highest and lowest hours of months of a year.
func hourExtremes(p priceSel) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string {
		from, args := p.where()
		m := hourMeans(t, db, `SELECT da.hour, AVG(da.dayahead_price) `+from+` GROUP BY da.hour`, args...)
		hi, lo := highLow(m)
		return []string{fmt.Sprintf("**%s in HE %d**", money(m[hi]), hi+1), fmt.Sprintf("%s in HE %d", money(m[lo]), lo+1)}
	}
}

// hubSpread is the mean of two hub-zones' hourly spreads in months of a year.
func hubSpread(a, b priceSel) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string {
		means := func(p priceSel) map[int]float64 {
			from, args := p.where()
			return hourMeans(t, db, `SELECT da.hour, AVG(da.dayahead_price) `+from+` GROUP BY da.hour`, args...)
		}
		ma, mb := means(a), means(b)
		var s, n float64
		for h := 0; h < 24; h++ {
			s, n = s+ma[h]-mb[h], n+1
		}
		dir := "above"
		if s < 0 {
			dir = "below"
		}
		return []string{"**" + a.hub + "**", "**" + money(math.Abs(s/n)) + " " + dir + "**"}
	}
}

var classQuestions = []question{
	// 1. Peak and off-peak: the ISO's window stated, both means and the spread.
	{q: "What is the peak vs off-peak spread for ERCOT HB_NORTH?", tool: "get_hourly_price_distribution", want: peakSpread(priceSel{market: "ERCOT", hub: "HB_NORTH", year: 2025})},
	{q: "peak/off-peak spread at NP15 in July 2025", tool: "get_hourly_price_distribution", args: map[string]any{"month": 7.0, "market": nil}, want: peakSpread(priceSel{market: "CAISO", hub: "NP15", year: 2025, months: []int{7}})},
	{q: "How much do on-peak prices exceed off-peak at PJM_WEST in 2026?", tool: "get_hourly_price_distribution", want: peakSpread(priceSel{market: "PJM", hub: "PJM_WEST", year: 2026})},
	{q: "Hitachi peak vs off-peak for SP15 CAISO 2025", tool: "get_hourly_price_distribution", args: map[string]any{"vendor": "Hitachi"}, want: peakSpread(priceSel{market: "CAISO", hub: "SP15", year: 2025, vendor: "Hitachi"})},
	{q: "peak and off-peak prices for HB_HOUSTON in the Jan_2025 file for 2025", tool: "get_hourly_price_distribution", args: map[string]any{"asof": "Jan_2025"}, want: peakSpread(priceSel{market: "ERCOT", hub: "HB_HOUSTON", year: 2025, asof: "Jan_2025"})},
	{q: "What's the on-peak vs off-peak spread in MISO for summer 2025?", tool: "get_hourly_price_distribution", want: peakSpread(priceSel{market: "MISO", hub: "INDIANA_HUB", year: 2025, months: []int{6, 7, 8}})},
	{q: "peak vs off-peak for ZONE_J in Q3 2025", tool: "get_hourly_price_distribution", want: peakSpread(priceSel{market: "NYISO", hub: "ZONE_J", year: 2025, months: []int{7, 8, 9}})},
	{q: "Compare peak and off-peak prices at MASS_HUB for 2025", tool: "get_hourly_price_distribution", want: peakSpread(priceSel{market: "ISO-NE", hub: "MASS_HUB", year: 2025})},
	{q: "off-peak vs peak spread for SP15 in December 2025", tool: "get_hourly_price_distribution", want: peakSpread(priceSel{market: "CAISO", hub: "SP15", year: 2025, months: []int{12}})},
	{q: "peak-hour premium at HB_WEST in 2026", tool: "get_hourly_price_distribution", want: peakSpread(priceSel{market: "ERCOT", hub: "HB_WEST", year: 2026})},
	{q: "How big is the peak to off-peak spread at NP15 from Ascend in Q1 2026?", tool: "get_hourly_price_distribution", want: peakSpread(priceSel{market: "CAISO", hub: "NP15", year: 2026, months: []int{1, 2, 3}, vendor: "Ascend"})},
	{q: "peak and off-peak prices in CAISO for 2025", tool: "get_hourly_price_distribution", want: peakSpread(priceSel{market: "CAISO", hub: "NP15", year: 2025})},
	{q: "ERCOT HB_NORTH peak versus off-peak in August 2025", tool: "get_hourly_price_distribution", want: peakSpread(priceSel{market: "ERCOT", hub: "HB_NORTH", year: 2025, months: []int{8}})},

	// 2. Unique viewers: people beside views; "how many views" stays views.
	{q: "How many people viewed the Budget Tracker last month?", tool: "get_top_users", want: uniqueViewers("Budget Tracker", "2026-01-01", "2026-01-31")},
	{q: "How many unique viewers did the Executive Summary have in January?", tool: "get_top_users", want: uniqueViewers("Executive Summary", "2026-01-01", "2026-01-31")},
	{q: "how many distinct users opened reports in Q4 2025?", tool: "get_top_users", want: uniqueViewers("", "2025-10-01", "2025-12-31")},
	{q: "Who looked at the Project Health Report this month?", tool: "get_top_users", want: uniqueViewers("Project Health Report", "2026-02-01", "2026-02-27")},
	{q: "how many different people used Power BI in December 2025?", tool: "get_top_users", want: uniqueViewers("", "2025-12-01", "2025-12-31")},
	{q: "Number of individual users of the Interconnection Queue in 2025", tool: "get_top_users", want: uniqueViewers("Interconnection Queue", "2025-01-01", "2025-12-31")},
	{q: "How many views did the Budget Tracker get last month, and by how many people?", tool: "get_top_users", want: uniqueViewers("Budget Tracker", "2026-01-01", "2026-01-31")},
	{q: "How many views did the Executive Summary get in January?", tool: "get_report_usage_trend", want: viewsWithViewers("Executive Summary", "2026-01-01", "2026-01-31"), not: []string{"people** viewed"}},
	{q: "Which reports had the most unique viewers last month?", tool: "get_top_reports_by_views", args: map[string]any{"sort_by": "viewers"}, want: mostViewers("2026-01-01", "2026-01-31")},
	{q: "How many people used the PER dashboard in the last 30 days?", tool: "get_top_users", want: uniqueViewers("PER Project Overview", "2026-01-28", "2026-02-27")},
	{q: "how many users viewed the Day-Ahead Curves Dashboard in November 2025?", tool: "get_top_users", want: uniqueViewers("Day-Ahead Curves Dashboard", "2025-11-01", "2025-11-30")},
	{q: "Total views and unique viewers across all reports this quarter", tool: "get_top_users", want: uniqueViewers("", "2026-01-01", "2026-02-27")},

	// 3. Projects by stage (or status) with their dates.
	{q: "List all Stage 3 projects and their COD dates", tool: "get_portfolio_summary", args: map[string]any{"stage": "Stage 3"}, want: stageDates("p.currentprojectstage LIKE 'Stage 3%'", "Commercial Operation")},
	{q: "Stage 4 projects with their COD", tool: "get_portfolio_summary", want: stageDates("p.currentprojectstage LIKE 'Stage 4%'", "Commercial Operation")},
	{q: "Which projects are under construction and when do they reach COD?", tool: "get_portfolio_summary", args: map[string]any{"stage": "Stage 5"}, want: stageDates("p.currentprojectstage LIKE 'Stage 5%'", "Commercial Operation")},
	{q: "show stage five projects with milestone dates", tool: "get_portfolio_summary", want: stageDates("p.currentprojectstage LIKE 'Stage 5%'", "Project Finance", "EPC FNTP", "Commercial Operation")},
	{q: "Stage 1 projects and their expected commercial operation dates", tool: "get_portfolio_summary", want: stageDates("p.currentprojectstage LIKE 'Stage 1%'", "Commercial Operation")},
	{q: "What are the COD dates for projects in late-stage development?", tool: "get_portfolio_summary", args: map[string]any{"stage": "Stage 3"}, want: stageDates("p.currentprojectstage LIKE 'Stage 3%'", "Commercial Operation")},
	{q: "stage 2 projects timeline", tool: "get_portfolio_summary", want: stageDates("p.currentprojectstage LIKE 'Stage 2%'", "Execute Power Purchase Agreement", "Execute Interconnection Agreement", "Commercial Operation")},
	{q: "List Stage 6 projects with their COD", tool: "get_portfolio_summary", want: stageDates("p.currentprojectstage LIKE 'Stage 6%'", "Commercial Operation")},
	{q: "off track projects and their COD dates", tool: "get_portfolio_summary", args: map[string]any{"status_color": "off_track"}, want: stageDates("p.status_type = 'off_track'", "Commercial Operation")},
	{q: "at risk projects with their CODs", tool: "get_portfolio_summary", want: stageDates("p.status_type = 'at_risk'", "Commercial Operation")},
	{q: "When do the Stage 4 projects reach financial close and COD?", tool: "get_portfolio_summary", want: stageDates("p.currentprojectstage LIKE 'Stage 4%'", "Project Finance", "Commercial Operation")},
	{q: "on-hold projects with their COD", tool: "get_portfolio_summary", args: map[string]any{"status_color": "on_hold"}, want: stageDates("p.status_type = 'on_hold'", "Commercial Operation")},
	{q: "pre-construction projects with NTP dates", tool: "get_portfolio_summary", args: map[string]any{"stage": "Stage 4"}, want: stageDates("p.currentprojectstage LIKE 'Stage 4%'", "EPC FNTP")},

	// 4. Dates as the specification writes them, in tables and prose.
	{q: "recent changes for Sierra Wind", tool: "get_recent_changes", want: latestChangeOf("Sierra Wind", "2026-02-20")},
	{q: "What changed on Nazareth Solar since February 1?", tool: "get_recent_changes", want: latestChangeOf("Nazareth Solar", "2026-02-01")},
	{q: "what changed in the last 30 days?", tool: "get_recent_changes", want: latestChangeOf("", "2026-01-28")},
	{q: "milestone dates for Kern Wind", tool: "get_milestone_dates", want: codOf("Kern Wind")},
	{q: "When is Mojave BESS expected to reach COD?", tool: "get_milestone_dates", want: codOf("Mojave BESS")},
	{q: "health of Nazareth Solar", tool: "get_project_health", want: healthDue("Nazareth Solar")},
	{q: "Show me the tasks with risks for Mojave BESS", tool: "get_task_risks", want: taskDue("Mojave BESS")},
	{q: "Who viewed the Budget Tracker most last month?", tool: "get_top_users", want: lastActivity("Budget Tracker", "2026-01-01", "2026-01-31")},
	{q: "views of the Budget Tracker in January 2024", tool: "get_report_usage_trend", want: fixed("Jan 1, 2024", "Jan 31, 2024")},
	{q: "run this SQL: SELECT name, revision_date FROM per_project WHERE revision_date IS NOT NULL ORDER BY revision_date DESC LIMIT 3", tool: "general_sql_query", want: latestRevision},
	{q: "changes to Desert Sun this month", tool: "get_recent_changes", want: latestChangeOf("Desert Sun", "2026-02-01")},

	// 5. A month, quarter or season inside a year: its figures, never the year's.
	{q: "What was the average day-ahead price for NP15 in CAISO for July 2025 from Ascend?", tool: "get_average_annual_price", args: map[string]any{"months": []any{7.0}}, want: withText("NP15 in CAISO for July 2025", monthPrice(priceSel{market: "CAISO", hub: "NP15", year: 2025, months: []int{7}, vendor: "Ascend"}, false))},
	{q: "average price at SP15 in March 2025", tool: "get_average_annual_price", want: withText("March 2025", monthPrice(priceSel{market: "CAISO", hub: "SP15", year: 2025, months: []int{3}}, true))},
	{q: "HB_NORTH average price for Q3 2025", tool: "get_average_annual_price", want: withText("July-September 2025", monthPrice(priceSel{market: "ERCOT", hub: "HB_NORTH", year: 2025, months: []int{7, 8, 9}}, true))},
	{q: "Ascend NP15 average price in summer 2025", tool: "get_average_annual_price", want: withText("June-August 2025", monthPrice(priceSel{market: "CAISO", hub: "NP15", year: 2025, months: []int{6, 7, 8}, vendor: "Ascend"}, false))},
	{q: "What was the average price for ZONE_J in December 2025 from Hitachi?", tool: "get_average_annual_price", want: withText("December 2025", monthPrice(priceSel{market: "NYISO", hub: "ZONE_J", year: 2025, months: []int{12}, vendor: "Hitachi"}, false))},
	{q: "Compare Ascend vs Hitachi for SP15 in August 2025", tool: "compare_vendors", want: withText("SP15, CAISO, August 2025", vendorsMonth(priceSel{market: "CAISO", hub: "SP15", year: 2025, months: []int{8}}))},
	{q: "hourly prices for NP15 CAISO in the first quarter of 2026", tool: "get_hourly_price_distribution", want: hourExtremes(priceSel{market: "CAISO", hub: "NP15", year: 2026, months: []int{1, 2, 3}})},
	{q: "average day-ahead price for MASS_HUB in January", tool: "get_average_annual_price", want: withText("January 2026", monthPrice(priceSel{market: "ISO-NE", hub: "MASS_HUB", year: 2026, months: []int{1}}, true))},
	{q: "PJM_WEST average price in fall 2025", tool: "get_average_annual_price", want: withText("September-November 2025", monthPrice(priceSel{market: "PJM", hub: "PJM_WEST", year: 2025, months: []int{9, 10, 11}}, true))},
	{q: "How did NP15 and SP15 compare in July 2025?", tool: "compare_hub_zones", want: hubSpread(priceSel{market: "CAISO", hub: "NP15", year: 2025, months: []int{7}}, priceSel{market: "CAISO", hub: "SP15", year: 2025, months: []int{7}})},
	{q: "HB_HOUSTON average price for Jun 2025 from Ascend", tool: "get_average_annual_price", want: withText("June 2025", monthPrice(priceSel{market: "ERCOT", hub: "HB_HOUSTON", year: 2025, months: []int{6}, vendor: "Ascend"}, false))},
	{q: "What changed in January 2026?", tool: "get_recent_changes", args: map[string]any{"until_date": "2026-01-31"}, want: changesIn("", "2026-01-01", "2026-01-31")},
	{q: "changes to Kern Wind in December 2025", tool: "get_recent_changes", want: changesIn("Kern Wind", "2025-12-01", "2025-12-31")},
	{q: "average price INDIANA_HUB winter 2025", tool: "get_average_annual_price", want: withText("January, February and December 2025", monthPrice(priceSel{market: "MISO", hub: "INDIANA_HUB", year: 2025, months: []int{1, 2, 12}}, true))},
}

// withText adds a text the answer must hold to a want.
func withText(s string, want func(*testing.T, *sql.DB) []string) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string { return append(want(t, db), s) }
}

// vendorsMonth: each vendor's figure is one of its files' for the months.
func vendorsMonth(p priceSel) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string {
		var out []string
		for _, v := range []string{"Ascend", "Hitachi"} {
			q := p
			q.vendor = v
			for _, w := range monthPrice(q, false)(t, db) {
				out = append(out, strings.ReplaceAll(strings.ReplaceAll(w, "**", ""), "/MWh", "")) // table cells: $52.14
			}
		}
		return out
	}
}

// latestRevision is the newest revision date, as tables write days.
func latestRevision(t *testing.T, db *sql.DB) []string {
	r := sqlOne(t, db, `SELECT MAX(revision_date) FROM base_per_project WHERE tenant_id = 'vesper'`)
	return []string{humanDay(t, dayOf(r[0]))}
}

func TestQuestionClasses(t *testing.T) {
	t.Parallel()
	if len(classQuestions) < 50 {
		t.Fatalf("%d questions; five classes of at least ten", len(classQuestions))
	}
	for _, db := range []struct {
		name string
		open func(t *testing.T) *warehouse.Warehouse
	}{
		{"sqlite", func(t *testing.T) *warehouse.Warehouse { return warehousetest.SQLite(t) }},
		{"postgres", func(t *testing.T) *warehouse.Warehouse { return warehousetest.Postgres(t, warehouse.Config{}) }},
	} {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			w := db.open(t)
			a := setupOn(t, w, assistantConfig{})
			base := baseDB(t, w)
			for _, c := range classQuestions {
				t.Run(c.q, func(t *testing.T) { checkQuestion(t, a, base, c) })
			}
		})
	}
}

// peakOffPeak is peakSpread of a hub-zone's whole year.
func peakOffPeak(market, hub string, year int) func(*testing.T, *sql.DB) []string {
	return peakSpread(priceSel{market: market, hub: hub, year: year})
}

// changesIn is the lead of a change log of one month: how many changes
// (of a project, or of all) from its first to its last day, never the
// changes after it.
func changesIn(project, from, to string) func(*testing.T, *sql.DB) []string {
	return func(t *testing.T, db *sql.DB) []string {
		next := parseDay(t, to).AddDate(0, 0, 1).Format(time.DateOnly)
		n := asInt(sqlOne(t, db, `SELECT COUNT(*) FROM base_changes WHERE tenant_id = 'vesper' AND ($1 = '' OR projectname = $1)
			AND dateofchange >= $2 AND dateofchange < $3`, project, from, next)[0])
		span := humanDay(t, from) + " to " + humanDay(t, to)
		if n == 0 {
			return []string{"I found no changes from " + span}
		}
		if n > 100 {
			t.Fatalf("%d changes: more than the tool lists", n)
		}
		return []string{fmt.Sprintf("**%d ", n), "recorded from " + span}
	}
}

// TestExtractMonthsStagesMilestones checks what the router reads for the
// classes above, word by word, without running a tool.
func TestExtractMonthsStagesMilestones(t *testing.T) {
	t.Parallel()
	today := now()
	for _, c := range []struct {
		q          string
		year       int
		months     string
		stage      string
		milestones string
		status     string
	}{
		{q: "NP15 in July 2025", year: 2025, months: "[7]"},
		{q: "NP15 in January", year: 2026, months: "[1]"},
		{q: "Q3 2025 prices", year: 2025, months: "[7 8 9]"},
		{q: "the second quarter of 2026", year: 2026, months: "[4 5 6]"},
		{q: "summer 2025", year: 2025, months: "[6 7 8]"},
		{q: "winter 2025", year: 2025, months: "[1 2 12]"},
		{q: "in the fall of 2025", year: 2025, months: "[9 10 11]"},
		{q: "did prices fall in 2025?", year: 2025, months: "[]"},
		{q: "last year", year: 2025, months: "[]"},
		{q: "this year", year: 2026, months: "[]"},
		{q: "stage three projects", stage: "Stage 3", months: "[]"},
		{q: "Stage IV projects", stage: "Stage 4", months: "[]"},
		{q: "projects under construction", stage: "Stage 5", months: "[]"},
		{q: "pre-construction projects", stage: "Stage 4", months: "[]"},
		{q: "projects and their COD dates", milestones: "[Commercial Operation]", months: "[]"},
		{q: "projects with NTP and financial close", milestones: "[Project Finance EPC FNTP]", months: "[]"},
		{q: "on-hold projects", status: "on_hold", months: "[]"},
		{q: "at-risk projects", status: "at_risk", months: "[]"},
	} {
		f := Extract(c.q, today)
		got := fmt.Sprint(f.Months)
		if f.Year != c.year || got != c.months || f.ProjectStage != c.stage || fmt.Sprint(f.Milestones) != cmpOr(c.milestones, "[]") || f.StatusColor != c.status {
			t.Errorf("%q: year %d months %s stage %q milestones %v status %q; want %d %s %q %s %q",
				c.q, f.Year, got, f.ProjectStage, f.Milestones, f.StatusColor, c.year, c.months, c.stage, c.milestones, c.status)
		}
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
