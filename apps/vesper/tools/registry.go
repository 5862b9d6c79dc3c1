package tools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/trellis-go/trellis/appdb"
	"github.com/trellis-go/trellis/apps/vesper/rbac"
	"github.com/trellis-go/trellis/tool"
)

// The domain agents.
const (
	DayAheadAgent   = "dayahead_agent"
	PriceCurveAgent = "price_curve_agent"
	PBIMetricsAgent = "pbi_metrics_agent"
	PERAgent        = "per_agent"
)

// AgentTools is the tool registry: which tools each agent is given, in
// order. general_sql_query is offered to every agent; only holders of
// chat:advanced_sql can run it. A new domain adds its entry here.
var AgentTools = map[string][]string{
	DayAheadAgent: {"get_average_annual_price", "get_hourly_price_distribution", "list_available_curves", "compare_vendors",
		"general_sql_query"},
	PriceCurveAgent: {"get_hourly_price_distribution", "compare_hub_zones", "get_average_annual_price", "general_sql_query"},
	PBIMetricsAgent: {"get_top_reports_by_views", "get_top_users", "get_report_usage_trend", "general_sql_query"},
	PERAgent: {"get_project_overview", "get_project_health", "get_milestone_dates", "get_budget_overview", "get_task_risks",
		"get_portfolio_summary", "get_recent_changes", "general_sql_query"},
}

// descriptions are what the model reads about each tool.
var descriptions = map[string]string{
	"get_average_annual_price":      "Average day-ahead price ($/MWh) for a vendor, market, hub-zone and forecast year, one row per As-Of file; optionally one As-Of file.",
	"get_hourly_price_distribution": "Average, minimum and maximum day-ahead price by hour of day (0-23) for a market, hub-zone and year or month; with peak (7-22) and off-peak averages.",
	"list_available_curves":         "Lists the vendor curve files (vendor, market, hub-zone, As-Of). Use it when filters are missing or to show what exists.",
	"compare_vendors":               "Side-by-side average prices of vendors (default Ascend and Hitachi) for one market, hub-zone and year, with their difference and peak-hour difference.",
	"compare_hub_zones":             "Compares two hub-zones' average day-ahead price hour by hour for a year, with the spread.",
	"get_top_reports_by_views":      "Most-viewed Power BI reports in a date range, with unique viewers.",
	"get_top_users":                 "Most active Power BI users in a date range, optionally for one report.",
	"get_report_usage_trend":        "Views per month or week of one Power BI report or of all: the usage trend.",
	"get_project_overview":          "A project's stage, technology, market, sponsor, capacity, budget vs actuals and commercial terms. Use it first for a named project.",
	"get_project_health":            "A project's health colour (green/yellow/red) per domain: site, permits, interconnection, engineering, procurement, offtake, financing, construction, schedule.",
	"get_milestone_dates":           "A project's Stage 1-8 dates, COD, decisioning date and key agreement dates from the latest monthly snapshot.",
	"get_budget_overview":           "A project's budget, actuals, forecast, IC_LC and PPA_LC, with detail by group and sub-group.",
	"get_task_risks":                "Tasks flagged High/Medium/Low risk, for one project or the portfolio.",
	"get_portfolio_summary":         "All active projects, filterable by technology, market, stage and status colour (green, yellow, red, blue).",
	"get_recent_changes":            "Recent changes to project fields and task dates (FinishDate, Status, Risk Assessment, Budget, ...), newest first; default the last seven days.",
	"general_sql_query":             "[RESTRICTED: chat:advanced_sql] Runs one custom SELECT over the approved views when no other tool fits.",
}

func wrap[A, O any](name string, fn func(context.Context, A) (O, error)) tool.Tool {
	r, _ := rbac.RuleFor(name)
	return tool.WithPolicy(tool.Must(tool.New(name, descriptions[name], fn)), tool.Policy{Permissions: []string{r.Permission}})
}

// Tools returns every tool of the toolkit by name, wrapped with tool.New
// (schema from the argument struct) and a Policy that lists the permission
// of the rbac matrix.
func (k *Toolkit) Tools() map[string]tool.Tool {
	all := []tool.Tool{
		wrap("get_average_annual_price", k.GetAverageAnnualPrice),
		wrap("get_hourly_price_distribution", k.GetHourlyPriceDistribution),
		wrap("list_available_curves", k.ListAvailableCurves),
		wrap("compare_vendors", k.CompareVendors),
		wrap("compare_hub_zones", k.CompareHubZones),
		wrap("get_top_reports_by_views", k.GetTopReportsByViews),
		wrap("get_top_users", k.GetTopUsers),
		wrap("get_report_usage_trend", k.GetReportUsageTrend),
		wrap("get_project_overview", k.GetProjectOverview),
		wrap("get_project_health", k.GetProjectHealth),
		wrap("get_milestone_dates", k.GetMilestoneDates),
		wrap("get_budget_overview", k.GetBudgetOverview),
		wrap("get_task_risks", k.GetTaskRisks),
		wrap("get_portfolio_summary", k.GetPortfolioSummary),
		wrap("get_recent_changes", k.GetRecentChanges),
		wrap("general_sql_query", k.GeneralSQLQuery),
	}
	m := make(map[string]tool.Tool, len(all))
	for _, t := range all {
		m[t.Spec().Name] = t
	}
	return m
}

// SettingsMigrations create the chat_agent_tools table in the app's database (package appdb).
var SettingsMigrations = []appdb.Migration{{
	Name: "vesper_chat_agent_tools_1",
	SQL: `CREATE TABLE chat_agent_tools (
		tenant_id TEXT NOT NULL, agent_name TEXT NOT NULL, tool_name TEXT NOT NULL,
		is_enabled INTEGER NOT NULL DEFAULT 1, updated_by TEXT, updated_at TIMESTAMP,
		UNIQUE (tenant_id, agent_name, tool_name))`,
}}

// Settings is the per-tenant enable/disable table chat_agent_tools, kept in the app's database
// (not in the warehouse: tools cannot read it).
type Settings struct {
	db *appdb.DB
}

// NewSettings applies [SettingsMigrations] to db (those not applied yet) and keeps the switches
// there.
func NewSettings(ctx context.Context, db *appdb.DB) (*Settings, error) {
	if db == nil {
		return nil, errors.New("tools: NewSettings needs the app's database; open it with appdb.Open")
	}
	if err := db.Migrate(ctx, SettingsMigrations); err != nil {
		return nil, fmt.Errorf("tools: create chat_agent_tools: %w", err)
	}
	return &Settings{db: db}, nil
}

// ErrUnknownAgent is wrapped by errors about an agent the registry lacks.
var ErrUnknownAgent = fmt.Errorf("tools: unknown agent")

func checkAgentTool(agent, toolName string) error {
	names, ok := AgentTools[agent]
	if !ok {
		return fmt.Errorf("%w %q; agents are %s", ErrUnknownAgent, agent, strings.Join(slices.Sorted(func(yield func(string) bool) {
			for a := range AgentTools {
				if !yield(a) {
					return
				}
			}
		}), ", "))
	}
	if toolName != "" && !slices.Contains(names, toolName) {
		return fmt.Errorf("tools: agent %s has no tool %q; its tools are %s", agent, toolName, strings.Join(names, ", "))
	}
	return nil
}

// SetEnabled turns one tool of one agent on or off for a tenant.
func (s *Settings) SetEnabled(ctx context.Context, tenant, agent, toolName string, enabled bool, by string) error {
	if err := checkAgentTool(agent, toolName); err != nil {
		return err
	}
	v := 0
	if enabled {
		v = 1
	}
	return s.db.System(ctx, func(tx *appdb.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO chat_agent_tools (tenant_id, agent_name, tool_name, is_enabled, updated_by, updated_at)
		VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP)
		ON CONFLICT (tenant_id, agent_name, tool_name) DO UPDATE SET is_enabled = excluded.is_enabled,
			updated_by = excluded.updated_by, updated_at = excluded.updated_at`, tenant, agent, toolName, v, by)
		return err
	})
}

// Disabled returns the tools a tenant has turned off for an agent.
func (s *Settings) Disabled(ctx context.Context, tenant, agent string) (map[string]bool, error) {
	out := map[string]bool{}
	err := s.db.System(ctx, func(tx *appdb.Tx) error {
		rows, err := tx.Query(ctx, `SELECT tool_name FROM chat_agent_tools WHERE tenant_id = ? AND agent_name = ? AND is_enabled = 0`, tenant, agent)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				return err
			}
			out[n] = true
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ForAgent returns the tools an agent may offer the model for a tenant: the
// registry's list, in order, minus the tenant's disabled tools. A nil
// Settings disables nothing.
func (k *Toolkit) ForAgent(ctx context.Context, s *Settings, tenant, agent string) ([]tool.Tool, error) {
	if err := checkAgentTool(agent, ""); err != nil {
		return nil, err
	}
	disabled := map[string]bool{}
	if s != nil {
		var err error
		if disabled, err = s.Disabled(ctx, tenant, agent); err != nil {
			return nil, err
		}
	}
	all := k.Tools()
	var out []tool.Tool
	for _, n := range AgentTools[agent] {
		if !disabled[n] {
			out = append(out, all[n])
		}
	}
	return out, nil
}
