package appdb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Tx is a transaction of an application's database, acting for one tenant and user.
type Tx struct {
	tx  *sql.Tx
	db  *DB
	who Who
}

// Tenant is the tenant the transaction acts for ("" in a System transaction).
func (tx *Tx) Tenant() string { return tx.who.Tenant }

// User is the user the transaction acts for.
func (tx *Tx) User() string { return tx.who.User }

// Dialect is the database's dialect, for the rare statement that must differ.
func (tx *Tx) Dialect() Dialect { return tx.db.dialect }

// Exec runs a statement with '?' placeholders.
func (tx *Tx) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	res, err := tx.tx.ExecContext(ctx, tx.db.rebind(query), tx.db.args(args)...)
	if err != nil {
		return nil, tx.db.wrap(err, query)
	}
	return res, nil
}

// Query runs a query with '?' placeholders. Close the rows.
func (tx *Tx) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	rows, err := tx.tx.QueryContext(ctx, tx.db.rebind(query), tx.db.args(args)...)
	if err != nil {
		return nil, tx.db.wrap(err, query)
	}
	return rows, nil
}

// QueryRow runs a query expected to return at most one row; its error shows at Scan.
func (tx *Tx) QueryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return tx.tx.QueryRowContext(ctx, tx.db.rebind(query), tx.db.args(args)...)
}

// wrap names the statement in an error, shortened.
func (d *DB) wrap(err error, query string) error {
	q := strings.Join(strings.Fields(query), " ")
	if len(q) > 120 {
		q = q[:120] + "…"
	}
	return fmt.Errorf("appdb: %s: %w (in %q)", d.app, err, q)
}

// sqliteTime is how times are stored on SQLite: UTC, fixed width, so text order is time order.
const sqliteTime = "2006-01-02T15:04:05.000000000Z"

// args adapts arguments: times go to SQLite as RFC 3339 text, which sorts and compares.
func (d *DB) args(args []any) []any {
	if d.dialect != SQLite {
		return args
	}
	for i, a := range args {
		switch v := a.(type) {
		case time.Time:
			args[i] = v.UTC().Format(sqliteTime)
		case *time.Time:
			if v != nil {
				args[i] = v.UTC().Format(sqliteTime)
			}
		}
	}
	return args
}

// rebind turns '?' placeholders into $1, $2... on Postgres, leaving quoted text, quoted
// identifiers and comments alone.
func (d *DB) rebind(query string) string {
	if d.dialect != Postgres || !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 8)
	n := 0
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(query) {
				if query[j] == c {
					if j+1 < len(query) && query[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			if j >= len(query) {
				j = len(query) - 1
			}
			b.WriteString(query[i : j+1])
			i = j
		case c == '-' && i+1 < len(query) && query[i+1] == '-':
			j := strings.IndexByte(query[i:], '\n')
			if j < 0 {
				j = len(query) - i - 1
			}
			b.WriteString(query[i : i+j+1])
			i += j
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// JSONValue writes v as JSON (a JSON column: JSONB on Postgres, text on SQLite).
func JSONValue(v any) driver.Valuer { return jsonValue{v} }

type jsonValue struct{ v any }

func (j jsonValue) Value() (driver.Value, error) {
	b, err := json.Marshal(j.v)
	if err != nil {
		return nil, fmt.Errorf("appdb: value is not JSON: %w", err)
	}
	return string(b), nil
}

// JSON scans a JSON column into dst (a pointer). NULL leaves dst as it is.
func JSON(dst any) sql.Scanner { return jsonScanner{dst} }

type jsonScanner struct{ dst any }

func (j jsonScanner) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case nil:
		return nil
	case []byte:
		b = v
	case string:
		b = []byte(v)
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			return err
		}
	}
	if err := json.Unmarshal(b, j.dst); err != nil {
		return fmt.Errorf("appdb: column is not the JSON expected: %w", err)
	}
	return nil
}

// Time scans a TIMESTAMP column on either database, including SQLite's text forms and NULL (the
// zero time).
type Time struct{ time.Time }

// Scan implements sql.Scanner.
func (t *Time) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		t.Time = time.Time{}
		return nil
	case time.Time:
		t.Time = v
		return nil
	case []byte:
		return t.parse(string(v))
	case string:
		return t.parse(v)
	case int64:
		t.Time = time.Unix(v, 0).UTC()
		return nil
	}
	return fmt.Errorf("appdb: cannot read %T as a time", src)
}

var timeLayouts = []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02"}

func (t *Time) parse(s string) error {
	for _, l := range timeLayouts {
		if v, err := time.Parse(l, s); err == nil {
			t.Time = v
			return nil
		}
	}
	return fmt.Errorf("appdb: %q is not a time this package reads (RFC 3339 expected)", s)
}

// ErrNotFound is what apps return for a row that does not exist or is not the caller's; it is
// sql.ErrNoRows, so errors.Is works with either.
var ErrNotFound = sql.ErrNoRows

// IsNotFound reports whether err means no row.
func IsNotFound(err error) bool { return errors.Is(err, sql.ErrNoRows) }
