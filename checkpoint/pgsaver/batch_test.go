package pgsaver_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/trellis-go/trellis/checkpoint"
)

// QueuePut sends a put with other statements in one round trip and one transaction: it lands
// with them, a head that does not match is reported as Put reports it, and a statement of the
// batch that fails undoes the put. QueueDeleteThreads deletes as DeleteThreads does.
func TestQueuePut(t *testing.T) {
	s, bb := setup(t)
	ctx := context.Background()
	stale := checkpoint.NewID() // a head the thread never had
	send := func(req checkpoint.PutRequest, more string) error {
		t.Helper()
		b := &pgx.Batch{}
		check, err := s.QueuePut(ctx, b, req)
		if err != nil {
			t.Fatal(err)
		}
		b.Queue(more)
		return check(ctx, bb.pool.SendBatch(ctx, b).Close())
	}
	cp := func(head string) checkpoint.PutRequest {
		return checkpoint.PutRequest{ThreadID: "t", Head: head, Checkpoint: checkpoint.Checkpoint{ID: checkpoint.NewID(), ParentID: head}}
	}
	first := cp("")
	if err := send(first, "SELECT 1"); err != nil {
		t.Fatalf("a put with a statement that succeeds: %v", err)
	}
	if tup, err := s.Get(ctx, checkpoint.Ref{ThreadID: "t"}); err != nil || tup.Checkpoint.ID != first.Checkpoint.ID {
		t.Fatalf("after the batch: %v %v", tup, err)
	}
	if err := send(cp(first.Checkpoint.ID), "SELECT 1/0"); err == nil {
		t.Fatal("a put whose batch failed reported no error")
	}
	if tup, err := s.Get(ctx, checkpoint.Ref{ThreadID: "t"}); err != nil || tup.Checkpoint.ID != first.Checkpoint.ID {
		t.Fatalf("a failed batch's put landed: %v %v", tup, err)
	}
	if err := send(cp(stale), "SELECT 1"); !errors.Is(err, checkpoint.ErrConflict) {
		t.Fatalf("a put on a stale head: %v, want ErrConflict", err)
	}
	b := &pgx.Batch{}
	if err := s.QueueDeleteThreads(ctx, b, []string{"t"}); err != nil {
		t.Fatal(err)
	}
	if err := bb.pool.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, checkpoint.Ref{ThreadID: "t"}); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("after QueueDeleteThreads: %v, want ErrNotFound", err)
	}
}
