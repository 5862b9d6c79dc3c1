package synth_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/vesper/rbac"
	"github.com/trellis-go/trellis/apps/vesper/reports"
	"github.com/trellis-go/trellis/apps/vesper/synth"
	"github.com/trellis-go/trellis/apps/vesper/tools"
	"github.com/trellis-go/trellis/apps/vesper/warehouse"
	"github.com/trellis-go/trellis/apps/vesper/warehousetest"
	"github.com/trellis-go/trellis/tool"
)

func TestMain(m *testing.M) { warehousetest.Main(m) }

func setup(t *testing.T) (*tools.Toolkit, *synth.Formatter, context.Context) {
	t.Helper()
	now := func() time.Time { return warehouse.Today.Add(10 * time.Hour) }
	k := tools.New(warehousetest.SQLite(t), &tools.Options{Now: now})
	ctx := tool.WithCallInfo(context.Background(), tool.CallInfo{Tenant: "vesper", User: "u", Permissions: []string{"*"}})
	return k, synth.New(&synth.Options{Now: now}), ctx
}

func render(t *testing.T, f *synth.Formatter, res any, err error) string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.Render(res)
	if err != nil {
		t.Fatal(err)
	}
	return f.Compose([]synth.Block{b}, nil).Markdown
}

func contains(t *testing.T, md string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(md, w) {
			t.Errorf("answer lacks %q:\n%s", w, md)
		}
	}
}

// The answers of the specification's Appendix B, on the generated data.
func TestAppendixB(t *testing.T) {
	k, f, ctx := setup(t)
	t.Run("B.1 day-ahead price", func(t *testing.T) {
		res, err := k.GetAverageAnnualPrice(ctx, tools.AveragePriceArgs{Vendor: "Ascend", Market: "CAISO", HubZone: "NP15", Year: 2025, AsOf: "Jan_2025"})
		md := render(t, f, res, err)
		want := "The average day-ahead price for **NP15 in CAISO for 2025** (Ascend forecast, As-Of Jan 2025) was **$48.73/MWh** based on 8,760 hourly data points."
		if md != want {
			t.Errorf("got  %s\nwant %s", md, want)
		}
		// Without an As-Of, as the question of B.1 asks: the same figure from
		// the file covering the year, the older file in one sentence, no table.
		res, err = k.GetAverageAnnualPrice(ctx, tools.AveragePriceArgs{Vendor: "Ascend", Market: "CAISO", HubZone: "NP15", Year: 2025})
		md = render(t, f, res, err)
		contains(t, md, want, "Other As-Of files for this year: Jan_2024 gives $47.61/MWh.")
		if strings.Contains(md, "|") {
			t.Errorf("a table for two files:\n%s", md)
		}
	})
	t.Run("B.2 project health", func(t *testing.T) {
		res, err := k.GetProjectHealth(ctx, tools.ProjectArgs{ProjectName: "Nazareth Solar"})
		md := render(t, f, res, err)
		contains(t, md,
			"**Nazareth Solar** is currently in **Stage 4 (Pre-Con & Finance)** with overall project status **off track** 🔴.",
			"| Domain | Status | % Complete | Due Date | Notes |",
			"| Site Control | 🟢 Green | 100% | — | Site secured |",
			"| Permits | 🟡 Yellow | 65% | Jun 2025 | CEQA review pending |",
			"| Interconnection | 🔴 Red | 40% | Sep 2025 | Phase II study delayed |",
			"| Construction | ⬜ N/A | 0% | — | Not started |",
			"| Schedule | 🟡 Yellow | — | — | COD at risk by ~3 months |",
			"**Key Risk**: Interconnection (Phase II study delayed) is the critical path item.")
	})
	t.Run("B.3 off-track portfolio", func(t *testing.T) {
		res, err := k.GetPortfolioSummary(ctx, tools.PortfolioArgs{StatusColor: "off_track"})
		md := render(t, f, res, err)
		contains(t, md, "There are **3 projects** currently flagged as **off track** 🔴:",
			"| Nazareth Solar | Stage 4 | Solar | CAISO | $2.1M | $1.4M | Interconnection delay |",
			"| Sierra Wind | Stage 3 | Wind | ERCOT | $800K | $620K | Permitting stalled |",
			"| Mojave BESS | Stage 5 | BESS | CAISO | $5.4M | $4.9M | EPC contractor dispute |")
		if strings.Count(md, "\n| ") != 4 { // header and three rows
			t.Errorf("expected a table of three projects:\n%s", md)
		}
	})
	t.Run("B.4 vendor comparison", func(t *testing.T) {
		res, err := k.CompareVendors(ctx, tools.CompareVendorsArgs{Market: "CAISO", HubZone: "SP15", Year: 2025})
		md := render(t, f, res, err)
		contains(t, md, "**Day-Ahead Price Comparison — SP15, CAISO, 2025**",
			"| Vendor | As-Of | Avg Price ($/MWh) |",
			"| Ascend | Jan_2025 | $52.14 |",
			"| Hitachi | Q1_2025 | $54.80 |",
			"Hitachi's forecast is **$2.66/MWh (5.1%) higher** than Ascend's for SP15 in 2025.",
			"This difference is most pronounced during peak hours (HE 16-21)")
	})
	t.Run("B.5 recent changes", func(t *testing.T) {
		res, err := k.GetRecentChanges(ctx, tools.RecentChangesArgs{FieldChanged: "FinishDate", SinceDate: "2026-02-20"})
		md := render(t, f, res, err)
		contains(t, md, "**5 milestone date changes** recorded in the last 7 days:",
			"| Date | Project | Task | Previous Date | New Date | Change |",
			"| Feb 26 | Sierra Wind | Execute Interconnection Agreement | Mar 2026 | Jun 2026 | +3 months |",
			"| Feb 25 | Nazareth Solar | Project Finance | Aug 2025 | Nov 2025 | +3 months |",
			"| Feb 24 | Desert Sun | EPC FNTP | Apr 2026 | Apr 2026 | No change (re-confirmed) |",
			"| Feb 23 | Mojave BESS | Mechanical Completion | Dec 2026 | Feb 2027 | +2 months |",
			"| Feb 21 | Kern Wind | Commercial Operation | Jun 2027 | Sep 2027 | +3 months |",
			"**Pattern**: 4 of 5 projects moved milestones later by 2-3 months (interconnection, financing, construction and COD milestones).")
	})
}

func TestEveryToolRenders(t *testing.T) {
	k, f, ctx := setup(t)
	calls := map[string]func() (any, error){
		"list": func() (any, error) { return k.ListAvailableCurves(ctx, tools.ListCurvesArgs{Market: "ERCOT"}) },
		"hourly": func() (any, error) {
			return k.GetHourlyPriceDistribution(ctx, tools.HourlyPriceArgs{Market: "CAISO", HubZone: "NP15", Year: 2025})
		},
		"hubs": func() (any, error) {
			return k.CompareHubZones(ctx, tools.CompareHubZonesArgs{HubZones: []string{"NP15", "SP15"}, Year: 2025})
		},
		"reports": func() (any, error) { return k.GetTopReportsByViews(ctx, tools.TopReportsArgs{}) },
		"users":   func() (any, error) { return k.GetTopUsers(ctx, tools.TopUsersArgs{}) },
		"trend": func() (any, error) {
			return k.GetReportUsageTrend(ctx, tools.UsageTrendArgs{ReportName: "Budget Tracker"})
		},
		"overview":  func() (any, error) { return k.GetProjectOverview(ctx, tools.ProjectArgs{ProjectName: "Mojave Solar"}) },
		"milestone": func() (any, error) { return k.GetMilestoneDates(ctx, tools.ProjectArgs{ProjectName: "Kern Wind"}) },
		"budget":    func() (any, error) { return k.GetBudgetOverview(ctx, tools.ProjectArgs{ProjectName: "Nazareth Solar"}) },
		"risks":     func() (any, error) { return k.GetTaskRisks(ctx, tools.TaskRisksArgs{RiskLevel: "High"}) },
		"sql": func() (any, error) {
			return k.GeneralSQLQuery(ctx, tools.GeneralSQLArgs{SQL: "SELECT technology, COUNT(*) AS n FROM per_project GROUP BY technology"})
		},
	}
	wants := map[string]string{
		"list": "There are **", "hourly": "prices peak at **", "hubs": "On average **NP15** prices run", "reports": "was the most viewed report from Jan 29 to Feb 27",
		"users": "The most active user", "trend": "**Budget Tracker** had **", "overview": "**Mojave Solar** is a 250 MW Solar project in CAISO, currently in **Stage 6 (Operation)** and **on track 🟢**",
		"milestone": "scheduled to reach commercial operation in **September 2027**", "budget": "**Nazareth Solar** has spent **$1.4M** of its **$2.1M** budget (66.7%)",
		"risks": "tasks** are flagged with a risk", "sql": "The query returned **5 rows**.",
	}
	for name, call := range calls {
		res, err := call()
		md := render(t, f, res, err)
		contains(t, md, wants[name])
		if w := len(strings.Fields(md)); w > synth.MaxWords {
			t.Errorf("%s: %d words", name, w)
		}
	}
	b, _ := f.Render(must(k.GetHourlyPriceDistribution(ctx, tools.HourlyPriceArgs{Market: "CAISO", HubZone: "NP15", Year: 2025})))
	if b.Chart == nil || len(b.Chart.X) != 24 || len(b.Chart.Series) != 3 || b.Chart.X[0] != "HE 1" {
		t.Errorf("hourly chart = %+v", b.Chart)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestEmptyAndAmbiguous(t *testing.T) {
	k, f, ctx := setup(t)
	res, err := k.GetAverageAnnualPrice(ctx, tools.AveragePriceArgs{Vendor: "Ascend", Market: "PJM", HubZone: "NP15", Year: 2025})
	md := render(t, f, res, err)
	contains(t, md, "I found no Ascend day-ahead prices for NP15 in PJM for 2025.", "Ask which curve files exist")
	amb, err := k.GetProjectHealth(ctx, tools.ProjectArgs{ProjectName: "mojave"})
	md = render(t, f, amb, err)
	contains(t, md, `"mojave" matches 2 projects: Mojave BESS, Mojave Solar. Which one do you mean?`, "- Mojave BESS\n- Mojave Solar")
	b, _ := f.Render(amb)
	if len(synth.ReportKeys([]synth.Block{b})) != 0 {
		t.Error("a clarifying answer should link no report")
	}
}

func TestErrorsAreExplained(t *testing.T) {
	k, f, _ := setup(t)
	viewer := tool.WithCallInfo(context.Background(), tool.CallInfo{Tenant: "vesper", Permissions: rbac.PermissionsOf(rbac.Viewer)})
	_, err := k.GetBudgetOverview(viewer, tools.ProjectArgs{ProjectName: "Nazareth Solar"})
	if b := f.Error("get_budget_overview", err); !strings.Contains(b.Lead, "chat:read_budget") || !strings.Contains(b.Lead, "administrator") {
		t.Errorf("denial: %q", b.Lead)
	}
	admin := tool.WithCallInfo(context.Background(), tool.CallInfo{Tenant: "vesper", Permissions: []string{"*"}})
	_, err = k.GeneralSQLQuery(admin, tools.GeneralSQLArgs{SQL: "DELETE FROM changes"})
	if b := f.Error("general_sql_query", err); !strings.Contains(b.Lead, "the statement is not a SELECT") || !strings.Contains(b.Lead, "only SELECT queries") {
		t.Errorf("refused query: %q", b.Lead)
	}
	_, err = k.CompareHubZones(admin, tools.CompareHubZonesArgs{HubZones: []string{"NP15"}, Year: 2025})
	if b := f.Error("compare_hub_zones", err); !strings.Contains(b.Lead, "1 hub-zones given") || !strings.Contains(b.Lead, "Name two different hub-zones") {
		t.Errorf("bad argument: %q", b.Lead)
	}
	// A missing argument: what to add to the question, never a tool's name.
	_, err = k.GetHourlyPriceDistribution(admin, tools.HourlyPriceArgs{Market: "CAISO", Year: 2025})
	if b := f.Error("get_hourly_price_distribution", err); !strings.Contains(b.Lead, "hub zone is missing") || !strings.Contains(b.Lead, "which hub-zone") ||
		strings.Contains(b.Lead, "list_available_curves") || strings.Contains(b.Lead, "get_hourly") {
		t.Errorf("missing argument: %q", b.Lead)
	}
	if b := f.Error("get_top_users", errors.New("boom")); !strings.Contains(b.Lead, "could not get the data") || strings.Contains(b.Lead, "boom") || strings.Contains(b.Lead, "get_top_users") {
		t.Errorf("other error: %q", b.Lead)
	}
	if _, err := f.Render(struct{}{}); err == nil {
		t.Error("unknown result type: want an error")
	}
}

func TestComposeLinksAndLength(t *testing.T) {
	k, f, ctx := setup(t)
	var blocks []synth.Block
	for _, m := range []string{"CAISO", "ERCOT"} {
		for _, h := range []string{"NP15", "HB_NORTH"} {
			res, err := k.GetHourlyPriceDistribution(ctx, tools.HourlyPriceArgs{Market: m, HubZone: h, Year: 2025})
			if err != nil {
				t.Fatal(err)
			}
			b, _ := f.Render(res)
			blocks = append(blocks, b)
		}
	}
	links := []reports.DeepLink{{ReportName: "Price Curves Report", URL: "https://app.powerbi.com/groups/w/reports/r", Description: "Hourly shapes"}}
	a := f.Compose(blocks, links)
	if a.Words > synth.MaxWords || !strings.Contains(a.Markdown, "more rows") {
		t.Errorf("%d words; tables should have been shortened", a.Words)
	}
	if !strings.HasSuffix(a.Markdown, "---\n**Related Reports**\n- [Price Curves Report](https://app.powerbi.com/groups/w/reports/r) — Hourly shapes") {
		t.Errorf("links section:\n%s", a.Markdown[len(a.Markdown)-200:])
	}
	if len(a.Charts) != 2 { // the two empty results have none
		t.Errorf("charts = %d", len(a.Charts))
	}
	if keys := synth.ReportKeys(blocks); len(keys) != 2 || keys[0] != "price_curve_hourly_report" {
		t.Errorf("report keys = %v", keys)
	}
}

func TestFormats(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{synth.Money(2.1e6), "$2.1M"}, {synth.Money(800e3), "$800K"}, {synth.Money(620e3), "$620K"}, {synth.Money(12.5e6), "$12.5M"},
		{synth.Money(950), "$950"}, {synth.Money(-1500), "-$1.5K"}, {synth.Money(2.3e9), "$2.3B"},
		{synth.PerMWh(48.7349), "$48.73/MWh"}, {synth.PerMWh(-3.5), "-$3.50/MWh"}, {synth.Int(8760), "8,760"}, {synth.Int(-1234567), "-1,234,567"},
		{synth.MonthYear("2026-03-01"), "March 2026"}, {synth.ShortMonthYear("2025-06-30"), "Jun 2025"}, {synth.MonthYear(""), ""},
		{synth.Shift("2026-03-31", "2026-06-30"), "+3 months"}, {synth.Shift("2026-04-15", "2026-04-15"), "No change (re-confirmed)"},
		{synth.Shift("2026-04-15", "2026-04-29"), "+2 weeks"}, {synth.Shift("2026-04-15", "2026-04-12"), "-3 days"}, {synth.Shift("2026-05-31", "2026-04-30"), "-1 month"},
		{synth.HealthBadge("RED"), "🔴 Red"}, {synth.HealthBadge("blue"), "🔵 Blue"}, {synth.HealthBadge(""), "⬜ N/A"},
		{synth.Status("at_risk"), "at risk 🟡"}, {synth.StageWords("Stage 4 Pre-Con & Finance"), "Stage 4 (Pre-Con & Finance)"},
		{synth.StageShort("Stage 5 Construction"), "Stage 5"}, {synth.HourEnding(15), "HE 16"},
		{synth.Day("2026-02-26", warehouse.Today), "Feb 26"}, {synth.Day("2025-02-26", warehouse.Today), "Feb 26, 2025"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	tb := &synth.Table{Headers: []string{"a", "b"}, Rows: [][]string{{"x|y", ""}}}
	if md := tb.Markdown(0); !strings.Contains(md, `| x\|y | — |`) {
		t.Errorf("escaping: %s", md)
	}
}

func BenchmarkRenderHealth(b *testing.B) {
	now := func() time.Time { return warehouse.Today }
	k := tools.New(warehousetest.SQLite(b), &tools.Options{Now: now})
	ctx := tool.WithCallInfo(context.Background(), tool.CallInfo{Tenant: "vesper", Permissions: []string{"*"}})
	res, err := k.GetProjectHealth(ctx, tools.ProjectArgs{ProjectName: "Nazareth Solar"})
	if err != nil {
		b.Fatal(err)
	}
	f := synth.New(&synth.Options{Now: now})
	for b.Loop() {
		blk, _ := f.Render(res)
		f.Compose([]synth.Block{blk}, nil)
	}
}
