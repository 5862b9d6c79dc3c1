package metadb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"regexp"
	"sync"
	"sync/atomic"
	"time"
)

// ErrNotFound is returned, alone or wrapped, when the record asked for does not exist (for the
// tenant named). The server answers it with a 404.
var ErrNotFound = errors.New("metadb: not found")

// Statuses the queries compare with; the server's API names them the same (server.ThreadBusy,
// server.RunPending, ...).
const (
	threadBusy = "busy"
	runPending = "pending"
	runRunning = "running"
)

// DB is the server's metadata database: threads, runs, their events, assistants and crons, in
// SQLite or Postgres through database/sql. Queries are written with $N placeholders and
// rewritten for SQLite. Every query of the API's records names the tenant: records of another
// tenant are invisible.
type DB struct {
	db       *sql.DB
	postgres bool
	// now is the server's clock (Config.Now) for records' stamps; nil is time.Now.
	now  func() time.Time
	last atomic.Int64 // the last stamp by now
	// stmts holds the prepared statements of the hot paths (a run's claim, insert and reads),
	// by query text in the database's dialect: parsing them again for every run was a tenth of
	// a short run's CPU time on SQLite.
	stmts sync.Map // string -> *sql.Stmt
}

// prepared returns query (written with $N placeholders) prepared once for the database; the
// statements live as long as the database handle. Only fixed query texts may be prepared, so
// the set stays small. A query that cannot be prepared (a closed database) returns the error.
func (m *DB) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := m.stmts.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := m.db.PrepareContext(ctx, m.Q(query))
	if err != nil {
		return nil, err
	}
	if old, loaded := m.stmts.LoadOrStore(query, st); loaded {
		_ = st.Close()
		return old.(*sql.Stmt), nil
	}
	return st, nil
}

// queryRow runs a fixed query through its prepared statement on SQLite; on Postgres pgx caches
// its statements per connection itself, and a database/sql statement would be prepared again on
// every connection it meets.
func (m *DB) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	if m.postgres {
		return m.db.QueryRowContext(ctx, query, args...)
	}
	st, err := m.prepared(ctx, query)
	if err != nil {
		return m.db.QueryRowContext(ctx, m.Q(query), args...) // reports the error when scanned
	}
	return st.QueryRowContext(ctx, args...)
}

// New returns the metadata database on db, a Postgres database when postgres is set and a
// SQLite one otherwise. now is the clock records are stamped by (nil: time.Now). Call Migrate
// before anything else.
func New(db *sql.DB, postgres bool, now func() time.Time) *DB {
	return &DB{db: db, postgres: postgres, now: now}
}

// SQL returns the database handle the DB was made with.
func (m *DB) SQL() *sql.DB { return m.db }

// Postgres reports whether the database is Postgres (else SQLite).
func (m *DB) Postgres() bool { return m.postgres }

// Ping checks that the database answers.
func (m *DB) Ping(ctx context.Context) error { return m.db.PingContext(ctx) }

var placeholder = regexp.MustCompile(`\$(\d+)`)

// Q returns query, written with $N placeholders, in the database's dialect: SQLite's are ?N.
func (m *DB) Q(query string) string {
	if m.postgres {
		return query
	}
	return placeholder.ReplaceAllString(query, "?$1")
}

// Exec runs a fixed statement written with $N placeholders (see Q), prepared once on SQLite.
func (m *DB) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if m.postgres {
		return m.db.ExecContext(ctx, query, args...)
	}
	st, err := m.prepared(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// lastStamp is the last millisecond stamp given by time.Now, shared by every DB without a
// clock of its own.
var lastStamp atomic.Int64

// Stamp is the time a record is created or updated at: now by the server's clock (Config.Now),
// or a millisecond after the last stamp, whichever is later. Records are stored to the
// millisecond, so without it two threads created in the same millisecond would tie, and sort by
// their random IDs instead of the order they were made in. A DB with a clock of its own counts
// its stamps apart from the process's, so that they follow its clock exactly.
func (m *DB) Stamp() time.Time {
	if m.now != nil {
		return stampAt(&m.last, m.now)
	}
	return stampAt(&lastStamp, time.Now)
}

func stampAt(last *atomic.Int64, clock func() time.Time) time.Time {
	for {
		prev := last.Load()
		now := clock().UnixMilli()
		if now <= prev {
			now = prev + 1
		}
		if last.CompareAndSwap(prev, now) {
			return time.UnixMilli(now).UTC()
		}
	}
}

// Times are stored as Unix milliseconds; 0 stands for a time not set (the zero time.Time).

func ms(t time.Time) int64 { return t.UnixMilli() }

func msOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

func fromMSOrZero(v int64) time.Time {
	if v <= 0 {
		return time.Time{}
	}
	return fromMS(v)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "null"
	}
	return string(b)
}

// jsonObject reads a JSON object column; anything else reads as {}.
func jsonObject(s string) map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
		m = map[string]any{}
	}
	return m
}

// rawOrNil reads a nullable JSON column: nil when NULL or empty.
func rawOrNil(s sql.NullString) json.RawMessage {
	if !s.Valid || s.String == "" {
		return nil
	}
	return json.RawMessage(s.String)
}

// nullRaw writes a nullable JSON column: NULL for nil.
func nullRaw(b json.RawMessage) any {
	if b == nil {
		return nil
	}
	return string(b)
}

func nullString(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

func stringPtr(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(...any) error }

// scanAll reads every row with scan and closes rows.
func scanAll[T any](rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// queryAll runs a query written with $N placeholders and reads every row with scan.
func queryAll[T any](ctx context.Context, m *DB, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := m.db.QueryContext(ctx, m.Q(query), args...)
	if err != nil {
		return nil, err
	}
	return scanAll(rows, scan)
}

// notFound turns sql.ErrNoRows into ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}
