package graph_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
)

// abc builds START -> a -> b -> c -> END, each node appending its name.
func abc(t *testing.T, opts ...graph.CompileOptions) (*graph.Compiled[S], checkpoint.Saver, *counter) {
	calls := newCounter()
	g := graph.New[S]()
	for _, n := range []string{"a", "b", "c"} {
		g.AddNode(n, func(ctx context.Context, s S) (S, error) {
			calls.inc(n)
			return S{Notes: []string{n}, Count: 1}, nil
		})
	}
	g.AddSequence(graph.START, "a", "b", "c", graph.END)
	c, saver := withSaver(t, g, opts...)
	return c, saver, calls
}

func countCheckpoints(t *testing.T, saver checkpoint.Saver, thread string) int {
	t.Helper()
	n := 0
	for _, err := range saver.List(bg, checkpoint.ListOptions{ThreadID: thread}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

func TestCheckpointAfterEverySuperstep(t *testing.T) {
	c, _, _ := abc(t)
	evs, err := collect(c.Stream(bg, S{Notes: []string{"in"}}, graph.WithThread("t"),
		graph.WithMetadata(map[string]any{"user": "ada"}), graph.WithStreamModes(graph.ModeCheckpoints)))
	if err != nil {
		t.Fatal(err)
	}
	hist := history(t, c, "t")
	if len(hist) != 5 || len(evs) != 5 {
		t.Fatalf("%d checkpoints and %d checkpoint events, want 5 (input, its superstep, 3 nodes)", len(hist), len(evs))
	}
	// As LangGraph: the input checkpoint holds the state before the input, with __start__ next.
	wantNext := [][]string{{"__start__"}, {"a"}, {"b"}, {"c"}, nil}
	wantNotes := [][]string{nil, {"in"}, {"in", "a"}, {"in", "a", "b"}, {"in", "a", "b", "c"}}
	for i, snap := range hist {
		if snap.Step != i-1 {
			t.Fatalf("checkpoint %d has step %d", i, snap.Step)
		}
		wantSource := "loop"
		if i == 0 {
			wantSource = "input"
		}
		if snap.Metadata["source"] != wantSource || snap.Metadata["user"] != "ada" {
			t.Fatalf("checkpoint %d metadata %v", i, snap.Metadata)
		}
		if !slices.Equal(snap.Next, wantNext[i]) || !slices.Equal(snap.Values.Notes, wantNotes[i]) {
			t.Fatalf("checkpoint %d: next %q notes %q, want %q %q", i, snap.Next, snap.Values.Notes, wantNext[i], wantNotes[i])
		}
		if i == 0 && snap.Parent != nil {
			t.Fatalf("the first checkpoint has parent %v", snap.Parent)
		}
		if i > 0 && (snap.Parent == nil || snap.Parent.CheckpointID != hist[i-1].Ref.CheckpointID) {
			t.Fatalf("checkpoint %d has parent %v, want %s", i, snap.Parent, hist[i-1].Ref.CheckpointID)
		}
		ev := evs[i].Data.(graph.CheckpointEvent[S])
		if ev.Ref.CheckpointID != snap.Ref.CheckpointID || !slices.Equal(ev.Next, snap.Next) || !slices.Equal(ev.Values.Notes, snap.Values.Notes) {
			t.Fatalf("checkpoint event %d %+v does not match the stored %+v", i, ev, snap)
		}
	}
	// History options.
	var limited []string
	for snap, err := range c.History(bg, "t", graph.HistoryOptions{Limit: 2, Before: hist[3].Ref.CheckpointID}) {
		if err != nil {
			t.Fatal(err)
		}
		limited = append(limited, snap.Ref.CheckpointID)
	}
	if want := []string{hist[2].Ref.CheckpointID, hist[1].Ref.CheckpointID}; !slices.Equal(limited, want) {
		t.Fatalf("History(limit 2, before newest) = %q, want %q", limited, want)
	}
	n := 0
	for _, err := range c.History(bg, "t", graph.HistoryOptions{Metadata: map[string]any{"source": "input"}}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("History filtered on source=input listed %d", n)
	}
}

func TestStepsContinueAcrossRunsOfAThread(t *testing.T) {
	c, _, _ := abc(t)
	for range 2 {
		if _, err := c.Invoke(bg, S{}, graph.WithThread("t")); err != nil {
			t.Fatal(err)
		}
	}
	hist := history(t, c, "t")
	if len(hist) != 10 {
		t.Fatalf("%d checkpoints, want 10", len(hist))
	}
	for i := 1; i < len(hist); i++ {
		if hist[i].Step <= hist[i-1].Step {
			t.Fatalf("steps %d then %d: a later run of a thread must continue the thread's step count, as LangGraph does", hist[i-1].Step, hist[i].Step)
		}
	}
}

func TestDurabilityModes(t *testing.T) {
	for _, tc := range []struct {
		d    graph.Durability
		want int
	}{{graph.DurabilitySync, 5}, {graph.DurabilityAsync, 5}, {graph.DurabilityExit, 1}, {"", 5}} {
		t.Run(string(tc.d), func(t *testing.T) {
			c, saver, _ := abc(t)
			out, err := c.Invoke(bg, S{}, graph.WithThread("t"), graph.WithDurability(tc.d))
			if err != nil {
				t.Fatal(err)
			}
			// Invoke returns only once the checkpoints are written, whatever the mode.
			if n := countCheckpoints(t, saver, "t"); n != tc.want {
				t.Fatalf("%d checkpoints, want %d", n, tc.want)
			}
			snap, err := c.State(bg, refOf("t"))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(snap.Values.Notes, out.Notes) || len(snap.Next) != 0 {
				t.Fatalf("stored %+v, output %+v", snap.Values, out)
			}
		})
	}
	// The compile-time default applies when the run does not choose.
	c, saver, _ := abc(t, graph.CompileOptions{Durability: graph.DurabilityExit})
	if _, err := c.Invoke(bg, S{}, graph.WithThread("t")); err != nil {
		t.Fatal(err)
	}
	if n := countCheckpoints(t, saver, "t"); n != 1 {
		t.Fatalf("compile-time exit durability: %d checkpoints", n)
	}
}

func TestDurabilityExitSavesOnFailure(t *testing.T) {
	calls := 0
	g := graph.New[S]()
	g.AddNode("a", note("a"))
	g.AddNode("b", func(ctx context.Context, s S) (S, error) {
		calls++
		if calls == 1 {
			return S{}, errors.New("down")
		}
		return S{Notes: []string{"b"}}, nil
	})
	g.AddSequence(graph.START, "a", "b", graph.END)
	c, saver := withSaver(t, g, graph.CompileOptions{Durability: graph.DurabilityExit})
	_, err := c.Invoke(bg, S{}, graph.WithThread("t"))
	wantErr(t, err, `"b"`, "down")
	if n := countCheckpoints(t, saver, "t"); n != 1 {
		t.Fatalf("%d checkpoints after the failure, want 1", n)
	}
	out, err := c.Invoke(bg, S{}, graph.WithThread("t"), graph.Continue())
	if err != nil || !slices.Equal(out.Notes, []string{"a", "b"}) {
		t.Fatalf("continue after failure: %+v, %v", out, err)
	}
}

func TestStateErrors(t *testing.T) {
	c, _, _ := abc(t)
	_, err := c.State(bg, refOf("nobody"))
	if !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("unknown thread: want ErrNotFound, got %v", err)
	}
	if _, err := c.Invoke(bg, S{}, graph.WithThread("t")); err != nil {
		t.Fatal(err)
	}
	_, err = c.State(bg, checkpoint.Ref{ThreadID: "t", CheckpointID: "nope"})
	if !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("unknown checkpoint: want ErrNotFound, got %v", err)
	}
	_, err = c.Invoke(bg, S{}, graph.WithThread("t"), graph.FromCheckpoint("nope"), graph.Continue())
	wantErr(t, err, `"t"`, `no checkpoint "nope"`)

	noSaver := compile(t, graph.New[S]().AddNode("a", note("a")).AddEdge(graph.START, "a"))
	_, err = noSaver.State(bg, refOf("t"))
	wantErr(t, err, "checkpoint saver")
	_, err = noSaver.Invoke(bg, S{}, graph.WithThread("t"))
	wantErr(t, err, `thread "t"`, "no checkpoint saver")
	_, err = c.Invoke(bg, S{})
	wantErr(t, err, "WithThread")
	_, err = noSaver.Invoke(bg, S{}, graph.Continue())
	wantErr(t, err, "checkpoint saver")
}

func TestUpdateStateAsNode(t *testing.T) {
	c, _, calls := abc(t, graph.CompileOptions{InterruptBefore: []string{"b"}})
	_, err := c.Invoke(bg, S{}, graph.WithThread("t"))
	interrupted(t, err)
	// Write as if a had returned this: reducers apply, and what follows a is scheduled.
	ref, err := c.UpdateState(bg, refOf("t"), S{Notes: []string{"human"}, Answer: "edited"}, "a")
	if err != nil {
		t.Fatal(err)
	}
	snap, err := c.State(bg, refOf("t"))
	if err != nil {
		t.Fatal(err)
	}
	if snap.Ref.CheckpointID != ref.CheckpointID || snap.Metadata["source"] != "update" {
		t.Fatalf("newest checkpoint %v metadata %v, want the update's %v", snap.Ref, snap.Metadata, ref)
	}
	if !slices.Equal(snap.Values.Notes, []string{"a", "human"}) || snap.Values.Answer != "edited" || !slices.Equal(snap.Next, []string{"b"}) {
		t.Fatalf("after update: %+v next %q", snap.Values, snap.Next)
	}
	out, err := c.Invoke(bg, S{}, graph.WithThread("t"), graph.Continue())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "human", "b", "c"}; !slices.Equal(out.Notes, want) || out.Answer != "edited" {
		t.Fatalf("got %+v, want notes %q", out, want)
	}
	if calls.get("a") != 1 {
		t.Fatalf("a ran %d times", calls.get("a"))
	}
	// As the last node: nothing follows.
	if _, err := c.UpdateState(bg, refOf("t"), S{Count: 10}, "c"); err != nil {
		t.Fatal(err)
	}
	snap, _ = c.State(bg, refOf("t"))
	if len(snap.Next) != 0 || snap.Values.Count != 13 {
		t.Fatalf("after updating as c: next %q count %d", snap.Next, snap.Values.Count)
	}
	_, err = c.UpdateState(bg, refOf("t"), S{}, "bb")
	wantErr(t, err, `unknown node "bb"`, `did you mean "b"`)
}

func TestUpdateStateWithoutNodeKeepsSchedule(t *testing.T) {
	c, _, _ := abc(t, graph.CompileOptions{InterruptBefore: []string{"b"}})
	_, err := c.Invoke(bg, S{}, graph.WithThread("t"))
	interrupted(t, err)
	if _, err := c.UpdateState(bg, refOf("t"), S{Answer: "x"}, ""); err != nil {
		t.Fatal(err)
	}
	snap, _ := c.State(bg, refOf("t"))
	if !slices.Equal(snap.Next, []string{"b"}) || snap.Values.Answer != "x" {
		t.Fatalf("next %q answer %q", snap.Next, snap.Values.Answer)
	}
	// b reads the updated state.
	out, err := c.Invoke(bg, S{}, graph.WithThread("t"), graph.Continue())
	if err != nil || out.Answer != "x" || len(out.Notes) != 3 {
		t.Fatalf("got %+v, %v", out, err)
	}
	// A new thread can be seeded by an update.
	if _, err := c.UpdateState(bg, refOf("fresh"), S{Answer: "seed"}, ""); err != nil {
		t.Fatal(err)
	}
	snap, err = c.State(bg, refOf("fresh"))
	if err != nil || snap.Values.Answer != "seed" {
		t.Fatalf("seeded thread: %+v, %v", snap, err)
	}
}

func TestForkFromPastCheckpoint(t *testing.T) {
	c, saver, calls := abc(t)
	if _, err := c.Invoke(bg, S{}, graph.WithThread("t")); err != nil {
		t.Fatal(err)
	}
	hist := history(t, c, "t")
	afterA := hist[2] // a has run; b is next
	if !slices.Equal(afterA.Next, []string{"b"}) {
		t.Fatalf("checkpoint after a schedules %q", afterA.Next)
	}
	// Replay from there: b and c run again; a does not.
	out, err := c.Invoke(bg, S{}, graph.WithThread("t"), graph.FromCheckpoint(afterA.Ref.CheckpointID), graph.Continue())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "c"}; !slices.Equal(out.Notes, want) {
		t.Fatalf("replayed notes %q, want %q", out.Notes, want)
	}
	if calls.get("a") != 1 || calls.get("b") != 2 {
		t.Fatalf("calls %v", calls.n)
	}
	// As LangGraph: the branch starts with a fork checkpoint, a copy of afterA one step later,
	// and numbers its supersteps from there.
	branch := history(t, c, "t")[5:]
	if len(branch) != 3 {
		t.Fatalf("the replay wrote %d checkpoints, want 3 (fork, b, c)", len(branch))
	}
	fork := branch[0]
	if fork.Metadata["source"] != "fork" || fork.Step != afterA.Step+1 || fork.Parent == nil ||
		fork.Parent.CheckpointID != afterA.Ref.CheckpointID || !slices.Equal(fork.Next, afterA.Next) ||
		!slices.Equal(fork.Values.Notes, afterA.Values.Notes) {
		t.Fatalf("fork checkpoint %+v, want a copy of %+v one step later", fork, afterA)
	}
	if branch[1].Step != fork.Step+1 || branch[1].Parent.CheckpointID != fork.Ref.CheckpointID {
		t.Fatalf("the branch's next checkpoint: step %d parent %v", branch[1].Step, branch[1].Parent)
	}
	// Fork with an edit: update the old checkpoint, then continue the new branch.
	ref, err := c.UpdateState(bg, afterA.Ref, S{Notes: []string{"edit"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	forked, err := c.State(bg, ref)
	if err != nil {
		t.Fatal(err)
	}
	if forked.Parent == nil || forked.Parent.CheckpointID != afterA.Ref.CheckpointID {
		t.Fatalf("the fork's parent is %v, want %s", forked.Parent, afterA.Ref.CheckpointID)
	}
	out, err = c.Invoke(bg, S{}, graph.WithThread("t"), graph.Continue())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "edit", "b", "c"}; !slices.Equal(out.Notes, want) {
		t.Fatalf("forked notes %q, want %q", out.Notes, want)
	}
	// The original branch is intact.
	orig, err := c.State(bg, hist[4].Ref)
	if err != nil || !slices.Equal(orig.Values.Notes, []string{"a", "b", "c"}) {
		t.Fatalf("original branch: %+v, %v", orig, err)
	}
	if n := countCheckpoints(t, saver, "t"); n != 5+3+1+2 {
		t.Fatalf("%d checkpoints, want 11", n)
	}
}

func TestDeleteAndPruneThread(t *testing.T) {
	c, saver, _ := abc(t)
	for _, th := range []string{"keep", "gone"} {
		if _, err := c.Invoke(bg, S{Notes: []string{th}}, graph.WithThread(th)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.DeleteThread(bg, "gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.State(bg, refOf("gone")); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("deleted thread: %v", err)
	}
	if err := c.DeleteThread(bg, "never"); err != nil {
		t.Fatalf("deleting an unknown thread: %v", err)
	}
	if err := c.PruneThread(bg, "keep", 2); err != nil {
		t.Fatal(err)
	}
	if n := countCheckpoints(t, saver, "keep"); n != 2 {
		t.Fatalf("%d checkpoints after pruning to 2", n)
	}
	snap, err := c.State(bg, refOf("keep"))
	if err != nil || !slices.Equal(snap.Values.Notes, []string{"keep", "a", "b", "c"}) {
		t.Fatalf("pruned thread reads %+v, %v", snap, err)
	}
	wantErr(t, c.PruneThread(bg, "keep", 0), "at least 1")
	// The pruned thread still runs.
	out, err := c.Invoke(bg, S{}, graph.WithThread("keep"))
	if err != nil || len(out.Notes) != 7 {
		t.Fatalf("run after prune: %+v, %v", out, err)
	}
}

func TestDeltaBlobGrowsWithTheWriteNotTheState(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("reply", func(ctx context.Context, s S) (S, error) {
		return S{Messages: []message.Message{message.Assistant(fmt.Sprintf("reply to %d messages", len(s.Messages)))}}, nil
	})
	g.AddEdge(graph.START, "reply")
	c, saver := withSaver(t, g)
	long := make([]message.Message, 1000)
	for i := range long {
		long[i] = message.User(fmt.Sprintf("message number %d with some padding text", i))
	}
	if _, err := c.Invoke(bg, S{Messages: long}, graph.WithThread("t")); err != nil {
		t.Fatal(err)
	}
	chain := blobsOf(t, saver, "t", "messages")
	full := chain[len(chain)-1]
	if len(chain) != 2 || chain[0].Base == "" || full.Base != "" {
		t.Fatalf("want one delta over one full blob, got %d blobs", len(chain))
	}
	if len(full.Data) < 50_000 || len(chain[0].Data) > 300 {
		t.Fatalf("full blob %d bytes, delta %d bytes: the delta must hold about one message", len(full.Data), len(chain[0].Data))
	}
	// A second run (a fresh loop restored from the saver) also stores a delta.
	for i := range 3 {
		if _, err := c.Invoke(bg, S{Messages: []message.Message{message.User(fmt.Sprint("more ", i))}}, graph.WithThread("t")); err != nil {
			t.Fatal(err)
		}
		if d := blobsOf(t, saver, "t", "messages")[0]; d.Base == "" || len(d.Data) > 300 {
			t.Fatalf("run %d stored %d bytes (base %q)", i, len(d.Data), d.Base)
		}
	}
	snap, err := c.State(bg, refOf("t"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(snap.Values.Messages); n != 1007 {
		t.Fatalf("rebuilt %d messages, want 1007", n)
	}
	if got := snap.Values.Messages[1006].Content; got != "reply to 1006 messages" {
		t.Fatalf("last message %q", got)
	}
}

func TestDeltaChainsRebuildEveryCheckpoint(t *testing.T) {
	// Many small appends exceed the delta budget several times; every checkpoint in the history
	// must still read back exactly.
	g := graph.New[S]()
	g.AddNode("grow", func(ctx context.Context, s S) (S, error) {
		return S{Notes: []string{strings.Repeat("x", 150) + fmt.Sprint(len(s.Notes))}, Count: 1,
			Scores: map[string]int{fmt.Sprint("k", len(s.Notes)%7): len(s.Notes)}}, nil
	})
	g.AddEdge(graph.START, "grow")
	g.AddConditionalEdges("grow", func(ctx context.Context, s S) (string, error) {
		if len(s.Notes) >= 80 {
			return graph.END, nil
		}
		return "grow", nil
	}, nil)
	c, saver := withSaver(t, g)
	if _, err := c.Invoke(bg, S{}, graph.WithThread("t"), graph.WithRecursionLimit(100)); err != nil {
		t.Fatal(err)
	}
	hist := history(t, c, "t")[1:] // after the input checkpoint, empty like the input
	if len(hist) != 81 {
		t.Fatalf("%d checkpoints", len(hist))
	}
	for i, snap := range hist {
		if len(snap.Values.Notes) != i || snap.Values.Count != i {
			t.Fatalf("checkpoint %d rebuilt %d notes and count %d", i, len(snap.Values.Notes), snap.Values.Count)
		}
		for j, n := range snap.Values.Notes {
			if !strings.HasSuffix(n, fmt.Sprint("x", j)) {
				t.Fatalf("checkpoint %d note %d = %q", i, j, n)
			}
		}
	}
	// The stored bytes stay within a small multiple of the value, not quadratic in the steps.
	total := 0
	for _, b := range blobsOf(t, saver, "t", "notes") {
		total += len(b.Data)
	}
	if value := 80 * 160; total > 3*value {
		t.Fatalf("the newest checkpoint reads %d bytes of blobs for a %d-byte value", total, value)
	}
}

type stateV2 struct {
	Messages []message.Message `json:"messages" reduce:"messages"`
	Notes    []string          `json:"notes"` // no reducer now
	Count    string            `json:"count"` // was an int
}

type stateFewer struct {
	Notes []string `json:"notes" reduce:"append"`
}

func TestGraphChangedUnderAThread(t *testing.T) {
	c, saver, _ := abc(t, graph.CompileOptions{InterruptBefore: []string{"b"}})
	_, err := c.Invoke(bg, S{Count: 1, Notes: []string{"n"}}, graph.WithThread("t"))
	interrupted(t, err)
	// Continue once more so that notes holds a delta.
	if _, err := c.UpdateState(bg, refOf("t"), S{Notes: []string{"more"}}, ""); err != nil {
		t.Fatal(err)
	}

	t.Run("node removed", func(t *testing.T) {
		g := graph.New[S]()
		g.AddNode("a", note("a")).AddNode("bee", note("bee"))
		g.AddSequence(graph.START, "a", "bee", graph.END)
		c2 := compile(t, g, graph.CompileOptions{Saver: saver})
		_, err := c2.Invoke(bg, S{}, graph.WithThread("t"), graph.Continue())
		if !errors.Is(err, graph.ErrGraphChanged) {
			t.Fatalf("want ErrGraphChanged, got %v", err)
		}
		wantErr(t, err, `node "b" is scheduled`, "no longer has it")
	})
	t.Run("state key removed", func(t *testing.T) {
		g := graph.New[stateFewer]()
		g.AddNode("b", func(ctx context.Context, s stateFewer) (stateFewer, error) { return s, nil })
		g.AddEdge(graph.START, "b")
		c2 := compile(t, g, graph.CompileOptions{Saver: saver})
		_, err := c2.Invoke(bg, stateFewer{}, graph.WithThread("t"), graph.Continue())
		if !errors.Is(err, graph.ErrGraphChanged) {
			t.Fatalf("want ErrGraphChanged, got %v", err)
		}
		wantErr(t, err, `state key "count"`, "no longer has")
		_, err = c2.State(bg, refOf("t"))
		if !errors.Is(err, graph.ErrGraphChanged) {
			t.Fatalf("State: want ErrGraphChanged, got %v", err)
		}
	})
	t.Run("key type or reducer changed", func(t *testing.T) {
		g := graph.New[stateV2]()
		g.AddNode("b", func(ctx context.Context, s stateV2) (stateV2, error) { return s, nil })
		g.AddEdge(graph.START, "b")
		c2 := compile(t, g, graph.CompileOptions{Saver: saver})
		_, err := c2.Invoke(bg, stateV2{}, graph.WithThread("t"), graph.Continue())
		if !errors.Is(err, graph.ErrGraphChanged) {
			t.Fatalf("want ErrGraphChanged, got %v", err)
		}
		wantErr(t, err, `"count"`, "string")
	})
	t.Run("reducer removed", func(t *testing.T) {
		type noReducer struct {
			Notes  []string          `json:"notes"`
			Count  int               `json:"count"`
			Others []message.Message `json:"messages"`
		}
		g := graph.New[noReducer]()
		g.AddNode("b", func(ctx context.Context, s noReducer) (noReducer, error) { return s, nil })
		g.AddEdge(graph.START, "b")
		c2 := compile(t, g, graph.CompileOptions{Saver: saver})
		_, err := c2.Invoke(bg, noReducer{}, graph.WithThread("t"), graph.Continue())
		if !errors.Is(err, graph.ErrGraphChanged) {
			t.Fatalf("want ErrGraphChanged, got %v", err)
		}
		wantErr(t, err, `"count"`, "no reducer now")
	})
	// The original graph still continues the thread.
	out, err := c.Invoke(bg, S{}, graph.WithThread("t"), graph.Continue())
	if err != nil || !slices.Equal(out.Notes, []string{"n", "a", "more", "b", "c"}) {
		t.Fatalf("original graph: %+v, %v", out, err)
	}
}

// brokenSaver wraps a saver and fails every Put, to check save errors surface.
type brokenSaver struct{ checkpoint.Saver }

func (brokenSaver) Put(context.Context, checkpoint.PutRequest) error { return errors.New("disk full") }

func TestSaverErrorsSurface(t *testing.T) {
	for _, d := range []graph.Durability{graph.DurabilitySync, graph.DurabilityAsync, graph.DurabilityExit} {
		t.Run(string(d), func(t *testing.T) {
			g := graph.New[S]()
			g.AddNode("a", note("a"))
			g.AddEdge(graph.START, "a")
			c := compile(t, g, graph.CompileOptions{Saver: brokenSaver{checkpoint.NewMemorySaver()}, Durability: d})
			_, err := c.Invoke(bg, S{}, graph.WithThread("t"))
			wantErr(t, err, "disk full")
		})
	}
}

// docsState holds dynamic JSON documents, which states often keep many times over.
type docsState struct {
	Docs []any          `json:"docs" reduce:"append"`
	Last map[string]any `json:"last"`
}

func TestRepeatedDocumentsAreStoredOnceAndRestored(t *testing.T) {
	doc := map[string]any{"body": strings.Repeat("a long document ", 50), "tags": []any{"x", "y", 3.0}}
	g := graph.New[docsState]()
	g.AddNode("double", func(ctx context.Context, s docsState) (docsState, error) {
		// Append the list to itself: the same document, more and more times.
		return docsState{Docs: s.Docs, Last: doc}, nil
	})
	g.AddConditionalEdges("double", func(ctx context.Context, s docsState) (string, error) {
		if len(s.Docs) >= 512 {
			return graph.END, nil
		}
		return "double", nil
	}, nil)
	g.AddEdge(graph.START, "double")
	c, saver := withSaver(t, g)
	if _, err := c.Invoke(bg, docsState{Docs: []any{doc}}, graph.WithThread("t"), graph.WithDurability(graph.DurabilityExit)); err != nil {
		t.Fatal(err)
	}
	stored := 0
	for _, ch := range []string{"docs", "last"} {
		for _, b := range blobsOf(t, saver, "t", ch) {
			stored += len(b.Data)
		}
	}
	if stored > 20_000 {
		t.Errorf("512 copies of an 800-byte document took %d bytes: each copy was written out", stored)
	}
	snap, err := c.State(bg, refOf("t"))
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Values.Docs) != 512 {
		t.Fatalf("restored %d documents, want 512", len(snap.Values.Docs))
	}
	for i, d := range append(snap.Values.Docs, any(snap.Values.Last)) {
		m, ok := d.(map[string]any)
		if !ok || m["body"] != doc["body"] || len(m["tags"].([]any)) != 3 {
			t.Fatalf("document %d restored as %#v", i, d)
		}
	}
	// The restored thread goes on: a run from it appends once more and stores it again.
	if _, err := c.Invoke(bg, docsState{}, graph.WithThread("t")); err != nil {
		t.Fatal(err)
	}
	snap, err = c.State(bg, refOf("t"))
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Values.Docs) != 1024 {
		t.Fatalf("after another run %d documents, want 1024", len(snap.Values.Docs))
	}
}

// A run stopped between its input checkpoint and the superstep that applies the input (here,
// the entry route fails once) continues from the input checkpoint: the input waits there as the
// __start__ task, as in LangGraph.
func TestRunContinuesFromItsInputCheckpoint(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("a", note("a"))
	failing := true
	g.AddConditionalEdges(graph.START, func(ctx context.Context, s S) (string, error) {
		if failing {
			return "", errors.New("entry route unavailable")
		}
		return "a", nil
	}, nil)
	g.AddEdge("a", graph.END)
	c, _ := withSaver(t, g)
	_, err := c.Invoke(bg, S{Notes: []string{"in"}}, graph.WithThread("t"))
	wantErr(t, err, "entry route unavailable")
	snap, err := c.State(bg, refOf("t"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(snap.Next, []string{"__start__"}) || len(snap.Values.Notes) != 0 || snap.Step != -1 || snap.Metadata["source"] != "input" {
		t.Fatalf("input checkpoint: next %q notes %q step %d metadata %v", snap.Next, snap.Values.Notes, snap.Step, snap.Metadata)
	}
	failing = false
	out, err := c.Invoke(bg, S{}, graph.WithThread("t"), graph.Continue())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"in", "a"}; !slices.Equal(out.Notes, want) {
		t.Fatalf("notes %q, want %q", out.Notes, want)
	}
}

// An update as __start__ stands for input: the values apply and the nodes after START are
// scheduled (LangGraph's as_node="__start__").
func TestUpdateStateAsStart(t *testing.T) {
	c, _, calls := abc(t)
	if _, err := c.UpdateState(bg, refOf("t"), S{Notes: []string{"seed"}}, graph.START); err != nil {
		t.Fatal(err)
	}
	snap, err := c.State(bg, refOf("t"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(snap.Next, []string{"a"}) || !slices.Equal(snap.Values.Notes, []string{"seed"}) {
		t.Fatalf("after the update: next %q notes %q", snap.Next, snap.Values.Notes)
	}
	out, err := c.Invoke(bg, S{}, graph.WithThread("t"), graph.Continue())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"seed", "a", "b", "c"}; !slices.Equal(out.Notes, want) || calls.get("a") != 1 {
		t.Fatalf("notes %q, want %q", out.Notes, want)
	}
}

// Replaying from a checkpoint paused at an interrupt asks the interrupt again (LangGraph's time
// travel): the answer the first branch gave is not reused, and the branch starts with a fork.
func TestReplayAsksInterruptsAgain(t *testing.T) {
	g := graph.New[S]()
	g.AddNode("ask", func(ctx context.Context, s S) (S, error) {
		v, err := graph.Interrupt(ctx, "ok?")
		if err != nil {
			return S{}, err
		}
		return S{Answer: fmt.Sprint(v)}, nil
	})
	g.AddEdge(graph.START, "ask").AddEdge("ask", graph.END)
	c, _ := withSaver(t, g)
	_, err := c.Invoke(bg, S{}, graph.WithThread("t"))
	interrupted(t, err)
	paused, err := c.State(bg, refOf("t"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := c.Invoke(bg, S{}, graph.WithThread("t"), graph.Resume("yes")); err != nil || out.Answer != "yes" {
		t.Fatalf("resumed: %+v, %v", out, err)
	}
	_, err = c.Invoke(bg, S{}, graph.WithThread("t"), graph.FromCheckpoint(paused.Ref.CheckpointID), graph.Continue())
	interrupted(t, err)
	snap, err := c.State(bg, refOf("t"))
	if err != nil {
		t.Fatal(err)
	}
	if snap.Parent == nil || snap.Parent.CheckpointID != paused.Ref.CheckpointID || snap.Metadata["source"] != "fork" ||
		len(snap.Interrupts()) != 1 || snap.Values.Answer != "" {
		t.Fatalf("after the replay: %+v", snap)
	}
	// The branch is answered on its own.
	if out, err := c.Invoke(bg, S{}, graph.WithThread("t"), graph.Resume("no")); err != nil || out.Answer != "no" {
		t.Fatalf("the branch resumed: %+v, %v", out, err)
	}
}
