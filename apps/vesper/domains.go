package vesper

import (
	"github.com/trellis-go/trellis/apps/vesper/pack"
	"slices"
	"strings"

	"github.com/trellis-go/trellis/apps/vesper/entity"
	"github.com/trellis-go/trellis/apps/vesper/tools"
	"github.com/trellis-go/trellis/model"
)

// Domain is one business domain: an agent node of the graph, its prompt,
// its tools and the rules the offline router and planner follow for it.
// The four domains of the specification are [BuiltinDomains]; a new one is
// registered with [Options.Domains] and needs no change to the supervisor.
type Domain struct {
	// Name is the agent's name and graph node (e.g. "per_agent").
	Name string
	// Intent is the intent it serves (e.g. "project_execution").
	Intent string
	// Description and Examples are what the classifier routes by.
	Description string
	Examples    []string
	// Prompt is the agent's system prompt (the document's, for the built-in domains).
	Prompt string
	// Keywords are the words (lower case, matched as phrases) by which the offline router
	// recognises the domain. Nil means the cues of the domain's intent in vesper's pack
	// (pack/pack.json), where the built-in domains keep theirs.
	Keywords []string
	// Group names domains that answer overlapping questions (the two price
	// domains); the offline router keeps only the best-scoring of a group.
	Group string
	// Boosts change the offline router's score of the domain by the filters a request names
	// (pack.Boost); Fallback names the filters that send a question no domain scores here.
	// For the built-in domains both are data, in pack/words.json.
	Boosts   []pack.Boost
	Fallback []string
	// SQLViews are the warehouse views a user's SQL statement reads that send it to this
	// domain (every domain's agent has general_sql_query); SQLDefault takes a statement that
	// reads none of any domain's.
	SQLViews   []string
	SQLDefault bool
	// Tools are the domain's tools by name. Empty means the toolkit's tools
	// of the registry entry tools.AgentTools[Name].
	Tools map[string]ToolFunc
	// ToolSpecs describe Tools to a real model (name, description, JSON
	// Schema of the arguments); a tool without one is offered with its name
	// and an open object schema. The toolkit's tools have theirs.
	ToolSpecs map[string]model.ToolSpec
	// Permissions names, for tools outside the rbac matrix, the permission
	// each needs; a caller without it is told so.
	Permissions map[string]string
	// Plan is the offline planner: the tool calls that answer a request
	// with the extracted filters. Required.
	Plan func(request string, f Filters) []Call
	// Clarify, when set, returns a question to ask instead of running when
	// the request lacks what the domain needs; "" means go ahead.
	Clarify func(request string, f Filters) string
}

func has(text string, words ...string) bool {
	for _, w := range words {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

// yearOr is the year asked for, or 2025, the first full year of every
// curve file.
func yearOr(y int) int {
	if y == 0 {
		return 2025
	}
	return y
}

// compareMarkets compares two markets by their main hubs (entity.MainHub).
func compareMarkets(f Filters) Call {
	return call("compare_hub_zones", tools.CompareHubZonesArgs{
		HubZones: []string{entity.MainHub[f.Markets[0]], entity.MainHub[f.Markets[1]]}, Year: yearOr(f.Year), Vendor: f.Vendor, Months: f.Months})
}

// hourWords ask for prices by hour of day, or for peak and off-peak.
var hourWords = pack.Vocabulary.Hour

// hourlyCall asks for the hourly shape (and the peak and off-peak means)
// of a hub-zone, or of a market's main hub, in a year or months of it.
func hourlyCall(f Filters, year int) Call {
	hub := f.HubZone
	if hub == "" && f.Market != "" {
		hub = entity.MainHub[f.Market]
	}
	a := tools.HourlyPriceArgs{Market: f.Market, HubZone: hub, Year: year, Vendor: f.Vendor, AsOf: f.AsOf, Month: f.Month}
	switch {
	case len(f.Months) == 1:
		a.Month = f.Months[0] // the specification's argument for one month
	case len(f.Months) > 1:
		a.Month, a.Months = 0, f.Months
	}
	return call("get_hourly_price_distribution", a)
}

func priceClarify(req string, f Filters) string {
	if f.Market == "" && f.HubZone == "" && len(f.HubZones) == 0 && len(f.Markets) == 0 && !hasCue(req, "list_curves") && !hasCue(req, "curve_files") {
		return pack.Vocabulary.Texts.PriceClarify
	}
	return ""
}

// withDomainText gives each built-in domain its description, examples, boosts and fallback
// filters, from pack/words.json (pack.Vocabulary.Domains); a domain the file leaves out has none.
func withDomainText(ds []Domain) []Domain {
	for i := range ds {
		t := pack.Vocabulary.Domains[ds[i].Name]
		ds[i].Description, ds[i].Examples = t.Description, slices.Clone(t.Examples)
		ds[i].Boosts, ds[i].Fallback = slices.Clone(t.Boosts), slices.Clone(t.Fallback)
	}
	return ds
}

// BuiltinDomains are the specification's four domains. Their descriptions, examples and
// clarifying question are data, in pack/words.json.
func BuiltinDomains() []Domain {
	return withDomainText([]Domain{
		{
			Name: tools.DayAheadAgent, Intent: "dayahead_curve", Group: "prices", Prompt: dayAheadPrompt,
			SQLViews: []string{"mc_dayahead", "mc_vendor_files"},
			Clarify:  priceClarify,
			Plan: func(req string, f Filters) []Call {
				switch {
				case len(f.Vendors) >= 2 || hasCue(req, "compare"):
					return []Call{call("compare_vendors", tools.CompareVendorsArgs{Market: f.Market, HubZone: f.HubZone, Year: f.Year, Vendors: f.Vendors, Months: f.Months})}
				case hasCue(req, "list_curves") || hasCue(req, "curve_files") && f.AsOf == "":
					return []Call{call("list_available_curves", tools.ListCurvesArgs{Vendor: f.Vendor, Market: f.Market, HubZone: f.HubZone})}
				case has(req, hourWords...):
					return []Call{hourlyCall(f, f.Year)}
				case f.HubZone == "" || f.Year == 0:
					// The document's instruction 2: a missing filter shows the options.
					return []Call{call("list_available_curves", tools.ListCurvesArgs{Vendor: f.Vendor, Market: f.Market, HubZone: f.HubZone})}
				}
				// No vendor named: every vendor's files, each with its own figure.
				return []Call{call("get_average_annual_price", tools.AveragePriceArgs{Vendor: f.Vendor, Market: f.Market, HubZone: f.HubZone, Year: f.Year, AsOf: f.AsOf, Months: f.Months})}
			},
		},
		{
			Name: tools.PriceCurveAgent, Intent: "price_curve_intelligence", Group: "prices", Prompt: priceCurvePrompt,
			Clarify: priceClarify,
			Plan: func(req string, f Filters) []Call {
				year := yearOr(f.Year)
				if len(f.Markets) >= 2 && len(f.HubZones) < 2 {
					return []Call{compareMarkets(f)}
				}
				if len(f.HubZones) >= 2 {
					return []Call{call("compare_hub_zones", tools.CompareHubZonesArgs{HubZones: f.HubZones[:2], Year: year, Vendor: f.Vendor, Months: f.Months})}
				}
				return []Call{hourlyCall(f, year)}
			},
		},
		{
			Name: tools.PBIMetricsAgent, Intent: "pbi_metrics", Prompt: pbiPrompt,
			SQLViews: []string{"pbi_activity_events"},
			Plan: func(req string, f Filters) []Call {
				dr := tools.DateRangeArgs{Start: f.DateRangeStart, End: f.DateRangeEnd}
				switch {
				case hasCue(req, "trend"):
					period := ""
					if hasCue(req, "weekly") && !hasCue(req, "last_week") {
						period = "week"
					}
					return []Call{call("get_report_usage_trend", tools.UsageTrendArgs{ReportName: f.ReportName, Start: f.DateRangeStart, End: f.DateRangeEnd, Period: period})}
				case f.ReportName == "" && has(req, byViewersWords...):
					// "Which reports had the most unique viewers?"
					return []Call{call("get_top_reports_by_views", tools.TopReportsArgs{DateRangeArgs: dr, TopN: f.TopN, SortBy: "viewers"})}
				case has(req, viewerWords...):
					// "who" and "how many people": the distinct viewers, beside the views
					return []Call{call("get_top_users", tools.TopUsersArgs{DateRangeArgs: dr, TopN: f.TopN, ReportName: f.ReportName})}
				case f.ReportName != "":
					// "How many views did the Budget Tracker get in January?"
					return []Call{call("get_report_usage_trend", tools.UsageTrendArgs{ReportName: f.ReportName, Start: f.DateRangeStart, End: f.DateRangeEnd})}
				}
				return []Call{call("get_top_reports_by_views", tools.TopReportsArgs{DateRangeArgs: dr, TopN: f.TopN})}
			},
		},
		{
			Name: tools.PERAgent, Intent: "project_execution", Prompt: perPrompt, SQLDefault: true,
			Plan: func(req string, f Filters) []Call {
				p := f.ProjectName
				switch {
				case hasCue(req, "changed"):
					ca := tools.RecentChangesArgs{ProjectName: p, FieldChanged: f.FieldChanged, Milestones: milestonesNamed(strings.ToLower(req)), SinceDate: f.DateRangeStart}
					if f.DateRangeStart != "" {
						ca.UntilDate = f.DateRangeEnd // a month or range named: not the changes after it
					}
					return []Call{call("get_recent_changes", ca)}
				case p == "":
					if f.RiskLevel != "" || hasCue(req, "risk") && !hasCue(req, "at_risk") {
						return []Call{call("get_task_risks", tools.TaskRisksArgs{RiskLevel: f.RiskLevel})}
					}
					return []Call{call("get_portfolio_summary", tools.PortfolioArgs{Technology: f.Technology, Market: f.Market, Stage: f.ProjectStage, StatusColor: f.StatusColor,
						Sponsor: f.Sponsor, Buyer: f.Buyer, Milestones: f.Milestones})}
				case f.RiskLevel != "":
					return []Call{call("get_task_risks", tools.TaskRisksArgs{ProjectName: p, RiskLevel: f.RiskLevel})}
				case has(req, offtakeWords...) || hasCue(req, "offtake_terms"):
					return []Call{call("get_project_overview", tools.ProjectArgs{ProjectName: p})}
				case hasCue(req, "health"):
					return []Call{call("get_project_health", tools.ProjectArgs{ProjectName: p})}
				case hasCue(req, "milestone_asked"):
					return []Call{call("get_milestone_dates", tools.ProjectArgs{ProjectName: p})}
				case hasCue(req, "budget"):
					return []Call{call("get_budget_overview", tools.ProjectArgs{ProjectName: p})}
				case hasCue(req, "task"):
					return []Call{call("get_task_risks", tools.TaskRisksArgs{ProjectName: p})}
				}
				return []Call{call("get_project_overview", tools.ProjectArgs{ProjectName: p})}
			},
		},
	})
}
