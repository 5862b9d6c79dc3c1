// Package sqlitewal checkpoints a SQLite database's write-ahead log from a connection of its own,
// so that the connection that writes never stops to do it.
//
// In WAL mode SQLite appends every commit to the log and, by default, the commit that takes the
// log past 1,000 pages copies the log back into the database and syncs it: that one commit
// takes tens of milliseconds where the others take tens of microseconds, and every writer queued
// behind it waits as long. A [Checkpointer] does the copying on its own connection, called every
// interval, in SQLite's passive mode (it takes no lock a writer or reader needs, and leaves what
// it cannot copy yet for the next time), and the writers' own automatic checkpoint is set high
// (see [WriterPragma]) so that it only catches a log the checkpointer could not keep short.
package sqlitewal

import (
	"context"
	"database/sql"
	"fmt"
)

// WriterPages is the writers' automatic checkpoint threshold, in pages, that [WriterPragma] sets:
// a safety net about forty times the checkpointer's usual work, reached only when it falls behind.
const WriterPages = 40000

// WriterPragma is the DSN query parameter (for modernc.org/sqlite) that raises the writers'
// automatic checkpoint to [WriterPages]; append it to the DSN of the connections that write.
const WriterPragma = "_pragma=wal_autocheckpoint(40000)"

// Result is what one checkpoint found: the frames in the log and how many of them are now in the
// database. Busy reports that a writer or reader kept it from finishing.
type Result struct {
	Busy         bool
	Frames       int
	Checkpointed int
}

// Checkpointer checkpoints one database's log from a connection of its own: call Checkpoint
// every interval (the server does it from its periodic runner). Its methods are safe for
// concurrent use.
type Checkpointer struct {
	db *sql.DB
}

// Open opens a connection of its own to the database the driver and dsn name (the same file the
// writers use, in WAL mode).
func Open(driver, dsn string) (*Checkpointer, error) {
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlitewal: open: %w", err)
	}
	db.SetMaxOpenConns(1)
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlitewal: read the journal mode: %w", err)
	}
	if mode != "wal" {
		db.Close()
		return nil, fmt.Errorf("sqlitewal: the database's journal mode is %q; a checkpointer needs WAL (open it with _pragma=journal_mode(WAL))", mode)
	}
	return &Checkpointer{db: db}, nil
}

// Checkpoint runs one passive checkpoint now: it copies what it can of the log into the
// database without waiting for any writer or reader.
func (c *Checkpointer) Checkpoint(ctx context.Context) (Result, error) {
	var busy int
	var r Result
	if err := c.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &r.Frames, &r.Checkpointed); err != nil {
		return Result{}, fmt.Errorf("sqlitewal: wal_checkpoint(PASSIVE): %w", err)
	}
	r.Busy = busy != 0
	return r, nil
}

// Close closes the checkpointer's connection. (The last connection to the database to close,
// whichever it is, checkpoints what is left and removes the log, as SQLite always does.)
func (c *Checkpointer) Close() error { return c.db.Close() }
