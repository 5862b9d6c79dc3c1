package server

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/trellis-go/trellis/graph"
)

type outerState struct {
	Topic string `json:"topic"`
}

type innerState struct {
	Draft string `json:"draft"`
}

type deepState struct {
	Words int `json:"words"`
}

// buildNested builds "nested": outer -> inner (a subgraph) -> deep (a subgraph of inner).
func buildNested(deps Deps) (graph.Runnable, error) {
	d := graph.New[deepState]()
	d.AddNode("count", func(_ context.Context, s deepState) (deepState, error) { return deepState{Words: s.Words + 1}, nil })
	d.AddEdge(graph.START, "count").AddEdge("count", graph.END)
	deep, err := d.Compile(graph.CompileOptions{Name: "deep"})
	if err != nil {
		return nil, err
	}
	i := graph.New[innerState]()
	graph.AddSubgraph(i, "deep", deep, func(innerState) deepState { return deepState{} }, func(deepState) innerState { return innerState{} })
	i.AddEdge(graph.START, "deep").AddEdge("deep", graph.END)
	inner, err := i.Compile(graph.CompileOptions{Name: "inner"})
	if err != nil {
		return nil, err
	}
	o := graph.New[outerState]()
	graph.AddSubgraph(o, "inner", inner, func(s outerState) innerState { return innerState{Draft: s.Topic} }, func(innerState) outerState { return outerState{} })
	o.AddEdge(graph.START, "inner").AddEdge("inner", graph.END)
	return graph.Erase(o.Compile(graph.CompileOptions{Name: "nested", Saver: deps.Saver}))
}

// TestAssistantSubgraphs checks GET /assistants/{id}/subgraphs[/{namespace}] (the SDK's
// assistants.getSubgraphs): namespaces, recurse, one namespace, schemas, and bad input.
func TestAssistantSubgraphs(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{extra: []GraphSpec{{ID: "nested", Build: buildNested}}})
	type schemas struct {
		GraphID     string         `json:"graph_id"`
		StateSchema map[string]any `json:"state_schema"`
	}
	get := func(path string) map[string]schemas {
		t.Helper()
		var out map[string]schemas
		b.mustDo("GET", path, nil, &out, 200)
		return out
	}
	keys := func(m map[string]schemas) []string { return slices.Sorted(maps.Keys(m)) }

	if got := keys(get("/assistants/nested/subgraphs")); !slices.Equal(got, []string{"inner"}) {
		t.Errorf("subgraphs = %v, want [inner]", got)
	}
	all := get("/assistants/nested/subgraphs?recurse=true")
	if got := keys(all); !slices.Equal(got, []string{"inner", "inner|deep"}) {
		t.Errorf("recursive subgraphs = %v", got)
	}
	if s := all["inner|deep"]; s.GraphID != "nested" || s.StateSchema["title"] != "deepState" {
		t.Errorf("inner|deep schemas = %+v", s)
	}
	if props, _ := all["inner"].StateSchema["properties"].(map[string]any); props["draft"] == nil {
		t.Errorf("inner's state schema = %v", all["inner"].StateSchema)
	}
	if got := keys(get("/assistants/nested/subgraphs/inner%7Cdeep")); !slices.Equal(got, []string{"inner|deep"}) {
		t.Errorf("one namespace = %v", got)
	}
	if got := keys(get("/assistants/nested/subgraphs/inner?recurse=true")); !slices.Equal(got, []string{"inner", "inner|deep"}) {
		t.Errorf("a namespace with recurse = %v", got)
	}
	if got := keys(get("/assistants/flow/subgraphs?recurse=true")); len(got) != 0 {
		t.Errorf("a graph without subgraphs lists %v", got)
	}
	if code := b.do("GET", "/assistants/nested/subgraphs/nope", nil, nil); code != 404 {
		t.Errorf("unknown namespace: %d, want 404", code)
	}
	if code := b.do("GET", "/assistants/nested/subgraphs?recurse=maybe", nil, nil); code != 400 {
		t.Errorf("recurse=maybe: %d, want 400", code)
	}
	if code := b.do("GET", "/assistants/nope/subgraphs", nil, nil); code != 404 {
		t.Errorf("unknown assistant: %d, want 404", code)
	}
}
