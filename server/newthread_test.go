package server

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
)

// getCounter is a saver counting its Gets.
type getCounter struct {
	checkpoint.Saver
	gets atomic.Int32
}

func (g *getCounter) Get(ctx context.Context, ref checkpoint.Ref) (*checkpoint.Tuple, error) {
	g.gets.Add(1)
	return g.Saver.Get(ctx, ref)
}

func putCP(t *testing.T, s checkpoint.Saver, ctx context.Context, thread, head string, data string) string {
	t.Helper()
	id := checkpoint.NewID()
	req := checkpoint.PutRequest{ThreadID: thread, Head: head, Checkpoint: checkpoint.Checkpoint{ID: id, ParentID: head, Versions: map[string]string{"v": id}},
		Blobs: []checkpoint.Blob{{Channel: "v", Version: id, Data: []byte(data)}}}
	if err := s.Put(ctx, req); err != nil {
		t.Fatal(err)
	}
	return id
}

// A watched thread's reads through the run's contexts come from what was written to it, however
// it was written (the graph's background writer uses a context of its own), until the mirror
// cannot follow; other reads go to the saver.
func TestNewThreadSaverMirror(t *testing.T) {
	t.Parallel()
	inner := &getCounter{Saver: checkpoint.NewMemorySaver()}
	s := wrapSaver(inner)
	ctx, stop := s.watch(context.Background(), "t1", holdUntilNode)
	if _, err := s.Get(ctx, checkpoint.Ref{ThreadID: "t1"}); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("first look: %v, want ErrNotFound", err)
	}
	bg := context.Background()
	first := putCP(t, s, bg, "t1", "", `"one"`)
	second := putCP(t, s, bg, "t1", first, `"two"`)
	if err := s.PutWrites(bg, checkpoint.WritesRequest{Ref: checkpoint.Ref{ThreadID: "t1", CheckpointID: second}, TaskID: "task", Writes: []checkpoint.PendingWrite{{Channel: "v", Value: []byte(`"w"`)}}}); err != nil {
		t.Fatal(err)
	}
	check := func(ctx context.Context, wantGets int32) {
		t.Helper()
		tup, err := s.Get(ctx, checkpoint.Ref{ThreadID: "t1"})
		if err != nil {
			t.Fatal(err)
		}
		if tup.Checkpoint.ID != second || len(tup.Blobs) != 1 || string(tup.Blobs[0].Data) != `"two"` || len(tup.Pending) != 1 || tup.Pending[0].TaskID != "task" {
			t.Fatalf("newest: %+v", tup)
		}
		if got := inner.gets.Load(); got != wantGets {
			t.Fatalf("the saver was read %d times, want %d", got, wantGets)
		}
	}
	check(ctx, 0)
	check(withThreadOf(context.Background(), ctx), 0) // the engine's read after the run
	check(bg, 1)                                      // not the run's: the saver answers
	stop()
	check(ctx, 1) // the mirror stays as it was for the run's late reads

	// A write that fails, or more than the mirror keeps, sends reads back to the saver.
	ctx2, stop2 := s.watch(context.Background(), "t2", holdUntilNode)
	defer stop2()
	head := putCP(t, s, bg, "t2", "", `"a"`)
	if err := s.Put(bg, checkpoint.PutRequest{ThreadID: "t2", Head: "stale", Checkpoint: checkpoint.Checkpoint{ID: checkpoint.NewID()}}); err == nil {
		t.Fatal("a put on a stale head succeeded")
	}
	before := inner.gets.Load()
	if tup, err := s.Get(ctx2, checkpoint.Ref{ThreadID: "t2"}); err != nil || tup.Checkpoint.ID != head {
		t.Fatalf("t2 after a failed put: %+v, %v", tup, err)
	}
	if inner.gets.Load() != before+1 {
		t.Fatal("t2's mirror answered after a failed put")
	}
	ctx3, stop3 := s.watch(context.Background(), "t3", holdUntilNode)
	defer stop3()
	putCP(t, s, bg, "t3", "", `"`+strings.Repeat("x", mirrorMaxBytes)+`"`)
	before = inner.gets.Load()
	if _, err := s.Get(ctx3, checkpoint.Ref{ThreadID: "t3"}); err != nil || inner.gets.Load() != before+1 {
		t.Fatalf("t3 over the mirror's bound: %v, saver read %d times", err, inner.gets.Load()-before)
	}
}
