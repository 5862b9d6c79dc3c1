package server

import (
	"context"
	"slices"
	"testing"
)

// ownerOnlyAuthorizer is the example of docs/server.md: editors see and run on their own
// threads only (each thread and run they create is stamped with owner_id); viewers read every
// thread of the tenant and change nothing.
func ownerOnlyAuthorizer(_ context.Context, req AuthRequest) (*AuthResult, error) {
	if slices.Contains(req.Principal.Permissions, "viewer") {
		if req.Action != ActionRead && req.Action != ActionSearch {
			return nil, Forbidden("viewers may only read", "ask an editor to make the change")
		}
		return nil, nil
	}
	switch req.Resource {
	case ResourceThreads, ResourceRuns, ResourceCrons:
		own := map[string]any{"owner_id": req.Principal.User}
		return &AuthResult{Filters: own, Metadata: own}, nil
	case ResourceAssistants:
		if req.Action == ActionCreate {
			return &AuthResult{Metadata: map[string]any{"created_by": req.Principal.User}}, nil
		}
	}
	return nil, nil
}

func TestAuthorizeOwnerOnlyAndViewers(t *testing.T) {
	t.Parallel()
	const annK, bobK, vicK = "authz-ann-key-0123456789", "authz-bob-key-0123456789", "authz-vic-key-0123456789"
	b := setup(t, setupOpts{cfg: Config{Authorize: ownerOnlyAuthorizer, Auth: AuthConfig{APIKeys: map[string]Principal{
		annK: {User: "ann", Tenant: "acme"},
		bobK: {User: "bob", Tenant: "acme"},
		vicK: {User: "vic", Tenant: "acme", Permissions: []string{"viewer"}},
	}}}})

	b.token = annK
	tid := b.newThread(map[string]any{"topic": "ann's"})
	var th Thread
	b.mustDo("GET", "/threads/"+tid, nil, &th, 200)
	if th.Metadata["owner_id"] != "ann" || th.Metadata["topic"] != "ann's" {
		t.Fatalf("ann's thread metadata %v", th.Metadata)
	}
	var run Run
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "t"}}, &run, 200)
	if run.Metadata["owner_id"] != "ann" {
		t.Errorf("ann's run metadata %v", run.Metadata)
	}
	b.mustDo("GET", "/threads/"+tid+"/runs/"+run.RunID+"/join", nil, nil, 200)
	// A run on a new thread stamps the thread too.
	var waited map[string]any
	b.mustDo("POST", "/threads/"+NewThreadID()+"/runs/wait", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "u"}, "if_not_exists": "create"}, &waited, 200)
	var a Assistant
	b.mustDo("POST", "/assistants", map[string]any{"graph_id": "flow", "name": "ann's flow"}, &a, 200)
	if a.Metadata["created_by"] != "ann" {
		t.Errorf("assistant metadata %v", a.Metadata)
	}
	var n int
	b.mustDo("POST", "/threads/count", map[string]any{}, &n, 200)
	if n != 2 {
		t.Errorf("ann counts %d threads, want 2", n)
	}

	// Bob, an editor too, does not see ann's threads.
	b.token = bobK
	b.newThread(nil)
	for _, p := range []string{"/threads/" + tid, "/threads/" + tid + "/state", "/threads/" + tid + "/runs", "/threads/" + tid + "/runs/" + run.RunID} {
		if code := b.do("GET", p, nil, nil); code != 404 {
			t.Errorf("bob GET %s: %d, want 404", p, code)
		}
	}
	if code := b.do("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "flow", "command": map[string]any{"resume": "x"}}, nil); code != 404 {
		t.Errorf("bob runs on ann's thread: %d, want 404", code)
	}
	var found []Thread
	b.mustDo("POST", "/threads/search", map[string]any{}, &found, 200)
	if len(found) != 1 || found[0].Metadata["owner_id"] != "bob" {
		t.Errorf("bob's search: %+v", found)
	}

	// Vic, a viewer, reads every thread and changes nothing.
	b.token = vicK
	b.mustDo("GET", "/threads/"+tid, nil, nil, 200)
	b.mustDo("POST", "/threads/search", map[string]any{}, &found, 200)
	if len(found) != 3 {
		t.Errorf("vic sees %d threads, want 3", len(found))
	}
	var refusal struct{ Detail, Hint string }
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/threads", map[string]any{}},
		{"PATCH", "/threads/" + tid, map[string]any{"metadata": map[string]any{"x": 1}}},
		{"DELETE", "/threads/" + tid, nil},
		{"POST", "/threads/" + tid + "/runs", map[string]any{"assistant_id": "flow", "command": map[string]any{"resume": "x"}}},
		{"POST", "/threads/" + tid + "/state", map[string]any{"values": map[string]any{"topic": "v"}}},
		{"PUT", "/store/items", map[string]any{"namespace": []string{"n"}, "key": "k", "value": map[string]any{}}},
		{"POST", "/mcp", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}},
	} {
		if code := b.do(c.method, c.path, c.body, &refusal); code != 403 || refusal.Detail != "viewers may only read" || refusal.Hint == "" {
			t.Errorf("vic %s %s: %d %+v, want 403", c.method, c.path, code, refusal)
		}
	}
	b.token = annK
	b.mustDo("GET", "/threads/"+tid, nil, nil, 200)
}

func TestRouteAccess(t *testing.T) {
	t.Parallel()
	for pattern, want := range map[string][2]string{
		"POST /threads":                         {"threads", "create"},
		"POST /threads/search":                  {"threads", "search"},
		"GET /threads/{tid}/state":              {"threads", "read"},
		"POST /threads/{tid}/state":             {"threads", "update"},
		"POST /threads/{tid}/history":           {"threads", "read"},
		"POST /threads/prune":                   {"threads", "delete"},
		"POST /threads/{tid}/runs/stream":       {"runs", "create"},
		"GET /threads/{tid}/runs":               {"runs", "search"},
		"POST /threads/{tid}/runs/{rid}/cancel": {"runs", "update"},
		"POST /runs/crons":                      {"crons", "create"},
		"DELETE /runs/crons/{cid}":              {"crons", "delete"},
		"PATCH /assistants/{id}":                {"assistants", "update"},
		"POST /assistants/{id}/versions":        {"assistants", "search"},
		"PUT /store/items":                      {"store", "update"},
		"POST /store/items/search":              {"store", "search"},
		"GET /store/items":                      {"store", "read"},
	} {
		r, a := routeAccess(pattern)
		if string(r) != want[0] || string(a) != want[1] {
			t.Errorf("%s: %s %s, want %v", pattern, r, a, want)
		}
	}
}
