package sqlitesaver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/trellis-go/trellis/checkpoint"
)

// Error is what the saver returns when an operation fails. It matches [checkpoint.ErrNotFound],
// [checkpoint.ErrConflict], [ErrReadOnly], [ErrBusy] or a context error with errors.Is where one
// of those is the cause.
type Error struct {
	Op       string // "get", "list", "put", "put writes", "delete thread", "prune", "migrate", "open"
	ThreadID string // empty when the operation is not about one thread
	Err      error
	Hint     string // what to do about it, when the saver knows
}

func (e *Error) Error() string {
	s := "sqlitesaver: " + e.Op
	if e.ThreadID != "" {
		s += fmt.Sprintf(" thread %q", e.ThreadID)
	}
	s += ": " + strings.TrimPrefix(e.Err.Error(), "sqlitesaver: ")
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

var (
	// ErrReadOnly: the database file, its directory or the connection refuses writes.
	ErrReadOnly = errors.New("sqlitesaver: the database is read-only")
	// ErrBusy: another connection held the write lock for longer than the busy timeout.
	ErrBusy = errors.New("sqlitesaver: the database is locked by another writer")
)

// wrap turns err into an *Error with a hint. Errors that already are checkpoint sentinels or
// *Error pass through with the operation added.
func wrap(ctx context.Context, op, threadID string, err error) error {
	if err == nil {
		return nil
	}
	e := &Error{Op: op, ThreadID: threadID, Err: err}
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		e.Err = fmt.Errorf("%w (%v)", ctxErr, err)
		return e
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_READONLY:
			e.Err = fmt.Errorf("%w: %v", ErrReadOnly, err)
			e.Hint = "check that the process may write the database file and its directory, and that it was not opened read-only"
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			e.Err = fmt.Errorf("%w: %v", ErrBusy, err)
			e.Hint = "another process kept the database locked; raise Options.BusyTimeout or find the long transaction"
		case sqlite3.SQLITE_FULL:
			e.Hint = "the disk is full"
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			e.Hint = "the file is not a healthy SQLite database; restore it from a backup"
		case sqlite3.SQLITE_CANTOPEN:
			e.Hint = "check that the directory exists and the process may create files in it"
		}
	}
	return e
}

// conflict reports a failed head compare-and-swap.
func conflict(threadID, ns, want, found string) error {
	return fmt.Errorf("%w (thread %q namespace %q: expected head %q, found %q)", checkpoint.ErrConflict, threadID, ns, want, found)
}

func notFound(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{checkpoint.ErrNotFound}, args...)...)
}
