// Package sqlitewal checkpoints a SQLite database's write-ahead log from a connection of its own,
// so that the connection that writes never stops to do it.
//
// In WAL mode SQLite appends every commit to the log and, by default, the commit that takes the
// log past 1,000 pages copies the log back into the database and syncs it: that one commit
// takes tens of milliseconds where the others take tens of microseconds, and every writer queued
// behind it waits as long. A [Checkpointer] does the copying on its own connection every
// interval, in SQLite's passive mode (it takes no lock a writer or reader needs, and leaves what
// it cannot copy yet for the next time), and the writers' own automatic checkpoint is set high
// (see [WriterPragma]) so that it only catches a log the checkpointer could not keep short.
package sqlitewal

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"
	"time"
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

// Checkpointer checkpoints one database's log in the background. Its methods are safe for
// concurrent use.
type Checkpointer struct {
	db     *sql.DB
	log    *slog.Logger
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	closed bool
	ran    chan Result // test hook: each background checkpoint's result, when set
}

// Start opens a connection of its own to the database the driver and dsn name (the same file
// the writers use, in WAL mode) and checkpoints it every interval until Close. A failed
// checkpoint is logged and tried again at the next interval.
func Start(driver, dsn string, every time.Duration, log *slog.Logger) (*Checkpointer, error) {
	if every <= 0 {
		return nil, fmt.Errorf("sqlitewal: the interval is %v; give a positive one such as 100ms", every)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlitewal: open: %w", err)
	}
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithCancel(context.Background())
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		cancel()
		db.Close()
		return nil, fmt.Errorf("sqlitewal: read the journal mode: %w", err)
	}
	if mode != "wal" {
		cancel()
		db.Close()
		return nil, fmt.Errorf("sqlitewal: the database's journal mode is %q; a checkpointer needs WAL (open it with _pragma=journal_mode(WAL))", mode)
	}
	c := &Checkpointer{db: db, log: log, cancel: cancel, done: make(chan struct{})}
	go c.loop(ctx, every)
	return c, nil
}

func (c *Checkpointer) loop(ctx context.Context, every time.Duration) {
	defer close(c.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r, err := c.Checkpoint(ctx)
		if err != nil {
			if ctx.Err() == nil {
				c.log.Warn("sqlitewal: checkpoint failed; trying again at the next interval", "err", err)
			}
			continue
		}
		c.mu.Lock()
		ran := c.ran
		c.mu.Unlock()
		if ran != nil {
			select {
			case ran <- r:
			default:
			}
		}
	}
}

// Checkpoint runs one passive checkpoint now.
func (c *Checkpointer) Checkpoint(ctx context.Context) (Result, error) {
	return c.run(ctx, "PASSIVE")
}

func (c *Checkpointer) run(ctx context.Context, mode string) (Result, error) {
	var busy int
	var r Result
	if err := c.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &r.Frames, &r.Checkpointed); err != nil {
		return Result{}, fmt.Errorf("sqlitewal: wal_checkpoint(%s): %w", mode, err)
	}
	r.Busy = busy != 0
	return r, nil
}

// Close stops the background checkpoints and closes the checkpointer's connection. (The last
// connection to the database to close, whichever it is, checkpoints what is left and removes the
// log, as SQLite always does.)
func (c *Checkpointer) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	<-c.done
	return c.db.Close()
}
