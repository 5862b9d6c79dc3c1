package sqlitewal

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// Checkpoint copies every frame of the log into the database, and the background loop does the
// same on its own.
func TestCheckpointCopiesTheLog(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "c.db")
	db := writer(t, path)
	c, err := Start("sqlite", sqlitestore.DSN(path), time.Hour, nil)
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

	bg, err := Start("sqlite", sqlitestore.DSN(path), time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bg.Close()
	ran := make(chan Result, 1)
	bg.mu.Lock()
	bg.ran = ran
	bg.mu.Unlock()
	fill(t, db, 200)
	deadline := time.After(10 * time.Second)
	for {
		select {
		case r := <-ran:
			if r.Checkpointed > 0 && r.Checkpointed == r.Frames {
				return
			}
		case <-deadline:
			t.Fatal("the background checkpointer copied nothing in 10 s")
		}
	}
}

func TestStartRefusesWhatCannotWork(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := Start("sqlite", sqlitestore.DSN(filepath.Join(dir, "a.db")), 0, nil); err == nil || !strings.Contains(err.Error(), "positive") {
		t.Fatalf("a zero interval: %v", err)
	}
	rollback := "file:" + filepath.Join(dir, "b.db") + "?_pragma=journal_mode(DELETE)"
	if _, err := Start("sqlite", rollback, time.Second, nil); err == nil || !strings.Contains(err.Error(), "needs WAL") {
		t.Fatalf("a rollback-journal database: %v", err)
	}
	if _, err := Start("no-such-driver", "x", time.Second, nil); err == nil {
		t.Fatal("an unknown driver was accepted")
	}
}

func TestCloseTwice(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "d.db")
	writer(t, path)
	c, err := Start("sqlite", sqlitestore.DSN(path), time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
