// Package dbtest gives the server's tests a database of their own: a fresh schema of the
// Postgres test database, dropped when the test ends, or a SQLite file in the test's directory.
// The test database is TRELLIS_TEST_DATABASE_URL, by default the local one CI starts; a test
// skips, saying so, when it does not answer.
package dbtest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver
	"github.com/trellis-go/trellis/checkpoint/pgsaver"
	"github.com/trellis-go/trellis/checkpoint/sqlitesaver"
	"github.com/trellis-go/trellis/store/sqlitestore"
)

// DefaultURL is the test database when TRELLIS_TEST_DATABASE_URL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

var seq atomic.Int64

// PostgresURL creates a fresh schema named after prefix in the test database and returns the
// database's URL with that schema as its search path. The schema is dropped when t ends; t
// skips when Postgres is unreachable.
func PostgresURL(t testing.TB, prefix string) string {
	t.Helper()
	base := os.Getenv("TRELLIS_TEST_DATABASE_URL")
	if base == "" {
		base = DefaultURL
	}
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Skipf("Postgres unreachable: %v", err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		t.Skipf("Postgres unreachable at %s: %v", base, err)
	}
	schema := fmt.Sprintf("%s_%d_%d", prefix, time.Now().UnixNano(), seq.Add(1))
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if db, err := sql.Open("pgx", base); err == nil {
			db.Exec("DROP SCHEMA " + schema + " CASCADE")
			db.Close()
		}
	})
	return base + "&search_path=" + schema
}

// Postgres opens a fresh schema (PostgresURL) holding the checkpoint saver's tables, as the
// server's database does; the connections close when t ends.
func Postgres(t testing.TB, prefix string) *sql.DB {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, PostgresURL(t, prefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := pgsaver.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	db := stdlib.OpenDBFromPool(pool)
	t.Cleanup(func() { db.Close() })
	return db
}

// SQLite opens a fresh SQLite database in t's directory holding the checkpoint saver's tables,
// with one connection, as the server opens it.
func SQLite(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", sqlitestore.DSN(filepath.Join(t.TempDir(), "meta.db")))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if err := sqlitesaver.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return db
}
