package server

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/graph"
)

// confGraph is a graph whose one node records the configurable values it sees.
var confGraph = GraphSpec{ID: "conf", Build: func(d Deps) (graph.Runnable, error) {
	g := graph.New[flowState]()
	g.AddNode("look", func(ctx context.Context, s flowState) (flowState, error) {
		info, _ := graph.InfoFrom(ctx)
		var seen []string
		for _, k := range []string{"model", "tone", "lang"} {
			if v, ok := info.Config[k]; ok {
				seen = append(seen, fmt.Sprintf("%s=%v", k, v))
			}
		}
		return flowState{Steps: seen}, nil
	})
	g.AddEdge(graph.START, "look").AddEdge("look", graph.END)
	return graph.Erase(g.Compile(graph.CompileOptions{Saver: d.Saver}))
}}

// assistantFlows runs the assistant routes against a server (SQLite or Postgres).
func assistantFlows(t *testing.T, b *bundle) {
	t.Helper()
	var a Assistant
	b.mustDo("POST", "/assistants", map[string]any{"graph_id": "conf", "name": "calm one", "description": "speaks calmly",
		"config": map[string]any{"configurable": map[string]any{"model": "a", "tone": "calm"}}, "context": map[string]any{"lang": "fr"},
		"metadata": map[string]any{"team": "blue"}}, &a, 200)
	if a.AssistantID == "" || a.GraphID != "conf" || a.Version != 1 || a.Name != "calm one" || a.Description == nil || *a.Description != "speaks calmly" || a.Metadata["team"] != "blue" {
		t.Fatalf("created: %+v", a)
	}
	var got Assistant
	b.mustDo("GET", "/assistants/"+a.AssistantID, nil, &got, 200)
	if got.AssistantID != a.AssistantID || got.Context["lang"] != "fr" {
		t.Fatalf("get: %+v", got)
	}

	// A run on it gets its config and context under the run's own.
	var out flowState
	b.mustDo("POST", "/runs/wait", map[string]any{"assistant_id": a.AssistantID, "input": map[string]any{},
		"config": map[string]any{"configurable": map[string]any{"model": "b"}}}, &out, 200)
	if want := []string{"model=b", "tone=calm", "lang=fr"}; !slices.Equal(out.Steps, want) {
		t.Fatalf("run on the created assistant saw %v, want %v", out.Steps, want)
	}
	tid := b.newThread(nil)
	var run Run
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": a.AssistantID, "input": map[string]any{}, "context": map[string]any{"lang": "de"}}, &run, 200)
	b.mustDo("GET", "/threads/"+tid+"/runs/"+run.RunID+"/join", nil, &out, 200)
	if want := []string{"model=a", "tone=calm", "lang=de"}; !slices.Equal(out.Steps, want) {
		t.Fatalf("thread run saw %v, want %v", out.Steps, want)
	}
	var th Thread
	b.mustDo("GET", "/threads/"+tid, nil, &th, 200)
	if th.Metadata["assistant_id"] != a.AssistantID || th.Metadata["graph_id"] != "conf" {
		t.Fatalf("thread metadata: %v", th.Metadata)
	}

	// Patch makes version 2; metadata is merged.
	var p Assistant
	b.mustDo("PATCH", "/assistants/"+a.AssistantID, map[string]any{"config": map[string]any{"configurable": map[string]any{"tone": "loud"}}, "metadata": map[string]any{"owner": "kim"}}, &p, 200)
	if p.Version != 2 || p.Metadata["team"] != "blue" || p.Metadata["owner"] != "kim" || p.Name != "calm one" {
		t.Fatalf("patched: %+v", p)
	}
	b.mustDo("POST", "/runs/wait", map[string]any{"assistant_id": a.AssistantID, "input": map[string]any{}}, &out, 200)
	if want := []string{"tone=loud", "lang=fr"}; !slices.Equal(out.Steps, want) {
		t.Fatalf("after patch the run saw %v, want %v", out.Steps, want)
	}
	var versions []AssistantVersion
	b.mustDo("POST", "/assistants/"+a.AssistantID+"/versions", map[string]any{}, &versions, 200)
	if len(versions) != 2 || versions[0].Version != 2 || versions[1].Version != 1 || versions[1].Config["configurable"].(map[string]any)["model"] != "a" {
		t.Fatalf("versions: %+v", versions)
	}
	b.mustDo("POST", "/assistants/"+a.AssistantID+"/versions", map[string]any{"metadata": map[string]any{"owner": "kim"}}, &versions, 200)
	if len(versions) != 1 || versions[0].Version != 2 {
		t.Fatalf("versions with owner kim: %+v", versions)
	}
	var latest Assistant
	b.mustDo("POST", "/assistants/"+a.AssistantID+"/latest", map[string]any{"version": 1}, &latest, 200)
	if latest.Version != 1 || latest.Metadata["owner"] != nil || latest.Config["configurable"].(map[string]any)["model"] != "a" {
		t.Fatalf("latest 1: %+v", latest)
	}
	b.mustDo("GET", "/assistants/"+a.AssistantID, nil, &got, 200)
	if got.Version != 1 {
		t.Fatalf("after set latest: version %d", got.Version)
	}
	b.mustDo("POST", "/assistants/"+a.AssistantID+"/latest", map[string]any{"version": 7}, nil, 404)
	// The next patch numbers on from the highest version, not from the current one.
	b.mustDo("PATCH", "/assistants/"+a.AssistantID, map[string]any{"name": "renamed"}, &p, 200)
	if p.Version != 3 || p.Name != "renamed" {
		t.Fatalf("patch after set latest: %+v", p)
	}

	// Search and count see the registered assistants and the tenant's own.
	var list []Assistant
	b.mustDo("POST", "/assistants/search", map[string]any{"graph_id": "conf"}, &list, 200)
	if len(list) != 2 {
		t.Fatalf("search graph_id conf: %d", len(list))
	}
	b.mustDo("POST", "/assistants/search", map[string]any{"metadata": map[string]any{"team": "blue"}}, &list, 200)
	if len(list) != 1 || list[0].AssistantID != a.AssistantID {
		t.Fatalf("search by metadata: %+v", list)
	}
	b.mustDo("POST", "/assistants/search", map[string]any{"name": "RENAMED"}, &list, 200)
	if len(list) != 1 {
		t.Fatalf("search by name: %+v", list)
	}
	var n int
	b.mustDo("POST", "/assistants/count", map[string]any{}, &n, 200)
	if n != 5 { // flow, slow, example, conf and the created one
		t.Fatalf("count: %d", n)
	}
	var sel []map[string]any
	b.mustDo("POST", "/assistants/search", map[string]any{"sort_by": "graph_id", "sort_order": "asc", "select": []string{"graph_id", "name"}, "limit": 2}, &sel, 200)
	if len(sel) != 2 || sel[0]["graph_id"] != "conf" || len(sel[0]) != 2 {
		t.Fatalf("search sorted with select: %v", sel)
	}

	// Bad input.
	for _, c := range []struct {
		method, path string
		body         any
		status       int
		says         string
	}{
		{"POST", "/assistants", map[string]any{"graph_id": "nope"}, 400, "graph_id"},
		{"POST", "/assistants", map[string]any{}, 400, "graph_id"},
		{"POST", "/assistants", map[string]any{"graph_id": "conf", "assistant_id": "not-a-uuid"}, 400, "assistant_id"},
		{"POST", "/assistants", map[string]any{"graph_id": "conf", "if_exists": "maybe"}, 400, "if_exists"},
		{"POST", "/assistants", map[string]any{"graph_id": "conf", "config": "x"}, 400, "config"},
		{"POST", "/assistants", map[string]any{"graph_id": "conf", "assistant_id": a.AssistantID}, 409, "already exists"},
		{"PATCH", "/assistants/" + a.AssistantID, map[string]any{"graph_id": "nope"}, 400, "graph_id"},
		{"PATCH", "/assistants/" + AssistantID("flow"), map[string]any{"name": "x"}, 409, "default assistant"},
		{"DELETE", "/assistants/flow", nil, 409, "default assistant"},
		{"POST", "/assistants/" + a.AssistantID + "/latest", map[string]any{}, 400, "version"},
		{"POST", "/assistants/search", map[string]any{"sort_by": "colour"}, 400, "sort_by"},
		{"POST", "/assistants/search", map[string]any{"select": []string{"colour"}}, 400, "select"},
	} {
		var e map[string]string
		if code := b.do(c.method, c.path, c.body, &e); code != c.status || !strings.Contains(e["detail"], c.says) {
			t.Errorf("%s %s %v: %d %v, want %d saying %q", c.method, c.path, c.body, code, e, c.status, c.says)
		}
	}
	var same Assistant
	b.mustDo("POST", "/assistants", map[string]any{"graph_id": "conf", "assistant_id": a.AssistantID, "if_exists": "do_nothing"}, &same, 200)
	if same.Name != "renamed" {
		t.Fatalf("do_nothing returned %+v", same)
	}

	// Delete, with the threads it ran on.
	b.mustDo("DELETE", "/assistants/"+a.AssistantID+"?delete_threads=true", nil, nil, http.StatusNoContent)
	b.mustDo("GET", "/assistants/"+a.AssistantID, nil, nil, 404)
	b.mustDo("GET", "/threads/"+tid, nil, nil, 404)
	b.mustDo("POST", "/runs/wait", map[string]any{"assistant_id": a.AssistantID, "input": map[string]any{}}, nil, 404)
	b.mustDo("POST", "/assistants/"+a.AssistantID+"/versions", map[string]any{}, nil, 404)
}

func TestAssistantsCreated(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{extra: []GraphSpec{confGraph}})
	assistantFlows(t, b)
}

func TestAssistantsPostgres(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{cfg: Config{DatabaseURL: pgURL(t)}, extra: []GraphSpec{confGraph}})
	assistantFlows(t, b)
}

// TestAssistantsTenants checks that a created assistant is its tenant's alone.
func TestAssistantsTenants(t *testing.T) {
	t.Parallel()
	cfg := authCfg()
	b := setup(t, setupOpts{cfg: cfg, extra: []GraphSpec{confGraph}})
	b.token = token(map[string]any{"tenant": "acme"})
	var a Assistant
	b.mustDo("POST", "/assistants", map[string]any{"graph_id": "conf", "metadata": map[string]any{"k": "v"}}, &a, 200)
	var chat Assistant
	b.mustDo("POST", "/assistants", map[string]any{"graph_id": "example"}, &chat, 200)
	// A message the API cannot read is refused before the run, on a created assistant too.
	var e map[string]string
	if code := b.do("POST", "/runs/wait", map[string]any{"assistant_id": chat.AssistantID, "input": map[string]any{"messages": []any{map[string]any{"type": "robot", "content": "beep"}}}}, &e); code != 400 || !strings.Contains(e["detail"], "robot") {
		t.Fatalf("bad input on a created assistant: %d %v", code, e)
	}

	b.token = token(map[string]any{"tenant": "globex", "sub": "eve"})
	for _, c := range []struct{ method, path string }{
		{"GET", "/assistants/" + a.AssistantID},
		{"PATCH", "/assistants/" + a.AssistantID},
		{"DELETE", "/assistants/" + a.AssistantID},
		{"POST", "/assistants/" + a.AssistantID + "/versions"},
		{"GET", "/assistants/" + a.AssistantID + "/graph"},
		{"GET", "/assistants/" + a.AssistantID + "/schemas"},
	} {
		body := any(nil)
		if c.method != "GET" && c.method != "DELETE" {
			body = map[string]any{}
		}
		if code := b.do(c.method, c.path, body, nil); code != 404 {
			t.Errorf("other tenant %s %s: %d, want 404", c.method, c.path, code)
		}
	}
	b.mustDo("POST", "/assistants/"+a.AssistantID+"/latest", map[string]any{"version": 1}, nil, 404)
	b.mustDo("POST", "/runs/wait", map[string]any{"assistant_id": a.AssistantID, "input": map[string]any{}}, nil, 404)
	robot := map[string]any{"messages": []any{map[string]any{"type": "robot", "content": "beep"}}}
	b.mustDo("POST", "/runs/wait", map[string]any{"assistant_id": chat.AssistantID, "input": robot}, nil, 404)
	var n int
	b.mustDo("POST", "/assistants/count", map[string]any{"metadata": map[string]any{"k": "v"}}, &n, 200)
	if n != 0 {
		t.Fatalf("other tenant counts %d of acme's assistants", n)
	}
	// Nor can it take the ID.
	b.mustDo("POST", "/assistants", map[string]any{"graph_id": "conf", "assistant_id": a.AssistantID, "if_exists": "do_nothing"}, nil, 409)

	b.token = token(map[string]any{"tenant": "acme"})
	b.mustDo("GET", "/assistants/"+a.AssistantID+"/graph", nil, nil, 200)
	b.mustDo("POST", "/assistants/count", map[string]any{"metadata": map[string]any{"k": "v"}}, &n, 200)
	if n != 1 {
		t.Fatalf("acme counts %d", n)
	}
}
