package vesper

import (
	"github.com/trellis-go/trellis/apps/vesper/store"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/vesper/rbac"
	"github.com/trellis-go/trellis/apps/vesper/sqlguard"
	"github.com/trellis-go/trellis/apps/vesper/synth"
	"github.com/trellis-go/trellis/apps/vesper/warehouse"
	"github.com/trellis-go/trellis/apps/vesper/warehousetest"
	"github.com/trellis-go/trellis/server"
)

// Two tenants' tokens, and a viewer of the first.
var tenantTokens = map[string]server.Principal{
	"vesper-admin":    {Tenant: "vesper", User: "ana", Permissions: rbac.PermissionsOf(rbac.Admin)},
	"northwind-admin": {Tenant: "northwind", User: "nils", Permissions: rbac.PermissionsOf(rbac.Admin)},
	"vesper-viewer":   {Tenant: "vesper", User: "vic", Permissions: rbac.PermissionsOf(rbac.Viewer)},
}

// serveOn starts the chat over w with both tenants' menus.
func serveOn(t *testing.T, w *warehouse.Warehouse) (*httptest.Server, *store.Records) {
	t.Helper()
	return serve(t, w, tenantTokens, 0)
}

// One tenant never sees another's usage events over the WebSocket, on
// SQLite and on Postgres: two connections with the two tenants' tokens ask
// the same questions; each answer (and what was streamed) holds only the
// asking tenant's users and counts. A viewer is refused usage metrics with
// the reason and no data.
func TestTenantIsolationOverWebSocket(t *testing.T) {
	backends := []struct {
		name string
		open func(t *testing.T) *warehouse.Warehouse
	}{
		{"sqlite", func(t *testing.T) *warehouse.Warehouse { return warehousetest.SQLite(t) }},
		{"postgres", func(t *testing.T) *warehouse.Warehouse { return warehousetest.Postgres(t, warehouse.Config{}) }},
	}
	// The SQL guard compiles its parser on first use: seconds, or a minute
	// under the race detector on a busy machine; not part of a turn.
	sqlguard.Warm()
	users := map[string]map[string]bool{}
	events := map[string]int64{}
	for _, e := range warehousetest.Data().Events {
		if users[e.Tenant] == nil {
			users[e.Tenant] = map[string]bool{}
		}
		users[e.Tenant][e.UserEmail] = true
		events[e.Tenant]++
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			srv, _ := serveOn(t, b.open(t))
			conns := map[string]string{"vesper": "vesper-admin", "northwind": "northwind-admin"}
			for me, token := range conns {
				other := "northwind"
				if me == other {
					other = "vesper"
				}
				c := dial(t, srv, token)
				_, streamed, done := exchange(t, c, msg("Who are the top 10 Power BI users last month?"))
				if done.Type != "chat.complete" || done.Intent != "pbi_metrics" {
					t.Fatalf("%s: %s %s %s", me, done.Type, done.Intent, done.Message)
				}
				own := 0
				for u := range users[me] {
					if strings.Contains(done.Content, u) {
						own++
					}
				}
				if own == 0 {
					t.Errorf("%s sees none of its users:\n%s", me, done.Content)
				}
				for u := range users[other] {
					if !users[me][u] && (strings.Contains(done.Content, u) || strings.Contains(streamed, u)) {
						t.Errorf("%s sees %s's user %s:\n%s", me, other, u, done.Content)
					}
				}
				_, _, done = exchange(t, c, msg("Run this SQL: SELECT COUNT(*) AS events FROM pbi_activity_events"))
				if !strings.Contains(done.Content, synth.Int(events[me])) || strings.Contains(done.Content, synth.Int(events[other])) {
					t.Errorf("%s counts events as:\n%s\nwant %d (not %d)", me, done.Content, events[me], events[other])
				}
			}
			c := dial(t, srv, "vesper-viewer")
			_, _, done := exchange(t, c, msg("Who are the top 10 Power BI users last month?"))
			if !strings.Contains(done.Content, "You don't have access") || !strings.Contains(done.Content, "chat:read_pbi_metrics") {
				t.Errorf("the viewer's refusal:\n%s", done.Content)
			}
			for u := range users["vesper"] {
				if strings.Contains(done.Content, u) {
					t.Errorf("the viewer's refusal shows the user %s", u)
				}
			}
			if len(done.Links) != 0 {
				t.Errorf("a refusal links reports: %+v", done.Links)
			}
		})
	}
}
