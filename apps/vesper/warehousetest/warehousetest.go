// Package warehousetest gives tests a loaded Vesper warehouse: a SQLite one
// shared by every test of a process, and a Postgres one per test in its own
// schema, dropped when the test ends.
package warehousetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/trellis-go/trellis/appdb/appdbtest"
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
		dst := filepath.Join(sqliteDir, "vesper.db")
		// Loading takes seconds (many under the race detector), and every
		// package of apps/vesper wants the same data: copy the file the
		// first test process of this data set loaded. A copy that cannot be
		// made only means this process loads its own.
		if src, err := cachedSQLite(); err == nil {
			if err := copyFile(src, dst); err != nil {
				os.Remove(dst)
			}
		}
		sqliteWH, sqliteErr = warehouse.Open(context.Background(), warehouse.Config{
			DSN: dst, Data: Data(), Timeout: TestTimeout,
		})
	})
	if sqliteErr != nil {
		t.Fatalf("open sqlite warehouse: %v", sqliteErr)
	}
	return sqliteWH
}

// PostgresDSN is the repository's test database, the one every package's Postgres tests use
// (TRELLIS_TEST_DATABASE_URL, or the local one: appdbtest.PostgresBase).
func PostgresDSN() string { return appdbtest.PostgresBase() }

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

// SeedDataDir puts a copy of the loaded SQLite warehouse into dir as vesper.db, where the vesper
// app (vesperserve) opens it, so that a test serving the app does not load the data again. A copy
// that cannot be made only means the app loads its own.
func SeedDataDir(t testing.TB, dir string) {
	t.Helper()
	src, err := cachedSQLite()
	if err != nil {
		t.Logf("no cached warehouse (%v): the app loads its own", err)
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := copyFile(src, filepath.Join(dir, "vesper.db")); err != nil {
		t.Logf("cannot copy the cached warehouse (%v): the app loads its own", err)
		os.Remove(filepath.Join(dir, "vesper.db"))
	}
}

// cacheVersion changes when what a loaded file holds changes in a way the
// key below does not see (indexes, rollups).
const cacheVersion = "1"

// cachedSQLite returns the path of a loaded SQLite warehouse of Data(),
// shared by the test processes of this machine: the first one to need it
// loads it and renames it into place, so a reader sees a whole file or
// none. Its name holds a hash of the data set and the views, so a change to
// either loads a new one.
func cachedSQLite() (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%#v\n", cacheVersion, warehouse.Views)
	if err := json.NewEncoder(h).Encode(Data()); err != nil {
		return "", err
	}
	path := filepath.Join(os.TempDir(), "trellis-vesper-warehouse-"+hex.EncodeToString(h.Sum(nil))[:16]+".db")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	dir, err := os.MkdirTemp("", "vesper-wh-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	built := filepath.Join(dir, "vesper.db")
	w, err := warehouse.Open(context.Background(), warehouse.Config{DSN: built, Data: Data(), Timeout: TestTimeout})
	if err != nil {
		return "", err
	}
	// Fold the write-ahead log into the file, so the file alone is whole.
	if _, err := w.DB().Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		w.Close()
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	if err := os.Rename(built, path); err != nil {
		return "", err
	}
	return path, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
