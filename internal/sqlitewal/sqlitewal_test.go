package sqlitewal

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/trellis-go/trellis/store/sqlitestore"
)

// writer opens the database at path as the server's writers do, with the automatic checkpoint
// raised, and writes enough rows to fill a few hundred pages of log.
func writer(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", sqlitestore.DSN(path)+"&"+WriterPragma)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)"); err != nil {
		t.Fatal(err)
	}
	return db
}

func fill(t *testing.T, db *sql.DB, rows int) {
	t.Helper()
	blob := make([]byte, 3000)
	for range rows {
		if _, err := db.Exec("INSERT INTO t(v) VALUES (?)", blob); err != nil {
			t.Fatal(err)
		}
	}
}

// The writers' pragma raises the automatic checkpoint, so that the log grows until a
// checkpointer copies it.
func TestWriterPragmaRaisesTheAutomaticCheckpoint(t *testing.T) {
	t.Parallel()
	db := writer(t, filepath.Join(t.TempDir(), "w.db"))
	var pages int
	if err := db.QueryRow("PRAGMA wal_autocheckpoint").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if pages != WriterPages {
		t.Fatalf("wal_autocheckpoint is %d, want %d", pages, WriterPages)
	}
}

// Checkpoint copies every frame of the log into the database.
func TestCheckpointCopiesTheLog(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "c.db")
	db := writer(t, path)
	c, err := Open("sqlite", sqlitestore.DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fill(t, db, 1500) // more than SQLite's default of 1,000 pages
	r, err := c.Checkpoint(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.Busy || r.Frames < 1000 || r.Checkpointed != r.Frames {
		t.Fatalf("checkpoint: %+v; want every frame of a log over 1,000 frames copied", r)
	}
	fill(t, db, 200)
	if r, err = c.Checkpoint(context.Background()); err != nil || r.Checkpointed != r.Frames || r.Frames == 0 {
		t.Fatalf("second checkpoint: %+v, %v", r, err)
	}
}

func TestOpenRefusesWhatCannotWork(t *testing.T) {
	t.Parallel()
	rollback := "file:" + filepath.Join(t.TempDir(), "b.db") + "?_pragma=journal_mode(DELETE)"
	if _, err := Open("sqlite", rollback); err == nil || !strings.Contains(err.Error(), "needs WAL") {
		t.Fatalf("a rollback-journal database: %v", err)
	}
	if _, err := Open("no-such-driver", "x"); err == nil {
		t.Fatal("an unknown driver was accepted")
	}
}
