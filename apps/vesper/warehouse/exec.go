package warehouse

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"modernc.org/sqlite"
)

// Result is the outcome of one query: column names and rows of plain Go
// values (string, int64, float64, bool, time.Time or nil).
type Result struct {
	Columns []string
	Rows    [][]any
	// Truncated is true when the query had more rows than the cap; Rows
	// then holds the first MaxRows of them.
	Truncated bool
	// MaxRows is the cap that applied.
	MaxRows int
	// CutBytes is true when the rows stopped at Config.MaxResultBytes
	// (Truncated is then true as well): Rows holds the rows that fit.
	CutBytes bool
	// CutValues counts the values longer than Config.MaxValueBytes, each cut
	// to that length and ending in "…".
	CutValues int
}

// Note says, in words for the user, that the result was cut; empty if not.
func (r *Result) Note() string {
	if r == nil || (!r.Truncated && r.CutValues == 0) {
		return ""
	}
	var parts []string
	switch {
	case r.CutBytes:
		parts = append(parts, fmt.Sprintf("Only the first %d rows are shown: the result was too large to show whole. Narrow it with filters or select fewer columns to see the rest.", len(r.Rows)))
	case r.Truncated:
		parts = append(parts, fmt.Sprintf("Only the first %d rows are shown: the query matched more. Narrow it with filters to see the rest.", r.MaxRows))
	}
	if r.CutValues == 1 {
		parts = append(parts, "One value was too long and is cut (it ends in …).")
	} else if r.CutValues > 1 {
		parts = append(parts, fmt.Sprintf("%d values were too long and are cut (they end in …).", r.CutValues))
	}
	return strings.Join(parts, " ")
}

// Maps returns the rows as column-name maps.
func (r *Result) Maps() []map[string]any {
	out := make([]map[string]any, len(r.Rows))
	for i, row := range r.Rows {
		m := make(map[string]any, len(row))
		for j, c := range r.Columns {
			m[c] = row[j]
		}
		out[i] = m
	}
	return out
}

// Query runs one read-only SELECT for a tenant and returns at most MaxRows
// rows. Values are bound with $1, $2, ... placeholders on both dialects;
// sql is never built from values. The query may name the approved views
// only by their plain names (mc_dayahead, per_project, ...).
//
// Tenant scoping: on Postgres the query runs in a read-only transaction as
// the reader role with vesper.tenant set transaction-locally, and row-level
// security on the base tables filters rows; on SQLite it runs on a
// read-only connection and every tenant view is shadowed by a common table
// expression that keeps only the tenant's rows.
func (w *Warehouse) Query(ctx context.Context, tenant string, query string, args ...any) (*Result, error) {
	if strings.TrimSpace(tenant) == "" {
		return nil, ErrNoTenant
	}
	ctx, cancel := context.WithTimeout(ctx, w.cfg.Timeout)
	defer cancel()
	var res *Result
	var err error
	if w.cfg.Dialect == Postgres {
		res, err = w.queryPostgres(ctx, tenant, query, args)
	} else {
		res, err = w.querySQLite(ctx, tenant, query, args)
	}
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) || strings.Contains(err.Error(), "statement timeout") {
			return nil, fmt.Errorf("%w after %s: narrow the question (fewer years, one hub-zone) and ask again", ErrTimeout, w.cfg.Timeout)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var qe *QueryError
		if !errors.As(err, &qe) {
			err = &QueryError{Dialect: w.cfg.Dialect, Err: err}
		}
		return nil, err
	}
	return res, nil
}

func (w *Warehouse) queryPostgres(ctx context.Context, tenant, query string, args []any) (*Result, error) {
	tx, err := w.ro.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	ms := strconv.FormatInt(w.cfg.Timeout.Milliseconds(), 10)
	workMem := strconv.FormatInt(max(w.cfg.WorkMemBytes/1024, 64), 10) + "kB"
	// one round trip: the tenant, the schema, the timeout, the memory of each
	// sort and hash, and SET LOCAL ROLE (role is a setting too), all
	// transaction-local. (Settings of the reader role itself would not apply:
	// they are read at login, and the queries only SET ROLE.)
	if _, err := tx.ExecContext(ctx, `SELECT set_config('vesper.tenant', $1, true), set_config('search_path', $2, true),
		set_config('statement_timeout', $3, true), set_config('work_mem', $5, true), set_config('role', $4, true)`,
		tenant, w.cfg.Schema, ms, w.cfg.ReaderRole, workMem); err != nil {
		return nil, &QueryError{Dialect: Postgres, Err: err, Hint: "the connecting user must be a member of the reader role " + w.cfg.ReaderRole}
	}
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return w.collect(rows)
}

func (w *Warehouse) querySQLite(ctx context.Context, tenant, query string, args []any) (*Result, error) {
	scoped, scopedArgs := ScopeSQLite(query, args, tenant)
	conn, err := w.ro.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	// The longest string or blob this connection may build: a query whose
	// values grow (string aggregates, concatenations) fails at this size
	// instead of taking the process's memory. SQLite's heap limit would be
	// the process's, shared with the server's own databases, so the bound is
	// set per connection here.
	if _, err := sqlite.Limit(conn, sqliteLimitLength, w.cfg.MaxValueBuild); err != nil {
		return nil, err
	}
	rows, err := conn.QueryContext(ctx, scoped, scopedArgs...)
	if err != nil {
		return nil, sqliteTooBig(err, w.cfg.MaxValueBuild)
	}
	res, err := w.collect(rows)
	return res, sqliteTooBig(err, w.cfg.MaxValueBuild)
}

// sqliteLimitLength is SQLITE_LIMIT_LENGTH, the largest string or blob.
const sqliteLimitLength = 0

// sqliteTooBig turns SQLite's "string or blob too big" into a QueryError
// that says what to do.
func sqliteTooBig(err error, limit int) error {
	if err != nil && strings.Contains(err.Error(), "too big") {
		return &QueryError{Dialect: SQLite, Err: err, Hint: fmt.Sprintf("a value of the query would be larger than %d bytes; aggregate fewer rows or select shorter values", limit)}
	}
	return err
}

// ScopeSQLite rewrites a query so that every tenant view it names holds only
// the tenant's rows: it puts one common table expression per tenant view in
// front of the query (a CTE takes precedence over a view of the same name),
// and binds the tenant as one more $N parameter. A query that already starts
// with WITH gets the scoping CTEs first in its list; any other query that
// does not start with SELECT is wrapped as a subquery.
func ScopeSQLite(query string, args []any, tenant string) (string, []any) {
	n := len(args) + 1
	var ctes []string
	for _, v := range Views {
		if v.Tenant {
			ctes = append(ctes, fmt.Sprintf("%s AS (SELECT * FROM %s WHERE tenant_id = $%d)", v.Name, v.BaseTable(), n))
		}
	}
	prefix := "WITH " + strings.Join(ctes, ", ")
	body := strings.TrimLeftFunc(query, unicode.IsSpace)
	var out string
	switch {
	case hasKeyword(body, "WITH"):
		rest := strings.TrimLeftFunc(body[len("WITH"):], unicode.IsSpace)
		if hasKeyword(rest, "RECURSIVE") {
			prefix = "WITH RECURSIVE " + strings.Join(ctes, ", ")
			rest = rest[len("RECURSIVE"):]
		}
		out = prefix + ", " + rest
	case hasKeyword(body, "SELECT"):
		out = prefix + " " + body
	default:
		out = prefix + " SELECT * FROM (" + body + ")"
	}
	return out, append(append([]any(nil), args...), tenant)
}

func hasKeyword(s, kw string) bool {
	if len(s) < len(kw) || !strings.EqualFold(s[:len(kw)], kw) {
		return false
	}
	if len(s) == len(kw) {
		return true
	}
	c := rune(s[len(kw)])
	return !(unicode.IsLetter(c) || unicode.IsDigit(c) || c == '_' || c == '$')
}

func (w *Warehouse) collect(rows *sql.Rows) (*Result, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	res := &Result{Columns: cols, MaxRows: w.cfg.MaxRows}
	size := 0
	for rows.Next() {
		if len(res.Rows) == w.cfg.MaxRows {
			res.Truncated = true
			break
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		rowSize := 0
		for i, v := range vals {
			v = normalize(v)
			if str, ok := v.(string); ok {
				if len(str) > w.cfg.MaxValueBytes {
					str = cutUTF8(str, w.cfg.MaxValueBytes) + "…"
					res.CutValues++
				}
				v = str
				rowSize += len(str)
			} else {
				rowSize += 8
			}
			vals[i] = v
		}
		if size+rowSize > w.cfg.MaxResultBytes && len(res.Rows) > 0 {
			res.Truncated, res.CutBytes = true, true
			break
		}
		size += rowSize
		res.Rows = append(res.Rows, vals)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

// cutUTF8 returns the longest prefix of s of at most n bytes that ends on a
// rune boundary.
func cutUTF8(s string, n int) string {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func normalize(v any) any {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case int32:
		return int64(x)
	case int:
		return int64(x)
	case float32:
		return float64(x)
	case time.Time:
		return x.UTC()
	}
	return v
}
