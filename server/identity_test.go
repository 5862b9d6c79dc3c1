package server

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/tool"
)

// TestAuthDefaultTenant checks that a token without a tenant claim (a Supabase-style token: a
// sub and no tenant) is refused unless a default tenant is configured, and acts for it then.
func TestAuthDefaultTenant(t *testing.T) {
	t.Parallel()
	noTenant := token(map[string]any{"tenant": nil, "sub": "u-42"})

	b := setup(t, setupOpts{cfg: authCfg()})
	b.token = noTenant
	var body map[string]any
	if code := b.do("POST", "/threads/search", map[string]any{}, &body); code != 401 {
		t.Fatalf("no tenant claim and no default: %d %v, want 401", code, body)
	}

	cfg := authCfg()
	cfg.Auth.DefaultTenant = "acme"
	b2 := setup(t, setupOpts{cfg: cfg})
	b2.token = noTenant
	tid := b2.newThread(map[string]any{"k": "v"})
	// The thread is the default tenant's: a token naming that tenant sees it.
	b2.token = token(map[string]any{"tenant": "acme"})
	b2.mustDo("GET", "/threads/"+tid, nil, nil, 200)
	b2.token = token(map[string]any{"tenant": "globex"})
	b2.mustDo("GET", "/threads/"+tid, nil, nil, 404)
}

// TestAuthClaimNames checks configurable claim names, nested ones included.
func TestAuthClaimNames(t *testing.T) {
	t.Parallel()
	a := AuthConfig{JWTSecret: testSecret, Issuer: "https://issuer.test", Audience: "trellis-test",
		UserClaim: "email", TenantClaim: "app_metadata.org", PermissionsClaim: "roles"}
	if err := a.check(); err != nil {
		t.Fatal(err)
	}
	a.prepare()
	tok := token(map[string]any{"tenant": nil, "email": "ann@acme.test", "app_metadata": map[string]any{"org": "acme"},
		"roles": []string{"admin", "read"}, "permissions": nil})
	p, err := a.verifyJWT(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	if p.User != "ann@acme.test" || p.Tenant != "acme" || len(p.Permissions) != 2 || p.Permissions[0] != "admin" || p.PerUser {
		t.Fatalf("principal %+v", p)
	}
	// A token without the configured user claim is refused, naming the claim.
	_, err = a.verifyJWT(context.Background(), token(map[string]any{"app_metadata": map[string]any{"org": "acme"}}))
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 401 || !strings.Contains(apiErr.Message, `"email"`) {
		t.Fatalf("no email claim: %v", err)
	}
	a.PerUser = true
	if p, _ := a.verifyJWT(context.Background(), tok); !p.PerUser {
		t.Fatalf("PerUser not carried: %+v", p)
	}
}

// TestPrincipalFromTools checks that the one Principal reads the same in a request and in a
// tool (from the tool call context a run gives its tools).
func TestPrincipalFromTools(t *testing.T) {
	t.Parallel()
	ctx := tool.WithCallInfo(context.Background(), tool.CallInfo{User: "ann", Tenant: "acme", Permissions: []string{"read"}})
	p, ok := PrincipalFrom(ctx)
	if !ok || p.User != "ann" || p.Tenant != "acme" || len(p.Permissions) != 1 {
		t.Fatalf("from call info: %+v %v", p, ok)
	}
	p, ok = PrincipalFrom(WithPrincipal(ctx, Principal{User: "bob", Tenant: "globex"}))
	if !ok || p.User != "bob" {
		t.Fatalf("a request's principal comes first: %+v", p)
	}
	if _, ok := PrincipalFrom(context.Background()); ok {
		t.Fatal("a bare context has a principal")
	}
}

// TestOwnerPerUser checks per-user ownership inside a tenant through the API: with
// AuthConfig.PerUser, bob of acme cannot read, search, run on, patch or delete ann's thread, nor
// read her runs or store items, while a tenant-wide service key sees both users' threads.
func TestOwnerPerUser(t *testing.T) {
	t.Parallel()
	ownerTest(t, authCfg())
}

// TestOwnerPerUserPostgres is TestOwnerPerUser with the server's tables in Postgres.
func TestOwnerPerUserPostgres(t *testing.T) {
	t.Parallel()
	cfg := authCfg()
	cfg.DatabaseURL = pgURL(t)
	ownerTest(t, cfg)
}

func ownerTest(t *testing.T, cfg Config) {
	cfg.Auth.PerUser = true
	b := setup(t, setupOpts{cfg: cfg})
	ann := token(map[string]any{"sub": "ann"})
	bob := token(map[string]any{"sub": "bob"})

	b.token = ann
	tid := b.newThread(map[string]any{"topic": "ann's"})
	var th Thread
	b.mustDo("GET", "/threads/"+tid, nil, &th, 200)
	if th.Metadata[OwnerKey] != "ann" {
		t.Fatalf("thread metadata %v, want owner ann", th.Metadata)
	}
	var run Run
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "t"}}, &run, 200)
	b.mustDo("GET", "/threads/"+tid+"/runs/"+run.RunID+"/join", nil, nil, 200)
	b.mustDo("PUT", "/store/items", map[string]any{"namespace": []string{"notes"}, "key": "k", "value": map[string]any{"v": "ann"}}, nil, 204)
	// A thread created by a run on a new thread is hers too.
	var waited map[string]any
	b.mustDo("POST", "/runs/wait", map[string]any{"assistant_id": "example", "input": map[string]any{}}, &waited, 200)
	var mine []Thread
	b.mustDo("POST", "/threads/search", map[string]any{}, &mine, 200)
	if len(mine) != 1 || mine[0].ThreadID != tid {
		t.Fatalf("ann's search: %d threads", len(mine))
	}

	b.token = bob
	for _, p := range []string{"/threads/" + tid, "/threads/" + tid + "/state", "/threads/" + tid + "/history",
		"/threads/" + tid + "/runs", "/threads/" + tid + "/runs/" + run.RunID} {
		if code := b.do("GET", p, nil, nil); code != 404 {
			t.Fatalf("bob GET %s: %d, want 404", p, code)
		}
	}
	if code := b.do("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "flow", "input": map[string]any{}}, nil); code != 404 {
		t.Fatalf("bob runs on ann's thread: %d, want 404", code)
	}
	if code := b.do("PATCH", "/threads/"+tid, map[string]any{"metadata": map[string]any{"owner": "bob"}}, nil); code != 404 {
		t.Fatalf("bob patches ann's thread: %d, want 404", code)
	}
	if code := b.do("DELETE", "/threads/"+tid, nil, nil); code != 404 {
		t.Fatalf("bob deletes ann's thread: %d, want 404", code)
	}
	if code := b.do("POST", "/threads/"+tid+"/copy", nil, nil); code != 404 {
		t.Fatalf("bob copies ann's thread: %d, want 404", code)
	}
	var found []Thread
	b.mustDo("POST", "/threads/search", map[string]any{}, &found, 200)
	if len(found) != 0 {
		t.Fatalf("bob sees %d threads", len(found))
	}
	var n int
	b.mustDo("POST", "/threads/count", map[string]any{}, &n, 200)
	if n != 0 {
		t.Fatalf("bob counts %d threads", n)
	}
	var item json.RawMessage
	if code := b.do("GET", "/store/items?namespace=notes&key=k", nil, &item); code != 200 || string(item) != "null" {
		t.Fatalf("bob reads ann's item: %d %s", code, item)
	}
	var ns struct{ Namespaces [][]string }
	b.mustDo("POST", "/store/namespaces", map[string]any{}, &ns, 200)
	if len(ns.Namespaces) != 0 {
		t.Fatalf("bob sees namespaces %v", ns.Namespaces)
	}
	// Bob's own thread cannot be handed to ann by patching its owner.
	btid := b.newThread(nil)
	b.mustDo("PATCH", "/threads/"+btid, map[string]any{"metadata": map[string]any{"owner": "ann"}}, &th, 200)
	if th.Metadata[OwnerKey] != "bob" {
		t.Fatalf("patched owner %v", th.Metadata[OwnerKey])
	}

	// Ann still reads her item, without the hidden labels.
	b.token = ann
	var got struct {
		Namespace []string       `json:"namespace"`
		Value     map[string]any `json:"value"`
	}
	b.mustDo("GET", "/store/items?namespace=notes&key=k", nil, &got, 200)
	if got.Value["v"] != "ann" || len(got.Namespace) != 1 || got.Namespace[0] != "notes" {
		t.Fatalf("ann's item %+v", got)
	}

	// A tenant-wide service key sees both users' threads.
	b.token = "svc-key-0123456789abcdef"
	var all []Thread
	b.mustDo("POST", "/threads/search", map[string]any{}, &all, 200)
	if len(all) != 2 {
		t.Fatalf("the service sees %d threads, want 2", len(all))
	}
}

// TestPrincipalReachesTheRun checks that a run's nodes and tools read the principal the request
// was authenticated as, with server.PrincipalFrom, as app routes do.
func TestPrincipalReachesTheRun(t *testing.T) {
	t.Parallel()
	seen := make(chan Principal, 1)
	cfg := authCfg()
	cfg.Auth.DefaultTenant = "acme"
	cfg.Auth.PerUser = true
	b := setup(t, setupOpts{cfg: cfg, extra: []GraphSpec{{ID: "whoami", Build: func(d Deps) (graph.Runnable, error) {
		g := graph.New[flowState]()
		g.AddNode("look", func(ctx context.Context, s flowState) (flowState, error) {
			p, _ := PrincipalFrom(ctx)
			seen <- p
			return flowState{Steps: []string{p.User + "@" + p.Tenant}}, nil
		})
		g.AddEdge(graph.START, "look").AddEdge("look", graph.END)
		return graph.Erase(g.Compile(graph.CompileOptions{Saver: d.Saver}))
	}}}})
	// A Supabase-style token: sub and no tenant claim.
	b.token = token(map[string]any{"tenant": nil, "sub": "u-7", "permissions": []string{"notes:read"}})
	var out flowState
	b.mustDo("POST", "/runs/wait", map[string]any{"assistant_id": "whoami", "input": map[string]any{}}, &out, 200)
	p := <-seen
	if p.User != "u-7" || p.Tenant != "acme" || len(p.Permissions) != 1 || p.Permissions[0] != "notes:read" || !p.PerUser {
		t.Fatalf("the run's principal: %+v", p)
	}
	if len(out.Steps) != 1 || out.Steps[0] != "u-7@acme" {
		t.Fatalf("output %+v", out)
	}
}

// TestMultitaskCancelsOnlyVisibleRuns: with AuthConfig.PerUser, a user's run with the interrupt
// strategy cancels only the thread's runs the user may see. A run the tenant's service key
// started on the user's thread goes on to succeed, and the user's run waits for it.
func TestMultitaskCancelsOnlyVisibleRuns(t *testing.T) {
	t.Parallel()
	cfg := authCfg()
	cfg.Auth.PerUser = true
	b := setup(t, setupOpts{cfg: cfg})
	ann, svc := token(map[string]any{"sub": "ann"}), "svc-key-0123456789abcdef"
	b.token = ann
	tid := b.newThread(nil)

	b.token = svc
	var theirs Run
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{"topic": "svc"}}, &theirs, 200)
	select {
	case <-b.gates.started:
	case <-time.After(30 * time.Second):
		t.Fatal("the service's run did not start")
	}

	b.token = ann
	var mine Run
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "ann"}, "multitask_strategy": "interrupt"}, &mine, 200)
	select {
	case b.gates.release <- struct{}{}:
	case <-time.After(10 * time.Second):
		t.Fatal("the service's run no longer waits at its node: the user's run cancelled it")
	}

	b.token = svc
	b.waitStatus(tid, theirs.RunID, RunSuccess)
	b.token = ann
	b.waitStatus(tid, mine.RunID, RunSuccess) // flow pauses at approve: the run is done
}
