// Package rbac holds the chatbot's permission matrix and checks it before a
// tool runs. A denial is an error the user can read: it names the tool, the
// permission it needs and the role that has it, and is never a silent skip.
//
//	if err := rbac.Check(principal, "get_budget_overview"); err != nil {
//		// *DeniedError; err.Error() is the sentence to show
//	}
package rbac

import (
	"errors"
	"fmt"
	"slices"
)

// The chat permissions of the specification.
const (
	ReadMarketData = "chat:read_market_data"
	ReadPBIMetrics = "chat:read_pbi_metrics"
	ReadProjects   = "chat:read_projects"
	ReadBudget     = "chat:read_budget"
	AdvancedSQL    = "chat:advanced_sql"
)

// Role is a default role; each role holds the permissions of the roles
// below it.
type Role string

const (
	Viewer  Role = "viewer"
	Analyst Role = "analyst"
	Manager Role = "manager"
	Admin   Role = "admin"
)

// Roles are the default roles, lowest first.
var Roles = []Role{Viewer, Analyst, Manager, Admin}

// Rule is one row of the permission matrix.
type Rule struct {
	Category   string // what the user is asking about
	Permission string
	MinRole    Role // the lowest default role that holds it
	Tools      []string
}

// Matrix is the specification's permission matrix for the chat tools.
var Matrix = []Rule{
	{"DayAhead price queries", ReadMarketData, Analyst,
		[]string{"get_average_annual_price", "list_available_curves", "compare_vendors"}},
	{"Price curve comparison", ReadMarketData, Analyst,
		[]string{"get_hourly_price_distribution", "compare_hub_zones"}},
	{"PBI usage metrics", ReadPBIMetrics, Manager,
		[]string{"get_top_reports_by_views", "get_top_users", "get_report_usage_trend"}},
	{"PER project overview", ReadProjects, Viewer,
		[]string{"get_project_overview", "get_project_health", "get_milestone_dates", "get_task_risks", "get_recent_changes"}},
	{"PER budget data", ReadBudget, Manager,
		[]string{"get_budget_overview"}},
	{"PER portfolio summary", ReadProjects, Viewer,
		[]string{"get_portfolio_summary"}},
	{"Advanced SQL (escape hatch)", AdvancedSQL, Admin,
		[]string{"general_sql_query"}},
}

// RuleFor returns the matrix row that governs a tool.
func RuleFor(tool string) (Rule, bool) {
	for _, r := range Matrix {
		if slices.Contains(r.Tools, tool) {
			return r, true
		}
	}
	return Rule{}, false
}

// PermissionsOf returns the permissions a default role holds.
func PermissionsOf(role Role) []string {
	rank := slices.Index(Roles, role)
	if rank < 0 {
		return nil
	}
	var out []string
	for _, r := range Matrix {
		if slices.Index(Roles, r.MinRole) <= rank && !slices.Contains(out, r.Permission) {
			out = append(out, r.Permission)
		}
	}
	return out
}

// Principal is who is asking: the tenant, the user, and what they hold.
// The permission "*" holds everything.
type Principal struct {
	Tenant      string
	User        string
	Permissions []string
}

// Has reports whether p holds the permission.
func (p Principal) Has(perm string) bool {
	return slices.Contains(p.Permissions, perm) || slices.Contains(p.Permissions, "*")
}

var (
	// ErrDenied is wrapped by every *DeniedError.
	ErrDenied = errors.New("rbac: permission denied")
	// ErrUnknownTool is returned for a tool the matrix does not list: a
	// tool nobody granted is denied, not allowed by default.
	ErrUnknownTool = errors.New("rbac: tool is not in the permission matrix")
)

// DeniedError says which permission a tool needed and who has it.
type DeniedError struct {
	Tool       string
	Permission string
	Category   string
	MinRole    Role
}

func (e *DeniedError) Error() string {
	return fmt.Sprintf("You don't have access to %s (tool %s): it needs the permission %s, which the %s role and above have. Ask your administrator for access.",
		lowerFirst(e.Category), e.Tool, e.Permission, e.MinRole)
}

func (e *DeniedError) Unwrap() error { return ErrDenied }

// UserMessage is the refusal in a person's words, without the tool's name.
func (e *DeniedError) UserMessage() string {
	return fmt.Sprintf("You don't have access to %s: it needs the permission %s, which the %s role and above have. Ask your administrator for access.",
		lowerFirst(e.Category), e.Permission, e.MinRole)
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	if s[0] >= 'A' && s[0] <= 'Z' && (len(s) < 2 || s[1] < 'A' || s[1] > 'Z') {
		return string(s[0]+32) + s[1:]
	}
	return s
}

// Check returns nil when p may run the tool, a *DeniedError when not, and
// an error wrapping ErrUnknownTool for a tool outside the matrix.
func Check(p Principal, tool string) error {
	r, ok := RuleFor(tool)
	if !ok {
		return fmt.Errorf("%w: %q; add it to rbac.Matrix with the permission it needs", ErrUnknownTool, tool)
	}
	if p.Has(r.Permission) {
		return nil
	}
	return &DeniedError{Tool: tool, Permission: r.Permission, Category: r.Category, MinRole: r.MinRole}
}
