package server

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/graph"
)

type callerContext struct {
	UserID string `json:"user_id"`
	Locale string `json:"locale,omitempty"`
	Level  int    `json:"level,omitempty"`
}

type greetingState struct {
	Greeting string `json:"greeting"`
}

// buildPersonal builds "personal", a graph with a context type whose node greets the run's
// caller from the context.
func buildPersonal(deps Deps) (graph.Runnable, error) {
	g := graph.New[greetingState]()
	g.AddNode("greet", func(ctx context.Context, s greetingState) (greetingState, error) {
		c, ok := graph.Context[callerContext](ctx)
		if !ok {
			return greetingState{Greeting: "hello, stranger"}, nil
		}
		return greetingState{Greeting: "hello " + c.UserID + " (" + c.Locale + ")"}, nil
	})
	g.AddEdge(graph.START, "greet").AddEdge("greet", graph.END)
	return graph.Erase(g.Compile(graph.CompileOptions{Name: "personal", Saver: deps.Saver, ContextType: reflect.TypeFor[callerContext]()}))
}

// TestRunContext checks the context field of runs, assistants and crons against the graph's
// context_schema: a run's context (merged over its assistant's) reaches the graph's nodes
// typed, and a context that does not match is a 422 naming the field.
func TestRunContext(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{extra: []GraphSpec{{ID: "personal", Build: buildPersonal}}})

	var schemas map[string]any
	b.mustDo("GET", "/assistants/personal/schemas", nil, &schemas, 200)
	cs, _ := schemas["context_schema"].(map[string]any)
	if props, _ := cs["properties"].(map[string]any); props["user_id"] == nil || props["locale"] == nil {
		t.Fatalf("context_schema %v", schemas["context_schema"])
	}

	wait := func(assistant string, ctx any) map[string]any {
		t.Helper()
		var out map[string]any
		body := map[string]any{"assistant_id": assistant, "input": map[string]any{}}
		if ctx != nil {
			body["context"] = ctx
		}
		b.mustDo("POST", "/runs/wait", body, &out, 200)
		return out
	}
	if got := wait("personal", map[string]any{"user_id": "ann", "locale": "fr"})["greeting"]; got != "hello ann (fr)" {
		t.Fatalf("greeting %v", got)
	}
	if got := wait("personal", nil)["greeting"]; got != "hello, stranger" {
		t.Fatalf("greeting without a context %v", got)
	}

	// An assistant's context is merged under the run's: the run's keys win.
	var a Assistant
	b.mustDo("POST", "/assistants", map[string]any{"graph_id": "personal", "context": map[string]any{"locale": "de", "user_id": "default"}}, &a, 200)
	if got := wait(a.AssistantID, map[string]any{"user_id": "bob"})["greeting"]; got != "hello bob (de)" {
		t.Fatalf("greeting with the assistant's context %v", got)
	}
	if got := wait(a.AssistantID, nil)["greeting"]; got != "hello default (de)" {
		t.Fatalf("greeting with only the assistant's context %v", got)
	}
	// An assistant may leave required fields to its runs.
	var partial Assistant
	b.mustDo("POST", "/assistants", map[string]any{"graph_id": "personal", "context": map[string]any{"locale": "it"}}, &partial, 200)

	type bad struct {
		name, method, path string
		body               map[string]any
		want               []string
	}
	for _, tc := range []bad{
		{"wrong type", "POST", "/runs/wait", map[string]any{"assistant_id": "personal", "context": map[string]any{"user_id": 5}}, []string{"context.user_id", "string"}},
		{"unknown field", "POST", "/runs/wait", map[string]any{"assistant_id": "personal", "context": map[string]any{"user_id": "x", "usr": "y"}}, []string{"context.usr: unknown field", "user_id"}},
		{"required field left out", "POST", "/runs", map[string]any{"assistant_id": partial.AssistantID, "context": map[string]any{"level": 2}}, []string{"user_id"}},
		{"assistant", "POST", "/assistants", map[string]any{"graph_id": "personal", "context": map[string]any{"locale": 3}}, []string{"context.locale"}},
		{"assistant patch", "PATCH", "/assistants/" + a.AssistantID, map[string]any{"context": map[string]any{"level": "high"}}, []string{"context.level", "integer"}},
		{"cron", "POST", "/runs/crons", map[string]any{"assistant_id": "personal", "schedule": "0 9 * * *", "context": map[string]any{"user_id": true}}, []string{"context.user_id"}},
		{"cron without the required field", "POST", "/runs/crons", map[string]any{"assistant_id": "personal", "schedule": "0 9 * * *", "context": map[string]any{"locale": "en"}}, []string{"user_id"}},
	} {
		var e map[string]any
		code := b.do(tc.method, tc.path, tc.body, &e)
		detail, _ := e["detail"].(string)
		if code != 422 || !strings.Contains(detail, "context_schema") {
			t.Errorf("%s: %d %v, want a 422 about the context_schema", tc.name, code, e)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(detail, w) {
				t.Errorf("%s: %q does not name %q", tc.name, detail, w)
			}
		}
	}
	// The refused patch left the assistant as it was.
	var got Assistant
	b.mustDo("GET", "/assistants/"+a.AssistantID, nil, &got, 200)
	if got.Context["level"] != nil || got.Context["locale"] != "de" {
		t.Fatalf("assistant context after a refused patch: %v", got.Context)
	}

	// A cron with a good context is taken, with its context; a patch with a bad one is not.
	var c Cron
	b.mustDo("POST", "/runs/crons", map[string]any{"assistant_id": "personal", "schedule": "0 9 * * *", "context": map[string]any{"user_id": "cy"}}, &c, 200)
	var e map[string]any
	if code := b.do("PATCH", "/runs/crons/"+c.CronID, map[string]any{"context": map[string]any{"user_id": 1}}, &e); code != 422 {
		t.Fatalf("cron patch with a bad context: %d %v", code, e)
	}
	// A graph without a context type takes any context (and its nodes see it in configurable).
	var out map[string]any
	b.mustDo("POST", "/runs/wait", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "t"}, "context": map[string]any{"anything": 1}}, &out, 200)
}
