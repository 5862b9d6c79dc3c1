package sqlitesaver_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/trellis-go/trellis/checkpoint/checkpointtest"
	"github.com/trellis-go/trellis/checkpoint/sqlitesaver"
)

// DeleteThreadsTx deletes several threads' checkpoints in a caller's transaction on the same
// file, leaves the others, and commits with the caller.
func TestDeleteThreadsTx(t *testing.T) {
	s, path := setup(t)
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkpointtest.DeleteThreadsTx(t, s, db, sqlitesaver.DeleteThreadsTx, func(thread string) int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(context.Background(), `SELECT (SELECT count(*) FROM trellis_checkpoints c JOIN trellis_checkpoint_spaces s ON s.id = c.space WHERE s.thread_id = ?1)
			+ (SELECT count(*) FROM trellis_checkpoint_writes w JOIN trellis_checkpoint_spaces s ON s.id = w.space WHERE s.thread_id = ?1)
			+ (SELECT count(*) FROM trellis_checkpoint_spaces WHERE thread_id = ?1)`, thread).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	})
}
