package realty_test

import (
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/trellis-go/trellis/apps/realty"
	"github.com/trellis-go/trellis/server"
)

// Two tenants share the server: neither sees the other's sessions, history or saved criteria,
// and a request without credentials is refused.
func TestTenantsAreIsolated(t *testing.T) {
	t.Parallel()
	const acmeKey, globexKey = "acme-key-0123456789abcdef", "globex-key-0123456789abcdef"
	s, err := server.New(server.Config{Apps: []server.App{realty.App()}, DataDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler),
		Auth: server.AuthConfig{APIKeys: map[string]server.Principal{
			acmeKey:   {User: "ann", Tenant: "acme", Permissions: []string{"*"}},
			globexKey: {User: "gus", Tenant: "globex", Permissions: []string{"*"}},
		}}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	defer func() { hs.Close(); s.Close() }()
	base := hs.URL + "/apps/realty"
	call := func(key, method, path, body string, out any) int {
		t.Helper()
		return request(t, key, method, base+path, body, out, false)
	}
	if code := call("", "GET", "/sessions", "", nil); code != 401 {
		t.Errorf("no credentials: %d", code)
	}
	var r realty.ChatResponse
	if code := call(acmeKey, "POST", "/chat", `{"message": "Save my search criteria: I want to live in Denver, at least 3 bedrooms"}`, &r); code != 200 {
		t.Fatalf("acme: %d", code)
	}
	var ids []string
	call(acmeKey, "GET", "/sessions", "", &ids)
	if len(ids) != 1 {
		t.Errorf("acme's sessions %v", ids)
	}
	ids = nil
	call(globexKey, "GET", "/sessions", "", &ids)
	if len(ids) != 0 {
		t.Errorf("globex sees %v", ids)
	}
	if code := call(globexKey, "GET", "/sessions/"+r.SessionID, "", nil); code != 404 {
		t.Errorf("globex reading acme's session: %d", code)
	}
	if code := call(globexKey, "POST", "/chat", `{"session_id": "`+r.SessionID+`", "message": "hello"}`, nil); code == 200 {
		t.Errorf("globex wrote into acme's session")
	}
	ids = nil
	call(globexKey, "GET", "/sessions", "", &ids)
	if len(ids) != 0 {
		t.Errorf("globex's refused turn left a session: %v", ids)
	}
	var g realty.ChatResponse
	if code := call(globexKey, "POST", "/chat", `{"message": "Find me homes for sale"}`, &g); code != 200 {
		t.Fatalf("globex: %d", code)
	}
	if g.Data != nil && len(g.Data.Items) > 0 {
		t.Errorf("globex's search used acme's criteria: %+v", g.Data.Items[0])
	}
}
