package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
)

// CS declares one channel of each kind beside an ordinary list.
type CS struct {
	Seen      []string             `json:"seen" reduce:"append"`
	Query     string               `json:"query" channel:"ephemeral"`
	Token     string               `json:"token" channel:"untracked"`
	Remaining graph.RemainingSteps `json:"remaining_steps"`
	Last      graph.IsLastStep     `json:"is_last_step"`
}

// seen records what a node reads: its name, the ephemeral value, and T when it reads an
// untracked value (not the value, which must stay out of the checkpoints).
func seen(name string) graph.NodeFunc[CS] {
	return func(_ context.Context, s CS) (CS, error) {
		return CS{Seen: []string{name + ":" + s.Query + ":" + has(s.Token)}}, nil
	}
}

func has(token string) string {
	if token != "" {
		return "T"
	}
	return ""
}

// tuples lists every checkpoint tuple of a thread, newest first.
func tuples(t *testing.T, saver checkpoint.Saver, thread string) []*checkpoint.Tuple {
	t.Helper()
	var out []*checkpoint.Tuple
	for tu, err := range saver.List(bg, checkpoint.ListOptions{ThreadID: thread}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tu)
	}
	return out
}

// storedBytes is everything a thread's checkpoints hold: blobs, pending writes, tasks' payloads.
func storedBytes(t *testing.T, saver checkpoint.Saver, thread string) []byte {
	t.Helper()
	var all bytes.Buffer
	for _, tu := range tuples(t, saver, thread) {
		for _, b := range tu.Blobs {
			all.Write(b.Data)
		}
		for _, pw := range tu.Pending {
			all.Write(pw.Value)
		}
		for _, nt := range tu.Checkpoint.Next {
			all.Write(nt.Arg)
		}
		md, _ := json.Marshal(tu.Checkpoint.Metadata)
		all.Write(md)
	}
	return all.Bytes()
}

// TestEphemeralValueLastsOneSuperstep: as LangGraph's EphemeralValue, a value written in one
// superstep is read by the next and cleared after it; the checkpoint of the writing superstep
// holds it, the next one does not.
func TestEphemeralValueLastsOneSuperstep(t *testing.T) {
	t.Parallel()
	g := graph.New[CS]()
	g.AddNode("a", func(context.Context, CS) (CS, error) { return CS{Seen: []string{"a"}, Query: "q1"}, nil })
	g.AddNode("b", seen("b")).AddNode("c", seen("c"))
	g.AddSequence(graph.START, "a", "b", "c", graph.END)
	c, _ := withSaver(t, g)
	out, err := c.Invoke(bg, CS{}, graph.WithThread("e"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b:q1:", "c::"}; !slices.Equal(out.Seen, want) {
		t.Fatalf("seen %q, want %q", out.Seen, want)
	}
	hist := history(t, c, "e")
	// input (-1), start (0), a (1), b (2), c (3)
	var queries []string
	for _, snap := range hist {
		queries = append(queries, snap.Values.Query)
	}
	if want := []string{"", "", "q1", "", ""}; !slices.Equal(queries, want) {
		t.Fatalf("the checkpoints hold query %q, want %q", queries, want)
	}
}

// TestEphemeralInputIsReadByTheFirstNodesOnly: input applied in the __start__ superstep is seen
// by the nodes after START and gone after them.
func TestEphemeralInputIsReadByTheFirstNodesOnly(t *testing.T) {
	t.Parallel()
	g := graph.New[CS]()
	g.AddNode("a", seen("a")).AddNode("b", seen("b"))
	g.AddSequence(graph.START, "a", "b", graph.END)
	out, err := compile(t, g).Invoke(bg, CS{Query: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a:hello:", "b::"}; !slices.Equal(out.Seen, want) {
		t.Fatalf("seen %q, want %q", out.Seen, want)
	}
	if out.Query != "" {
		t.Fatalf("the output holds query %q after the superstep that read it", out.Query)
	}
}

// TestEphemeralWrittenAgainStays: a superstep that writes the value again keeps it one more
// superstep; the last write of a run is in its output.
func TestEphemeralWrittenAgainStays(t *testing.T) {
	t.Parallel()
	g := graph.New[CS]()
	g.AddNode("a", func(context.Context, CS) (CS, error) { return CS{Query: "1"}, nil })
	g.AddNode("b", func(_ context.Context, s CS) (CS, error) {
		return CS{Seen: []string{"b:" + s.Query}, Query: s.Query + "2"}, nil
	})
	g.AddSequence(graph.START, "a", "b", graph.END)
	out, err := compile(t, g).Invoke(bg, CS{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Seen, []string{"b:1"}) || out.Query != "12" {
		t.Fatalf("seen %q query %q, want [b:1] and 12", out.Seen, out.Query)
	}
}

// TestEphemeralAndUntrackedTakeOneWritePerSuperstep: LangGraph's guard=True refuses two values
// in one step with an invalid update error.
func TestEphemeralAndUntrackedTakeOneWritePerSuperstep(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"query", "token"} {
		g := graph.New[CS]()
		w := func(ctx context.Context, _ CS) (CS, error) { return CS{}, graph.Write(ctx, key, "x") }
		g.AddNode("a", w).AddNode("b", w)
		g.AddEdge(graph.START, "a").AddEdge(graph.START, "b")
		_, err := compile(t, g).Invoke(bg, CS{})
		if !errors.Is(err, graph.ErrInvalidUpdate) {
			t.Fatalf("%s: two writes in one superstep gave %v, want ErrInvalidUpdate", key, err)
		}
		wantErr(t, err, key, "one write per superstep")
	}
}

// TestEphemeralSurvivesAnInterrupt: the checkpoint of the superstep that wrote the value holds
// it, so the node that pauses in the next superstep reads it again when the thread resumes.
func TestEphemeralSurvivesAnInterrupt(t *testing.T) {
	t.Parallel()
	g := graph.New[CS]()
	g.AddNode("a", func(context.Context, CS) (CS, error) { return CS{Query: "q"}, nil })
	g.AddNode("ask", func(ctx context.Context, s CS) (CS, error) {
		v, err := graph.Interrupt(ctx, "ok?")
		if err != nil {
			return CS{}, err
		}
		return CS{Seen: []string{"ask:" + s.Query + ":" + v.(string)}}, nil
	})
	g.AddNode("c", seen("c"))
	g.AddSequence(graph.START, "a", "ask", "c", graph.END)
	c, _ := withSaver(t, g)
	_, err := c.Invoke(bg, CS{}, graph.WithThread("i"))
	interrupted(t, err)
	st, err := c.State(bg, refOf("i"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Values.Query != "q" {
		t.Fatalf("the paused state holds query %q, want q", st.Values.Query)
	}
	out, err := c.Invoke(bg, CS{}, graph.WithThread("i"), graph.Resume("yes"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ask:q:yes", "c::"}; !slices.Equal(out.Seen, want) {
		t.Fatalf("seen %q, want %q", out.Seen, want)
	}
}

// TestUntrackedValueIsNeverStored: as LangGraph's UntrackedValue, the value is read by every
// later superstep of the run and is in its output, but no checkpoint, pending write or saved
// send payload holds it, and a resumed thread starts without it.
func TestUntrackedValueIsNeverStored(t *testing.T) {
	t.Parallel()
	const secret = "tok-3f9a1c"
	g := graph.New[CS]()
	g.AddNode("a", func(context.Context, CS) (CS, error) { return CS{Token: secret}, nil })
	g.AddNode("b", seen("b"))
	g.AddRouter("b", func(_ context.Context, s CS) ([]graph.Target, error) {
		return []graph.Target{graph.Send("fan", CS{Seen: []string{"payload"}, Token: s.Token}), graph.To("ask")}, nil
	}, "fan", "ask")
	g.AddNode("fan", seen("fan"))
	g.AddNode("ask", func(ctx context.Context, s CS) (CS, error) {
		if _, err := graph.Interrupt(ctx, "go on?"); err != nil {
			return CS{}, err
		}
		return CS{Seen: []string{"ask:" + has(s.Token)}}, nil
	})
	g.AddSequence(graph.START, "a", "b")
	c, saver := withSaver(t, g)
	out, err := c.Invoke(bg, CS{}, graph.WithThread("u"))
	interrupted(t, err)
	// fan ran (its update is a pending write), ask paused.
	if want := []string{"b::T"}; !slices.Equal(out.Seen, want) {
		t.Fatalf("seen %q, want %q (the run reads the untracked value)", out.Seen, want)
	}
	if bytes.Contains(storedBytes(t, saver, "u"), []byte(secret)) {
		t.Fatal("a checkpoint, pending write or send payload holds the untracked value")
	}
	for _, tu := range tuples(t, saver, "u") {
		if _, ok := tu.Checkpoint.Versions["token"]; ok {
			t.Fatalf("checkpoint %s lists the untracked key in its versions", tu.Checkpoint.ID)
		}
	}
	st, err := c.State(bg, refOf("u"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Values.Token != "" {
		t.Fatalf("the thread's state holds token %q", st.Values.Token)
	}
	out, err = c.Invoke(bg, CS{}, graph.WithThread("u"), graph.Resume("yes"))
	if err != nil {
		t.Fatal(err)
	}
	// The resumed run starts from the checkpoint: ask reads no token; fan's outcome, from the
	// first run, is kept.
	if want := []string{"b::T", "ask:", "fan::T"}; !slices.Equal(out.Seen, want) { // pull tasks apply before sends
		t.Fatalf("seen %q, want %q", out.Seen, want)
	}
}

// TestUntrackedValueStaysForTheRun: unlike an ephemeral value, it is not cleared by later
// supersteps that do not write it.
func TestUntrackedValueStaysForTheRun(t *testing.T) {
	t.Parallel()
	g := graph.New[CS]()
	g.AddNode("a", func(context.Context, CS) (CS, error) { return CS{Token: "t"}, nil })
	g.AddNode("b", seen("b")).AddNode("c", seen("c"))
	g.AddSequence(graph.START, "a", "b", "c", graph.END)
	c, _ := withSaver(t, g)
	out, err := c.Invoke(bg, CS{}, graph.WithThread("s"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"b::T", "c::T"}; !slices.Equal(out.Seen, want) || out.Token != "t" {
		t.Fatalf("seen %q token %q, want %q and t", out.Seen, out.Token, want)
	}
	st, err := c.State(bg, refOf("s"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Values.Token != "" {
		t.Fatalf("the saved state holds token %q", st.Values.Token)
	}
}

// steps records the managed values each call of a looping node received.
type steps struct {
	mu        sync.Mutex
	remaining []int
	last      []bool
}

func (s *steps) node(stopBelow int) graph.CommandFunc[CS] {
	return func(_ context.Context, st CS) (*graph.Command[CS], error) {
		s.mu.Lock()
		s.remaining = append(s.remaining, int(st.Remaining))
		s.last = append(s.last, bool(st.Last))
		s.mu.Unlock()
		// Writing a managed value is ignored.
		up := CS{Seen: []string{"loop"}, Remaining: 99, Last: true}
		if int(st.Remaining) < stopBelow {
			return &graph.Command[CS]{Update: up, Goto: []graph.Target{graph.To(graph.END)}}, nil
		}
		return &graph.Command[CS]{Update: up, Goto: []graph.Target{graph.To("loop")}}, nil
	}
}

// TestRemainingStepsCountsDownToTheLimit: as LangGraph's RemainingSteps (stop - step) and
// IsLastStep (step == stop - 1): on a new thread with limit 4 the node runs in supersteps 1..4
// and sees 3, 2, 1, 0; the limit then stops the run.
func TestRemainingStepsCountsDownToTheLimit(t *testing.T) {
	t.Parallel()
	var rec steps
	g := graph.New[CS]()
	g.AddCommandNode("loop", rec.node(-1), graph.Destinations("loop", graph.END))
	g.AddEdge(graph.START, "loop")
	c, saver := withSaver(t, g)
	out, err := c.Invoke(bg, CS{Remaining: 7}, graph.WithThread("r"), graph.WithRecursionLimit(4))
	if !errors.Is(err, graph.ErrRecursionLimit) {
		t.Fatalf("got %v, want ErrRecursionLimit", err)
	}
	if want := []int{3, 2, 1, 0}; !slices.Equal(rec.remaining, want) {
		t.Fatalf("remaining steps %v, want %v", rec.remaining, want)
	}
	if want := []bool{false, false, true, false}; !slices.Equal(rec.last, want) {
		t.Fatalf("is last step %v, want %v", rec.last, want)
	}
	if out.Remaining != 0 || out.Last {
		t.Fatalf("the output holds managed values %d %v; they are never state", out.Remaining, out.Last)
	}
	for _, tu := range tuples(t, saver, "r") {
		for _, k := range []string{"remaining_steps", "is_last_step"} {
			if _, ok := tu.Checkpoint.Versions[k]; ok {
				t.Fatalf("checkpoint %s stores the managed value %q", tu.Checkpoint.ID, k)
			}
		}
	}
}

// TestRemainingStepsLetsANodeFinishInTime: the ReAct agent's use, ending before the limit.
func TestRemainingStepsLetsANodeFinishInTime(t *testing.T) {
	t.Parallel()
	var rec steps
	g := graph.New[CS]()
	g.AddCommandNode("loop", rec.node(2), graph.Destinations("loop", graph.END))
	g.AddEdge(graph.START, "loop")
	out, err := compile(t, g).Invoke(bg, CS{}, graph.WithRecursionLimit(5))
	if err != nil {
		t.Fatalf("the node ended at remaining steps 1, yet: %v", err)
	}
	if want := []int{4, 3, 2, 1}; !slices.Equal(rec.remaining, want) || len(out.Seen) != 4 {
		t.Fatalf("remaining %v (seen %q), want %v", rec.remaining, out.Seen, want)
	}
}

// TestRemainingStepsOfAResumedRun: LangGraph counts a resumed run's limit from the checkpoint it
// resumes (stop = its step + 1 + limit + 1), so the resumed superstep sees limit + 1.
func TestRemainingStepsOfAResumedRun(t *testing.T) {
	t.Parallel()
	var got []int
	g := graph.New[CS]()
	g.AddNode("ask", func(ctx context.Context, s CS) (CS, error) {
		got = append(got, int(s.Remaining))
		if _, err := graph.Interrupt(ctx, "?"); err != nil {
			return CS{}, err
		}
		return CS{}, nil
	})
	g.AddEdge(graph.START, "ask")
	c, _ := withSaver(t, g)
	_, err := c.Invoke(bg, CS{}, graph.WithThread("rr"), graph.WithRecursionLimit(10))
	interrupted(t, err)
	if _, err := c.Invoke(bg, CS{}, graph.WithThread("rr"), graph.Resume("y"), graph.WithRecursionLimit(10)); err != nil {
		t.Fatal(err)
	}
	if want := []int{9, 11}; !slices.Equal(got, want) {
		t.Fatalf("remaining steps %v, want %v (first run, resumed run)", got, want)
	}
}

func TestWritingAManagedValueFails(t *testing.T) {
	t.Parallel()
	g := graph.New[CS]()
	g.AddNode("a", func(ctx context.Context, _ CS) (CS, error) {
		return CS{}, graph.Write(ctx, "remaining_steps", graph.RemainingSteps(3))
	})
	g.AddEdge(graph.START, "a")
	_, err := compile(t, g).Invoke(bg, CS{})
	wantErr(t, err, "remaining_steps", "managed value")
}

func TestChannelTagsAreChecked(t *testing.T) {
	t.Parallel()
	type reduced struct {
		Q []string `json:"q" channel:"ephemeral" reduce:"append"`
	}
	type unknown struct {
		Q string `json:"q" channel:"topic"`
	}
	type managedTagged struct {
		R graph.RemainingSteps `json:"r" reduce:"sum"`
	}
	_, err := graph.New[reduced]().AddNode("a", func(context.Context, reduced) (reduced, error) { return reduced{}, nil }).AddEdge(graph.START, "a").Compile()
	wantErr(t, err, `"q"`, "ephemeral", "no reducer")
	_, err = graph.New[unknown]().AddNode("a", func(context.Context, unknown) (unknown, error) { return unknown{}, nil }).AddEdge(graph.START, "a").Compile()
	wantErr(t, err, `"q"`, `unknown channel "topic"`)
	_, err = graph.New[managedTagged]().AddNode("a", func(context.Context, managedTagged) (managedTagged, error) { return managedTagged{}, nil }).AddEdge(graph.START, "a").Compile()
	wantErr(t, err, `"r"`, "managed value")
}

// TestJoinIsANamedBarrier: AddJoin is LangGraph's NamedBarrierValue (what add_edge([a, b], c)
// declares): the checkpoint holds the sources seen so far, a source seen twice counts once, the
// target runs once all have finished, and the barrier is then consumed, so the next round waits
// for every source again.
func TestJoinIsANamedBarrier(t *testing.T) {
	t.Parallel()
	var rounds sync.Map
	g := graph.New[S]()
	g.AddNode("fork", note("fork"))
	g.AddNode("fast", note("fast")).AddNode("slow1", note("slow1")).AddNode("slow2", note("slow2"))
	g.AddNode("join", note("join"))
	g.AddEdge(graph.START, "fork").AddEdge("fork", "fast").AddEdge("fork", "slow1").AddSequence("slow1", "slow2")
	g.AddJoin([]string{"fast", "slow2"}, "join")
	g.AddConditionalEdges("join", func(_ context.Context, s S) (string, error) {
		n, _ := rounds.LoadOrStore("n", new(int))
		*n.(*int)++
		if *n.(*int) < 2 {
			return "fork", nil
		}
		return graph.END, nil
	}, nil)
	c, saver := withSaver(t, g, graph.CompileOptions{InterruptBefore: []string{"slow2"}})
	_, err := c.Invoke(bg, S{}, graph.WithThread("b"))
	interrupted(t, err)
	tu, err := saver.Get(bg, refOf("b"))
	if err != nil {
		t.Fatal(err)
	}
	var seenSources [][]string
	for _, v := range tu.Checkpoint.Barriers {
		seenSources = append(seenSources, v)
	}
	if len(seenSources) != 1 || !slices.Equal(seenSources[0], []string{"fast"}) {
		t.Fatalf("the paused checkpoint holds barriers %v, want one with [fast]", tu.Checkpoint.Barriers)
	}
	out, err := c.Invoke(bg, S{}, graph.WithThread("b"), graph.Continue())
	interrupted(t, err) // the second round pauses before slow2 again
	if got := slices.Clone(out.Notes); slices.Index(got, "join") < slices.Index(got, "slow2") {
		t.Fatalf("join ran before slow2: %q", got)
	}
	tu, err = saver.Get(bg, refOf("b"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range tu.Checkpoint.Barriers {
		if !slices.Equal(v, []string{"fast"}) {
			t.Fatalf("the second round's barrier holds %v, want [fast] only (the first round's was consumed)", v)
		}
	}
	out, err = c.Invoke(bg, S{}, graph.WithThread("b"), graph.Continue())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"fork", "fast", "slow1", "slow2", "join", "fork", "fast", "slow1", "slow2", "join"}
	if !slices.Equal(out.Notes, want) {
		t.Fatalf("notes %q, want %q", out.Notes, want)
	}
}

// TestUntrackedInputIsNotStored: the input checkpoint keeps the run's input as the __start__
// task's payload, without its untracked keys; the run itself reads them.
func TestUntrackedInputIsNotStored(t *testing.T) {
	t.Parallel()
	const secret = "in-7d2e90"
	g := graph.New[CS]()
	g.AddNode("a", seen("a"))
	g.AddEdge(graph.START, "a")
	c, saver := withSaver(t, g)
	out, err := c.Invoke(bg, CS{Token: secret, Seen: []string{"in"}}, graph.WithThread("ui"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"in", "a::T"}; !slices.Equal(out.Seen, want) {
		t.Fatalf("seen %q, want %q", out.Seen, want)
	}
	if bytes.Contains(storedBytes(t, saver, "ui"), []byte(secret)) {
		t.Fatal("a checkpoint holds the untracked input")
	}
}

// TestJoinIntoADeferredNodeWaitsForTheRest: as LangGraph's NamedBarrierValueAfterFinish, a join
// into a deferred node runs it only once the barrier is complete and nothing else is left.
func TestJoinIntoADeferredNodeWaitsForTheRest(t *testing.T) {
	t.Parallel()
	g := graph.New[S]()
	for _, n := range []string{"a", "b", "long1", "long2", "long3"} {
		g.AddNode(n, note(n))
	}
	g.AddNode("final", note("final"), graph.Deferred())
	g.AddEdge(graph.START, "a").AddEdge(graph.START, "b").AddEdge(graph.START, "long1")
	g.AddSequence("long1", "long2", "long3")
	g.AddJoin([]string{"a", "b"}, "final")
	out, err := compile(t, g).Invoke(bg, S{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "long1", "long2", "long3", "final"}; !slices.Equal(out.Notes, want) {
		t.Fatalf("notes %q, want %q", out.Notes, want)
	}
}
