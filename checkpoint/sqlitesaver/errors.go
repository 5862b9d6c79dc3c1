package sqlitesaver

import (
	"context"
	"errors"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/trellis-go/trellis/checkpoint/internal/sqlcore"
)

// Error is what the saver returns when an operation fails: the operation ("get", "list",
// "put", "put writes", "set metadata", "delete threads", "prune", "migrate", "open"), the thread when the
// operation is about one, the cause and a hint saying what to do when the saver knows. It
// matches [checkpoint.ErrNotFound], [checkpoint.ErrConflict], [ErrReadOnly], [ErrBusy] or a
// context error with errors.Is where one of those is the cause.
type Error = sqlcore.Error

var (
	// ErrReadOnly: the database file, its directory or the connection refuses writes.
	ErrReadOnly = errors.New("sqlitesaver: the database is read-only")
	// ErrBusy: another connection held the write lock for longer than the busy timeout.
	ErrBusy = errors.New("sqlitesaver: the database is locked by another writer")
)

// wrap turns err into an *Error with a hint.
func wrap(ctx context.Context, op, threadID string, err error) error {
	return sqlcore.Wrap(ctx, "sqlitesaver", op, threadID, err, classify)
}

// fail is an *Error of the saver's own making.
func fail(op, threadID string, err error, hint string) error {
	return &Error{Saver: "sqlitesaver", Op: op, ThreadID: threadID, Err: err, Hint: hint}
}

func classify(err error) (string, error) {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return "", nil
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_READONLY:
		return "check that the process may write the database file and its directory, and that it was not opened read-only", ErrReadOnly
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return "another process kept the database locked; raise Options.BusyTimeout or find the long transaction", ErrBusy
	case sqlite3.SQLITE_FULL:
		return "the disk is full", nil
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return "the file is not a healthy SQLite database; restore it from a backup", nil
	case sqlite3.SQLITE_CANTOPEN:
		return "check that the directory exists and the process may create files in it", nil
	}
	return "", nil
}
