package graph_test

// The behaviours in this file are LangGraph.js 1.7.3's, observed by running the same graphs in
// it (graph/testdata/langgraphjs, node): each test states what LangGraph does and checks that
// trellis does the same. docs/runtime.md ("Semantics shared with LangGraph") describes them.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/trellis-go/trellis/graph"
)

// loopAfterAsk is START → ask (one interrupt) → loop → loop → … counting loop's runs.
func loopAfterAsk(t *testing.T, calls *atomic.Int32) *graph.Compiled[S] {
	g := graph.New[S]()
	g.AddNode("ask", func(ctx context.Context, s S) (S, error) {
		v, err := graph.Interrupt(ctx, "go?")
		if err != nil {
			return s, err
		}
		return S{Notes: []string{fmt.Sprint(v)}}, nil
	})
	g.AddNode("loop", func(context.Context, S) (S, error) { calls.Add(1); return S{Notes: []string{"x"}}, nil })
	g.AddEdge(graph.START, "ask").AddEdge("ask", "loop").AddEdge("loop", "loop")
	c, _ := withSaver(t, g)
	return c
}

// TestRecursionLimitCountsAsLangGraph: LangGraph lets a run write checkpoints up to step
// (the step of the checkpoint it starts from) + 1 + limit + 1, checking before it looks for more
// work. So a new thread runs `limit` supersteps of nodes; a graph that needs exactly `limit`
// supersteps fails too (seq of 2 nodes, limit 2: GraphRecursionError after both ran); and a
// resumed run gets limit+2 supersteps counting the one it resumes (limit 1: ask again, then
// loop twice).
func TestRecursionLimitCountsAsLangGraph(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ limit, loops int32 }{{1, 1}, {2, 2}, {4, 4}} {
		var calls atomic.Int32
		g := graph.New[S]()
		g.AddNode("loop", func(context.Context, S) (S, error) { calls.Add(1); return S{}, nil })
		g.AddEdge(graph.START, "loop").AddEdge("loop", "loop")
		_, err := compile(t, g).Invoke(bg, S{}, graph.WithRecursionLimit(int(tc.limit)))
		if !errors.Is(err, graph.ErrRecursionLimit) || calls.Load() != tc.loops {
			t.Fatalf("limit %d: %d runs and %v, want %d runs and ErrRecursionLimit", tc.limit, calls.Load(), err, tc.loops)
		}
	}

	seq := graph.New[S]()
	seq.AddNode("a", note("a")).AddNode("b", note("b"))
	seq.AddSequence(graph.START, "a", "b", graph.END)
	c := compile(t, seq)
	out, err := c.Invoke(bg, S{}, graph.WithRecursionLimit(2))
	if !errors.Is(err, graph.ErrRecursionLimit) || !slices.Equal(out.Notes, []string{"a", "b"}) {
		t.Fatalf("two nodes, limit 2: %v (notes %q), want ErrRecursionLimit after both ran", err, out.Notes)
	}
	if _, err := c.Invoke(bg, S{}, graph.WithRecursionLimit(3)); err != nil {
		t.Fatalf("two nodes, limit 3: %v", err)
	}

	for _, tc := range []struct{ limit, loops int32 }{{1, 2}, {2, 3}, {4, 5}} {
		var calls atomic.Int32
		c := loopAfterAsk(t, &calls)
		thread := graph.WithThread("r")
		if _, err := c.Invoke(bg, S{}, thread, graph.WithRecursionLimit(int(tc.limit))); len(interrupted(t, err)) != 1 {
			t.Fatal("the run did not pause at ask")
		}
		_, err := c.Invoke(bg, S{}, thread, graph.WithRecursionLimit(int(tc.limit)), graph.Resume("y"))
		if !errors.Is(err, graph.ErrRecursionLimit) || calls.Load() != tc.loops {
			t.Fatalf("resumed with limit %d: loop ran %d times and %v, want %d and ErrRecursionLimit", tc.limit, calls.Load(), err, tc.loops)
		}
		hist := history(t, c, "r")
		if last := hist[len(hist)-1]; last.Step != int(tc.limit)+2 {
			t.Fatalf("resumed with limit %d: last checkpoint at step %d, want %d", tc.limit, last.Step, tc.limit+2)
		}
	}
}

// TestTwoWritesStreamBothUpdatesThenFail: LangGraph streams each finished task's update as it
// finishes, so both writers' updates are streamed before the superstep fails with
// InvalidUpdateError; the state is not changed.
func TestTwoWritesStreamBothUpdatesThenFail(t *testing.T) {
	t.Parallel()
	g := graph.New[S]()
	g.AddNode("a", func(context.Context, S) (S, error) { return S{Answer: "a"}, nil })
	g.AddNode("b", func(context.Context, S) (S, error) { return S{Answer: "b"}, nil })
	g.AddEdge(graph.START, "a").AddEdge(graph.START, "b")
	evs, err := collect(compile(t, g).Stream(bg, S{Answer: "in"}, graph.WithStreamModes(graph.ModeUpdates, graph.ModeValues)))
	if !errors.Is(err, graph.ErrInvalidUpdate) {
		t.Fatalf("run: %v, want ErrInvalidUpdate", err)
	}
	got := updatedNodes(evs)
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("updates streamed %q, want both writers'", got)
	}
	values := ofMode(evs, graph.ModeValues)
	if len(values) != 1 || values[0].Data.(S).Answer != "in" {
		t.Fatalf("values %+v, want only the input's", values)
	}
}

// TestNextAfterSecondInterrupt: a node that interrupts, is resumed, and interrupts again has its
// resume value recorded as a pending write; LangGraph's getState counts it as the task's write,
// so next is empty while the task is still listed with the interrupt it waits at. (After the
// first interrupt, next is [ask].) History shows the checkpoint as saved: next [ask].
func TestNextAfterSecondInterrupt(t *testing.T) {
	t.Parallel()
	g := graph.New[S]()
	g.AddNode("ask", func(ctx context.Context, s S) (S, error) {
		a, err := graph.Interrupt(ctx, "q1")
		if err != nil {
			return s, err
		}
		b, err := graph.Interrupt(ctx, "q2")
		if err != nil {
			return s, err
		}
		return S{Notes: []string{fmt.Sprint(a), fmt.Sprint(b)}}, nil
	})
	g.AddNode("done", note("done"))
	g.AddSequence(graph.START, "ask", "done", graph.END)
	c, _ := withSaver(t, g)
	thread := graph.WithThread("i2")
	_, err := c.Invoke(bg, S{}, thread)
	interrupted(t, err)
	snap, err := c.State(bg, refOf("i2"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(snap.Next, []string{"ask"}) {
		t.Fatalf("after the first interrupt: next %q, want [ask]", snap.Next)
	}
	_, err = c.Invoke(bg, S{}, thread, graph.Resume("A"))
	if ins := interrupted(t, err); ins[0].Value != "q2" {
		t.Fatalf("second pause at %+v, want q2", ins)
	}
	snap, err = c.State(bg, refOf("i2"))
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Next) != 0 {
		t.Fatalf("after the second interrupt: next %q, want [] as LangGraph", snap.Next)
	}
	if ins := snap.Interrupts(); len(snap.Tasks) != 1 || snap.Tasks[0].Name != "ask" || len(ins) != 1 || ins[0].Value != "q2" {
		t.Fatalf("after the second interrupt: tasks %+v, want ask waiting at q2", snap.Tasks)
	}
	hist := history(t, c, "i2")
	if got := hist[len(hist)-1].Next; !slices.Equal(got, []string{"ask"}) {
		t.Fatalf("history's newest checkpoint: next %q, want [ask]", got)
	}
	out, err := c.Invoke(bg, S{}, thread, graph.Resume("B"))
	if err != nil || !slices.Equal(out.Notes, []string{"A", "B", "done"}) {
		t.Fatalf("final resume: %v %q", err, out.Notes)
	}
}

// fanOutWithAsks is START → a, b, c → z, where b and c interrupt.
func fanOutWithAsks(t *testing.T) *graph.Compiled[S] {
	ask := func(name string) graph.NodeFunc[S] {
		return func(ctx context.Context, s S) (S, error) {
			v, err := graph.Interrupt(ctx, "q"+name)
			if err != nil {
				return s, err
			}
			return S{Notes: []string{name + ":" + fmt.Sprint(v)}}, nil
		}
	}
	g := graph.New[S]()
	g.AddNode("a", note("a")).AddNode("b", ask("b")).AddNode("c", ask("c")).AddNode("z", note("z"))
	for _, n := range []string{"a", "b", "c"} {
		g.AddEdge(graph.START, n).AddEdge(n, "z")
	}
	g.AddEdge("z", graph.END)
	c, _ := withSaver(t, g)
	return c
}

// updateSummary names each updates event: the node, "__interrupt__:<node>", a trailing "*" when
// cached.
func updateSummary(evs []graph.Event) []string {
	var out []string
	for _, ev := range ofMode(evs, graph.ModeUpdates) {
		name := ev.Node
		if ins, ok := ev.Data.([]graph.Interruption); ok {
			for _, in := range ins {
				name += ":" + in.Node
			}
		}
		if ev.Cached {
			name += "*"
		}
		out = append(out, name)
	}
	return out
}

// TestInterruptedStepStreamsItsUpdates: in a superstep where a finishes and b and c interrupt,
// LangGraph streams an __interrupt__ update per interrupted task and a's update within that
// superstep (in the order the tasks end), then the values with a's write applied. Resumed with
// b's answer (c still waits), it streams a's update again, marked cached, before the superstep's
// tasks run, then b's update, c's __interrupt__, and the values with a's and b's writes.
func TestInterruptedStepStreamsItsUpdates(t *testing.T) {
	t.Parallel()
	c := fanOutWithAsks(t)
	thread := graph.WithThread("g")
	modes := graph.WithStreamModes(graph.ModeUpdates, graph.ModeValues, graph.ModeTasks)
	evs, err := collect(c.Stream(bg, S{}, thread, modes))
	ins := interrupted(t, err)
	got := updateSummary(evs)
	slices.Sort(got)
	if want := []string{"__interrupt__:b", "__interrupt__:c", "a"}; !slices.Equal(got, want) {
		t.Fatalf("updates of the interrupted superstep %q, want %q", got, want)
	}
	values := ofMode(evs, graph.ModeValues)
	if last := values[len(values)-1].Data.(S); !slices.Equal(last.Notes, []string{"a"}) {
		t.Fatalf("last values %q, want a's write applied", last.Notes)
	}

	var bID string
	for _, in := range ins {
		if in.Node == "b" {
			bID = in.ID
		}
	}
	evs, err = collect(c.Stream(bg, S{}, thread, modes, graph.ResumeMap(map[string]any{bID: "r"})))
	interrupted(t, err)
	got = updateSummary(evs)
	if len(got) != 3 || got[0] != "a*" || !slices.Contains(got, "b") || !slices.Contains(got, "__interrupt__:c") {
		t.Fatalf("updates of the resumed superstep %q, want a* first, then b and __interrupt__:c", got)
	}
	values = ofMode(evs, graph.ModeValues)
	if last := values[len(values)-1].Data.(S); !slices.Equal(last.Notes, []string{"a", "b:r"}) {
		t.Fatalf("last values %q, want a's and b's writes applied", last.Notes)
	}
	// The cached task is announced in the tasks stream (started) but, as LangGraph, has no
	// result event: it did not run.
	var aStarts, aResults int
	for _, ev := range ofMode(evs, graph.ModeTasks) {
		if te := ev.Data.(graph.TaskEvent); te.Name == "a" {
			if te.Finished {
				aResults++
			} else {
				aStarts++
			}
		}
	}
	if aStarts != 1 || aResults != 0 {
		t.Fatalf("tasks stream for the cached a: %d starts, %d results; want 1 and 0", aStarts, aResults)
	}
	// The thread's state is unchanged by the values streamed at the pause.
	snap, err := c.State(bg, refOf("g"))
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Next) != 1 || snap.Next[0] != "c" {
		t.Fatalf("next %q, want [c]", snap.Next)
	}
}

// TestResumedStepCachedWrites: when a superstep resumes with pending writes, LangGraph streams
// each finished task's update with __metadata__.cached (trellis: Event.Cached) before any task
// of the superstep runs again, and never streams a cached update for a task that ran now.
func TestResumedStepCachedWrites(t *testing.T) {
	t.Parallel()
	c := fanOutWithAsks(t)
	thread := graph.WithThread("c")
	_, err := c.Invoke(bg, S{}, thread)
	ins := interrupted(t, err)
	answers := map[string]any{}
	for _, in := range ins {
		answers[in.ID] = "ok"
	}
	evs, err := collect(c.Stream(bg, S{}, thread, graph.ResumeMap(answers), graph.WithStreamModes(graph.ModeUpdates)))
	if err != nil {
		t.Fatal(err)
	}
	got := updateSummary(evs)
	if len(got) != 4 || got[0] != "a*" || got[3] != "z" {
		t.Fatalf("updates %q, want a* (cached) first, then b and c, then z", got)
	}
	for _, u := range got[1:] {
		if u[len(u)-1] == '*' {
			t.Fatalf("updates %q: only a's is cached", got)
		}
	}
}
