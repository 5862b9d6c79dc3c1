package graph_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/graph"
)

// approvalGraph: draft -> review (interrupts for approval) -> publish.
func approvalGraph(t *testing.T, calls *counter) *graph.Compiled[S] {
	g := graph.New[S]()
	g.AddNode("draft", func(ctx context.Context, s S) (S, error) {
		calls.inc("draft")
		return S{Answer: "draft v1"}, nil
	})
	g.AddNode("review", func(ctx context.Context, s S) (S, error) {
		calls.inc("review") // counts every start of the node
		v, err := graph.Interrupt(ctx, map[string]any{"question": "publish?", "draft": s.Answer})
		if err != nil {
			return S{}, err
		}
		calls.inc("review resumed")
		return S{Notes: []string{fmt.Sprint("reviewer said ", v)}}, nil
	})
	g.AddNode("publish", note("publish"))
	g.AddSequence(graph.START, "draft", "review", "publish", graph.END)
	c, _ := withSaver(t, g)
	return c
}

func TestInterruptSurfacesValueAndResumes(t *testing.T) {
	calls := newCounter()
	c := approvalGraph(t, calls)
	evs, err := collect(c.Stream(bg, S{}, graph.WithThread("t"), graph.WithStreamModes(graph.ModeUpdates)))
	ins := interrupted(t, err)
	if len(ins) != 1 || ins[0].Node != "review" || ins[0].ID == "" || ins[0].When != "" {
		t.Fatalf("interrupts %+v", ins)
	}
	if v := ins[0].Value.(map[string]any); v["question"] != "publish?" || v["draft"] != "draft v1" {
		t.Fatalf("surfaced value %v", ins[0].Value)
	}
	wantErr(t, err, `node "review"`, ins[0].ID)
	// The updates stream reports it as LangGraph does.
	last := evs[len(evs)-1]
	if last.Node != "__interrupt__" || len(last.Data.([]graph.Interruption)) != 1 {
		t.Fatalf("last update %+v, want the __interrupt__ event", last)
	}
	// The thread shows where it waits.
	snap, err := c.State(bg, refOf("t"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(snap.Next, []string{"review"}) || len(snap.Interrupts()) != 1 || snap.Interrupts()[0].ID != ins[0].ID {
		t.Fatalf("snapshot next %q interrupts %+v", snap.Next, snap.Interrupts())
	}

	out, err := c.Invoke(bg, S{}, graph.WithThread("t"), graph.Resume("yes"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"reviewer said yes", "publish"}; !slices.Equal(out.Notes, want) {
		t.Fatalf("notes %q, want %q", out.Notes, want)
	}
	// review ran again from its start; draft did not run again.
	if calls.get("review") != 2 || calls.get("review resumed") != 1 || calls.get("draft") != 1 {
		t.Fatalf("calls %v", calls.n)
	}
	snap, err = c.State(bg, refOf("t"))
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Next) != 0 || len(snap.Interrupts()) != 0 {
		t.Fatalf("finished thread still waits: %+v", snap)
	}
}

func TestInterruptReturnsStateSoFar(t *testing.T) {
	c := approvalGraph(t, newCounter())
	out, err := c.Invoke(bg, S{Notes: []string{"in"}}, graph.WithThread("t"))
	interrupted(t, err)
	if out.Answer != "draft v1" || !slices.Equal(out.Notes, []string{"in"}) {
		t.Fatalf("state at the pause %+v", out)
	}
}

func TestResumeWithNothingPending(t *testing.T) {
	c := approvalGraph(t, newCounter())
	_, err := c.Invoke(bg, S{}, graph.WithThread("never-ran"), graph.Resume("yes"))
	if !errors.Is(err, graph.ErrNothingToResume) {
		t.Fatalf("unknown thread: want ErrNothingToResume, got %v", err)
	}
	wantErr(t, err, "never-ran", "no checkpoints")

	if _, err := c.Invoke(bg, S{}, graph.WithThread("t")); err == nil {
		t.Fatal("want an interrupt")
	}
	if _, err := c.Invoke(bg, S{}, graph.WithThread("t"), graph.Resume("ok")); err != nil {
		t.Fatal(err)
	}
	_, err = c.Invoke(bg, S{}, graph.WithThread("t"), graph.Resume("again"))
	if !errors.Is(err, graph.ErrNothingToResume) {
		t.Fatalf("finished thread: want ErrNothingToResume, got %v", err)
	}
	wantErr(t, err, `"t"`, "not paused")
	_, err = c.Invoke(bg, S{}, graph.WithThread("t"), graph.Continue())
	if !errors.Is(err, graph.ErrNothingToResume) {
		t.Fatalf("Continue on a finished thread: want ErrNothingToResume, got %v", err)
	}
}

func TestInterruptNeedsSaverAndNode(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("ask", func(ctx context.Context, s S) (S, error) {
		_, err := graph.Interrupt(ctx, "?")
		return S{}, err
	})
	g.AddEdge(graph.START, "ask")
	_, err := compile(t, g).Invoke(bg, S{})
	wantErr(t, err, `"ask"`, "no checkpoint saver", "CompileOptions.Saver")
	_, err = graph.Interrupt(context.Background(), "?")
	wantErr(t, err, "outside a running node")
}

func TestSeveralInterruptsInOneNodeMatchedByOrder(t *testing.T) {
	calls := newCounter()
	g := graph.New[S]()
	g.AddNode("form", func(ctx context.Context, s S) (S, error) {
		calls.inc("form")
		name, err := graph.InterruptAs[string](ctx, "name?")
		if err != nil {
			return S{}, err
		}
		age, err := graph.InterruptAs[int](ctx, "age?")
		if err != nil {
			return S{}, err
		}
		return S{Answer: fmt.Sprintf("%s is %d", name, age)}, nil
	})
	g.AddEdge(graph.START, "form")
	c, _ := withSaver(t, g)
	_, err := c.Invoke(bg, S{}, graph.WithThread("f"))
	if ins := interrupted(t, err); ins[0].Value != "name?" {
		t.Fatalf("first interrupt %+v", ins)
	}
	_, err = c.Invoke(bg, S{}, graph.WithThread("f"), graph.Resume("Ada"))
	ins := interrupted(t, err)
	if len(ins) != 1 || ins[0].Value != "age?" {
		t.Fatalf("second interrupt %+v", ins)
	}
	// A value that crossed JSON (a float64) is converted for InterruptAs[int].
	out, err := c.Invoke(bg, S{}, graph.WithThread("f"), graph.Resume(float64(36)))
	if err != nil {
		t.Fatal(err)
	}
	if out.Answer != "Ada is 36" {
		t.Fatalf("answer %q", out.Answer)
	}
	if calls.get("form") != 3 {
		t.Fatalf("form ran %d times, want 3", calls.get("form"))
	}
}

func TestInterruptAsBadResumeValue(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("ask", func(ctx context.Context, s S) (S, error) {
		_, err := graph.InterruptAs[int](ctx, "a number?")
		return S{}, err
	})
	g.AddEdge(graph.START, "ask")
	c, _ := withSaver(t, g)
	_, err := c.Invoke(bg, S{}, graph.WithThread("x"))
	interrupted(t, err)
	_, err = c.Invoke(bg, S{}, graph.WithThread("x"), graph.Resume("not a number"))
	wantErr(t, err, `"ask"`, "cannot be read as int")
}

// twoApprovals: two parallel nodes each interrupt, and a third finishes in the same superstep.
func twoApprovals(t *testing.T, calls *counter) *graph.Compiled[S] {
	g := graph.New[S]()
	for _, n := range []string{"legal", "finance"} {
		g.AddNode(n, func(ctx context.Context, s S) (S, error) {
			calls.inc(n)
			v, err := graph.Interrupt(ctx, n+" ok?")
			if err != nil {
				return S{}, err
			}
			return S{Notes: []string{fmt.Sprintf("%s: %v", n, v)}}, nil
		})
		g.AddEdge(graph.START, n)
	}
	g.AddNode("audit", func(ctx context.Context, s S) (S, error) {
		calls.inc("audit")
		return S{Notes: []string{"audit"}, Count: 1}, nil
	})
	g.AddEdge(graph.START, "audit")
	c, _ := withSaver(t, g)
	return c
}

func TestSeveralPendingInterruptsNeedResumeMap(t *testing.T) {
	calls := newCounter()
	c := twoApprovals(t, calls)
	_, err := c.Invoke(bg, S{}, graph.WithThread("t"))
	ins := interrupted(t, err)
	if len(ins) != 2 {
		t.Fatalf("want 2 interrupts, got %+v", ins)
	}
	wantErr(t, err, "2 interrupts")
	byNode := map[string]string{}
	for _, in := range ins {
		byNode[in.Node] = in.ID
	}

	_, err = c.Invoke(bg, S{}, graph.WithThread("t"), graph.Resume("yes"))
	wantErr(t, err, "2 interrupts", "ResumeMap", byNode["legal"], byNode["finance"])

	_, err = c.Invoke(bg, S{}, graph.WithThread("t"), graph.ResumeMap(map[string]any{"bogus": 1}))
	wantErr(t, err, `no pending interrupt "bogus"`, byNode["legal"])

	// Resume one of them: the other asks again.
	_, err = c.Invoke(bg, S{}, graph.WithThread("t"), graph.ResumeMap(map[string]any{byNode["legal"]: "signed"}))
	ins = interrupted(t, err)
	if len(ins) != 1 || ins[0].Node != "finance" {
		t.Fatalf("still pending %+v, want finance only", ins)
	}
	out, err := c.Invoke(bg, S{}, graph.WithThread("t"), graph.Resume("approved"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out.Notes)
	if want := []string{"audit", "finance: approved", "legal: signed"}; !slices.Equal(out.Notes, want) {
		t.Fatalf("notes %q, want %q", out.Notes, want)
	}
	// The sibling that succeeded in the interrupted superstep never ran again, and its write
	// applied once.
	if calls.get("audit") != 1 || out.Count != 1 {
		t.Fatalf("audit ran %d times, count %d; want 1 and 1", calls.get("audit"), out.Count)
	}
	// legal, resumed in the second run, did not run a third time.
	if calls.get("legal") != 2 || calls.get("finance") != 3 {
		t.Fatalf("calls %v, want legal 2 and finance 3", calls.n)
	}
}

func TestPendingWritesWithEveryDurability(t *testing.T) {
	for _, d := range []graph.Durability{graph.DurabilitySync, graph.DurabilityAsync, graph.DurabilityExit} {
		t.Run(string(d), func(t *testing.T) {
			calls := newCounter()
			c := twoApprovals(t, calls)
			_, err := c.Invoke(bg, S{}, graph.WithThread("t"), graph.WithDurability(d))
			ins := interrupted(t, err)
			m := map[string]any{}
			for _, in := range ins {
				m[in.ID] = "ok"
			}
			out, err := c.Invoke(bg, S{}, graph.WithThread("t"), graph.ResumeMap(m), graph.WithDurability(d))
			if err != nil {
				t.Fatal(err)
			}
			if calls.get("audit") != 1 || out.Count != 1 || len(out.Notes) != 3 {
				t.Fatalf("audit ran %d times, state %+v", calls.get("audit"), out)
			}
		})
	}
}

func TestStaticInterrupts(t *testing.T) {
	build := func(t *testing.T, opts graph.CompileOptions) (*graph.Compiled[S], *counter) {
		calls := newCounter()
		g := graph.New[S]()
		for _, n := range []string{"a", "b", "c"} {
			g.AddNode(n, func(ctx context.Context, s S) (S, error) {
				calls.inc(n)
				return S{Notes: []string{n}}, nil
			})
		}
		g.AddSequence(graph.START, "a", "b", "c", graph.END)
		c, _ := withSaver(t, g, opts)
		return c, calls
	}
	for _, tc := range []struct {
		name    string
		compile graph.CompileOptions
		run     []graph.RunOption
		when    string
		notes   []string // when paused
	}{
		{"before at compile time", graph.CompileOptions{InterruptBefore: []string{"b"}}, nil, "before", []string{"a"}},
		{"after at compile time", graph.CompileOptions{InterruptAfter: []string{"b"}}, nil, "after", []string{"a", "b"}},
		{"before per run", graph.CompileOptions{}, []graph.RunOption{graph.InterruptBefore("b")}, "before", []string{"a"}},
		{"after per run", graph.CompileOptions{}, []graph.RunOption{graph.InterruptAfter("b")}, "after", []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, calls := build(t, tc.compile)
			out, err := c.Invoke(bg, S{}, append(tc.run, graph.WithThread("t"))...)
			ins := interrupted(t, err)
			if len(ins) != 1 || ins[0].Node != "b" || ins[0].When != tc.when {
				t.Fatalf("interrupts %+v", ins)
			}
			wantErr(t, err, tc.when+` node "b"`)
			if !slices.Equal(out.Notes, tc.notes) {
				t.Fatalf("paused with notes %q, want %q", out.Notes, tc.notes)
			}
			out, err = c.Invoke(bg, S{}, append(tc.run, graph.WithThread("t"), graph.Continue())...)
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"a", "b", "c"}; !slices.Equal(out.Notes, want) {
				t.Fatalf("notes %q, want %q", out.Notes, want)
			}
			if calls.get("b") != 1 {
				t.Fatalf("b ran %d times", calls.get("b"))
			}
		})
	}
}

func TestStaticInterruptUnknownNode(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("a", note("a"))
	g.AddEdge(graph.START, "a")
	_, err := g.Compile(graph.CompileOptions{InterruptBefore: []string{"b"}, Saver: nil})
	wantErr(t, err, `interrupt names unknown node "b"`)
	c, _ := withSaver(t, g)
	_, err = c.Invoke(bg, S{}, graph.WithThread("t"), graph.InterruptBefore("aa"))
	wantErr(t, err, `unknown node "aa"`, `did you mean "a"`)
	_, err = c.Invoke(bg, S{}, graph.WithThread("t"), graph.InterruptAfter("zz"))
	wantErr(t, err, `unknown node "zz"`)
}

func TestInterruptBeforeWithParallelNodesPausesAll(t *testing.T) {
	calls := newCounter()
	g := graph.New[S]()
	for _, n := range []string{"x", "y"} {
		g.AddNode(n, func(ctx context.Context, s S) (S, error) { calls.inc(n); return S{Notes: []string{n}}, nil })
		g.AddEdge(graph.START, n)
	}
	c, _ := withSaver(t, g, graph.CompileOptions{InterruptBefore: []string{"y"}})
	_, err := c.Invoke(bg, S{}, graph.WithThread("t"))
	interrupted(t, err)
	if calls.get("x") != 0 || calls.get("y") != 0 {
		t.Fatalf("nodes ran before the static interrupt: %v", calls.n)
	}
	out, err := c.Invoke(bg, S{}, graph.WithThread("t"), graph.Continue())
	if err != nil || !slices.Equal(out.Notes, []string{"x", "y"}) {
		t.Fatalf("got %+v, %v", out, err)
	}
}

func TestInterruptErrorMessage(t *testing.T) {
	e := &graph.InterruptedError{Interrupts: []graph.Interruption{{ID: "t1.0", Node: "n"}}}
	if !strings.Contains(e.Error(), `"n"`) {
		t.Fatal(e.Error())
	}
}

// A resumed run streams the state it starts from first (values mode), as LangGraph does, also when
// it pauses again at once.
func TestResumeStreamsTheCurrentStateFirst(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("note", note("before"))
	g.AddNode("form", func(ctx context.Context, s S) (S, error) {
		if _, err := graph.Interrupt(ctx, "name?"); err != nil {
			return S{}, err
		}
		if _, err := graph.Interrupt(ctx, "age?"); err != nil {
			return S{}, err
		}
		return S{Answer: "done"}, nil
	})
	g.AddSequence(graph.START, "note", "form", graph.END)
	c, _ := withSaver(t, g)
	if _, err := c.Invoke(bg, S{}, graph.WithThread("r")); err == nil {
		t.Fatal("the first run did not pause")
	}
	evs, err := collect(c.Stream(bg, S{}, graph.WithThread("r"), graph.Resume("Ada"), graph.WithStreamModes(graph.ModeValues)))
	if ins := interrupted(t, err); len(ins) != 1 || ins[0].Value != "age?" {
		t.Fatalf("second pause: %+v", ins)
	}
	vals := ofMode(evs, graph.ModeValues)
	if len(vals) != 1 {
		t.Fatalf("%d values events, want the starting state once", len(vals))
	}
	if st := vals[0].Data.(S); !slices.Equal(st.Notes, []string{"before"}) {
		t.Fatalf("the first values event is %+v, want the state the run starts from", st)
	}
}

// The __interrupt__ updates are as LangGraph streams them: one per interrupted task, an empty one
// at a static breakpoint; and a task whose writes were kept from the paused superstep is
// streamed on resume as a cached update.
func TestInterruptUpdates(t *testing.T) {
	ask := func(q string) graph.NodeFunc[S] {
		return func(ctx context.Context, s S) (S, error) {
			v, err := graph.Interrupt(ctx, q)
			if err != nil {
				return S{}, err
			}
			return S{Notes: []string{fmt.Sprint(v)}}, nil
		}
	}
	g := graph.New[S]()
	g.AddNode("a", ask("a?")).AddNode("b", ask("b?")).AddNode("c", note("c"))
	g.AddEdge(graph.START, "a").AddEdge(graph.START, "b").AddEdge(graph.START, "c")
	c, _ := withSaver(t, g)
	updates := func(evs []graph.Event) (ints [][]graph.Interruption, nodes []string, cached []string) {
		for _, ev := range ofMode(evs, graph.ModeUpdates) {
			if ev.Node == "__interrupt__" {
				ints = append(ints, ev.Data.([]graph.Interruption))
				continue
			}
			nodes = append(nodes, ev.Node)
			if ev.Cached {
				cached = append(cached, ev.Node)
			}
		}
		return
	}
	evs, _ := collect(c.Stream(bg, S{}, graph.WithThread("i"), graph.WithStreamModes(graph.ModeUpdates)))
	ints, _, _ := updates(evs)
	if len(ints) != 2 || len(ints[0]) != 1 || len(ints[1]) != 1 {
		t.Fatalf("__interrupt__ updates %+v, want one per interrupted task", ints)
	}
	// Resume both: c's write was kept from the paused superstep and is streamed as cached.
	ids := map[string]any{}
	for _, in := range append(ints[0], ints[1]...) {
		ids[in.ID] = "ok-" + fmt.Sprint(in.Value)
	}
	evs, err := collect(c.Stream(bg, S{}, graph.WithThread("i"), graph.ResumeMap(ids), graph.WithStreamModes(graph.ModeUpdates)))
	if err != nil {
		t.Fatal(err)
	}
	_, nodes, cached := updates(evs)
	if !slices.Equal(cached, []string{"c"}) || len(nodes) != 3 {
		t.Fatalf("updates of %v, cached %v; want a, b and c with c cached", nodes, cached)
	}

	// A static breakpoint streams an empty __interrupt__ update.
	g2 := graph.New[S]()
	g2.AddNode("x", note("x")).AddNode("y", note("y"))
	g2.AddSequence(graph.START, "x", "y", graph.END)
	c2, _ := withSaver(t, g2, graph.CompileOptions{InterruptBefore: []string{"y"}})
	evs, _ = collect(c2.Stream(bg, S{}, graph.WithThread("s"), graph.WithStreamModes(graph.ModeUpdates)))
	if ints, _, _ := updates(evs); len(ints) != 1 || len(ints[0]) != 0 {
		t.Fatalf("at a static breakpoint: __interrupt__ updates %+v, want one empty", ints)
	}
}

// After several interrupts are resumed by ID, the paused checkpoint in history still lists them,
// as LangGraph's history does; the newest state lists only interrupts still waiting.
func TestHistoryKeepsAnsweredInterrupts(t *testing.T) {
	calls := newCounter()
	c := twoApprovals(t, calls)
	_, err := c.Invoke(bg, S{}, graph.WithThread("h"))
	ins := interrupted(t, err)
	byNode := map[string]string{}
	for _, in := range ins {
		byNode[in.Node] = in.ID
	}
	// Answer one: the newest state waits on the other only.
	_, err = c.Invoke(bg, S{}, graph.WithThread("h"), graph.ResumeMap(map[string]any{byNode["legal"]: "signed"}))
	interrupted(t, err)
	snap, err := c.State(bg, refOf("h"))
	if err != nil {
		t.Fatal(err)
	}
	if got := snap.Interrupts(); len(got) != 1 || got[0].Node != "finance" {
		t.Fatalf("newest state waits on %+v, want finance only", got)
	}
	// Answer the other; the run finishes.
	if _, err := c.Invoke(bg, S{}, graph.WithThread("h"), graph.ResumeMap(map[string]any{byNode["finance"]: "ok"})); err != nil {
		t.Fatal(err)
	}
	var paused *graph.StateSnapshot[S]
	for s, err := range c.History(bg, "h", graph.HistoryOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Next) > 0 && slices.Contains(s.Next, "legal") {
			paused = s
		}
	}
	if paused == nil {
		t.Fatal("no paused checkpoint in history")
	}
	var nodes []string
	for _, in := range paused.Interrupts() {
		nodes = append(nodes, in.Node)
	}
	slices.Sort(nodes)
	if !slices.Equal(nodes, []string{"finance", "legal"}) {
		t.Fatalf("the paused checkpoint lists interrupts of %v, want both", nodes)
	}
}
