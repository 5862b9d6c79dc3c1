package vesper

import (
	"context"
	"github.com/trellis-go/trellis/appdb/appdbtest"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/vesper/rbac"
	"github.com/trellis-go/trellis/apps/vesper/reports"
	"github.com/trellis-go/trellis/apps/vesper/synth"
	"github.com/trellis-go/trellis/apps/vesper/tools"
	"github.com/trellis-go/trellis/apps/vesper/warehouse"
	"github.com/trellis-go/trellis/apps/vesper/warehousetest"
)

// onBoth runs f against the app over the shared SQLite warehouse and over a
// Postgres warehouse of its own (skipped, saying so, without Postgres).
func onBoth(t *testing.T, f func(t *testing.T, a *assistant)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		f(t, setupOn(t, warehousetest.SQLite(t), assistantConfig{}))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		f(t, setupOn(t, warehousetest.Postgres(t, warehouse.Config{}), assistantConfig{}))
	})
}

// setupOn builds the app over w with both demonstration tenants' menus.
func setupOn(t *testing.T, w *warehouse.Warehouse, cfg assistantConfig) *assistant {
	t.Helper()
	ctx := context.Background()
	menu, err := reports.NewMenu(ctx, appdbtest.SQLite(t, "vesper"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tenant := range []string{"vesper", "northwind"} {
		for _, it := range reports.DefaultItems(tenant) {
			if err := menu.Put(ctx, it); err != nil {
				t.Fatal(err)
			}
		}
	}
	cfg.Toolkit = tools.New(w, &tools.Options{Now: now})
	cfg.Linker = &reports.Linker{Menu: menu}
	cfg.Now = now
	a, err := newAssistant(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// usage is what each tenant's usage events hold: users and reports that
// belong to that tenant only, and the number of events.
type usage struct {
	users, reports map[string]bool
	events         int
}

func tenantUsage() map[string]*usage {
	out := map[string]*usage{}
	for _, e := range warehousetest.Data().Events {
		u := out[e.Tenant]
		if u == nil {
			u = &usage{users: map[string]bool{}, reports: map[string]bool{}}
			out[e.Tenant] = u
		}
		u.users[e.UserEmail] = true
		u.reports[e.ReportName] = true
		u.events++
	}
	return out
}

// onlyOf returns the keys of mine that are not in other's.
func onlyOf(mine, other map[string]bool) []string {
	var out []string
	for k := range mine {
		if !other[k] {
			out = append(out, k)
		}
	}
	return out
}

// checkIsolated asserts that answer shows some of the tenant's own names and
// none of those only the other tenant has.
func checkIsolated(t *testing.T, answer string, own, foreign []string) {
	t.Helper()
	// The deep links name menu items (the tenant's own configuration), not data.
	answer, _, _ = strings.Cut(answer, "**Related Reports**")
	if len(own) == 0 || len(foreign) == 0 {
		t.Fatalf("the data set gives nothing to tell the tenants apart (%d own, %d foreign names)", len(own), len(foreign))
	}
	shown := 0
	for _, n := range own {
		if strings.Contains(answer, n) {
			shown++
		}
	}
	if shown == 0 {
		t.Errorf("the answer shows none of the tenant's own names %v:\n%s", own, answer)
	}
	for _, n := range foreign {
		if strings.Contains(answer, n) {
			t.Errorf("the answer shows %q, which only the other tenant has:\n%s", n, answer)
		}
	}
}

// One tenant never sees another's usage events through the graph: top
// users, top reports and a hand-written query, on both databases.
func TestTenantIsolationThroughTheGraph(t *testing.T) {
	t.Parallel()
	u := tenantUsage()
	pairs := [][2]string{{"vesper", "northwind"}, {"northwind", "vesper"}}
	onBoth(t, func(t *testing.T, a *assistant) {
		for _, p := range pairs {
			me, other := p[0], p[1]
			ctx := caller(me)
			st := ask(t, a, ctx, "Who are the top 10 Power BI users this year?")
			checkIsolated(t, st.Answer, onlyOf(u[me].users, nil), onlyOf(u[other].users, u[me].users))
			st = ask(t, a, ctx, "Which Power BI reports had the most views this year?")
			checkIsolated(t, st.Answer, onlyOf(u[me].reports, nil), onlyOf(u[other].reports, u[me].reports))
			// A query asking for every tenant's events counts the caller's only,
			// even when it names the other tenant.
			st = ask(t, a, ctx, "Run this SQL: SELECT COUNT(*) AS events FROM pbi_activity_events")
			contains(t, st.Answer, synth.Int(int64(u[me].events)))
			st = ask(t, a, ctx, "Run this SQL: SELECT COUNT(*) AS events FROM pbi_activity_events WHERE tenant_id = '"+other+"'")
			if out := a.Outcome(st); len(out.ToolCalls) != 1 || out.ToolCalls[0].Tool != "general_sql_query" || out.ToolCalls[0].Error != "" {
				t.Fatalf("tool calls %+v, want one good general_sql_query", out.ToolCalls)
			}
			if strings.Contains(st.Answer, synth.Int(int64(u[other].events))) {
				t.Errorf("%s counted %s's events:\n%s", me, other, st.Answer)
			}
		}
		// Projects too: northwind does not have Nazareth Solar.
		st := ask(t, a, caller("northwind"), "What is the health status of Nazareth Solar?")
		if strings.Contains(st.Answer, "Phase II study delayed") || strings.Contains(st.Answer, "| Interconnection |") {
			t.Errorf("northwind sees vesper's project health:\n%s", st.Answer)
		}
	})
}

// Permissions through the graph, on both databases: the escape hatch needs
// chat:advanced_sql, usage metrics chat:read_pbi_metrics; a refusal is
// explained and carries no data.
func TestPermissionsThroughTheGraph(t *testing.T) {
	t.Parallel()
	u := tenantUsage()
	onBoth(t, func(t *testing.T, a *assistant) {
		analyst := caller("vesper", rbac.PermissionsOf(rbac.Analyst)...)
		st := ask(t, a, analyst, "Run this SQL: SELECT name, status_type FROM per_project")
		out := a.Outcome(st)
		if len(out.ToolCalls) != 1 || out.ToolCalls[0].Tool != "general_sql_query" || !out.ToolCalls[0].Denied {
			t.Fatalf("tool calls %+v, want one denied general_sql_query", out.ToolCalls)
		}
		contains(t, st.Answer, "You don't have access", "chat:advanced_sql", "Ask your administrator")
		if strings.Contains(st.Answer, "Nazareth Solar") || strings.Contains(st.Answer, "off_track") {
			t.Errorf("the refusal shows project data:\n%s", st.Answer)
		}

		viewer := caller("vesper", rbac.PermissionsOf(rbac.Viewer)...)
		st = ask(t, a, viewer, "Which Power BI reports had the most views this year?")
		out = a.Outcome(st)
		if len(out.ToolCalls) != 1 || !out.ToolCalls[0].Denied {
			t.Fatalf("tool calls %+v, want one denied", out.ToolCalls)
		}
		contains(t, st.Answer, "You don't have access", "chat:read_pbi_metrics")
		for r := range u["vesper"].reports {
			if strings.Contains(st.Answer, r) {
				t.Errorf("the refusal shows the report %q:\n%s", r, st.Answer)
			}
		}
		if len(out.ReportKeys) != 0 {
			t.Errorf("a refused answer links reports %v", out.ReportKeys)
		}

		// The admin may run the same SQL and gets the rows.
		st = ask(t, a, caller("vesper", rbac.PermissionsOf(rbac.Admin)...), "Run this SQL: SELECT name, status_type FROM per_project WHERE status_type = 'off_track' ORDER BY name")
		contains(t, st.Answer, "Mojave BESS", "Nazareth Solar", "Sierra Wind")
		// A statement the guard refuses is explained, whoever asks.
		st = ask(t, a, caller("vesper", "*"), "Run this SQL: SELECT * FROM per_project; DELETE FROM per_project")
		if out := a.Outcome(st); len(out.ToolCalls) != 1 || out.ToolCalls[0].Error == "" {
			t.Fatalf("tool calls %+v, want one refused", out.ToolCalls)
		}
		contains(t, st.Answer, "one statement")
	})
}

func TestUserSQLIsRecognised(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ text, want string }{
		{"Run this SQL: SELECT COUNT(*) FROM changes", "SELECT COUNT(*) FROM changes"},
		{"select name from per_project", "select name from per_project"},
		{"query: ```sql\nWITH x AS (SELECT 1 AS n FROM changes) SELECT n FROM x\n```", "WITH x AS (SELECT 1 AS n FROM changes) SELECT n FROM x"},
		{"Select all projects from Stage 3", ""},
		{"Show me the projects with risks from last week", ""},
		{"run sql: select 1", ""},
	} {
		if got := Extract(c.text, now()).SQL; got != c.want {
			t.Errorf("%q: SQL %q, want %q", c.text, got, c.want)
		}
	}
}
