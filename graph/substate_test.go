package graph_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
)

// As LangGraph's get_state: without subgraphs a subgraph task carries only the checkpoint
// config of its namespace; with subgraphs=True it carries the subgraph's own snapshot.
func TestStateWithSubgraphsOfAnInterruptedSubgraph(t *testing.T) {
	t.Parallel()
	calls := newCounter()
	c, _ := parentGraph(t, childGraph(t, calls, true), calls)
	_, err := c.Invoke(bg, parentState{Topic: "owls"}, graph.WithThread("t"))
	interrupted(t, err)

	plain, err := c.State(bg, refOf("t"))
	if err != nil {
		t.Fatal(err)
	}
	team := taskNamed(t, plain.Tasks, "team")
	if team.Checkpoint == nil || team.Checkpoint.ThreadID != "t" || team.Checkpoint.NS != "team:"+team.ID || team.Checkpoint.CheckpointID != "" {
		t.Fatalf("team task checkpoint %+v, want thread t, namespace team:%s", team.Checkpoint, team.ID)
	}
	if team.State != nil {
		t.Fatalf("State without subgraphs: %+v", team.State)
	}
	if side := taskNamed(t, plain.Tasks, "side"); side.Checkpoint != nil {
		t.Fatalf("a plain node's task has a subgraph checkpoint: %+v", side.Checkpoint)
	}

	snap, err := c.StateWithSubgraphs(bg, refOf("t"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(snap.Next, plain.Next) || len(snap.Tasks) != len(plain.Tasks) {
		t.Fatalf("the parent's snapshot differs with subgraphs: next %q, %d tasks", snap.Next, len(snap.Tasks))
	}
	sub := taskNamed(t, snap.Tasks, "team").State
	if sub == nil {
		t.Fatal("the team task has no subgraph state")
	}
	vals, ok := sub.Values.(childState)
	if !ok {
		t.Fatalf("subgraph values are %T, want childState", sub.Values)
	}
	if vals.Subject != "owls" || !slices.Equal(vals.Steps, []string{"research owls"}) {
		t.Fatalf("subgraph values %+v", vals)
	}
	if !slices.Equal(sub.Next, []string{"write"}) {
		t.Fatalf("subgraph next %q, want [write]", sub.Next)
	}
	ins := sub.Interrupts()
	if len(ins) != 1 || ins[0].Value != "tone for owls?" || ins[0].Node != "write" {
		t.Fatalf("subgraph interrupts %+v", ins)
	}
	if sub.Ref.NS != team.Checkpoint.NS || sub.Ref.CheckpointID == "" {
		t.Fatalf("subgraph ref %+v, want a checkpoint in %q", sub.Ref, team.Checkpoint.NS)
	}
	// The Runnable view gives the same.
	er, ok := c.Runnable().(interface {
		StateWithSubgraphs(context.Context, checkpoint.Ref) (*graph.StateSnapshot[any], error)
	})
	if !ok {
		t.Fatal("the Runnable view has no StateWithSubgraphs")
	}
	esnap, err := er.StateWithSubgraphs(bg, refOf("t"))
	if err != nil {
		t.Fatal(err)
	}
	if es := taskNamed(t, esnap.Tasks, "team").State; es == nil || !slices.Equal(es.Next, []string{"write"}) {
		t.Fatalf("erased subgraph state %+v", es)
	}

	// Resumed to the end: nothing is left to run, so no task carries a subgraph.
	if _, err := c.Invoke(bg, parentState{}, graph.WithThread("t"), graph.Resume("calm")); err != nil {
		t.Fatal(err)
	}
	done, err := c.StateWithSubgraphs(bg, refOf("t"))
	if err != nil {
		t.Fatal(err)
	}
	if len(done.Tasks) != 0 || len(done.Next) != 0 {
		t.Fatalf("finished thread: next %q tasks %+v", done.Next, done.Tasks)
	}
	// A past checkpoint (history) still reaches the subgraph's namespace: its newest state.
	var past *graph.StateSnapshot[parentState]
	for s, err := range c.History(bg, "t", graph.HistoryOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(s.Next, "team") {
			past = s
			break
		}
	}
	if past == nil {
		t.Fatal("no checkpoint of the history has team next")
	}
	old, err := c.StateWithSubgraphs(bg, past.Ref)
	if err != nil {
		t.Fatal(err)
	}
	fin := taskNamed(t, old.Tasks, "team").State
	if fin == nil || len(fin.Next) != 0 || !slices.Equal(fin.Values.(childState).Steps, []string{"research owls", "write owls (calm)"}) {
		t.Fatalf("the subgraph's state seen from a past checkpoint: %+v", fin)
	}
}

func TestStateWithSubgraphsNested(t *testing.T) {
	t.Parallel()
	calls := newCounter()
	inner := childGraph(t, calls, true)
	mid := graph.New[childState]()
	graph.AddSubgraph(mid, "inner", inner, nil, nil)
	mid.AddEdge(graph.START, "inner").AddEdge("inner", graph.END)
	midC := compile(t, mid, graph.CompileOptions{Name: "mid"})
	outer := graph.New[childState]()
	graph.AddSubgraph(outer, "mid", midC, nil, nil)
	outer.AddEdge(graph.START, "mid").AddEdge("mid", graph.END)
	c, _ := withSaver(t, outer)

	_, err := c.Invoke(bg, childState{Subject: "bees"}, graph.WithThread("n"))
	ins := interrupted(t, err)
	snap, err := c.StateWithSubgraphs(bg, refOf("n"))
	if err != nil {
		t.Fatal(err)
	}
	m := taskNamed(t, snap.Tasks, "mid")
	if m.State == nil || !slices.Equal(m.State.Next, []string{"inner"}) {
		t.Fatalf("mid state %+v", m.State)
	}
	in := taskNamed(t, m.State.Tasks, "inner")
	if in.Checkpoint == nil || !strings.HasPrefix(in.Checkpoint.NS, "mid:"+m.ID+"|inner:") {
		t.Fatalf("inner checkpoint %+v, want a namespace under mid:%s", in.Checkpoint, m.ID)
	}
	if in.State == nil || !slices.Equal(in.State.Next, []string{"write"}) || len(in.State.Interrupts()) != 1 {
		t.Fatalf("inner state %+v", in.State)
	}
	if got := in.State.Interrupts()[0]; got.ID != ins[0].ID || got.NS != in.Checkpoint.NS {
		t.Fatalf("the innermost interrupt %+v, the run's %+v", got, ins[0])
	}
}

// A subgraph that is still running shows its progress so far.
func TestStateWithSubgraphsWhileRunning(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	child := graph.New[childState]()
	child.AddNode("first", func(ctx context.Context, s childState) (childState, error) {
		return childState{Steps: []string{"first"}}, nil
	})
	child.AddNode("slow", func(ctx context.Context, s childState) (childState, error) {
		close(entered)
		<-release
		return childState{Steps: []string{"slow"}}, nil
	})
	child.AddSequence(graph.START, "first", "slow", graph.END)
	parent := graph.New[childState]()
	graph.AddSubgraph(parent, "work", compile(t, child), nil, nil)
	parent.AddEdge(graph.START, "work").AddEdge("work", graph.END)
	c, _ := withSaver(t, parent)

	done := make(chan error, 1)
	go func() {
		_, err := c.Invoke(bg, childState{Subject: "x"}, graph.WithThread("r"))
		done <- err
	}()
	<-entered
	snap, err := c.StateWithSubgraphs(bg, refOf("r"))
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	w := taskNamed(t, snap.Tasks, "work")
	if w.State == nil || !slices.Equal(w.State.Next, []string{"slow"}) || !slices.Equal(w.State.Values.(childState).Steps, []string{"first"}) {
		t.Fatalf("running subgraph state %+v", w.State)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func taskNamed(t *testing.T, tasks []graph.TaskState, name string) graph.TaskState {
	t.Helper()
	for _, ts := range tasks {
		if ts.Name == name {
			return ts
		}
	}
	t.Fatalf("no task %q among %+v", name, tasks)
	return graph.TaskState{}
}
