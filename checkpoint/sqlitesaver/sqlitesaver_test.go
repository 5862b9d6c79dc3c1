package sqlitesaver_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/checkpoint/checkpointtest"
	"github.com/trellis-go/trellis/checkpoint/sqlitesaver"
	"github.com/trellis-go/trellis/encrypt"
)

// setup opens a saver on a new database file in a temporary directory.
func setup(t testing.TB) (*sqlitesaver.Saver, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "checkpoints.db")
	s, err := sqlitesaver.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

// The suite on a saver of its own per subtest, and on one saver for all.
func TestConformance(t *testing.T) {
	checkpointtest.RunFreshAndShared(t, func(t *testing.T) checkpoint.Saver {
		s, _ := setup(t)
		return s
	})
}

func put(t *testing.T, s checkpoint.Saver, thread, head string) string {
	t.Helper()
	cp := checkpoint.Checkpoint{ID: checkpoint.NewID(), ParentID: head, Versions: map[string]string{}}
	if err := s.Put(context.Background(), checkpoint.PutRequest{ThreadID: thread, Checkpoint: cp, Head: head}); err != nil {
		t.Fatalf("Put: %v", err)
	}
	return cp.ID
}

// Two processes writing one thread: each has its own *sql.DB on the same file, as two processes
// would. The loser of every race must get ErrConflict, and the history must stay one line.
func TestTwoDatabasesOneFileConflict(t *testing.T) {
	a, path := setup(t)
	b, err := sqlitesaver.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if a.DB() == b.DB() {
		t.Fatal("the two savers share a *sql.DB; the test needs two")
	}
	checkpointtest.TwoWriters(t, a, b, 20)
}

func TestReopenKeepsEverything(t *testing.T) {
	ctx := context.Background()
	s, path := setup(t)
	head := put(t, s, "t", "")
	head = put(t, s, "t", head)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := sqlitesaver.Open(ctx, path, nil)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s2.Close()
	got, err := s2.Get(ctx, checkpoint.Ref{ThreadID: "t"})
	if err != nil || got.Checkpoint.ID != head {
		t.Fatalf("after reopening: Get = %v, %v; want %q", got, err, head)
	}
}

func TestMigrate(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkpointtest.Migrate(t, checkpointtest.SQLMigration{
		Migrate: func(ctx context.Context) error { return sqlitesaver.Migrate(ctx, db) },
		Recorded: func() (n int, err error) {
			err = db.QueryRow("SELECT count(*) FROM trellis_checkpoint_migrations").Scan(&n)
			return n, err
		},
		Future: func() error {
			_, err := db.Exec("INSERT INTO trellis_checkpoint_migrations (version, name, applied_at) VALUES (999, 'future', '')")
			return err
		},
		Want: sqlitesaver.SchemaVersion,
	})
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q (%v), want wal", mode, err)
	}
	if _, err := sqlitesaver.New(ctx, db, nil); err == nil {
		t.Error("New on a newer schema: no error")
	}
}

func TestBadOptionsAndPaths(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		path string
		opts *sqlitesaver.Options
		want string
	}{
		{"empty path", "", nil, "no database path"},
		{"memory", ":memory:", nil, "in-memory"},
		{"uri", "file:x.db?mode=ro", nil, "plain file path"},
		{"negative busy timeout", filepath.Join(dir, "a.db"), &sqlitesaver.Options{BusyTimeout: -1}, "BusyTimeout"},
		{"unknown synchronous", filepath.Join(dir, "a.db"), &sqlitesaver.Options{Synchronous: "SOMETIMES"}, "Synchronous"},
		{"negative page size", filepath.Join(dir, "a.db"), &sqlitesaver.Options{ListPageSize: -5}, "ListPageSize"},
		{"missing directory", filepath.Join(dir, "no", "such", "dir", "a.db"), nil, "directory"},
	} {
		s, err := sqlitesaver.Open(ctx, tc.path, tc.opts)
		if err == nil {
			s.Close()
			t.Errorf("Open %s: no error", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "sqlitesaver: ") {
			t.Errorf("Open %s: error %q; want it to start with sqlitesaver: and mention %q", tc.name, err, tc.want)
		}
	}
	if _, err := sqlitesaver.New(ctx, nil, nil); err == nil {
		t.Error("New with a nil db: no error")
	}
}

func TestReadOnlyDatabase(t *testing.T) {
	ctx := context.Background()
	s, path := setup(t)
	head := put(t, s, "t", "")
	s.Close()

	// The same file opened read-only, as a replica or a mistaken mount would give it.
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ro, err := sqlitesaver.New(ctx, db, nil)
	if err != nil {
		t.Fatalf("New on an up-to-date read-only database: %v; reads should still work", err)
	}
	if got, err := ro.Get(ctx, checkpoint.Ref{ThreadID: "t"}); err != nil || got.Checkpoint.ID != head {
		t.Fatalf("Get on a read-only database: %v, %v", got, err)
	}
	err = ro.Put(ctx, checkpoint.PutRequest{ThreadID: "t", Head: head, Checkpoint: checkpoint.Checkpoint{ID: checkpoint.NewID(), Versions: map[string]string{}}})
	if !errors.Is(err, sqlitesaver.ErrReadOnly) {
		t.Fatalf("Put on a read-only database: %v; want ErrReadOnly", err)
	}
	if !strings.Contains(err.Error(), "read-only") || !strings.Contains(err.Error(), "may write") {
		t.Errorf("the read-only error should say what is wrong and what to check: %q", err)
	}
	var se *sqlitesaver.Error
	if !errors.As(err, &se) || se.Op != "put" || se.ThreadID != "t" {
		t.Errorf("the error should be a *sqlitesaver.Error for op put on thread t: %#v", err)
	}
}

func TestReadOnlyFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: file permissions do not stop root from writing")
	}
	ctx := context.Background()
	s, path := setup(t)
	put(t, s, "t", "")
	s.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		os.Chmod(p, 0o444)
	}
	os.Chmod(filepath.Dir(path), 0o555)
	t.Cleanup(func() { os.Chmod(filepath.Dir(path), 0o755) })
	ro, err := sqlitesaver.Open(ctx, path, nil)
	if err == nil {
		defer ro.Close()
		err = ro.Put(ctx, checkpoint.PutRequest{ThreadID: "u", Checkpoint: checkpoint.Checkpoint{ID: checkpoint.NewID()}})
	}
	if err == nil {
		t.Fatal("writing to a read-only file worked")
	}
	t.Logf("read-only file: %v", err)
}

// A damaged row is an error on read, never a panic.
func TestDamagedRows(t *testing.T) {
	ctx := context.Background()
	s, _ := setup(t)
	head := put(t, s, "t", "")
	for _, tc := range []struct{ name, sql string }{
		{"state not JSON", "UPDATE trellis_checkpoints SET state = 'not json'"},
		{"metadata not an object", "UPDATE trellis_checkpoints SET state = '{\"v\":{}}', metadata = '[1,2]'"},
	} {
		if _, err := s.DB().Exec(tc.sql); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, checkpoint.Ref{ThreadID: "t"}); err == nil || !strings.Contains(err.Error(), "damaged") {
			t.Errorf("Get with %s: %v; want an error saying the row is damaged", tc.name, err)
		}
		for _, err := range s.List(ctx, checkpoint.ListOptions{ThreadID: "t"}) {
			if err == nil {
				t.Errorf("List with %s: no error", tc.name)
			}
		}
	}
	// A blob chain that loops ends in an error, not a hang.
	if _, err := s.DB().Exec("UPDATE trellis_checkpoints SET state = '{\"v\":{\"a\":\"2\"}}', metadata = NULL"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().Exec(`INSERT INTO trellis_checkpoint_blobs (space, channel, version, base, data)
SELECT id, 'a', '2', '1', x'' FROM trellis_checkpoint_spaces UNION ALL SELECT id, 'a', '1', '2', x'' FROM trellis_checkpoint_spaces`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, checkpoint.Ref{ThreadID: "t", CheckpointID: head}); err == nil || !strings.Contains(err.Error(), "loops") {
		t.Errorf("Get with a looping blob chain: %v; want an error saying it loops", err)
	}
}

// What only a SQL saver rejects. (The conformance suite checks the rest.)
func TestBadPuts(t *testing.T) {
	s, _ := setup(t)
	err := s.Put(context.Background(), checkpoint.PutRequest{ThreadID: "t",
		Checkpoint: checkpoint.Checkpoint{ID: checkpoint.NewID(), Metadata: map[string]any{"f": func() {}}}})
	if err == nil || !strings.Contains(err.Error(), "metadata") || !strings.HasPrefix(err.Error(), "sqlitesaver: put") {
		t.Errorf("Put with metadata that is not JSON: %v; want a sqlitesaver: put error about the metadata", err)
	}
}

// The suite on an encrypted saver; then, reading the database file directly, no stored byte
// shows a planted secret.
func TestEncrypted(t *testing.T) {
	keys, err := encrypt.NewKeyring(encrypt.Key{ID: "k1", Secret: []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver {
		s, _ := setup(t)
		return checkpoint.Encrypt(s, keys)
	})
	s, path := setup(t)
	checkpointtest.PlantSecret(t, checkpoint.Encrypt(s, keys))
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, table := range []string{"trellis_checkpoints", "trellis_checkpoint_blobs", "trellis_checkpoint_writes"} {
		rows, err := db.Query("SELECT * FROM " + table)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		n := 0
		for rows.Next() {
			cells := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range cells {
				ptrs[i] = &cells[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, c := range cells {
				text := fmt.Sprint(c)
				if b, ok := c.([]byte); ok {
					text = string(b)
				}
				if strings.Contains(text, checkpointtest.Secret) {
					t.Errorf("%s.%s holds the secret in plaintext: %q", table, cols[i], text)
				}
			}
			n++
		}
		rows.Close()
		if n == 0 {
			t.Errorf("%s is empty: nothing was checked", table)
		}
	}
}
