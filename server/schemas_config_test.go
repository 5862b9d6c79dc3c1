package server

import (
	"context"
	"reflect"
	"testing"

	"github.com/trellis-go/trellis/graph"
)

type schemaState struct {
	Item string `json:"item"`
}

type schemaConfig struct {
	Greeting string `json:"greeting" jsonschema:"how the report greets"`
	Approval bool   `json:"approval,omitempty"`
}

type schemaContext struct {
	UserID string `json:"user_id"`
}

// A graph that declares its config and context types gets their JSON Schemas as config_schema
// and context_schema; one that declares none gets null for both.
func TestGraphSchemasConfigAndContext(t *testing.T) {
	build := func(opts graph.CompileOptions) graph.Runnable {
		g := graph.New[schemaState]()
		g.AddNode("n", func(context.Context, schemaState) (schemaState, error) { return schemaState{}, nil })
		g.AddEdge(graph.START, "n")
		g.AddEdge("n", graph.END)
		c, err := g.Compile(opts)
		if err != nil {
			t.Fatal(err)
		}
		return c.Runnable()
	}
	// As the server holds it: wrapped for the API.
	typed := graphSchemas("typed", wrapGraph(build(graph.CompileOptions{
		ConfigType: reflect.TypeFor[schemaConfig](), ContextType: reflect.TypeFor[schemaContext](),
	})))
	conf, ok := typed["config_schema"].(map[string]any)
	if !ok {
		t.Fatalf("config_schema: %#v", typed["config_schema"])
	}
	props, _ := conf["properties"].(map[string]any)
	greeting, _ := props["greeting"].(map[string]any)
	if greeting["type"] != "string" || greeting["description"] != "how the report greets" || props["approval"] == nil {
		t.Fatalf("config_schema's properties: %#v", props)
	}
	ctxSchema, _ := typed["context_schema"].(map[string]any)
	if p, _ := ctxSchema["properties"].(map[string]any); p["user_id"] == nil {
		t.Fatalf("context_schema: %#v", typed["context_schema"])
	}
	plain := graphSchemas("plain", build(graph.CompileOptions{}))
	if plain["config_schema"] != nil || plain["context_schema"] != nil {
		t.Fatalf("a graph without types: config_schema %#v, context_schema %#v", plain["config_schema"], plain["context_schema"])
	}
}
