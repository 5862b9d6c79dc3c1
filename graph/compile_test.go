package graph_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/graph"
)

func route(to string) graph.RouteFunc[S] {
	return func(ctx context.Context, s S) (string, error) { return to, nil }
}

func TestCompileErrorsNameTheCulprit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(g *graph.Graph[S])
		want  []string
	}{
		{"edge to unknown node", func(g *graph.Graph[S]) {
			g.AddNode("agent", note("agent")).AddEdge(graph.START, "agent").AddEdge("agent", "agnet")
		}, []string{`edge agent -> agnet names unknown node "agnet"`, `did you mean "agent"`}},
		{"edge from unknown node", func(g *graph.Graph[S]) {
			g.AddNode("agent", note("agent")).AddEdge(graph.START, "agent").AddEdge("ghost", "agent")
		}, []string{`starts at unknown node "ghost"`}},
		{"join over unknown node", func(g *graph.Graph[S]) {
			g.AddNode("a", note("a")).AddNode("c", note("c")).AddEdge(graph.START, "a").AddJoin([]string{"a", "b"}, "c")
		}, []string{`join [a, b] -> c waits on unknown node "b"`}},
		{"join without sources", func(g *graph.Graph[S]) {
			g.AddNode("a", note("a")).AddEdge(graph.START, "a").AddJoin(nil, "a")
		}, []string{`join into "a" has no sources`}},
		{"unknown path-map target", func(g *graph.Graph[S]) {
			g.AddNode("a", note("a")).AddEdge(graph.START, "a").
				AddConditionalEdges("a", route("x"), map[string]string{"x": "tools", "done": graph.END})
		}, []string{`conditional edge from a (path "x") names unknown node "tools"`}},
		{"unknown router destination", func(g *graph.Graph[S]) {
			g.AddNode("a", note("a")).AddEdge(graph.START, "a").
				AddRouter("a", func(ctx context.Context, s S) ([]graph.Target, error) { return nil, nil }, "nowhere")
		}, []string{`names unknown node "nowhere"`}},
		{"unknown command destination", func(g *graph.Graph[S]) {
			g.AddCommandNode("a", func(ctx context.Context, s S) (*graph.Command[S], error) { return nil, nil }, graph.Destinations("b")).
				AddEdge(graph.START, "a")
		}, []string{`node a's destinations names unknown node "b"`}},
		{"reused name", func(g *graph.Graph[S]) {
			g.AddNode("a", note("a")).AddNode("a", note("a")).AddEdge(graph.START, "a")
		}, []string{`node "a" is added twice`}},
		{"reserved names", func(g *graph.Graph[S]) {
			g.AddNode(graph.START, note("x")).AddNode(graph.END, note("x")).AddNode("__mine", note("x")).
				AddNode("a|b", note("x")).AddNode("a:b", note("x")).AddNode("", note("x")).
				AddNode("a", note("a")).AddEdge(graph.START, "a")
		}, []string{`"__start__" is reserved`, `"__end__" is reserved`, `"__mine" is reserved`, `"a|b" may not contain`, `"a:b" may not contain`, "a node needs a name"}},
		{"node named like a state key", func(g *graph.Graph[S]) {
			g.AddNode("notes", note("n")).AddEdge(graph.START, graph.END)
		}, []string{`node "notes" has the name of a state key`}},
		{"nothing leaves START", func(g *graph.Graph[S]) {
			g.AddNode("a", note("a"))
		}, []string{"nothing leaves START"}},
		{"edge into START", func(g *graph.Graph[S]) {
			g.AddNode("a", note("a")).AddEdge(graph.START, "a").AddEdge("a", graph.START)
		}, []string{"no edge may lead into START"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := graph.New[S]()
			tc.build(g)
			c, err := g.Compile()
			if c != nil {
				t.Fatal("Compile returned a graph along with an error")
			}
			wantErr(t, err, tc.want...)
		})
	}
}

// A loop with no way out compiles, as under LangGraph, with a warning naming its nodes, and its
// runs stop at the recursion limit; RequireEnd refuses it at compile time instead.
func TestLoopWithoutEnd(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(g *graph.Graph[S])
		want  string
	}{
		{"cannot reach END", func(g *graph.Graph[S]) {
			g.AddNode("a", note("a")).AddNode("b", note("b")).AddNode("c", note("c"))
			g.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", "c").AddEdge("c", "b")
		}, "nodes a, b, c cannot reach END"},
		{"cannot reach END through a path map", func(g *graph.Graph[S]) {
			g.AddNode("a", note("a")).AddNode("b", note("b"))
			g.AddEdge(graph.START, "a").AddEdge("b", "a").
				AddConditionalEdges("a", route("again"), map[string]string{"again": "b"})
		}, "nodes a, b cannot reach END"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := graph.New[S]()
			tc.build(g)
			c, err := g.Compile()
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			if w := c.Warnings(); len(w) != 1 || !strings.Contains(w[0], tc.want) {
				t.Errorf("warnings %q, want one naming %q", w, tc.want)
			}
			_, err = c.Invoke(bg, S{}, graph.WithRecursionLimit(6))
			if !errors.Is(err, graph.ErrRecursionLimit) {
				t.Errorf("run: %v, want ErrRecursionLimit", err)
			}
			g2 := graph.New[S]()
			tc.build(g2)
			c2, err := g2.Compile(graph.CompileOptions{RequireEnd: true})
			if c2 != nil {
				t.Fatal("RequireEnd: Compile returned a graph")
			}
			wantErr(t, err, tc.want)
		})
	}
}

func TestCompileAcceptsValidShapes(t *testing.T) {
	// A loop with a way out, an open route, a node with no way out, a deferred node in a cycle.
	g := graph.New[S]()
	g.AddNode("a", note("a")).AddNode("b", note("b")).AddNode("dead", note("dead")).AddNode("open", note("open"))
	g.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", "a")
	g.AddConditionalEdges("b", route(graph.END), map[string]string{graph.END: graph.END, "dead": "dead"})
	g.AddEdge(graph.START, "open").AddConditionalEdges("open", route(graph.END), nil)
	c, err := g.Compile(graph.CompileOptions{RequireEnd: true})
	if err != nil {
		t.Fatal(err)
	}
	if w := c.Warnings(); len(w) > 0 {
		t.Errorf("warnings %q for a graph whose every node can reach END", w)
	}
}

func TestCompileReportsEveryMistake(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("a", note("a")).AddNode("a", note("a")).AddEdge(graph.START, "x").AddEdge("a", "y")
	_, err := g.Compile()
	wantErr(t, err, `added twice`, `"x"`, `"y"`)
	if n := strings.Count(err.Error(), "\n"); n < 2 {
		t.Fatalf("want one line per mistake, got %q", err)
	}
}

func TestMermaid(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("agent", note("agent"))
	g.AddNode("tools", note("tools"))
	g.AddNode("summary", note("summary"), graph.Deferred())
	g.AddEdge(graph.START, "agent").AddEdge("tools", "agent").AddEdge("summary", graph.END)
	g.AddConditionalEdges("agent", route("done"), map[string]string{"call": "tools", "done": "summary"})
	c := compile(t, g)
	const want = `---
config:
  flowchart:
    curve: linear
---
graph TD;
	__start__([<p>__start__</p>]):::first
	agent(agent)
	tools(tools)
	summary(summary #40;deferred#41;)
	__end__([<p>__end__</p>]):::last
	__start__ --> agent;
	agent -. &nbsp;call&nbsp; .-> tools;
	agent -. &nbsp;done&nbsp; .-> summary;
	tools --> agent;
	summary --> __end__;
	classDef default fill:#f2f0ff,line-height:1.2
	classDef first fill-opacity:0
	classDef last fill:#bfb6fc
`
	if got := c.Mermaid(false); got != want {
		t.Fatalf("Mermaid:\n%s\nwant:\n%s", got, want)
	}
}

func TestMermaidSubgraphXray(t *testing.T) {
	inner := graph.New[S]()
	inner.AddNode("step", note("step")).AddEdge(graph.START, "step")
	g := graph.New[S]()
	graph.AddSubgraph(g, "sub", compile(t, inner), nil, nil)
	g.AddEdge(graph.START, "sub")
	c := compile(t, g)
	flat, xray := c.Mermaid(false), c.Mermaid(true)
	if !strings.Contains(flat, "\tsub(sub)\n") || strings.Contains(flat, "sub_2f_step") {
		t.Fatalf("flat drawing:\n%s", flat)
	}
	for _, want := range []string{"\tsubgraph sub [sub]\n", "\t\tsub_2f_step(step)\n", "\t\tsub_2f___start__ --> sub_2f_step;\n", "\tsub --> __end__;\n"} {
		if !strings.Contains(xray, want) {
			t.Fatalf("xray drawing lacks %q:\n%s", want, xray)
		}
	}
	sh := c.Shape()
	if sh.Nodes[1].Subgraph == nil || sh.Nodes[1].Subgraph.Nodes[1].ID != "step" {
		t.Fatalf("shape %+v", sh)
	}
}

func TestDecodeState(t *testing.T) {
	s, err := graph.DecodeState[S]([]byte(`{"answer":"x","notes":["a"],"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil || s.Answer != "x" || len(s.Notes) != 1 || s.Messages[0].Content != "hi" {
		t.Fatalf("got %+v, %v", s, err)
	}
	_, err = graph.DecodeState[S]([]byte(`{"answer":"x","anwser":"y"}`))
	wantErr(t, err, `"anwser"`, "graph_test.S")
	_, err = graph.DecodeState[S]([]byte(`{"count":"three"}`))
	wantErr(t, err, "count", "string")
	_, err = graph.DecodeState[S]([]byte(`not json`))
	wantErr(t, err, "does not fit the state type")
}

func TestAccessors(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("b", note("b")).AddNode("a", note("a")).AddEdge(graph.START, "b")
	c := compile(t, g, graph.CompileOptions{Name: "mine"})
	if c.Name() != "mine" || strings.Join(c.Nodes(), ",") != "b,a" || c.StateType().Name() != "S" {
		t.Fatalf("name %q nodes %q type %v", c.Name(), c.Nodes(), c.StateType())
	}
	if got := strings.Join(c.InputKeys(), ","); got != "messages,notes,count,scores,answer,flag" {
		t.Fatalf("input keys %q", got)
	}
	if compile(t, g).Name() != "graph" {
		t.Fatal("the default name is not graph")
	}
}
