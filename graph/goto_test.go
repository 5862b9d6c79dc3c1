package graph_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
)

type gotoState struct {
	Log   []string `json:"log" reduce:"append"`
	Topic string   `json:"topic"`
}

// Goto schedules the nodes named in place of what was scheduled, after applying its
// update: on a new thread, and on one paused at an interrupt (whose task is dropped). The
// Runnable view's Goto takes the update as JSON.
func TestGoto(t *testing.T) {
	ctx := context.Background()
	g := graph.New[gotoState]()
	step := func(name string) func(context.Context, gotoState) (gotoState, error) {
		return func(ctx context.Context, s gotoState) (gotoState, error) { return gotoState{Log: []string{name}}, nil }
	}
	g.AddNode("a", step("a"))
	g.AddNode("b", func(ctx context.Context, s gotoState) (gotoState, error) {
		if _, err := graph.Interrupt(ctx, "ok?"); err != nil {
			return gotoState{}, err
		}
		return gotoState{Log: []string{"b"}}, nil
	})
	g.AddNode("c", step("c"))
	g.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", "c").AddEdge("c", graph.END)
	c, err := g.Compile(graph.CompileOptions{Saver: checkpoint.NewMemorySaver()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Goto(ctx, checkpoint.Ref{ThreadID: "new"}, gotoState{Topic: "x"}, []string{"c"}); err != nil {
		t.Fatal(err)
	}
	out, err := c.Invoke(ctx, gotoState{}, graph.WithThread("new"), graph.Continue())
	if err != nil || !slices.Equal(out.Log, []string{"c"}) || out.Topic != "x" {
		t.Fatalf("goto c on a new thread: %+v, %v; want only c run, with the update", out, err)
	}

	if _, err := c.Invoke(ctx, gotoState{}, graph.WithThread("paused")); err == nil {
		t.Fatal("b did not interrupt")
	}
	jsonGoto, ok := c.Runnable().(interface {
		Goto(context.Context, checkpoint.Ref, json.RawMessage, []string) (checkpoint.Ref, error)
	})
	if !ok {
		t.Fatal("the Runnable view has no JSON Goto")
	}
	if _, err := jsonGoto.Goto(ctx, checkpoint.Ref{ThreadID: "paused"}, json.RawMessage(`{"topic":7}`), []string{"c"}); err == nil || !strings.Contains(err.Error(), "topic") {
		t.Fatalf("goto with an update of the wrong type: %v", err)
	}
	if _, err := jsonGoto.Goto(ctx, checkpoint.Ref{ThreadID: "paused"}, nil, []string{"c"}); err != nil {
		t.Fatal(err)
	}
	snap, err := c.State(ctx, checkpoint.Ref{ThreadID: "paused"})
	if err != nil || !slices.Equal(snap.Next, []string{"c"}) || len(snap.Interrupts()) != 0 {
		t.Fatalf("after goto c the thread waits for %v (interrupts %d, err %v)", snap.Next, len(snap.Interrupts()), err)
	}
	out, err = c.Invoke(ctx, gotoState{}, graph.WithThread("paused"), graph.Continue())
	if err != nil || !slices.Equal(out.Log, []string{"a", "c"}) {
		t.Fatalf("after goto c: %+v, %v; want a then c, b skipped", out, err)
	}

	before, _ := c.State(ctx, checkpoint.Ref{ThreadID: "paused"})
	if _, err := c.Goto(ctx, checkpoint.Ref{ThreadID: "paused"}, gotoState{}, []string{"nowhere"}); err == nil || !strings.Contains(err.Error(), "nowhere") {
		t.Fatalf("goto an unknown node: %v", err)
	}
	after, _ := c.State(ctx, checkpoint.Ref{ThreadID: "paused"})
	if before.Ref.CheckpointID != after.Ref.CheckpointID {
		t.Fatal("a goto to an unknown node wrote a checkpoint")
	}
}
