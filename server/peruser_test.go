package server

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
)

// The per-user matrix: with AuthConfig.PerUser, every route that names or lists a record of
// one user of a tenant answers another user of that tenant as if the record did not exist,
// for API-key principals (key=user@tenant) as for token principals, on SQLite and Postgres;
// and the owner's records are unchanged by the other's attempts.

const (
	annKey = "peruser-ann-key-0123456789"
	bobKey = "peruser-bob-key-0123456789"
	svcKey = "peruser-svc-key-0123456789"
)

func perUserCfg(pg bool, t *testing.T) Config {
	cfg := authCfg()
	cfg.Auth.PerUser = true
	cfg.Auth.APIKeys = map[string]Principal{
		annKey: {User: "ann", Tenant: "acme"},
		bobKey: {User: "bob", Tenant: "acme"},
		svcKey: {User: "svc", Tenant: "acme", Permissions: []string{PermTenantWide}},
	}
	if pg {
		cfg.DatabaseURL = pgURL(t)
	}
	return cfg
}

func TestPerUserMatrixKeysSQLite(t *testing.T) {
	t.Parallel()
	perUserMatrix(t, perUserCfg(false, t), annKey, bobKey)
}

func TestPerUserMatrixKeysPostgres(t *testing.T) {
	t.Parallel()
	perUserMatrix(t, perUserCfg(true, t), annKey, bobKey)
}

func TestPerUserMatrixTokensSQLite(t *testing.T) {
	t.Parallel()
	perUserMatrix(t, perUserCfg(false, t), token(map[string]any{"sub": "ann"}), token(map[string]any{"sub": "bob"}))
}

func TestPerUserMatrixTokensPostgres(t *testing.T) {
	t.Parallel()
	perUserMatrix(t, perUserCfg(true, t), token(map[string]any{"sub": "ann"}), token(map[string]any{"sub": "bob"}))
}

// TestPerUserKeyPrincipal: under PerUser an API key acts for its user, a tenant-wide key for
// the whole tenant; without PerUser a key is tenant-wide as before.
func TestPerUserKeyPrincipal(t *testing.T) {
	t.Parallel()
	a := perUserCfg(false, t).Auth
	a.prepare()
	for key, want := range map[string]bool{annKey: true, svcKey: false} {
		req := httptest.NewRequest("GET", "/threads/search", nil)
		req.Header.Set("X-Api-Key", key)
		p, err := a.authenticate(req)
		if err != nil || p.PerUser != want {
			t.Errorf("key of %s: principal %+v, %v; want PerUser %v", p.User, p, err, want)
		}
	}
	a.PerUser = false
	req := httptest.NewRequest("GET", "/threads/search", nil)
	req.Header.Set("Authorization", "Bearer "+annKey)
	if p, _ := a.authenticate(req); p.PerUser {
		t.Error("a key is per-user without AuthConfig.PerUser")
	}
}

func perUserMatrix(t *testing.T, cfg Config, ann, bob string) {
	b := setup(t, setupOpts{cfg: cfg})

	// Ann's records: a thread paused at flow's interrupt (a run, checkpoints), a cron on it, a
	// stateless cron, a store item.
	b.token = ann
	tid := b.newThread(map[string]any{"topic": "ann's"})
	var run Run
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "t"}}, &run, 200)
	b.mustDo("GET", "/threads/"+tid+"/runs/"+run.RunID+"/join", nil, nil, 200)
	var state struct {
		Values     flowState      `json:"values"`
		Checkpoint map[string]any `json:"checkpoint"`
	}
	b.mustDo("GET", "/threads/"+tid+"/state", nil, &state, 200)
	cid, _ := state.Checkpoint["checkpoint_id"].(string)
	if cid == "" || len(state.Values.Steps) != 1 {
		t.Fatalf("ann's state %+v", state)
	}
	var cron, scron Cron
	b.mustDo("POST", "/threads/"+tid+"/runs/crons", map[string]any{"assistant_id": "flow", "schedule": "0 0 1 1 *"}, &cron, 200)
	b.mustDo("POST", "/runs/crons", map[string]any{"assistant_id": "flow", "schedule": "0 0 1 1 *"}, &scron, 200)
	b.mustDo("PUT", "/store/items", map[string]any{"namespace": []string{"notes"}, "key": "k", "value": map[string]any{"v": "ann"}}, nil, 204)

	// Bob, route by route.
	b.token = bob
	th := "/threads/" + tid
	rn := th + "/runs/" + run.RunID
	notFound := []struct {
		method, path string
		body         any
	}{
		{"GET", th, nil},
		{"PATCH", th, map[string]any{"metadata": map[string]any{"x": 1}}},
		{"POST", th + "/copy", nil},
		{"GET", th + "/state", nil},
		{"GET", th + "/state/" + cid, nil},
		{"POST", th + "/state/checkpoint", map[string]any{"checkpoint": map[string]any{"checkpoint_id": cid}}},
		{"POST", th + "/state", map[string]any{"values": map[string]any{"topic": "bob's"}}},
		{"PATCH", th + "/state", map[string]any{"metadata": map[string]any{"x": 1}}},
		{"GET", th + "/history", nil},
		{"POST", th + "/history", map[string]any{}},
		{"GET", th + "/stream", nil},
		{"GET", th + "/runs", nil},
		{"POST", th + "/runs", map[string]any{"assistant_id": "flow", "command": map[string]any{"resume": "bob"}}},
		{"POST", th + "/runs/wait", map[string]any{"assistant_id": "flow", "command": map[string]any{"resume": "bob"}}},
		{"POST", th + "/runs/stream", map[string]any{"assistant_id": "flow", "command": map[string]any{"resume": "bob"}}},
		{"GET", rn, nil},
		{"GET", rn + "/join", nil},
		{"GET", rn + "/stream", nil},
		{"POST", rn + "/cancel", nil},
		{"GET", "/runs/" + run.RunID, nil},
		{"GET", "/runs/" + run.RunID + "/stream", nil},
		{"POST", "/runs/cancel", map[string]any{"thread_id": tid, "run_ids": []string{run.RunID}}},
		{"POST", th + "/runs/crons", map[string]any{"assistant_id": "flow", "schedule": "0 0 1 1 *"}},
		{"PATCH", "/runs/crons/" + cron.CronID, map[string]any{"enabled": false}},
		{"PATCH", "/runs/crons/" + scron.CronID, map[string]any{"enabled": false}},
		{"DELETE", "/runs/crons/" + cron.CronID, nil},
		{"DELETE", "/runs/crons/" + scron.CronID, nil},
		{"DELETE", rn, nil},
		{"DELETE", th, nil},
	}
	for _, c := range notFound {
		var raw json.RawMessage
		if code := b.do(c.method, c.path, c.body, &raw); code != 404 {
			t.Errorf("bob %s %s: %d %s, want 404", c.method, c.path, code, raw)
		}
	}
	// Lists and counts leave ann's records out.
	for _, c := range []struct{ path, want string }{
		{"/threads/search", "[]"},
		{"/threads/count", "0"},
		{"/runs/crons/search", "[]"},
		{"/runs/crons/count", "0"},
		{"/store/items/search", `{"items":[]}`},
		{"/store/namespaces", `{"namespaces":[]}`},
	} {
		var raw json.RawMessage
		b.mustDo("POST", c.path, map[string]any{}, &raw, 200)
		if got := strings.Join(strings.Fields(string(raw)), ""); got != c.want {
			t.Errorf("bob POST %s: %s, want %s", c.path, got, c.want)
		}
	}
	var pruned map[string]int
	b.mustDo("POST", "/threads/prune", map[string]any{"thread_ids": []string{tid}}, &pruned, 200)
	if pruned["pruned_count"] != 0 {
		t.Errorf("bob prunes ann's thread: %v", pruned)
	}
	var item json.RawMessage
	b.do("GET", "/store/items?namespace=notes&key=k", nil, &item)
	if strings.Contains(string(item), "ann") {
		t.Errorf("bob reads ann's item: %s", item)
	}
	b.do("DELETE", "/store/items", map[string]any{"namespace": []string{"notes"}, "key": "k"}, nil)
	// Bob's own thread is his, and ann cannot see it either.
	btid := b.newThread(nil)

	// Ann's records are as she left them.
	b.token = ann
	var after struct {
		Values flowState `json:"values"`
	}
	b.mustDo("GET", th+"/state", nil, &after, 200)
	if fmt.Sprint(after.Values.Steps) != fmt.Sprint(state.Values.Steps) || after.Values.Topic != "t" {
		t.Errorf("ann's state after bob: %+v", after.Values)
	}
	var got Run
	b.mustDo("GET", rn, nil, &got, 200)
	var n int
	b.mustDo("POST", "/runs/crons/count", map[string]any{}, &n, 200)
	if n != 2 {
		t.Errorf("ann has %d crons, want 2", n)
	}
	var own struct {
		Value map[string]any `json:"value"`
	}
	b.mustDo("GET", "/store/items?namespace=notes&key=k", nil, &own, 200)
	if own.Value["v"] != "ann" {
		t.Errorf("ann's item after bob: %+v", own)
	}
	if code := b.do("GET", "/threads/"+btid, nil, nil); code != 404 {
		t.Errorf("ann reads bob's thread: %d", code)
	}
	// She resumes her own run.
	var out map[string]any
	b.mustDo("POST", th+"/runs/wait", map[string]any{"assistant_id": "flow", "command": map[string]any{"resume": "yes"}}, &out, 200)
	if steps, _ := out["steps"].([]any); len(steps) != 3 {
		t.Errorf("ann's resumed run: %v", out)
	}

	// A tenant-wide service key sees both users' threads.
	b.token = svcKey
	var all []Thread
	b.mustDo("POST", "/threads/search", map[string]any{}, &all, 200)
	if len(all) != 2 {
		t.Errorf("the tenant-wide key sees %d threads, want 2", len(all))
	}
}
