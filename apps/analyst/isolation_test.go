package analyst_test

import (
	"strings"
	"testing"

	"github.com/trellis-go/trellis/appdb/appdbtest"
	"github.com/trellis-go/trellis/apps/analyst"
	"github.com/trellis-go/trellis/server"
)

// Two users of one tenant, authenticated by API keys, on SQLite and on Postgres: neither sees
// the other's memory or reports.
func TestUsersAreIsolated(t *testing.T) {
	t.Parallel()
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			t.Parallel()
			o := serveOpts{keys: map[string]server.Principal{
				"key-alice-0123456789": {User: "alice", Tenant: "acme"},
				"key-bob-0123456789ab": {User: "bob", Tenant: "acme"},
				"key-carol-0123456789": {User: "carol", Tenant: "globex"},
			}}
			if db == "postgres" {
				o.databaseURL = appdbtest.PostgresURL(t)
			}
			hs := served(t, analyst.Options{}, o)
			a := newSession(t, hs, "key-alice-0123456789")
			a.ask(voltraQuestion, map[string]any{"user_id": "bob", // ignored: the key says alice
				"profile": map[string]any{"name": "Alice Marsh", "project": "Northstar", "citation": "footnotes"}})
			a.resume("accept", nil)
			a.resume("accept", nil)
			a.resume("accept", nil)
			id, _ := a.values["report_id"].(string)
			if id == "" || a.values["user_id"] != "alice" {
				t.Fatalf("alice's session: %v %v", id, a.values["user_id"])
			}
			b := newSession(t, hs, "key-bob-0123456789ab")
			b.ask("hello", map[string]any{"profile": map[string]any{"name": "Bob Stone"}})
			if g := b.lastMessage(); !strings.Contains(g, "Hello Bob!") || strings.Contains(g, "Alice") || strings.Contains(g, "Northstar") || strings.Contains(g, "Last time") {
				t.Fatalf("bob's greeting shows alice's memory: %q", g)
			}
			mem := call(t, "key-bob-0123456789ab", "GET", hs.URL+"/apps/analyst/api/v1/memory", nil)
			if s := strings.ToLower(toJSONString(mem)); strings.Contains(s, "alice") || strings.Contains(s, "footnotes") || !strings.Contains(s, "bob stone") {
				t.Fatalf("bob's memory: %s", s)
			}
			// ?user_id= is no parameter of the routes: bob sees his reports only.
			if code, raw := request(t, "key-bob-0123456789ab", "GET", hs.URL+"/apps/analyst/api/v1/reports?user_id=alice", nil); code != 200 || strings.TrimSpace(string(raw)) != "[]" {
				t.Fatalf("bob's list: %d %s", code, raw)
			}
			if code, _ := request(t, "key-bob-0123456789ab", "GET", hs.URL+"/apps/analyst/api/v1/reports/"+id+"?user_id=alice", nil); code != 404 {
				t.Fatalf("bob reads alice's report: %d", code)
			}
			if code, raw := request(t, "key-alice-0123456789", "GET", hs.URL+"/apps/analyst/api/v1/reports/"+id, nil); code != 200 || !strings.Contains(string(raw), "Alice Marsh") {
				t.Fatalf("alice reads her report: %d %.200s", code, raw)
			}
			// Another tenant's search does not find acme's report.
			if _, raw := request(t, "key-carol-0123456789", "GET", hs.URL+"/apps/analyst/api/v1/search?document_type=report&q=Voltra", nil); strings.Contains(string(raw), id) {
				t.Fatalf("globex finds acme's report: %s", raw)
			}
			if code, _ := request(t, "", "GET", hs.URL+"/apps/analyst/api/v1/reports", nil); code != 401 {
				t.Fatalf("no credentials: %d", code)
			}
		})
	}
}
