package vesper

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/trellis-go/trellis/apps/vesper/synth"
	"github.com/trellis-go/trellis/apps/vesper/tools"
)

// The graph's tools are the toolkit's (package tools: the SQL behind each, the registry of
// which agent has which, the tenants' switches); this file gives the agents their typed
// runners and the planned calls the offline path makes.

// ToolFunc runs one tool on JSON arguments and returns its typed result,
// which synth.Formatter renders, or which renders itself as a [Renderer].
type ToolFunc func(ctx context.Context, args json.RawMessage) (any, error)

// Renderer is a result that formats itself (the results of added domains).
type Renderer interface {
	Block() synth.Block
}

// Call is one planned tool call.
type Call struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

func call(name string, args any) Call {
	b, _ := json.Marshal(args)
	return Call{Tool: name, Args: b}
}

func typed[A, O any](fn func(context.Context, A) (O, error)) ToolFunc {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		var a A
		if len(raw) > 0 {
			dec := json.NewDecoder(strings.NewReader(string(raw)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&a); err != nil {
				return nil, fmt.Errorf("vesper: bad tool arguments %s: %w", raw, err)
			}
		}
		return fn(ctx, a)
	}
}

// toolkitFuncs are the typed runners of the toolkit's sixteen tools.
func toolkitFuncs(k *tools.Toolkit) map[string]ToolFunc {
	return map[string]ToolFunc{
		"get_average_annual_price":      typed(k.GetAverageAnnualPrice),
		"get_hourly_price_distribution": typed(k.GetHourlyPriceDistribution),
		"list_available_curves":         typed(k.ListAvailableCurves),
		"compare_vendors":               typed(k.CompareVendors),
		"compare_hub_zones":             typed(k.CompareHubZones),
		"get_top_reports_by_views":      typed(k.GetTopReportsByViews),
		"get_top_users":                 typed(k.GetTopUsers),
		"get_report_usage_trend":        typed(k.GetReportUsageTrend),
		"get_project_overview":          typed(k.GetProjectOverview),
		"get_project_health":            typed(k.GetProjectHealth),
		"get_milestone_dates":           typed(k.GetMilestoneDates),
		"get_budget_overview":           typed(k.GetBudgetOverview),
		"get_task_risks":                typed(k.GetTaskRisks),
		"get_portfolio_summary":         typed(k.GetPortfolioSummary),
		"get_recent_changes":            typed(k.GetRecentChanges),
		"general_sql_query":             typed(k.GeneralSQLQuery),
	}
}
