// Package warehousetest gives tests a loaded Vesper warehouse: a SQLite one
// shared by every test of a process, and a Postgres one per test in its own
// schema, dropped when the test ends.
package warehousetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/vesper/warehouse"
)

var (
	dataOnce sync.Once
	data     *warehouse.Dataset

	sqliteOnce sync.Once
	sqliteDir  string
	sqliteWH   *warehouse.Warehouse
	sqliteErr  error
)

// TestTimeout is the query timeout of the test warehouses: longer than the
// production 10 seconds, because under the race detector on a busy machine
// the pure-Go SQLite runs many times slower. Timeout tests set their own.
const TestTimeout = 2 * time.Minute

// Data is the generated data set, made once per process. Do not modify it.
func Data() *warehouse.Dataset {
	dataOnce.Do(func() { data = warehouse.Generate() })
	return data
}

// Main runs the tests and removes the shared SQLite file afterwards. Call it
// from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if sqliteWH != nil {
		sqliteWH.Close()
	}
	if sqliteDir != "" {
		os.RemoveAll(sqliteDir)
	}
	os.Exit(code)
}

// SQLite returns the process's shared SQLite warehouse loaded with Data().
// Tests only read through it.
func SQLite(t testing.TB) *warehouse.Warehouse {
	t.Helper()
	sqliteOnce.Do(func() {
		sqliteDir, sqliteErr = os.MkdirTemp("", "vesper-wh-")
		if sqliteErr != nil {
			return
		}
		sqliteWH, sqliteErr = warehouse.Open(context.Background(), warehouse.Config{
			DSN: filepath.Join(sqliteDir, "vesper.db"), Data: Data(), Timeout: TestTimeout,
		})
	})
	if sqliteErr != nil {
		t.Fatalf("open sqlite warehouse: %v", sqliteErr)
	}
	return sqliteWH
}

// PostgresDSN is the test database: $VESPER_TEST_POSTGRES or the local one.
func PostgresDSN() string {
	if dsn := os.Getenv("VESPER_TEST_POSTGRES"); dsn != "" {
		return dsn
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

// PostgresDB connects to the test database, or skips the test, saying so,
// when it is unreachable.
func PostgresDB(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", PostgresDSN())
	if err != nil {
		t.Skipf("postgres unreachable: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		t.Skipf("postgres unreachable at %s: %v", PostgresDSN(), err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// SchemaName returns a fresh schema name for one test.
func SchemaName() string {
	var b [6]byte
	rand.Read(b[:])
	return "vesper_t_" + hex.EncodeToString(b[:])
}

// Postgres returns a warehouse in a fresh schema loaded with Data(), with
// cfg's other fields applied; the schema and its roles are dropped when the
// test ends. It skips when Postgres is unreachable.
func Postgres(t testing.TB, cfg warehouse.Config) *warehouse.Warehouse {
	t.Helper()
	db := PostgresDB(t)
	cfg.Dialect = warehouse.Postgres
	cfg.DSN = PostgresDSN()
	cfg.Schema = SchemaName()
	if cfg.Timeout == 0 {
		cfg.Timeout = TestTimeout
	}
	if cfg.Data == nil && cfg.CSVDir == "" {
		cfg.Data = Data()
	}
	t.Cleanup(func() {
		if err := warehouse.DropPostgres(context.Background(), db, cfg.Schema); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	w, err := warehouse.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open postgres warehouse: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}
