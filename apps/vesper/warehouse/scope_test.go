package warehouse_test

import (
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/vesper/warehouse"
)

func TestScopeSQLite(t *testing.T) {
	for _, tc := range []struct{ in, prefix, suffix string }{
		{"SELECT name FROM per_project WHERE gid = $1", "WITH pbi_activity_events AS (SELECT * FROM base_pbi_activity_events WHERE tenant_id = $2), per_project AS", " SELECT name FROM per_project WHERE gid = $1"},
		{"  with x AS (SELECT 1) SELECT * FROM x", "WITH pbi_activity_events AS", "tenant_id = $2), x AS (SELECT 1) SELECT * FROM x"},
		{"WITH RECURSIVE n(i) AS (SELECT 1) SELECT i FROM n", "WITH RECURSIVE pbi_activity_events AS", " n(i) AS (SELECT 1) SELECT i FROM n"},
		{"VALUES (1)", "WITH pbi_activity_events AS", " SELECT * FROM (VALUES (1))"},
		{"WITHIN", "WITH pbi_activity_events AS", " SELECT * FROM (WITHIN)"},
	} {
		got, args := warehouse.ScopeSQLite(tc.in, []any{"g1"}, "acme")
		if !strings.HasPrefix(got, tc.prefix) || !strings.HasSuffix(got, tc.suffix) {
			t.Errorf("%q:\n got %s", tc.in, got)
		}
		if len(args) != 2 || args[1] != "acme" {
			t.Errorf("%q: args %v", tc.in, args)
		}
		for _, v := range warehouse.Views {
			if v.Tenant != strings.Contains(got, v.Name+" AS (SELECT * FROM "+v.BaseTable()+" WHERE tenant_id = $2)") {
				t.Errorf("%q: scoping of %s wrong in %s", tc.in, v.Name, got)
			}
		}
	}
}
