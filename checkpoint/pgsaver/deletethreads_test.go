package pgsaver_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/checkpoint/pgsaver"
)

// DeleteThreadsTx deletes several threads' checkpoints in a caller's database/sql
// transaction on the same pool, leaves the others, and commits with the caller.
func TestDeleteThreadsTx(t *testing.T) {
	ctx := context.Background()
	s, b := setup(t)
	for _, th := range []string{"a", "b", "keep"} {
		head := put(t, s, th, "", checkpoint.Blob{Channel: "c", Version: "1", Data: []byte(`1`)})
		if err := s.PutWrites(ctx, checkpoint.WritesRequest{Ref: checkpoint.Ref{ThreadID: th, CheckpointID: head}, TaskID: "t1", Writes: []checkpoint.PendingWrite{{TaskID: "t1", Channel: "c", Value: []byte(`1`)}}}); err != nil {
			t.Fatalf("PutWrites: %v", err)
		}
		put(t, s, th, head)
	}
	db := stdlib.OpenDBFromPool(b.pool)
	defer db.Close()
	count := func(thread string) int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM trellis_checkpoints c JOIN trellis_checkpoint_spaces s ON s.id = c.space WHERE s.thread_id = $1)
			+ (SELECT count(*) FROM trellis_checkpoint_writes w JOIN trellis_checkpoint_spaces s ON s.id = w.space WHERE s.thread_id = $1)
			+ (SELECT count(*) FROM trellis_checkpoint_blobs w JOIN trellis_checkpoint_spaces s ON s.id = w.space WHERE s.thread_id = $1)
			+ (SELECT count(*) FROM trellis_checkpoint_spaces WHERE thread_id = $1)`, thread).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	kept := count("keep")
	if count("a") == 0 || kept == 0 {
		t.Fatal("the threads have no rows to delete")
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := pgsaver.DeleteThreadsTx(ctx, tx, []string{"a", "b", "unknown"}); err != nil {
		t.Fatalf("DeleteThreadsTx: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := count("a") + count("b"); n != 0 {
		t.Errorf("%d rows of the deleted threads are left", n)
	}
	if n := count("keep"); n != kept {
		t.Errorf("the kept thread has %d rows, had %d", n, kept)
	}
	if tup, err := s.Get(ctx, checkpoint.Ref{ThreadID: "keep"}); err != nil || tup == nil {
		t.Errorf("the kept thread: %v, %v", tup, err)
	}
	if err := pgsaver.DeleteThreadsTx(ctx, nil, nil); err != nil {
		t.Errorf("no threads: %v", err)
	}
}
