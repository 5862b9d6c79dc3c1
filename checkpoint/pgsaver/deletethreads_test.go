package pgsaver_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/trellis-go/trellis/checkpoint/checkpointtest"
	"github.com/trellis-go/trellis/checkpoint/pgsaver"
)

// DeleteThreadsTx deletes several threads' checkpoints in a caller's database/sql
// transaction on the same pool, leaves the others, and commits with the caller.
func TestDeleteThreadsTx(t *testing.T) {
	s, b := setup(t)
	db := stdlib.OpenDBFromPool(b.pool)
	defer db.Close()
	checkpointtest.DeleteThreadsTx(t, s, db, pgsaver.DeleteThreadsTx, func(thread string) int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(context.Background(), `SELECT (SELECT count(*) FROM trellis_checkpoints c JOIN trellis_checkpoint_spaces s ON s.id = c.space WHERE s.thread_id = $1)
			+ (SELECT count(*) FROM trellis_checkpoint_writes w JOIN trellis_checkpoint_spaces s ON s.id = w.space WHERE s.thread_id = $1)
			+ (SELECT count(*) FROM trellis_checkpoint_blobs w JOIN trellis_checkpoint_spaces s ON s.id = w.space WHERE s.thread_id = $1)
			+ (SELECT count(*) FROM trellis_checkpoint_spaces WHERE thread_id = $1)`, thread).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	})
}
