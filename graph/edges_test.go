package graph_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/trellis-go/trellis/graph"
)

func TestEdgesRunInOrder(t *testing.T) {
	g := graph.New[S]()
	for _, n := range []string{"a", "b", "c"} {
		g.AddNode(n, note(n))
	}
	g.AddSequence(graph.START, "a", "b", "c", graph.END)
	evs, err := collect(compile(t, g).Stream(bg, S{}, graph.WithStreamModes(graph.ModeUpdates)))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := updatedNodes(evs), []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Fatalf("nodes ran %q, want %q", got, want)
	}
	for i, ev := range evs {
		if ev.Step != i+1 { // step 0 applies the input, as in LangGraph
			t.Fatalf("event %d has step %d", i, ev.Step)
		}
	}
}

func TestConditionalEdgeWithoutPathMap(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("decide", func(ctx context.Context, s S) (S, error) { return S{Count: 1}, nil })
	g.AddNode("small", note("small"))
	g.AddNode("big", note("big"))
	g.AddEdge(graph.START, "decide")
	g.AddConditionalEdges("decide", func(ctx context.Context, s S) (string, error) {
		// The route sees the deciding node's own write (count was 0 or 10 before it).
		if s.Count > 5 {
			return "big", nil
		}
		if s.Count == 1 {
			return "small", nil
		}
		return graph.END, nil
	}, nil)
	c := compile(t, g)
	for _, tc := range []struct {
		in   int
		want []string
	}{{0, []string{"small"}}, {10, []string{"big"}}, {-1, nil}} {
		out, err := c.Invoke(bg, S{Count: tc.in})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out.Notes, tc.want) {
			t.Fatalf("count %d: notes %q, want %q", tc.in, out.Notes, tc.want)
		}
	}
}

func TestConditionalEdgeWithPathMap(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("agent", note("agent"))
	g.AddNode("tools", note("tools"))
	g.AddEdge(graph.START, "agent").AddEdge("tools", "agent")
	g.AddConditionalEdges("agent", func(ctx context.Context, s S) (string, error) {
		if len(s.Notes) < 4 {
			return "continue", nil
		}
		return "done", nil
	}, map[string]string{"continue": "tools", "done": graph.END})
	out, err := compile(t, g).Invoke(bg, S{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"agent", "tools", "agent", "tools", "agent"}; !slices.Equal(out.Notes, want) {
		t.Fatalf("notes %q, want %q", out.Notes, want)
	}
}

func TestConditionalEdgeResultNotInPathMap(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("agent", note("agent"))
	g.AddNode("tools", note("tools"))
	g.AddEdge(graph.START, "agent")
	g.AddConditionalEdges("agent", func(ctx context.Context, s S) (string, error) { return "maybe", nil },
		map[string]string{"yes": "tools", "no": graph.END})
	_, err := compile(t, g).Invoke(bg, S{})
	wantErr(t, err, `"agent"`, `"maybe"`, "no, yes")
}

func TestConditionalEdgeToUnknownNode(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("agent", note("agent"))
	g.AddNode("tools", note("tools"))
	g.AddEdge(graph.START, "agent")
	g.AddConditionalEdges("agent", func(ctx context.Context, s S) (string, error) { return "tool", nil }, nil)
	_, err := compile(t, g).Invoke(bg, S{})
	wantErr(t, err, `"agent"`, `unknown node "tool"`, `did you mean "tools"`)
}

func TestConditionalEdgeErrorFailsRun(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("agent", note("agent"))
	g.AddEdge(graph.START, "agent")
	g.AddConditionalEdges("agent", func(ctx context.Context, s S) (string, error) { return "", fmt.Errorf("no idea") }, nil)
	_, err := compile(t, g).Invoke(bg, S{})
	wantErr(t, err, `"agent"`, "no idea")
}

func TestConditionalEdgeFromStart(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("a", note("a"))
	g.AddNode("b", note("b"))
	g.AddConditionalEdges(graph.START, func(ctx context.Context, s S) (string, error) { return s.Answer, nil }, nil)
	c := compile(t, g)
	out, err := c.Invoke(bg, S{Answer: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Notes, []string{"b"}) {
		t.Fatalf("notes %q, want [b]", out.Notes)
	}
}

func TestRouterFansOutToSeveralNodes(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("plan", note("plan"))
	for _, n := range []string{"x", "y", "z"} {
		g.AddNode(n, note(n))
	}
	g.AddEdge(graph.START, "plan")
	g.AddRouter("plan", func(ctx context.Context, s S) ([]graph.Target, error) {
		return []graph.Target{graph.To("z"), graph.To("x")}, nil
	}, "x", "y", "z")
	out, err := compile(t, g).Invoke(bg, S{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"plan", "x", "z"}; !slices.Equal(out.Notes, want) {
		t.Fatalf("notes %q, want %q", out.Notes, want)
	}
}

func TestJoinWaitsForEverySource(t *testing.T) {
	// a -> b -> c and a2 are on branches of different lengths; join waits for c and a2.
	g := graph.New[S]()
	for _, n := range []string{"a", "b", "c", "a2", "final"} {
		g.AddNode(n, note(n))
	}
	g.AddEdge(graph.START, "a").AddEdge(graph.START, "a2")
	g.AddSequence("a", "b", "c")
	g.AddJoin([]string{"c", "a2"}, "final")
	c, _ := withSaver(t, g)
	evs, err := collect(c.Stream(bg, S{}, graph.WithThread("j"), graph.WithStreamModes(graph.ModeUpdates)))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := updatedNodes(evs), []string{"a", "a2", "b", "c", "final"}; !slices.Equal(got, want) {
		t.Fatalf("nodes ran %q, want %q", got, want)
	}
	final := ofMode(evs, graph.ModeUpdates)[4]
	if final.Step != 4 {
		t.Fatalf("final ran in superstep %d, want 4 (after c)", final.Step)
	}
}

func TestJoinSurvivesAnInterruptBetweenItsSources(t *testing.T) {
	// The barrier is in progress (a2 done, c not yet) when the run pauses; it must be restored.
	g := graph.New[S]()
	for _, n := range []string{"a", "b", "c", "a2", "final"} {
		g.AddNode(n, note(n))
	}
	g.AddEdge(graph.START, "a").AddEdge(graph.START, "a2")
	g.AddSequence("a", "b", "c")
	g.AddJoin([]string{"c", "a2"}, "final")
	c, _ := withSaver(t, g, graph.CompileOptions{InterruptBefore: []string{"c"}})
	_, err := c.Invoke(bg, S{}, graph.WithThread("j"))
	interrupted(t, err)
	out, err := c.Invoke(bg, S{}, graph.WithThread("j"), graph.Continue())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "a2", "b", "c", "final"}; !slices.Equal(out.Notes, want) {
		t.Fatalf("notes %q, want %q", out.Notes, want)
	}
}

func TestEdgesFromSeveralNodesRunTargetOnce(t *testing.T) {
	// Plain edges a->c and b->c in the same superstep trigger c once.
	g := graph.New[S]()
	for _, n := range []string{"a", "b", "c"} {
		g.AddNode(n, note(n))
	}
	g.AddEdge(graph.START, "a").AddEdge(graph.START, "b").AddEdge("a", "c").AddEdge("b", "c")
	out, err := compile(t, g).Invoke(bg, S{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "c"}; !slices.Equal(out.Notes, want) {
		t.Fatalf("notes %q, want %q", out.Notes, want)
	}
}

func TestDeferredNodeWaitsForAllBranches(t *testing.T) {
	g := graph.New[S]()
	for _, n := range []string{"a", "b", "b2", "b3"} {
		g.AddNode(n, note(n))
	}
	var seen []string
	g.AddNode("summary", func(ctx context.Context, s S) (S, error) {
		seen = slices.Clone(s.Notes)
		return S{Notes: []string{"summary"}}, nil
	}, graph.Deferred())
	g.AddEdge(graph.START, "a").AddEdge(graph.START, "b")
	g.AddSequence("b", "b2", "b3")
	g.AddEdge("a", "summary").AddEdge("b3", "summary")
	c, _ := withSaver(t, g)
	evs, err := collect(c.Stream(bg, S{}, graph.WithThread("d"), graph.WithStreamModes(graph.ModeUpdates)))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := updatedNodes(evs), []string{"a", "b", "b2", "b3", "summary"}; !slices.Equal(got, want) {
		t.Fatalf("nodes ran %q, want %q (summary once, last)", got, want)
	}
	if want := []string{"a", "b", "b2", "b3"}; !slices.Equal(seen, want) {
		t.Fatalf("summary saw %q, want %q", seen, want)
	}
	// As in LangGraph, a checkpoint's next lists only the nodes due in the next superstep: the
	// deferred node waiting for b's branch is not listed until its turn (LangGraph.js 1.7.3 gives
	// ["b2"] here, then ["b3"], then ["summary"]).
	hist := history(t, c, "d")
	for i, want := range [][]string{{"a", "b"}, {"b2"}, {"b3"}, {"summary"}, {}} {
		if got := hist[i+1].Next; !slices.Equal(got, want) {
			t.Fatalf("checkpoint of step %d: next %q, want %q", hist[i+1].Step, got, want)
		}
		if len(hist[i+1].Tasks) != len(want) {
			t.Fatalf("checkpoint of step %d: tasks %+v, want only %q", hist[i+1].Step, hist[i+1].Tasks, want)
		}
	}
}

type ioState struct {
	Question string   `json:"question"`
	Scratch  []string `json:"scratch" reduce:"append"`
	Answer   string   `json:"answer"`
}

func TestInputAndOutputKeys(t *testing.T) {
	g := graph.New[ioState]()
	g.AddNode("think", func(ctx context.Context, s ioState) (ioState, error) {
		return ioState{Scratch: []string{"thinking about " + s.Question}}, nil
	})
	g.AddNode("respond", func(ctx context.Context, s ioState) (ioState, error) {
		return ioState{Answer: fmt.Sprintf("%s (%d notes)", s.Question, len(s.Scratch))}, nil
	})
	g.AddSequence(graph.START, "think", "respond", graph.END)
	c := compile(t, g, graph.CompileOptions{InputKeys: []string{"question"}, OutputKeys: []string{"answer"}})
	if got := c.InputKeys(); !slices.Equal(got, []string{"question"}) {
		t.Fatalf("InputKeys = %q", got)
	}
	if got := c.OutputKeys(); !slices.Equal(got, []string{"answer"}) {
		t.Fatalf("OutputKeys = %q", got)
	}
	evs, err := collect(c.Stream(bg, ioState{Question: "why"}))
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1].Data.(ioState)
	if want := (ioState{Answer: "why (1 notes)"}); !equalIO(last, want) {
		t.Fatalf("last values event %+v, want only the output key: %+v", last, want)
	}
	out, err := c.Invoke(bg, ioState{Question: "why"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (ioState{Answer: "why (1 notes)"}); !equalIO(out, want) {
		t.Fatalf("output %+v, want %+v", out, want)
	}
	_, err = c.Invoke(bg, ioState{Question: "q", Scratch: []string{"smuggled"}})
	wantErr(t, err, `"scratch"`, "not an input key", "question")

	_, err = graph.New[ioState]().AddNode("a", func(ctx context.Context, s ioState) (ioState, error) { return s, nil }).
		AddEdge(graph.START, "a").Compile(graph.CompileOptions{InputKeys: []string{"questoin"}, OutputKeys: []string{"nope"}})
	wantErr(t, err, `InputKeys names unknown state key "questoin"`, `OutputKeys names unknown state key "nope"`)
}

func equalIO(a, b ioState) bool {
	return a.Question == b.Question && a.Answer == b.Answer && slices.Equal(a.Scratch, b.Scratch)
}

type mapState struct {
	Subjects []string `json:"subjects"`
	Subject  string   `json:"subject"`
	Jokes    []string `json:"jokes" reduce:"append"`
	Best     string   `json:"best"`
}

func TestSendFansOutWithPayloads(t *testing.T) {
	g := graph.New[mapState]()
	calls := newCounter()
	g.AddNode("topics", func(ctx context.Context, s mapState) (mapState, error) {
		return mapState{Subjects: []string{"cats", "dogs", "owls"}}, nil
	})
	g.AddNode("joke", func(ctx context.Context, s mapState) (mapState, error) {
		calls.inc("joke")
		if len(s.Subjects) != 0 {
			return mapState{}, fmt.Errorf("a Send branch received the graph state instead of its payload")
		}
		return mapState{Jokes: []string{"joke about " + s.Subject}}, nil
	})
	g.AddNode("pick", func(ctx context.Context, s mapState) (mapState, error) {
		return mapState{Best: s.Jokes[len(s.Jokes)-1]}, nil
	})
	g.AddEdge(graph.START, "topics")
	g.AddRouter("topics", func(ctx context.Context, s mapState) ([]graph.Target, error) {
		var out []graph.Target
		for _, sub := range s.Subjects {
			out = append(out, graph.Send("joke", mapState{Subject: sub}))
		}
		return out, nil
	}, "joke")
	g.AddEdge("joke", "pick")
	c, _ := withSaver(t, g)
	evs, err := collect(c.Stream(bg, mapState{}, graph.WithThread("f"), graph.WithStreamModes(graph.ModeUpdates, graph.ModeValues)))
	if err != nil {
		t.Fatal(err)
	}
	if calls.get("joke") != 3 {
		t.Fatalf("joke ran %d times, want 3", calls.get("joke"))
	}
	final := ofMode(evs, graph.ModeValues)
	out := final[len(final)-1].Data.(mapState)
	if want := []string{"joke about cats", "joke about dogs", "joke about owls"}; !slices.Equal(out.Jokes, want) {
		t.Fatalf("jokes %q, want %q (in send order)", out.Jokes, want)
	}
	if out.Best != "joke about owls" {
		t.Fatalf("best %q", out.Best)
	}
	if got, want := updatedNodes(evs), []string{"topics", "joke", "joke", "joke", "pick"}; !slices.Equal(got, want) {
		t.Fatalf("updates from %q, want %q (pick once)", got, want)
	}
	// The scheduled sends are stored with their payloads.
	hist := history(t, c, "f")
	if got := hist[2].Next; !slices.Equal(got, []string{"joke", "joke", "joke"}) {
		t.Fatalf("checkpoint after topics schedules %q", got)
	}
}

func TestSendBadPayloadAndUnknownNode(t *testing.T) {
	for _, tc := range []struct {
		target graph.Target
		want   []string
	}{
		{graph.Send("joke", "cats"), []string{`"topics" sends string to "joke"`, "graph_test.mapState"}},
		{graph.Send("jokes", mapState{}), []string{`unknown node "jokes"`, `did you mean "joke"`}},
		{graph.Send("joke", (*mapState)(nil)), []string{"*graph_test.mapState"}},
	} {
		g := graph.New[mapState]()
		g.AddNode("topics", func(ctx context.Context, s mapState) (mapState, error) { return s, nil })
		g.AddNode("joke", func(ctx context.Context, s mapState) (mapState, error) { return s, nil })
		g.AddEdge(graph.START, "topics")
		g.AddRouter("topics", func(ctx context.Context, s mapState) ([]graph.Target, error) {
			return []graph.Target{tc.target}, nil
		})
		_, err := compile(t, g).Invoke(bg, mapState{})
		wantErr(t, err, tc.want...)
	}
}

func TestSendPointerPayload(t *testing.T) {
	g := graph.New[mapState]()
	g.AddNode("joke", func(ctx context.Context, s mapState) (mapState, error) {
		return mapState{Jokes: []string{s.Subject}}, nil
	})
	g.AddRouter(graph.START, func(ctx context.Context, s mapState) ([]graph.Target, error) {
		return []graph.Target{graph.Send("joke", &mapState{Subject: "ptr"})}, nil
	}, "joke")
	out, err := compile(t, g).Invoke(bg, mapState{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Jokes, []string{"ptr"}) {
		t.Fatalf("jokes %q", out.Jokes)
	}
}

func TestCommandGotoAndUpdate(t *testing.T) {
	g := graph.New[S]()
	g.AddCommandNode("route", func(ctx context.Context, s S) (*graph.Command[S], error) {
		if s.Answer == "left" {
			return &graph.Command[S]{Update: S{Notes: []string{"route"}}, Goto: []graph.Target{graph.To("left")}}, nil
		}
		return &graph.Command[S]{Update: S{Notes: []string{"route"}}, Goto: []graph.Target{graph.To("right"), graph.To("left")}}, nil
	}, graph.Destinations("left", "right"))
	g.AddNode("left", note("left"))
	g.AddNode("right", note("right"))
	g.AddEdge(graph.START, "route")
	c := compile(t, g)
	out, err := c.Invoke(bg, S{Answer: "left"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"route", "left"}; !slices.Equal(out.Notes, want) {
		t.Fatalf("notes %q, want %q", out.Notes, want)
	}
	out, err = c.Invoke(bg, S{Answer: "both"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"route", "left", "right"}; !slices.Equal(out.Notes, want) {
		t.Fatalf("notes %q, want %q", out.Notes, want)
	}
}

func TestCommandGotoSend(t *testing.T) {
	g := graph.New[mapState]()
	g.AddCommandNode("spread", func(ctx context.Context, s mapState) (*graph.Command[mapState], error) {
		return &graph.Command[mapState]{
			Update: mapState{Best: "spread"},
			Goto:   []graph.Target{graph.Send("joke", mapState{Subject: "a"}), graph.Send("joke", mapState{Subject: "b"})},
		}, nil
	}, graph.Destinations("joke"))
	g.AddNode("joke", func(ctx context.Context, s mapState) (mapState, error) {
		return mapState{Jokes: []string{s.Subject + "!"}}, nil
	})
	g.AddEdge(graph.START, "spread")
	c, _ := withSaver(t, g)
	out, err := c.Invoke(bg, mapState{}, graph.WithThread("s"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Jokes, []string{"a!", "b!"}) || out.Best != "spread" {
		t.Fatalf("got %+v", out)
	}
}

func TestCommandFollowsStaticEdgesToo(t *testing.T) {
	g := graph.New[S]()
	g.AddCommandNode("cmd", func(ctx context.Context, s S) (*graph.Command[S], error) {
		return &graph.Command[S]{Goto: []graph.Target{graph.To("b")}}, nil
	}, graph.Destinations("b"))
	g.AddNode("a", note("a"))
	g.AddNode("b", note("b"))
	g.AddEdge(graph.START, "cmd").AddEdge("cmd", "a")
	out, err := compile(t, g).Invoke(bg, S{})
	if err != nil {
		t.Fatal(err)
	}
	got := slices.Clone(out.Notes)
	sort.Strings(got)
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("notes %q, want a and b", out.Notes)
	}
}

func TestCommandGotoUnknownNodeFails(t *testing.T) {
	g := graph.New[S]()
	g.AddCommandNode("cmd", func(ctx context.Context, s S) (*graph.Command[S], error) {
		return &graph.Command[S]{Goto: []graph.Target{graph.To("finsh")}}, nil
	})
	g.AddNode("finish", note("finish"))
	g.AddEdge(graph.START, "cmd")
	out, err := compile(t, g).Invoke(bg, S{})
	wantErr(t, err, `"cmd"`, `unknown node "finsh"`, `did you mean "finish"`)
	_ = out
}

func TestCommandNilIsNoUpdate(t *testing.T) {
	g := graph.New[S]()
	g.AddCommandNode("cmd", func(ctx context.Context, s S) (*graph.Command[S], error) { return nil, nil })
	g.AddNode("after", note("after"))
	g.AddEdge(graph.START, "cmd").AddEdge("cmd", "after")
	out, err := compile(t, g).Invoke(bg, S{Answer: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Answer != "x" || !slices.Equal(out.Notes, []string{"after"}) {
		t.Fatalf("got %+v", out)
	}
}
