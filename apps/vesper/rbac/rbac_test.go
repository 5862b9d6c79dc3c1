package rbac_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/vesper/rbac"
)

func TestMatrix(t *testing.T) {
	for _, tc := range []struct {
		role    rbac.Role
		allowed []string
		denied  []string
	}{
		{rbac.Viewer, []string{"get_project_health", "get_portfolio_summary"}, []string{"get_budget_overview", "compare_vendors", "get_top_users", "general_sql_query"}},
		{rbac.Analyst, []string{"compare_vendors", "compare_hub_zones", "get_project_overview"}, []string{"get_budget_overview", "get_top_reports_by_views", "general_sql_query"}},
		{rbac.Manager, []string{"get_budget_overview", "get_top_users", "get_report_usage_trend", "get_average_annual_price"}, []string{"general_sql_query"}},
		{rbac.Admin, []string{"general_sql_query", "get_budget_overview"}, nil},
	} {
		p := rbac.Principal{Tenant: "t", User: "u", Permissions: rbac.PermissionsOf(tc.role)}
		for _, tool := range tc.allowed {
			if err := rbac.Check(p, tool); err != nil {
				t.Errorf("%s %s: %v", tc.role, tool, err)
			}
		}
		for _, tool := range tc.denied {
			err := rbac.Check(p, tool)
			var de *rbac.DeniedError
			if !errors.As(err, &de) || !errors.Is(err, rbac.ErrDenied) {
				t.Errorf("%s %s: err = %v, want *DeniedError", tc.role, tool, err)
				continue
			}
			if !strings.Contains(err.Error(), de.Permission) || !strings.Contains(err.Error(), "administrator") {
				t.Errorf("denial is not readable: %q", err)
			}
		}
	}
}

func TestDenialMessage(t *testing.T) {
	err := rbac.Check(rbac.Principal{Permissions: []string{rbac.ReadProjects}}, "get_budget_overview")
	want := "You don't have access to PER budget data (tool get_budget_overview): it needs the permission chat:read_budget, which the manager role and above have. Ask your administrator for access."
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

func TestUnknownToolDenied(t *testing.T) {
	err := rbac.Check(rbac.Principal{Permissions: []string{"*"}}, "drop_everything")
	if !errors.Is(err, rbac.ErrUnknownTool) {
		t.Errorf("err = %v", err)
	}
}

func TestStarAndRoles(t *testing.T) {
	if err := rbac.Check(rbac.Principal{Permissions: []string{"*"}}, "general_sql_query"); err != nil {
		t.Error(err)
	}
	if got := rbac.PermissionsOf("intern"); got != nil {
		t.Errorf("unknown role got %v", got)
	}
	if !slices.Contains(rbac.PermissionsOf(rbac.Admin), rbac.AdvancedSQL) || slices.Contains(rbac.PermissionsOf(rbac.Manager), rbac.AdvancedSQL) {
		t.Error("advanced SQL must be admin only")
	}
}
