// Package appdbtest opens application databases for tests, on SQLite and on the test Postgres,
// and checks that an application's scoped tables keep tenants apart.
//
//	func TestItems(t *testing.T) {
//		appdbtest.Each(t, "notes", func(t *testing.T, db *appdb.DB) {
//			migrate(t, db)
//			appdbtest.Conformance(t, db)
//			...
//		})
//	}
package appdbtest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"

	"github.com/trellis-go/trellis/appdb"
)

// PostgresBase is the test database: TRELLIS_TEST_DATABASE_URL, or the local one.
func PostgresBase() string {
	if u := os.Getenv("TRELLIS_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

var seq atomic.Int64

// PostgresURL returns the test database's URL with a fresh search_path, whose schemas (the
// server's and every app's beside it) are dropped when the test ends. It skips the test, saying
// so, when Postgres is unreachable.
func PostgresURL(t testing.TB) string {
	t.Helper()
	base := PostgresBase()
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Skipf("Postgres unreachable (%v): skipping", err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		t.Skipf("Postgres unreachable at %s (%v): skipping", base, err)
	}
	schema := fmt.Sprintf("t%d_%d", time.Now().UnixNano(), seq.Add(1))
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer db.Close()
		rows, err := db.Query(`SELECT nspname FROM pg_namespace WHERE nspname = $1 OR nspname LIKE $2`, schema, schema+`\_%`)
		if err != nil {
			return
		}
		var names []string
		for rows.Next() {
			var n string
			if rows.Scan(&n) == nil {
				names = append(names, n)
			}
		}
		rows.Close()
		for _, n := range names {
			db.Exec("DROP SCHEMA " + n + " CASCADE")
		}
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + schema
}

// SQLite opens an app database in a temporary directory.
func SQLite(t testing.TB, app string) *appdb.DB {
	t.Helper()
	db, err := appdb.Open(context.Background(), app, &appdb.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Postgres opens an app database in a fresh schema of the test Postgres, or skips.
func Postgres(t testing.TB, app string) *appdb.DB {
	t.Helper()
	db, err := appdb.Open(context.Background(), app, &appdb.Options{DatabaseURL: PostgresURL(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Each runs fn as two subtests, "sqlite" and "postgres" (skipped when Postgres is unreachable),
// each with a fresh database of the app.
func Each(t *testing.T, app string, fn func(t *testing.T, db *appdb.DB)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, SQLite(t, app)) })
	t.Run("postgres", func(t *testing.T) { fn(t, Postgres(t, app)) })
}

// Conformance checks every scoped table db has migrated: it has its scope columns and an index
// led by tenant_id, and on Postgres row-level security is on and forced, so a transaction of a
// tenant that owns no rows sees none of any table. Run it after Migrate, with or without rows.
func Conformance(t testing.TB, db *appdb.DB) {
	t.Helper()
	ctx := context.Background()
	tables := db.Tables()
	if len(tables) == 0 {
		t.Fatal("appdbtest: no scoped tables: declare them in the migrations' Scoped fields")
	}
	for _, sc := range tables {
		cols, leads := describe(t, db, sc.Table)
		if !cols["tenant_id"] {
			t.Errorf("table %s is scoped but has no tenant_id column", sc.Table)
		}
		if sc.ByUser && !cols["user_id"] {
			t.Errorf("table %s is scoped by user but has no user_id column", sc.Table)
		}
		if !leads["tenant_id"] {
			t.Errorf("table %s has no index (or primary key) whose first column is tenant_id: every scoped query filters on it", sc.Table)
		}
		if db.Dialect() != appdb.Postgres {
			continue
		}
		var enabled, forced bool
		if err := db.SQL().QueryRowContext(ctx, `SELECT c.relrowsecurity, c.relforcerowsecurity FROM pg_class c
			JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`, db.Schema(), sc.Table).Scan(&enabled, &forced); err != nil {
			t.Errorf("table %s: %v", sc.Table, err)
			continue
		}
		if !enabled || !forced {
			t.Errorf("table %s: row-level security enabled=%v forced=%v, want both", sc.Table, enabled, forced)
		}
		stranger := appdb.Who{Tenant: fmt.Sprintf("appdbtest-stranger-%d", time.Now().UnixNano()), User: "nobody"}
		var n int
		if err := db.Tx(ctx, stranger, func(tx *appdb.Tx) error {
			return tx.QueryRow(ctx, `SELECT count(*) FROM `+sc.Table).Scan(&n)
		}); err != nil {
			t.Errorf("table %s: a scoped transaction cannot read it: %v", sc.Table, err)
		} else if n != 0 {
			t.Errorf("table %s: a tenant with no rows sees %d rows through unfiltered SQL", sc.Table, n)
		}
	}
}

// describe returns a table's columns and the columns that lead an index or the primary key.
func describe(t testing.TB, db *appdb.DB, table string) (cols, leads map[string]bool) {
	t.Helper()
	ctx := context.Background()
	cols, leads = map[string]bool{}, map[string]bool{}
	q := func(query string, args ...any) [][]any {
		rows, err := db.SQL().QueryContext(ctx, query, args...)
		if err != nil {
			t.Fatalf("describe %s: %v", table, err)
		}
		defer rows.Close()
		ct, _ := rows.ColumnTypes()
		var out [][]any
		for rows.Next() {
			vals := make([]any, len(ct))
			ptrs := make([]any, len(ct))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out = append(out, vals)
		}
		return out
	}
	str := func(v any) string {
		if b, ok := v.([]byte); ok {
			return string(b)
		}
		return fmt.Sprint(v)
	}
	if db.Dialect() == appdb.Postgres {
		for _, r := range q(`SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2`, db.Schema(), table) {
			cols[str(r[0])] = true
		}
		for _, r := range q(`SELECT a.attname FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
			JOIN pg_namespace n ON n.oid = c.relnamespace
			JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = i.indkey[0]
			WHERE n.nspname = $1 AND c.relname = $2`, db.Schema(), table) {
			leads[str(r[0])] = true
		}
		return cols, leads
	}
	for _, r := range q(`SELECT name, pk FROM pragma_table_info(?)`, table) {
		cols[str(r[0])] = true
		if str(r[1]) == "1" {
			leads[str(r[0])] = true
		}
	}
	for _, r := range q(`SELECT name FROM pragma_index_list(?)`, table) {
		for _, c := range q(`SELECT name FROM pragma_index_info(?) WHERE seqno = 0`, str(r[0])) {
			leads[str(c[0])] = true
		}
	}
	return cols, leads
}
