package tools

import (
	"context"
	"fmt"
	"github.com/trellis-go/trellis/apps/vesper/rbac"
	"strings"
	"time"
)

// DateRangeArgs is an inclusive date range; empty ends mean the 30 days up
// to today.
type DateRangeArgs struct {
	Start string `json:"date_range_start,omitempty" jsonschema:"First day, ISO date e.g. 2025-01-01; default 30 days ago"`
	End   string `json:"date_range_end,omitempty" jsonschema:"Last day, ISO date e.g. 2025-01-31; default today"`
}

func (k *Toolkit) dateRange(toolName string, a DateRangeArgs) (start, end time.Time, err error) {
	now := k.now().UTC()
	end = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	if a.End != "" {
		if end, err = parseDate(toolName, "date_range_end", a.End); err != nil {
			return
		}
	}
	start = end.AddDate(0, 0, -29)
	if a.Start != "" {
		if start, err = parseDate(toolName, "date_range_start", a.Start); err != nil {
			return
		}
	}
	if start.After(end) {
		err = &ArgError{Tool: toolName, Arg: "date_range_start", Problem: fmt.Sprintf("%s is after the end %s", start.Format("2006-01-02"), end.Format("2006-01-02")), Hint: "swap the dates"}
	}
	return
}

func topN(toolName string, n int) (int, error) {
	if n == 0 {
		return 10, nil
	}
	if n < 1 || n > 100 {
		return 0, &ArgError{Tool: toolName, Arg: "top_n", Problem: fmt.Sprintf("%d is out of range", n), Hint: "give 1 to 100"}
	}
	return n, nil
}

// viewsIn starts a query on the tenant's report views between two days (row-level scoping
// applies too; the tenant filter states the intent).
func viewsIn(tenant string, from, to time.Time) query {
	var q query
	q.where("tenant_id = ?", tenant)
	q.where("activity_type = 'ViewReport'")
	q.where("activity_date BETWEEN ? AND ?", from.Format("2006-01-02"), to.Format("2006-01-02"))
	return q
}

// rankingCall checks what the ranking tools ask first: a caller who may run the tool, the date
// range and how many to list.
func (k *Toolkit) rankingCall(ctx context.Context, name string, r DateRangeArgs, top int) (p rbac.Principal, start, end time.Time, n int, err error) {
	if p, err = caller(ctx, name); err != nil {
		return p, start, end, 0, err
	}
	if start, end, err = k.dateRange(name, r); err != nil {
		return p, start, end, 0, err
	}
	n, err = topN(name, top)
	return p, start, end, n, err
}

// UsageTotals are the views of a range (of one report, or of all) and the
// distinct people who made them.
type UsageTotals struct {
	TotalViews    int64 `json:"total_views"`
	UniqueViewers int64 `json:"unique_viewers"`
	Reports       int64 `json:"reports_viewed"`
}

// totals counts a range's views, distinct viewers and distinct reports.
func (k *Toolkit) totals(ctx context.Context, tenant string, start, end time.Time, report string) (UsageTotals, error) {
	q := viewsIn(tenant, start, end)
	if report != "" {
		q.where("LOWER(report_name) = LOWER(?)", report)
	}
	res, err := k.w.Query(ctx, tenant, `SELECT COUNT(*), COUNT(DISTINCT user_email), COUNT(DISTINCT report_name)
		FROM pbi_activity_events `+q.clause(), q.args...)
	if err != nil {
		return UsageTotals{}, err
	}
	var t UsageTotals
	if len(res.Rows) == 1 {
		t = UsageTotals{TotalViews: integer(res.Rows[0][0]), UniqueViewers: integer(res.Rows[0][1]), Reports: integer(res.Rows[0][2])}
	}
	return t, nil
}

// TopReportsArgs are the arguments of get_top_reports_by_views.
type TopReportsArgs struct {
	DateRangeArgs
	TopN int `json:"top_n,omitempty" jsonschema:"How many reports to return, 1-100; default 10"`
	// SortBy orders the reports by their views (default) or by their
	// distinct viewers.
	SortBy string `json:"sort_by,omitempty" jsonschema:"views (default) or viewers (distinct people)"`
}

// ReportViews is one report's views in the range.
type ReportViews struct {
	ReportName    string `json:"report_name"`
	Workspace     string `json:"workspace_name"`
	TotalViews    int64  `json:"total_views"`
	UniqueViewers int64  `json:"unique_viewers"`
}

// TopReportsResult is the result of get_top_reports_by_views.
type TopReportsResult struct {
	Start   string        `json:"date_range_start"`
	End     string        `json:"date_range_end"`
	SortBy  string        `json:"sort_by"`
	Reports []ReportViews `json:"data"`
	// Totals are every report's views and viewers in the range.
	Totals UsageTotals `json:"totals"`
	Meta
}

// GetTopReportsByViews returns the most viewed Power BI reports of the
// caller's tenant in a date range.
func (k *Toolkit) GetTopReportsByViews(ctx context.Context, a TopReportsArgs) (*TopReportsResult, error) {
	const name = "get_top_reports_by_views"
	p, start, end, n, err := k.rankingCall(ctx, name, a.DateRangeArgs, a.TopN)
	if err != nil {
		return nil, err
	}
	sortBy := strings.ToLower(strings.TrimSpace(a.SortBy))
	order := "total_views DESC, unique_viewers DESC"
	switch sortBy {
	case "", "views":
		sortBy = "views"
	case "viewers", "users", "people", "unique_viewers":
		sortBy, order = "viewers", "unique_viewers DESC, total_views DESC"
	default:
		return nil, &ArgError{Tool: name, Arg: "sort_by", Problem: fmt.Sprintf("%q is not an order", a.SortBy), Hint: "use views or viewers"}
	}
	q := viewsIn(p.Tenant, start, end)
	limit := q.arg(n)
	res, err := k.w.Query(ctx, p.Tenant, `SELECT report_name, workspace_name, COUNT(*) AS total_views, COUNT(DISTINCT user_email) AS unique_viewers
		FROM pbi_activity_events `+q.clause()+`
		GROUP BY report_name, workspace_name ORDER BY `+order+`, report_name LIMIT `+limit, q.args...)
	if err != nil {
		return nil, err
	}
	tot, err := k.totals(ctx, p.Tenant, start, end, "")
	if err != nil {
		return nil, err
	}
	out := &TopReportsResult{Start: start.Format("2006-01-02"), End: end.Format("2006-01-02"), SortBy: sortBy, Reports: []ReportViews{}, Totals: tot,
		Meta: Meta{ReportKey: "pbi_usage_metrics_report", Searched: searchWords("top_reports", "range", humanRange(start, end))}}
	out.fromResult(res)
	for _, r := range res.Rows {
		out.Reports = append(out.Reports, ReportViews{ReportName: str(r[0]), Workspace: str(r[1]), TotalViews: integer(r[2]), UniqueViewers: integer(r[3])})
	}
	return out, nil
}

// TopUsersArgs are the arguments of get_top_users.
type TopUsersArgs struct {
	DateRangeArgs
	TopN       int    `json:"top_n,omitempty" jsonschema:"How many users to return, 1-100; default 10"`
	ReportName string `json:"report_name,omitempty" jsonschema:"Only views of this report"`
}

// UserActivity is one user's views in the range.
type UserActivity struct {
	UserEmail     string `json:"user_email"`
	TotalViews    int64  `json:"total_views"`
	UniqueReports int64  `json:"unique_reports_viewed"`
	LastActivity  string `json:"last_activity"`
}

// TopUsersResult is the result of get_top_users.
type TopUsersResult struct {
	Start string `json:"date_range_start"`
	End   string `json:"date_range_end"`
	// ReportName is the report asked about, as found; "" for all reports.
	ReportName string         `json:"report_name,omitempty"`
	Users      []UserActivity `json:"data"`
	// Totals are the range's views and distinct viewers (of the report, or
	// of all reports), not only the listed users'.
	Totals UsageTotals `json:"totals"`
	Meta
}

// GetTopUsers returns the most active Power BI users of the caller's tenant.
func (k *Toolkit) GetTopUsers(ctx context.Context, a TopUsersArgs) (*TopUsersResult, error) {
	const name = "get_top_users"
	p, start, end, n, err := k.rankingCall(ctx, name, a.DateRangeArgs, a.TopN)
	if err != nil {
		return nil, err
	}
	q := viewsIn(p.Tenant, start, end)
	searched := searchWords("top_users", "range", humanRange(start, end))
	report := strings.TrimSpace(a.ReportName)
	if report != "" {
		q.where("LOWER(report_name) = LOWER(?)", report)
		searched += searchWords("of_report", "report", report)
	}
	limit := q.arg(n)
	res, err := k.w.Query(ctx, p.Tenant, `SELECT user_email, COUNT(*) AS total_views, COUNT(DISTINCT report_name), MAX(activity_date)
		FROM pbi_activity_events `+q.clause()+`
		GROUP BY user_email ORDER BY total_views DESC, user_email LIMIT `+limit, q.args...)
	if err != nil {
		return nil, err
	}
	tot, err := k.totals(ctx, p.Tenant, start, end, report)
	if err != nil {
		return nil, err
	}
	out := &TopUsersResult{Start: start.Format("2006-01-02"), End: end.Format("2006-01-02"), ReportName: report, Users: []UserActivity{}, Totals: tot,
		Meta: Meta{ReportKey: "pbi_usage_metrics_report", Searched: searched}}
	out.fromResult(res)
	for _, r := range res.Rows {
		out.Users = append(out.Users, UserActivity{UserEmail: str(r[0]), TotalViews: integer(r[1]), UniqueReports: integer(r[2]), LastActivity: date(r[3])})
	}
	return out, nil
}

// UsageTrendArgs are the arguments of get_report_usage_trend.
type UsageTrendArgs struct {
	ReportName string `json:"report_name,omitempty" jsonschema:"Report to follow; empty for all reports"`
	Start      string `json:"date_range_start,omitempty" jsonschema:"First day, ISO date; default a year before the end"`
	End        string `json:"date_range_end,omitempty" jsonschema:"Last day, ISO date; default today"`
	Period     string `json:"period,omitempty" jsonschema:"Bucket size: month (default) or week"`
}

// UsagePoint is the views of one period.
type UsagePoint struct {
	Period string `json:"period"` // first day of the period, YYYY-MM-DD
	Views  int64  `json:"views"`
}

// UsageTrendResult is the result of get_report_usage_trend.
type UsageTrendResult struct {
	ReportName string       `json:"report_name,omitempty"`
	Period     string       `json:"period"`
	Start      string       `json:"date_range_start"`
	End        string       `json:"date_range_end"`
	Points     []UsagePoint `json:"data"`
	// Totals are the range's views and the distinct people who made them.
	Totals UsageTotals `json:"totals"`
	Meta
}

// GetReportUsageTrend returns report views per month (or week): the usage
// trend of one report or of all.
func (k *Toolkit) GetReportUsageTrend(ctx context.Context, a UsageTrendArgs) (*UsageTrendResult, error) {
	const name = "get_report_usage_trend"
	p, err := caller(ctx, name)
	if err != nil {
		return nil, err
	}
	period := strings.ToLower(strings.TrimSpace(a.Period))
	if period == "" {
		period = "month"
	}
	if period != "month" && period != "week" {
		return nil, &ArgError{Tool: name, Arg: "period", Problem: fmt.Sprintf("%q is not a period", a.Period), Hint: "use month or week"}
	}
	rng := DateRangeArgs{Start: a.Start, End: a.End}
	if rng.Start == "" {
		end := k.now().UTC()
		if a.End != "" {
			if t, err := parseDate(name, "date_range_end", a.End); err == nil {
				end = t
			}
		}
		rng.Start = end.AddDate(-1, 0, 1).Format("2006-01-02")
	}
	start, end, err := k.dateRange(name, rng)
	if err != nil {
		return nil, err
	}
	if end.Sub(start) > 3*366*24*time.Hour {
		return nil, &ArgError{Tool: name, Arg: "date_range_start", Problem: "the range is longer than three years", Hint: "ask for at most three years"}
	}
	report := strings.TrimSpace(a.ReportName)
	build := func(from, to time.Time) query {
		q := viewsIn(p.Tenant, from, to)
		if report != "" {
			q.where("LOWER(report_name) = LOWER(?)", report)
		}
		return q
	}
	// daily counts, bucketed here (portable across dialects), one year per
	// query so that no query comes near the row cap
	out := &UsageTrendResult{ReportName: report, Period: period, Points: []UsagePoint{},
		Start: start.Format("2006-01-02"), End: end.Format("2006-01-02"), Meta: Meta{ReportKey: "pbi_usage_metrics_report",
			Searched: searchWords("trend", "period", period, "range", humanRange(start, end))}}
	if report != "" {
		out.Searched += searchWords("of_report", "report", report)
	}
	buckets := map[string]int64{}
	var order []string
	for from := start; !from.After(end); from = from.AddDate(1, 0, 0) {
		to := from.AddDate(1, 0, -1)
		if to.After(end) {
			to = end
		}
		qq := build(from, to)
		res, err := k.w.Query(ctx, p.Tenant, `SELECT activity_date, COUNT(*) FROM pbi_activity_events `+qq.clause()+
			` GROUP BY activity_date ORDER BY activity_date`, qq.args...)
		if err != nil {
			return nil, err
		}
		for _, r := range res.Rows {
			d, err := time.Parse("2006-01-02", date(r[0]))
			if err != nil {
				continue
			}
			var key string
			if period == "month" {
				key = time.Date(d.Year(), d.Month(), 1, 0, 0, 0, 0, time.UTC).Format("2006-01-02")
			} else {
				key = d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7)).Format("2006-01-02") // Monday
			}
			if _, ok := buckets[key]; !ok {
				order = append(order, key)
			}
			buckets[key] += integer(r[1])
		}
	}
	for _, key := range order {
		out.Points = append(out.Points, UsagePoint{Period: key, Views: buckets[key]})
	}
	if out.Totals, err = k.totals(ctx, p.Tenant, start, end, report); err != nil {
		return nil, err
	}
	return out, nil
}
