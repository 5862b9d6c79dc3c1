package pgsaver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/trellis-go/trellis/checkpoint"
)

// Error is what the saver returns when an operation fails. It matches [checkpoint.ErrNotFound],
// [checkpoint.ErrConflict], [ErrReadOnly], [ErrUnavailable], [ErrClosed] or a context error with
// errors.Is where one of those is the cause.
type Error struct {
	Op       string // "get", "list", "put", "put writes", "delete thread", "prune", "migrate", "open"
	ThreadID string // empty when the operation is not about one thread
	Err      error
	Hint     string // what to do about it, when the saver knows
}

func (e *Error) Error() string {
	s := "pgsaver: " + e.Op
	if e.ThreadID != "" {
		s += fmt.Sprintf(" thread %q", e.ThreadID)
	}
	s += ": " + strings.TrimPrefix(e.Err.Error(), "pgsaver: ")
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

var (
	// ErrReadOnly: the server refuses writes (a hot standby, or default_transaction_read_only).
	ErrReadOnly = errors.New("pgsaver: the database is read-only")
	// ErrUnavailable: the server cannot be reached, or the connection broke during the call.
	// Whether a Put that failed this way committed is unknown: retry the same request; the
	// head check makes the retry safe.
	ErrUnavailable = errors.New("pgsaver: the database is unavailable")
	// ErrClosed: the saver, or the pool it was given, was closed.
	ErrClosed = errors.New("pgsaver: the saver is closed")
)

// wrap turns err into an *Error with a hint.
func wrap(ctx context.Context, op, threadID string, err error) error {
	if err == nil {
		return nil
	}
	e := &Error{Op: op, ThreadID: threadID, Err: err}
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		e.Err = fmt.Errorf("%w (%v)", ctxErr, err)
		return e
	}
	if errors.Is(err, checkpoint.ErrNotFound) || errors.Is(err, checkpoint.ErrConflict) || errors.Is(err, ErrClosed) {
		return e
	}
	var pgErr *pgconn.PgError
	var connErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.As(err, &pgErr):
		switch {
		case pgErr.Code == "25006": // read_only_sql_transaction
			e.Err = fmt.Errorf("%w: %v", ErrReadOnly, err)
			e.Hint = "the server or this role refuses writes (a standby, or default_transaction_read_only is on); point the saver at the primary"
		case pgErr.Code == "42P01" || pgErr.Code == "42703": // undefined_table, undefined_column
			e.Hint = "the checkpoint tables are missing or old in this search_path; run pgsaver.Migrate (trellis migrate)"
		case pgErr.Code == "42501": // insufficient_privilege
			e.Hint = "the role lacks a privilege on the checkpoint tables; grant it SELECT, INSERT, UPDATE, DELETE"
		case strings.HasPrefix(pgErr.Code, "08"), strings.HasPrefix(pgErr.Code, "57P"): // connection exception, operator intervention
			e.Err = fmt.Errorf("%w: %v", ErrUnavailable, err)
			e.Hint = "the connection to Postgres was lost; retry the call once the server is back"
		case pgErr.Code == "53300": // too_many_connections
			e.Err = fmt.Errorf("%w: %v", ErrUnavailable, err)
			e.Hint = "the server has no free connections; lower pool_max_conns or raise max_connections"
		}
	case errors.As(err, &connErr):
		e.Err = fmt.Errorf("%w: %v", ErrUnavailable, err)
		e.Hint = "cannot connect to Postgres; check that it runs and that the connection string is right"
	case strings.Contains(err.Error(), "closed pool"):
		e.Err = fmt.Errorf("%w: %v", ErrClosed, err)
		e.Hint = "the pgxpool.Pool the saver uses was closed"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed), errors.As(err, &netErr),
		strings.Contains(err.Error(), "conn closed"):
		e.Err = fmt.Errorf("%w: %v", ErrUnavailable, err)
		e.Hint = "the connection to Postgres was lost; retry the call once the server is back"
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
