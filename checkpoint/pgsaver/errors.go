package pgsaver

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/trellis-go/trellis/checkpoint/internal/sqlcore"
)

// Error is what the saver returns when an operation fails: the operation ("get", "list",
// "put", "put writes", "set metadata", "delete threads", "prune", "migrate", "open"), the thread when the
// operation is about one, the cause and a hint saying what to do when the saver knows. It
// matches [checkpoint.ErrNotFound], [checkpoint.ErrConflict], [ErrReadOnly], [ErrUnavailable],
// [ErrClosed] or a context error with errors.Is where one of those is the cause.
type Error = sqlcore.Error

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
	return sqlcore.Wrap(ctx, "pgsaver", op, threadID, err, classify, ErrClosed)
}

// fail is an *Error of the saver's own making.
func fail(op, threadID string, err error, hint string) error {
	return &Error{Saver: "pgsaver", Op: op, ThreadID: threadID, Err: err, Hint: hint}
}

const lostHint = "the connection to Postgres was lost; retry the call once the server is back"

func classify(err error) (string, error) {
	var pgErr *pgconn.PgError
	var connErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.As(err, &pgErr):
		switch {
		case pgErr.Code == "25006": // read_only_sql_transaction
			return "the server or this role refuses writes (a standby, or default_transaction_read_only is on); point the saver at the primary", ErrReadOnly
		case pgErr.Code == "42P01" || pgErr.Code == "42703": // undefined_table, undefined_column
			return "the checkpoint tables are missing or old in this search_path; run pgsaver.Migrate (trellis migrate)", nil
		case pgErr.Code == "42501": // insufficient_privilege
			return "the role lacks a privilege on the checkpoint tables; grant it SELECT, INSERT, UPDATE, DELETE", nil
		case strings.HasPrefix(pgErr.Code, "08"), strings.HasPrefix(pgErr.Code, "57P"): // connection exception, operator intervention
			return lostHint, ErrUnavailable
		case pgErr.Code == "53300": // too_many_connections
			return "the server has no free connections; lower pool_max_conns or raise max_connections", ErrUnavailable
		}
	case errors.As(err, &connErr):
		return "cannot connect to Postgres; check that it runs and that the connection string is right", ErrUnavailable
	case strings.Contains(err.Error(), "closed pool"):
		return "the pgxpool.Pool the saver uses was closed", ErrClosed
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed), errors.As(err, &netErr),
		strings.Contains(err.Error(), "conn closed"):
		return lostHint, ErrUnavailable
	}
	return "", nil
}
