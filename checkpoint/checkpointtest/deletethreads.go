package checkpointtest

import (
	"context"
	"database/sql"
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
)

// DeleteThreadsTx checks a SQL saver's DeleteThreadsTx: on db, the saver's own database, del
// deletes several threads' checkpoints (blobs and pending writes included) in the caller's
// transaction and commits with it, while another thread keeps every row and stays readable;
// unknown threads and an empty list are no error. rows counts a thread's rows in the saver's
// tables, through db.
func DeleteThreadsTx(t *testing.T, s checkpoint.Saver, db *sql.DB, del func(context.Context, *sql.Tx, []string) error, rows func(thread string) int) {
	t.Helper()
	ctx := context.Background()
	for _, th := range []string{"a", "b", "keep"} {
		w := newWriter(t, s, th, "")
		first := w.put(map[string]string{"c": "1"}, full("c", "1", `1`))
		if err := s.PutWrites(ctx, checkpoint.WritesRequest{Ref: w.ref(first.ID), TaskID: "t1",
			Writes: []checkpoint.PendingWrite{{TaskID: "t1", Channel: "c", Value: []byte(`1`)}}}); err != nil {
			t.Fatalf("PutWrites: %v", err)
		}
		w.put(map[string]string{"c": "1"})
	}
	kept := rows("keep")
	if rows("a") == 0 || kept == 0 {
		t.Fatal("the threads have no rows to delete")
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := del(ctx, tx, []string{"a", "b", "unknown"}); err != nil {
		t.Fatalf("DeleteThreadsTx: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := rows("a") + rows("b"); n != 0 {
		t.Errorf("%d rows of the deleted threads are left", n)
	}
	if n := rows("keep"); n != kept {
		t.Errorf("the kept thread has %d rows, had %d", n, kept)
	}
	if tup, err := s.Get(ctx, checkpoint.Ref{ThreadID: "keep"}); err != nil || tup == nil {
		t.Errorf("the kept thread: %v, %v", tup, err)
	}
	if err := del(ctx, nil, nil); err != nil {
		t.Errorf("no threads: %v", err)
	}
}
