package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/trellis-go/trellis/appdb/appdbtest"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/vesper/rbac"
	"github.com/trellis-go/trellis/apps/vesper/sqlguard"
	"github.com/trellis-go/trellis/apps/vesper/tools"
	"github.com/trellis-go/trellis/apps/vesper/warehouse"
	"github.com/trellis-go/trellis/apps/vesper/warehousetest"
	"github.com/trellis-go/trellis/tool"
)

func TestMain(m *testing.M) { warehousetest.Main(m) }

type bundle struct {
	k     *tools.Toolkit
	w     *warehouse.Warehouse
	admin context.Context // tenant vesper, every permission
	d     *warehouse.Dataset
}

func as(tenant string, perms ...string) context.Context {
	return tool.WithCallInfo(context.Background(), tool.CallInfo{Tenant: tenant, User: "u1", Permissions: perms})
}

// setup runs fn against the generated data on SQLite and on Postgres (in a
// schema of its own, dropped afterwards).
func setup(t *testing.T, fn func(t *testing.T, b bundle)) {
	t.Helper()
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			var w *warehouse.Warehouse
			if name == "sqlite" {
				w = warehousetest.SQLite(t)
			} else {
				w = warehousetest.Postgres(t, warehouse.Config{})
			}
			k := tools.New(w, &tools.Options{Now: func() time.Time { return warehouse.Today.Add(15 * time.Hour) }})
			fn(t, bundle{k: k, w: w, admin: as("vesper", "*"), d: warehousetest.Data()})
		})
	}
}

func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func r2(x float64) float64 { return math.Round(x*100) / 100 }

// yearMean is the known answer computed from the data set, not SQL.
func yearMean(d *warehouse.Dataset, vendor, asof, hub string, year, hour, month int) (mean float64, n int) {
	var sum float64
	for _, c := range d.Curves {
		if c.File.Vendor != vendor || c.File.Hubzone != hub || (asof != "" && c.File.AsOf != asof) {
			continue
		}
		for i, p := range c.Prices {
			h := c.Hour(i)
			if h.Year() == year && (hour < 0 || h.Hour() == hour) && (month == 0 || int(h.Month()) == month) {
				sum += p
				n++
			}
		}
	}
	return sum / float64(n), n
}

func TestPriceTools(t *testing.T) {
	setup(t, func(t *testing.T, b bundle) {
		t.Run("get_average_annual_price", func(t *testing.T) {
			res := must(b.k.GetAverageAnnualPrice(b.admin, tools.AveragePriceArgs{Vendor: "ascend", Market: "california", HubZone: "np15", Year: 2025}))(t)
			if len(res.Prices) != 2 {
				t.Fatalf("rows = %+v, want the Jan_2024 and Jan_2025 files", res.Prices)
			}
			for _, p := range res.Prices {
				want, n := yearMean(b.d, "Ascend", p.AsOf, "NP15", 2025, -1, 0)
				if p.AvgPrice != r2(want) || p.DataPoints != int64(n) || p.Vendor != "Ascend" || p.Market != "CAISO" {
					t.Errorf("%+v, want avg %.2f over %d", p, want, n)
				}
			}
			if p := res.Prices[1]; p.AsOf != "Jan_2025" || p.AvgPrice != 48.73 || p.DataPoints != 8760 {
				t.Errorf("the specification's example: %+v, want Jan_2025 $48.73 over 8760 hours", p)
			}
			if res.ReportKey != "dayahead_curve_report" {
				t.Errorf("report key %q", res.ReportKey)
			}
			one := must(b.k.GetAverageAnnualPrice(b.admin, tools.AveragePriceArgs{Vendor: "Ascend", Market: "CAISO", HubZone: "NP15", Year: 2025, AsOf: "Jan_2025"}))(t)
			if len(one.Prices) != 1 {
				t.Errorf("asof filter: %+v", one.Prices)
			}
			// a value is never SQL: an injection attempt is just a vendor nobody has
			none := must(b.k.GetAverageAnnualPrice(b.admin, tools.AveragePriceArgs{Vendor: "Ascend' OR '1'='1", Market: "CAISO", HubZone: "NP15", Year: 2025}))(t)
			if len(none.Prices) != 0 || !strings.Contains(none.Searched, "OR '1'='1") {
				t.Errorf("injection returned %+v", none)
			}
			// no vendor: every vendor's files, and their hours pooled
			all := must(b.k.GetAverageAnnualPrice(b.admin, tools.AveragePriceArgs{HubZone: "NP15", Year: 2025, Months: []int{7}}))(t)
			if len(all.Prices) < 3 || all.AllFiles == nil || all.Period != "July 2025" || all.Prices[0].Market != "CAISO" {
				t.Fatalf("every vendor's files for July: %+v", all)
			}
			var pooled float64
			var hours int
			for _, v := range []string{"Ascend", "Hitachi"} {
				m, n := yearMean(b.d, v, "", "NP15", 2025, -1, 7)
				pooled, hours = pooled+m*float64(n), hours+n
			}
			for _, p := range all.Prices {
				want, n := yearMean(b.d, p.Vendor, p.AsOf, "NP15", 2025, -1, 7)
				if p.AvgPrice != r2(want) || p.DataPoints != int64(n) || n != 744 {
					t.Errorf("%+v, want July's avg %.2f over %d hours", p, want, n)
				}
			}
			if all.AllFiles.AvgPrice != r2(pooled/float64(hours)) || all.AllFiles.DataPoints != int64(hours) {
				t.Errorf("pooled %+v, want %.2f over %d", all.AllFiles, pooled/float64(hours), hours)
			}
			var ae *tools.ArgError
			if _, err := b.k.GetAverageAnnualPrice(b.admin, tools.AveragePriceArgs{Vendor: "Ascend", Year: 2025}); !errors.As(err, &ae) || ae.Arg != "hub_zone" {
				t.Errorf("missing hub-zone: %v", err)
			}
			if _, err := b.k.GetAverageAnnualPrice(b.admin, tools.AveragePriceArgs{HubZone: "NP15", Year: 2025, Months: []int{13}}); !errors.As(err, &ae) || ae.Arg != "months" {
				t.Errorf("month 13: %v", err)
			}
			if _, err := b.k.GetAverageAnnualPrice(b.admin, tools.AveragePriceArgs{Vendor: "Ascend", Market: "CAISO", HubZone: "NP15", Year: 25}); !errors.As(err, &ae) || ae.Arg != "year" {
				t.Errorf("bad year: %v", err)
			}
		})
		t.Run("get_hourly_price_distribution", func(t *testing.T) {
			res := must(b.k.GetHourlyPriceDistribution(b.admin, tools.HourlyPriceArgs{Market: "CAISO", HubZone: "NP15", Year: 2025, Month: 7, Vendor: "Ascend", AsOf: "Jan_2025"}))(t)
			if len(res.Hours) != 24 {
				t.Fatalf("hours = %d", len(res.Hours))
			}
			for _, h := range res.Hours {
				want, n := yearMean(b.d, "Ascend", "Jan_2025", "NP15", 2025, h.Hour, 7)
				if h.AvgPrice != r2(want) || n != 31 || h.MinPrice > h.AvgPrice || h.MaxPrice < h.AvgPrice {
					t.Errorf("hour %d: %+v, want avg %.2f", h.Hour, h, want)
				}
			}
			// the duck curve: evening peak above the solar midday
			if res.Hours[18].AvgPrice <= res.Hours[12].AvgPrice || res.PeakAvg == 0 || res.OffPeakAvg == 0 {
				t.Errorf("no duck shape: 12h %.2f, 18h %.2f", res.Hours[12].AvgPrice, res.Hours[18].AvgPrice)
			}
			// peak and off-peak: ERCOT's window is HE 7-22 (hours 6-21), PJM's HE 8-23
			for _, c := range []struct {
				hub, market string
				first, last int
			}{{"HB_NORTH", "ERCOT", 7, 22}, {"PJM_WEST", "PJM", 8, 23}} {
				pk := must(b.k.GetHourlyPriceDistribution(b.admin, tools.HourlyPriceArgs{HubZone: c.hub, Year: 2025, Months: []int{6, 7, 8}, Vendor: "Ascend"}))(t)
				var ps, os float64
				var pn, on int
				for h := 0; h < 24; h++ {
					for _, m := range []int{6, 7, 8} {
						mean, n := yearMean(b.d, "Ascend", "", c.hub, 2025, h, m)
						if h+1 >= c.first && h+1 <= c.last {
							ps, pn = ps+mean*float64(n), pn+n
						} else {
							os, on = os+mean*float64(n), on+n
						}
					}
				}
				peak, off := ps/float64(pn), os/float64(on)
				if pk.Market != c.market || pk.PeakFirstHE != c.first || pk.PeakLastHE != c.last || !pk.PeakDefined ||
					pk.PeakAvg != r2(peak) || pk.OffPeakAvg != r2(off) || pk.PeakSpread != r2(peak-off) || pk.Period != "June-August 2025" {
					t.Errorf("%s: %+v, want peak %.2f off-peak %.2f in HE %d-%d", c.hub, pk, peak, off, c.first, c.last)
				}
			}
			var ae *tools.ArgError
			if _, err := b.k.GetHourlyPriceDistribution(b.admin, tools.HourlyPriceArgs{Market: "CAISO", HubZone: "NP15", Year: 2025, Month: 13}); !errors.As(err, &ae) {
				t.Errorf("month 13: %v", err)
			}
		})
		t.Run("list_available_curves", func(t *testing.T) {
			all := must(b.k.ListAvailableCurves(b.admin, tools.ListCurvesArgs{}))(t)
			if len(all.Curves) != len(b.d.Files) {
				t.Errorf("curves = %d, want %d", len(all.Curves), len(b.d.Files))
			}
			h := must(b.k.ListAvailableCurves(b.admin, tools.ListCurvesArgs{Vendor: "hitachi icf", HubZone: "SP15"}))(t)
			var got []string
			for _, c := range h.Curves {
				got = append(got, c.AsOf+"/"+c.Market)
				if !c.Selected && c.AsOf == "Q3_2025" {
					t.Errorf("Q3_2025 is Hitachi's latest SP15 file and should be selected")
				}
			}
			if !slices.Equal(got, []string{"Q1_2025/CAISO", "Q3_2025/CAISO"}) {
				t.Errorf("Hitachi SP15 files = %v", got)
			}
		})
		t.Run("compare_vendors", func(t *testing.T) {
			res := must(b.k.CompareVendors(b.admin, tools.CompareVendorsArgs{Market: "CAISO", HubZone: "SP15", Year: 2025}))(t)
			if len(res.Representative) != 2 {
				t.Fatalf("representative = %+v", res.Representative)
			}
			a, h := res.Representative[0], res.Representative[1]
			if a.Vendor != "Ascend" || a.AsOf != "Jan_2025" || a.AvgPrice != 52.14 || h.Vendor != "Hitachi" || h.AsOf != "Q1_2025" || h.AvgPrice != 54.80 {
				t.Errorf("representative files = %+v", res.Representative)
			}
			d := res.Difference
			if d == nil || d.Difference != 2.66 || d.Percent != 5.1 {
				t.Errorf("difference = %+v, want $2.66 (5.1%%)", d)
			}
			if d != nil && d.PeakDifference <= d.Difference {
				t.Errorf("the difference should be largest in peak hours: %+v", d)
			}
			if len(res.Prices) != 4 { // Ascend Jan_2024, Jan_2025; Hitachi Q1_2025, Q3_2025
				t.Errorf("prices = %+v", res.Prices)
			}
		})
		t.Run("compare_hub_zones", func(t *testing.T) {
			res := must(b.k.CompareHubZones(b.admin, tools.CompareHubZonesArgs{HubZones: []string{"NP15", "south"}, Year: 2025, Vendor: "Ascend"}))(t)
			if res.HubZoneA != "NP15" || res.HubZoneB != "SP15" || len(res.Hours) != 24 {
				t.Fatalf("%s vs %s, %d hours", res.HubZoneA, res.HubZoneB, len(res.Hours))
			}
			for _, h := range res.Hours {
				a, _ := yearMean(b.d, "Ascend", "", "NP15", 2025, h.Hour, 0)
				s, _ := yearMean(b.d, "Ascend", "", "SP15", 2025, h.Hour, 0)
				if h.PriceA != r2(a) || h.PriceB != r2(s) || h.Spread != r2(a-s) {
					t.Errorf("hour %d: %+v, want %.2f %.2f", h.Hour, h, a, s)
				}
			}
			// the names travel as values: a hostile name finds nothing and breaks nothing
			bad := must(b.k.CompareHubZones(b.admin, tools.CompareHubZonesArgs{HubZones: []string{`NP15] FROM x; DROP TABLE base_changes; --`, "SP15"}, Year: 2025}))(t)
			if len(bad.Hours) != 0 {
				t.Errorf("hostile hub-zone matched %d hours", len(bad.Hours))
			}
			var ae *tools.ArgError
			for _, hz := range [][]string{{"NP15"}, {"NP15", "SP15", "ZP26"}, {"NP15", "north"}} {
				if _, err := b.k.CompareHubZones(b.admin, tools.CompareHubZonesArgs{HubZones: hz, Year: 2025}); !errors.As(err, &ae) {
					t.Errorf("%v: err = %v", hz, err)
				}
			}
		})
	})
}

func TestPBITools(t *testing.T) {
	setup(t, func(t *testing.T, b bundle) {
		type agg struct {
			views int64
			users map[string]bool
		}
		count := func(tenant, from, to, report string) map[string]*agg {
			out := map[string]*agg{}
			f, _ := time.Parse("2006-01-02", from)
			e, _ := time.Parse("2006-01-02", to)
			for _, ev := range b.d.Events {
				if ev.Tenant != tenant || ev.ActivityType != "ViewReport" || ev.Date.Before(f) || ev.Date.After(e) || (report != "" && ev.ReportName != report) {
					continue
				}
				key := ev.ReportName
				if report != "" {
					key = ev.UserEmail
				}
				if out[key] == nil {
					out[key] = &agg{users: map[string]bool{}}
				}
				out[key].views++
				out[key].users[ev.UserEmail] = true
			}
			return out
		}
		t.Run("get_top_reports_by_views", func(t *testing.T) {
			res := must(b.k.GetTopReportsByViews(b.admin, tools.TopReportsArgs{DateRangeArgs: tools.DateRangeArgs{Start: "2026-01-01", End: "2026-01-31"}, TopN: 3}))(t)
			want := count("vesper", "2026-01-01", "2026-01-31", "")
			if len(res.Reports) != 3 {
				t.Fatalf("reports = %+v", res.Reports)
			}
			var views []int64
			for _, a := range want {
				views = append(views, a.views)
			}
			sort.Slice(views, func(i, j int) bool { return views[i] > views[j] })
			for i, r := range res.Reports {
				w := want[r.ReportName]
				if w == nil || r.TotalViews != w.views || r.UniqueViewers != int64(len(w.users)) || r.TotalViews != views[i] {
					t.Errorf("%+v, want %+v", r, w)
				}
			}
			// default range: the 30 days to today
			def := must(b.k.GetTopReportsByViews(b.admin, tools.TopReportsArgs{}))(t)
			if def.Start != "2026-01-29" || def.End != "2026-02-27" || len(def.Reports) != 10 {
				t.Errorf("default range %s..%s, %d reports", def.Start, def.End, len(def.Reports))
			}
			var ae *tools.ArgError
			if _, err := b.k.GetTopReportsByViews(b.admin, tools.TopReportsArgs{DateRangeArgs: tools.DateRangeArgs{Start: "2026-02-01", End: "2026-01-01"}}); !errors.As(err, &ae) {
				t.Errorf("reversed range: %v", err)
			}
			if _, err := b.k.GetTopReportsByViews(b.admin, tools.TopReportsArgs{DateRangeArgs: tools.DateRangeArgs{Start: "last monday"}}); !errors.As(err, &ae) {
				t.Errorf("bad date: %v", err)
			}
			if _, err := b.k.GetTopReportsByViews(b.admin, tools.TopReportsArgs{TopN: 1000}); !errors.As(err, &ae) {
				t.Errorf("top_n 1000: %v", err)
			}
		})
		t.Run("get_top_users", func(t *testing.T) {
			res := must(b.k.GetTopUsers(b.admin, tools.TopUsersArgs{DateRangeArgs: tools.DateRangeArgs{Start: "2025-10-01", End: "2025-12-31"},
				TopN: 5, ReportName: "project health report"}))(t)
			want := count("vesper", "2025-10-01", "2025-12-31", "Project Health Report")
			if len(res.Users) != 5 {
				t.Fatalf("users = %+v", res.Users)
			}
			for _, u := range res.Users {
				if w := want[u.UserEmail]; w == nil || u.TotalViews != w.views || u.UniqueReports != 1 || u.LastActivity == "" {
					t.Errorf("%+v, want %+v", u, w)
				}
			}
		})
		t.Run("get_report_usage_trend", func(t *testing.T) {
			res := must(b.k.GetReportUsageTrend(b.admin, tools.UsageTrendArgs{ReportName: "PER Project Overview"}))(t)
			var total int64
			for _, p := range res.Points {
				total += p.Views
			}
			var want int64
			for _, a := range count("vesper", "2025-02-28", "2026-02-27", "PER Project Overview") {
				want += a.views
			}
			if total != want || len(res.Points) != 13 || res.Points[0].Period != "2025-02-01" {
				t.Errorf("total %d want %d; %d points from %s", total, want, len(res.Points), res.Points[0].Period)
			}
			wk := must(b.k.GetReportUsageTrend(b.admin, tools.UsageTrendArgs{Start: "2026-02-02", End: "2026-02-15", Period: "week"}))(t)
			if len(wk.Points) != 2 || wk.Points[0].Period != "2026-02-02" || wk.Points[1].Period != "2026-02-09" {
				t.Errorf("weeks = %+v", wk.Points)
			}
			var ae *tools.ArgError
			if _, err := b.k.GetReportUsageTrend(b.admin, tools.UsageTrendArgs{Period: "fortnight"}); !errors.As(err, &ae) {
				t.Errorf("bad period: %v", err)
			}
		})
		t.Run("tenant isolation", func(t *testing.T) {
			nw := as("northwind", rbac.PermissionsOf(rbac.Manager)...)
			res := must(b.k.GetTopReportsByViews(nw, tools.TopReportsArgs{DateRangeArgs: tools.DateRangeArgs{Start: "2025-01-01", End: "2026-12-31"}, TopN: 100}))(t)
			want := count("northwind", "2025-01-01", "2026-12-31", "")
			if len(res.Reports) != len(want) || len(want) != 4 {
				t.Errorf("northwind sees %d reports, want %d", len(res.Reports), len(want))
			}
			for _, r := range res.Reports {
				if want[r.ReportName] == nil || r.TotalViews != want[r.ReportName].views {
					t.Errorf("northwind sees %+v", r)
				}
			}
			users := must(b.k.GetTopUsers(nw, tools.TopUsersArgs{DateRangeArgs: tools.DateRangeArgs{Start: "2025-01-01", End: "2026-12-31"}, TopN: 100}))(t)
			for _, u := range users.Users {
				if !strings.HasSuffix(u.UserEmail, "@northwind-power.com") {
					t.Errorf("northwind sees user %s", u.UserEmail)
				}
			}
		})
	})
}

func TestPERTools(t *testing.T) {
	setup(t, func(t *testing.T, b bundle) {
		t.Run("get_project_overview", func(t *testing.T) {
			res := must(b.k.GetProjectOverview(b.admin, tools.ProjectArgs{ProjectName: "nazareth"}))(t)
			p := res.Project
			if !res.Found || p.Name != "Nazareth Solar" || p.Stage != "Stage 4 Pre-Con & Finance" || p.Budget != 2.1e6 || p.ActualsLTD != 1.4e6 ||
				p.Technology != "Solar" || p.Market != "CAISO" || p.Status != "off_track" || p.GenCapMW != 150 {
				t.Errorf("%+v", p)
			}
			amb := must(b.k.GetProjectOverview(b.admin, tools.ProjectArgs{ProjectName: "Sierra"}))(t)
			if amb.Found || !slices.Equal(amb.Candidates, []string{"Sierra Wind", "Sierra Solar"}) || !strings.Contains(amb.Note, "Which one") {
				t.Errorf("ambiguous: %+v", amb)
			}
			typo := must(b.k.GetProjectOverview(b.admin, tools.ProjectArgs{ProjectName: "Mojav BES"}))(t)
			if typo.Found || !slices.Contains(typo.Candidates, "Mojave BESS") {
				t.Errorf("typo: %+v", typo)
			}
		})
		t.Run("get_project_health", func(t *testing.T) {
			res := must(b.k.GetProjectHealth(b.admin, tools.ProjectArgs{ProjectName: "Nazareth Solar"}))(t)
			if len(res.Rows) != 9 || res.Stage != "Stage 4 Pre-Con & Finance" || res.Status != "off_track" {
				t.Fatalf("%+v", res)
			}
			ic := res.Rows[2]
			if ic.Area != "Interconnection" || ic.Color != "red" || *ic.PctComplete != 40 || ic.Due != "2025-09-30" || ic.Notes != "Phase II study delayed" {
				t.Errorf("interconnection = %+v", ic)
			}
			if s := res.Rows[8]; s.Area != "Schedule" || s.PctComplete != nil || s.Color != "yellow" {
				t.Errorf("schedule = %+v", s)
			}
		})
		t.Run("get_milestone_dates", func(t *testing.T) {
			res := must(b.k.GetMilestoneDates(b.admin, tools.ProjectArgs{ProjectName: "Kern Wind"}))(t)
			if res.COD != "2027-09-30" || res.CODYear != 2027 || res.AsOf != "2026-02-27" || res.StatusColor != "Yellow" {
				t.Errorf("%+v", res)
			}
			if len(res.Milestones) < 15 {
				t.Errorf("milestones = %d", len(res.Milestones))
			}
		})
		t.Run("get_budget_overview", func(t *testing.T) {
			res := must(b.k.GetBudgetOverview(b.admin, tools.ProjectArgs{ProjectName: "Nazareth Solar"}))(t)
			if res.Budget != 2.1e6 || len(res.Lines) != 13 {
				t.Fatalf("budget %v, %d lines", res.Budget, len(res.Lines))
			}
			var sum float64
			for _, l := range res.Lines {
				if l.Group == "Capital Budget" && l.Metric == "Budget" {
					sum += *l.Amount
				}
			}
			if sum != 2.1e6 {
				t.Errorf("capital budget lines sum to %v", sum)
			}
			viewer := as("vesper", rbac.PermissionsOf(rbac.Viewer)...)
			_, err := b.k.GetBudgetOverview(viewer, tools.ProjectArgs{ProjectName: "Nazareth Solar"})
			var de *rbac.DeniedError
			if !errors.As(err, &de) || de.Permission != rbac.ReadBudget {
				t.Errorf("viewer reading a budget: %v", err)
			}
		})
		t.Run("get_task_risks", func(t *testing.T) {
			res := must(b.k.GetTaskRisks(b.admin, tools.TaskRisksArgs{ProjectName: "Nazareth Solar"}))(t)
			if len(res.Tasks) == 0 || res.Tasks[0].Risk != "High" {
				t.Fatalf("%+v", res.Tasks)
			}
			high := must(b.k.GetTaskRisks(b.admin, tools.TaskRisksArgs{RiskLevel: "high"}))(t)
			want := 0
			for _, tk := range b.d.Tasks {
				if tk.Tenant == "vesper" && tk.Risk == "High" {
					want++
				}
			}
			if len(high.Tasks) != want {
				t.Errorf("high-risk tasks = %d, want %d", len(high.Tasks), want)
			}
			var ae *tools.ArgError
			if _, err := b.k.GetTaskRisks(b.admin, tools.TaskRisksArgs{RiskLevel: "catastrophic"}); !errors.As(err, &ae) {
				t.Errorf("bad level: %v", err)
			}
		})
		t.Run("get_portfolio_summary", func(t *testing.T) {
			red := must(b.k.GetPortfolioSummary(b.admin, tools.PortfolioArgs{StatusColor: "red"}))(t)
			var names []string
			for _, p := range red.Projects {
				names = append(names, p.Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, []string{"Mojave BESS", "Nazareth Solar", "Sierra Wind"}) {
				t.Errorf("off track = %v", names)
			}
			all := must(b.k.GetPortfolioSummary(b.admin, tools.PortfolioArgs{}))(t)
			if len(all.Projects) != 29 { // 30, less the archived one
				t.Errorf("active projects = %d", len(all.Projects))
			}
			wind3 := must(b.k.GetPortfolioSummary(b.admin, tools.PortfolioArgs{Technology: "wind", Stage: "Stage 3"}))(t)
			for _, p := range wind3.Projects {
				if p.Technology != "Wind" || !strings.HasPrefix(p.Stage, "Stage 3") {
					t.Errorf("filter let through %+v", p)
				}
			}
			if len(wind3.Projects) != 2 {
				t.Errorf("stage 3 wind = %d", len(wind3.Projects))
			}
			nw := must(b.k.GetPortfolioSummary(as("northwind", rbac.ReadProjects), tools.PortfolioArgs{}))(t)
			if len(nw.Projects) != 3 {
				t.Errorf("northwind sees %d projects", len(nw.Projects))
			}
		})
		t.Run("get_recent_changes", func(t *testing.T) {
			res := must(b.k.GetRecentChanges(b.admin, tools.RecentChangesArgs{FieldChanged: "finish date"}))(t)
			var got []string
			for _, c := range res.Changes {
				got = append(got, c.Date+" "+c.Project)
			}
			want := []string{"2026-02-26 Sierra Wind", "2026-02-25 Nazareth Solar", "2026-02-24 Desert Sun", "2026-02-23 Mojave BESS", "2026-02-21 Kern Wind"}
			if res.Since != "2026-02-20" || !slices.Equal(got, want) {
				t.Errorf("since %s: %v", res.Since, got)
			}
			if len(res.Changes) == 5 && (*res.Changes[3].ShiftDays != 62 || *res.Changes[2].ShiftDays != 0) {
				t.Errorf("shifts: %+v", res.Changes)
			}
			one := must(b.k.GetRecentChanges(b.admin, tools.RecentChangesArgs{ProjectName: "nazareth", SinceDate: "2026-02-01"}))(t)
			if len(one.Changes) < 2 {
				t.Errorf("nazareth changes = %+v", one.Changes)
			}
		})
		t.Run("general_sql_query", func(t *testing.T) {
			res := must(b.k.GeneralSQLQuery(b.admin, tools.GeneralSQLArgs{Description: "projects per technology",
				SQL: "SELECT technology, COUNT(*) AS n FROM per_project GROUP BY technology ORDER BY technology;"}))(t)
			if len(res.Rows) != 5 || res.Columns[1] != "n" || !slices.Equal(res.Views, []string{"per_project"}) {
				t.Errorf("%+v", res)
			}
			big := must(b.k.GeneralSQLQuery(b.admin, tools.GeneralSQLArgs{SQL: "SELECT * FROM mc_dayahead"}))(t)
			if len(big.Rows) != 500 || !big.Truncated || big.Note == "" {
				t.Errorf("cap: %d rows, truncated %v", len(big.Rows), big.Truncated)
			}
			if _, err := b.k.GeneralSQLQuery(b.admin, tools.GeneralSQLArgs{SQL: "SELECT * FROM base_per_project"}); !errors.Is(err, sqlguard.ErrRejected) {
				t.Errorf("base table: %v", err)
			}
			nw := must(b.k.GeneralSQLQuery(as("northwind", "*"), tools.GeneralSQLArgs{SQL: "SELECT COUNT(*) AS n, COUNT(DISTINCT tenant_id) AS t FROM pbi_activity_events"}))(t)
			var want int64
			for _, e := range b.d.Events {
				if e.Tenant == "northwind" {
					want++
				}
			}
			if nw.Rows[0]["n"] != want || nw.Rows[0]["t"] != int64(1) {
				t.Errorf("northwind general SQL sees %v, want %d events of one tenant", nw.Rows[0], want)
			}
			_, err := b.k.GeneralSQLQuery(as("vesper", rbac.PermissionsOf(rbac.Manager)...), tools.GeneralSQLArgs{SQL: "SELECT 1"})
			var de *rbac.DeniedError
			if !errors.As(err, &de) || de.Permission != rbac.AdvancedSQL {
				t.Errorf("manager running SQL: %v", err)
			}
		})
	})
}

func TestCallerRequired(t *testing.T) {
	k := tools.New(warehousetest.SQLite(t), nil)
	if _, err := k.GetPortfolioSummary(context.Background(), tools.PortfolioArgs{}); !errors.Is(err, tools.ErrNoCaller) {
		t.Errorf("no caller: %v", err)
	}
	_, err := k.CompareVendors(as("vesper", rbac.ReadProjects), tools.CompareVendorsArgs{Market: "CAISO", HubZone: "SP15", Year: 2025})
	if !errors.Is(err, rbac.ErrDenied) || !strings.Contains(err.Error(), "chat:read_market_data") {
		t.Errorf("viewer comparing vendors: %v", err)
	}
}

func TestRegistry(t *testing.T) {
	w := warehousetest.Postgres(t, warehouse.Config{NoLoad: true})
	ctx := context.Background()
	k := tools.New(w, nil)
	all := k.Tools()
	if len(all) != 16 {
		t.Errorf("%d tools, want the 15 of the specification and general_sql_query", len(all))
	}
	for name, tl := range all {
		var schema map[string]any
		if err := json.Unmarshal(tl.Spec().Parameters, &schema); err != nil || schema["type"] != "object" || tl.Spec().Description == "" {
			t.Errorf("%s: spec %s", name, tl.Spec().Parameters)
		}
		if _, ok := rbac.RuleFor(name); !ok {
			t.Errorf("%s is not in the permission matrix", name)
		}
	}
	for agent, names := range tools.AgentTools {
		for _, n := range names {
			if all[n] == nil {
				t.Errorf("%s lists unknown tool %s", agent, n)
			}
		}
	}
	s, err := tools.NewSettings(ctx, appdbtest.SQLite(t, "vesper"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetEnabled(ctx, "vesper", tools.DayAheadAgent, "compare_vendors", false, "admin@vesper"); err != nil {
		t.Fatal(err)
	}
	names := func(tenant string) []string {
		ts, err := k.ForAgent(ctx, s, tenant, tools.DayAheadAgent)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range ts {
			out = append(out, tl.Spec().Name)
		}
		return out
	}
	if got := names("vesper"); slices.Contains(got, "compare_vendors") || len(got) != 4 {
		t.Errorf("vesper dayahead tools = %v", got)
	}
	if got := names("northwind"); !slices.Contains(got, "compare_vendors") {
		t.Errorf("northwind lost compare_vendors: %v", got)
	}
	if err := s.SetEnabled(ctx, "vesper", tools.DayAheadAgent, "compare_vendors", true, "admin@vesper"); err != nil {
		t.Fatal(err)
	}
	if got := names("vesper"); !slices.Contains(got, "compare_vendors") {
		t.Errorf("re-enabled tool missing: %v", got)
	}
	if _, err := k.ForAgent(ctx, s, "vesper", "weather_agent"); !errors.Is(err, tools.ErrUnknownAgent) {
		t.Errorf("unknown agent: %v", err)
	}
	if err := s.SetEnabled(ctx, "vesper", tools.PERAgent, "compare_vendors", false, ""); err == nil {
		t.Error("disabling a tool the agent does not have: want an error")
	}
}

func TestToolCallThroughFramework(t *testing.T) {
	k := tools.New(warehousetest.SQLite(t), &tools.Options{Now: func() time.Time { return warehouse.Today }})
	tl := k.Tools()["get_project_health"]
	res, err := tl.Call(as("vesper", rbac.ReadProjects), json.RawMessage(`{"project_name":"Nazareth Solar"}`))
	if err != nil {
		t.Fatal(err)
	}
	var out tools.ProjectHealthResult
	if err := json.Unmarshal(res.Structured, &out); err != nil || len(out.Rows) != 9 || out.ReportKey != "per_project_health_report" {
		t.Errorf("structured result: %s (%v)", res.Structured, err)
	}
	if _, err := tl.Call(as("vesper", rbac.ReadProjects), json.RawMessage(`{"project_name": 7}`)); err == nil {
		t.Error("wrong argument type: want an error")
	}
}

func BenchmarkAverageAnnualPriceSQLite(b *testing.B) {
	k := tools.New(warehousetest.SQLite(b), nil)
	ctx := as("vesper", "*")
	for b.Loop() {
		if _, err := k.GetAverageAnnualPrice(ctx, tools.AveragePriceArgs{Vendor: "Ascend", Market: "CAISO", HubZone: "NP15", Year: 2025}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkProjectHealthSQLite(b *testing.B) {
	k := tools.New(warehousetest.SQLite(b), nil)
	ctx := as("vesper", "*")
	for b.Loop() {
		if _, err := k.GetProjectHealth(ctx, tools.ProjectArgs{ProjectName: "Nazareth Solar"}); err != nil {
			b.Fatal(err)
		}
	}
}

// The agents of a multi-domain question call tools at the same time.
func TestConcurrentCalls(t *testing.T) {
	k := tools.New(warehousetest.SQLite(t), &tools.Options{Now: func() time.Time { return warehouse.Today }})
	ctx := as("vesper", "*")
	errs := make(chan error, 40)
	for i := range 40 {
		go func() {
			var err error
			switch i % 4 {
			case 0:
				_, err = k.GetAverageAnnualPrice(ctx, tools.AveragePriceArgs{Vendor: "Ascend", Market: "CAISO", HubZone: "NP15", Year: 2025})
			case 1:
				_, err = k.GetProjectHealth(ctx, tools.ProjectArgs{ProjectName: "Nazareth"})
			case 2:
				_, err = k.GetTopReportsByViews(ctx, tools.TopReportsArgs{})
			case 3:
				_, err = k.GetRecentChanges(ctx, tools.RecentChangesArgs{})
			}
			errs <- err
		}()
	}
	for range 40 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
