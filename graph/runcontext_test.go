package graph_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
)

type userContext struct {
	UserID string `json:"user_id"`
	Locale string `json:"locale,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

type greetState struct {
	Name  string   `json:"name"`
	Lines []string `json:"lines" reduce:"append"`
}

// greeter is a graph whose node, a functional task the node calls and a subgraph all read the
// run's context.
func greeter(t *testing.T, opts graph.CompileOptions) *graph.Compiled[greetState] {
	t.Helper()
	sub := graph.New[greetState]()
	sub.AddNode("inner", func(ctx context.Context, s greetState) (greetState, error) {
		uc, ok := graph.Context[userContext](ctx)
		return greetState{Lines: []string{"subgraph sees " + describeContext(uc, ok)}}, nil
	})
	sub.AddEdge(graph.START, "inner").AddEdge("inner", graph.END)
	task := graph.NewTask("lookup", func(ctx context.Context, name string) (string, error) {
		uc, ok := graph.Context[userContext](ctx)
		return "task sees " + describeContext(uc, ok), nil
	})
	g := graph.New[greetState]()
	g.AddNode("greet", func(ctx context.Context, s greetState) (greetState, error) {
		uc, ok := graph.Context[userContext](ctx)
		info, _ := graph.InfoFrom(ctx)
		if _, typed := info.Context.(userContext); typed && !reflect.DeepEqual(info.Context, uc) {
			t.Errorf("Info.Context %#v, Context %#v", info.Context, uc)
		}
		line, err := task.Call(ctx, s.Name).Get()
		if err != nil {
			return greetState{}, err
		}
		return greetState{Lines: []string{"node sees " + describeContext(uc, ok), line}}, nil
	})
	graph.AddSubgraph(g, "sub", compile(t, sub), func(p greetState) greetState { return greetState{Name: p.Name} }, nil)
	g.AddSequence(graph.START, "greet", "sub", graph.END)
	return compile(t, g, opts)
}

func describeContext(uc userContext, ok bool) string {
	if !ok {
		return "no context"
	}
	return uc.UserID + "/" + uc.Locale
}

func TestContextReachesNodesTasksAndSubgraphs(t *testing.T) {
	t.Parallel()
	c := greeter(t, graph.CompileOptions{ContextType: reflect.TypeFor[userContext]()})
	out, err := c.Invoke(bg, greetState{Name: "ada"}, graph.WithContext(userContext{UserID: "u1", Locale: "fr"}))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"node sees u1/fr", "task sees u1/fr", "subgraph sees u1/fr"}
	if !slices.Equal(out.Lines, want) {
		t.Fatalf("lines %q, want %q", out.Lines, want)
	}
	// A pointer to the type is accepted too.
	out, err = c.Invoke(bg, greetState{}, graph.WithContext(&userContext{UserID: "u2"}))
	if err != nil || out.Lines[0] != "node sees u2/" {
		t.Fatalf("pointer context: %q, %v", out.Lines, err)
	}
	// Without a context, nodes see none.
	out, err = c.Invoke(bg, greetState{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"node sees no context", "task sees no context", "subgraph sees no context"}; !slices.Equal(out.Lines, want) {
		t.Fatalf("lines %q, want %q", out.Lines, want)
	}
}

// A context in its JSON form (as a server receives it) is decoded into the declared type,
// and one that does not fit fails the run before it starts, naming the field.
func TestContextFromJSONIsCheckedAgainstTheType(t *testing.T) {
	t.Parallel()
	c := greeter(t, graph.CompileOptions{Name: "greeter", ContextType: reflect.TypeFor[userContext]()})
	out, err := c.Invoke(bg, greetState{}, graph.WithContext(map[string]any{"user_id": "u3", "locale": "de"}))
	if err != nil || out.Lines[0] != "node sees u3/de" {
		t.Fatalf("map context: %q, %v", out.Lines, err)
	}
	out, err = c.Invoke(bg, greetState{}, graph.WithContext(json.RawMessage(`{"user_id":"u4"}`)))
	if err != nil || out.Lines[0] != "node sees u4/" {
		t.Fatalf("raw JSON context: %q, %v", out.Lines, err)
	}
	for _, tc := range []struct {
		ctx  any
		want []string
	}{
		{map[string]any{"user": "u1"}, []string{`graph "greeter"`, `unknown field "user"`, "userContext"}},
		{map[string]any{"user_id": 5}, []string{`field "user_id"`, "expected string", "number"}},
		{map[string]any{"limit": "ten"}, []string{`field "limit"`, "expected int", "string"}},
		{"u1", []string{"is a string", "graph_test.userContext"}},
		{json.RawMessage(`{"user_id":`), []string{"does not fit"}},
	} {
		// The run fails before it starts: with a stream, the error is its only event.
		var evs []graph.Event
		for ev, err := range c.Stream(bg, greetState{}, graph.WithContext(tc.ctx)) {
			if err == nil {
				evs = append(evs, ev)
			}
		}
		if len(evs) != 0 {
			t.Fatalf("context %v: the run started (%d events)", tc.ctx, len(evs))
		}
		_, err := c.Invoke(bg, greetState{}, graph.WithContext(tc.ctx))
		if err == nil {
			t.Fatalf("context %v: no error", tc.ctx)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("context %v: error %q does not say %q", tc.ctx, err, w)
			}
		}
	}
}

// A graph that declares no context type passes the value as is; Context converts a map.
func TestContextWithoutDeclaredType(t *testing.T) {
	t.Parallel()
	c := greeter(t, graph.CompileOptions{})
	out, err := c.Invoke(bg, greetState{}, graph.WithContext(map[string]any{"user_id": "m", "locale": "it"}))
	if err != nil || out.Lines[0] != "node sees m/it" {
		t.Fatalf("map context without a type: %q, %v", out.Lines, err)
	}
	out, err = c.Invoke(bg, greetState{}, graph.WithContext(42))
	if err != nil || out.Lines[0] != "node sees no context" {
		t.Fatalf("a context of another shape: %q, %v", out.Lines, err)
	}
	// The Runnable view (what a server runs) takes the context the same way.
	var lines []any
	for ev, err := range c.Runnable().Stream(bg, json.RawMessage(`{"name":"x"}`), graph.WithContext(map[string]any{"user_id": "r"})) {
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, ev.Data)
	}
	if last, _ := lines[len(lines)-1].(greetState); len(last.Lines) == 0 || last.Lines[0] != "node sees r/" {
		t.Fatalf("Runnable stream values %v", lines)
	}
}

// The context belongs to a run and is never checkpointed: a resumed run sees the context it
// is given, not the first run's.
func TestContextIsPerRun(t *testing.T) {
	t.Parallel()
	g := graph.New[greetState]()
	g.AddNode("ask", func(ctx context.Context, s greetState) (greetState, error) {
		before, ok := graph.Context[userContext](ctx)
		if _, err := graph.Interrupt(ctx, "go on?"); err != nil {
			return greetState{}, err
		}
		return greetState{Lines: []string{"resumed by " + describeContext(before, ok)}}, nil
	})
	g.AddEdge(graph.START, "ask").AddEdge("ask", graph.END)
	saver := checkpoint.NewMemorySaver()
	c := compile(t, g, graph.CompileOptions{Saver: saver, ContextType: reflect.TypeFor[userContext]()})
	_, err := c.Invoke(bg, greetState{}, graph.WithThread("p"), graph.WithContext(userContext{UserID: "first"}))
	interrupted(t, err)
	out, err := c.Invoke(bg, greetState{}, graph.WithThread("p"), graph.Resume(true), graph.WithContext(userContext{UserID: "second"}))
	if err != nil || !slices.Equal(out.Lines, []string{"resumed by second/"}) {
		t.Fatalf("resumed: %q, %v", out.Lines, err)
	}
	for tuple, err := range saver.List(bg, checkpoint.ListOptions{ThreadID: "p", AllNS: true}) {
		if err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(tuple)
		if strings.Contains(string(data), "first") || strings.Contains(string(data), "second") {
			t.Fatalf("a checkpoint holds the run's context: %s", data)
		}
	}
}

func TestContextOutsideARun(t *testing.T) {
	t.Parallel()
	if _, ok := graph.Context[userContext](bg); ok {
		t.Fatal("a context outside any run")
	}
}
