package pgsaver_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/checkpoint/checkpointtest"
	"github.com/trellis-go/trellis/checkpoint/pgsaver"
	"github.com/trellis-go/trellis/encrypt"
)

// testURL is the Postgres the tests use; TRELLIS_TEST_POSTGRES overrides it.
func testURL() string {
	if u := os.Getenv("TRELLIS_TEST_POSTGRES"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable&connect_timeout=5"
}

// bundle is what a test gets besides the saver.
type bundle struct {
	schema string    // the test's own schema, dropped at cleanup
	admin  *pgx.Conn // a connection outside the saver's pool, search_path unset
	pool   *pgxpool.Pool
}

// newPool returns a pool whose connections use schema and carry it as application_name, so
// tests can find their backends in pg_stat_activity.
func newPool(t testing.TB, schema string, params map[string]string) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(testURL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 4
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	cfg.ConnConfig.RuntimeParams["application_name"] = schema
	for k, v := range params {
		cfg.ConnConfig.RuntimeParams[k] = v
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// setup gives the test a schema of its own and a saver on it. It skips the test, saying so,
// when no Postgres is reachable.
func setup(t testing.TB) (*pgsaver.Saver, bundle) {
	t.Helper()
	ctx := context.Background()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	admin, err := pgx.Connect(cctx, testURL())
	if err != nil {
		t.Skipf("Postgres unreachable: %v (set TRELLIS_TEST_POSTGRES to a reachable database to run this test)", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "cp_test_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close(ctx)
		t.Fatalf("creating schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
		admin.Close(context.Background())
	})
	pool := newPool(t, schema, nil)
	s, err := pgsaver.New(ctx, pool, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s, bundle{schema: schema, admin: admin, pool: pool}
}

// The suite on a saver of its own per subtest, and on one saver for all.
func TestConformance(t *testing.T) {
	checkpointtest.RunFreshAndShared(t, func(t *testing.T) checkpoint.Saver {
		s, _ := setup(t)
		return s
	})
}

func put(t *testing.T, s checkpoint.Saver, thread, head string, blobs ...checkpoint.Blob) string {
	t.Helper()
	versions := map[string]string{}
	for _, b := range blobs {
		versions[b.Channel] = b.Version
	}
	cp := checkpoint.Checkpoint{ID: checkpoint.NewID(), ParentID: head, Versions: versions}
	if err := s.Put(context.Background(), checkpoint.PutRequest{ThreadID: thread, Checkpoint: cp, Head: head, Blobs: blobs}); err != nil {
		t.Fatalf("Put: %v", err)
	}
	return cp.ID
}

// Two processes (two pools) racing on one thread: one wins each round, the other gets
// ErrConflict, and the history never forks.
func TestTwoPoolsOneThreadConflict(t *testing.T) {
	a, b := setup(t)
	other, err := pgsaver.New(context.Background(), newPool(t, b.schema, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkpointtest.TwoWriters(t, a, other, 15)
}

// The backend serving a Put is killed while the put waits (as in a failover or an operator's
// pg_terminate_backend). The put fails with ErrUnavailable, nothing acknowledged is lost, the
// failed put left nothing behind, and retrying the same request succeeds on a new connection.
func TestBackendTerminatedMidPut(t *testing.T) {
	ctx := context.Background()
	s, b := setup(t)
	m1 := checkpoint.Blob{Channel: "messages", Version: "000000000001.a", Data: []byte(`["hi"]`)}
	m2 := checkpoint.Blob{Channel: "messages", Version: "000000000002.a", Base: m1.Version, Data: []byte(`["there"]`)}
	cp1 := put(t, s, "t", "", m1)
	cp2 := put(t, s, "t", cp1, m2)

	// Hold the thread's head row so the next put blocks inside Postgres.
	tx, err := b.admin.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT * FROM "+b.schema+".trellis_checkpoint_spaces WHERE thread_id = 't' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	m3 := checkpoint.Blob{Channel: "messages", Version: "000000000003.a", Base: m2.Version, Data: []byte(`["lost?"]`)}
	req := checkpoint.PutRequest{ThreadID: "t", Head: cp2, Blobs: []checkpoint.Blob{m3},
		Checkpoint: checkpoint.Checkpoint{ID: checkpoint.NewID(), ParentID: cp2, Versions: map[string]string{"messages": m3.Version}}}
	done := make(chan error, 1)
	go func() { done <- s.Put(ctx, req) }()

	var pid int
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := tx.QueryRow(ctx, "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'", b.schema).Scan(&pid)
		if err == nil {
			break
		}
		if !errors.Is(err, pgx.ErrNoRows) || time.Now().After(deadline) {
			t.Fatalf("waiting for the put to block: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := tx.Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	var putErr error
	select {
	case putErr = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the put did not return after its backend was terminated")
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(putErr, pgsaver.ErrUnavailable) {
		t.Fatalf("Put whose backend was terminated: %v; want ErrUnavailable", putErr)
	}
	if !strings.Contains(putErr.Error(), "retry") {
		t.Errorf("the error should tell the caller to retry: %q", putErr)
	}

	got, err := s.Get(ctx, checkpoint.Ref{ThreadID: "t"})
	if err != nil {
		t.Fatalf("Get after the outage: %v", err)
	}
	if got.Checkpoint.ID != cp2 || len(got.Blobs) != 2 {
		t.Fatalf("after the outage the newest is %q with %d blobs; want the acknowledged %q with 2", got.Checkpoint.ID, len(got.Blobs), cp2)
	}
	if _, err := s.Get(ctx, checkpoint.Ref{ThreadID: "t", CheckpointID: cp1}); err != nil {
		t.Errorf("acknowledged checkpoint %q lost: %v", cp1, err)
	}
	// The caller retries the same request: it lands once.
	if err := s.Put(ctx, req); err != nil {
		t.Fatalf("retrying the put after the outage: %v", err)
	}
	if err := s.Put(ctx, req); err != nil {
		t.Fatalf("retrying the put once more: %v", err)
	}
	got, err = s.Get(ctx, checkpoint.Ref{ThreadID: "t"})
	if err != nil || got.Checkpoint.ID != req.Checkpoint.ID || len(got.Blobs) != 3 {
		t.Fatalf("after the retry: %v, %v", got, err)
	}
}

// Closing the pool under a saver: every call fails with a clear error, and a new saver on a new
// pool finds everything that was acknowledged.
func TestPoolClosed(t *testing.T) {
	ctx := context.Background()
	s, b := setup(t)
	head := ""
	for range 5 {
		head = put(t, s, "t", head)
	}
	b.pool.Close()
	err := s.Put(ctx, checkpoint.PutRequest{ThreadID: "t", Head: head, Checkpoint: checkpoint.Checkpoint{ID: checkpoint.NewID()}})
	if !errors.Is(err, pgsaver.ErrClosed) {
		t.Errorf("Put on a closed pool: %v; want ErrClosed", err)
	}
	if _, err := s.Get(ctx, checkpoint.Ref{ThreadID: "t"}); !errors.Is(err, pgsaver.ErrClosed) {
		t.Errorf("Get on a closed pool: %v; want ErrClosed", err)
	}
	s2, err := pgsaver.New(ctx, newPool(t, b.schema, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s2.Get(ctx, checkpoint.Ref{ThreadID: "t"})
	if err != nil || got.Checkpoint.ID != head {
		t.Fatalf("a new saver finds %v, %v; want the acknowledged head %q", got, err, head)
	}
	n := 0
	for _, err := range s2.List(ctx, checkpoint.ListOptions{ThreadID: "t"}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 5 {
		t.Errorf("a new saver lists %d checkpoints, want 5", n)
	}
}

func TestSaverClosed(t *testing.T) {
	s, err := pgsaver.Open(context.Background(), testURL()+"&pool_max_conns=2", nil)
	if err != nil {
		t.Skipf("Postgres unreachable: %v", err)
	}
	s.Close()
	s.Close() // twice is fine
	if _, err := s.Get(context.Background(), checkpoint.Ref{ThreadID: "t"}); !errors.Is(err, pgsaver.ErrClosed) {
		t.Errorf("Get after Close: %v; want ErrClosed", err)
	}
}

// A session that may not write: reads work, writes fail with ErrReadOnly and say so.
func TestReadOnly(t *testing.T) {
	ctx := context.Background()
	s, b := setup(t)
	head := put(t, s, "t", "")
	ro, err := pgsaver.New(ctx, newPool(t, b.schema, map[string]string{"default_transaction_read_only": "on"}), nil)
	if err != nil {
		t.Fatalf("New on a read-only session of a migrated schema: %v; reads should work", err)
	}
	if got, err := ro.Get(ctx, checkpoint.Ref{ThreadID: "t"}); err != nil || got.Checkpoint.ID != head {
		t.Fatalf("Get on a read-only session: %v, %v", got, err)
	}
	for name, err := range map[string]error{
		"Put":           ro.Put(ctx, checkpoint.PutRequest{ThreadID: "t", Head: head, Checkpoint: checkpoint.Checkpoint{ID: checkpoint.NewID()}}),
		"PutWrites":     ro.PutWrites(ctx, checkpoint.WritesRequest{Ref: checkpoint.Ref{ThreadID: "t", CheckpointID: head}, TaskID: "x"}),
		"SetMetadata":   ro.SetMetadata(ctx, checkpoint.Ref{ThreadID: "t", CheckpointID: head}, map[string]any{"x": 1}),
		"DeleteThreads": ro.DeleteThreads(ctx, []string{"t"}),
		"Prune":         ro.Prune(ctx, checkpoint.PruneRequest{ThreadID: "t", Keep: 1}),
	} {
		if !errors.Is(err, pgsaver.ErrReadOnly) {
			t.Errorf("%s on a read-only session: %v; want ErrReadOnly", name, err)
			continue
		}
		if !strings.Contains(err.Error(), "read-only") || !strings.Contains(err.Error(), "primary") {
			t.Errorf("%s: the error should say the database is read-only and what to do: %q", name, err)
		}
	}
	// A fresh, unmigrated schema cannot be migrated read-only, and the error says why.
	fresh := b.schema + "_ro"
	if _, err := b.admin.Exec(ctx, "CREATE SCHEMA "+fresh); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.admin.Exec(context.Background(), "DROP SCHEMA "+fresh+" CASCADE") })
	_, err = pgsaver.New(ctx, newPool(t, fresh, map[string]string{"default_transaction_read_only": "on"}), nil)
	if !errors.Is(err, pgsaver.ErrReadOnly) {
		t.Errorf("New on a read-only, unmigrated schema: %v; want ErrReadOnly", err)
	}
}

func TestUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Port 1 on loopback: nothing listens there.
	_, err := pgsaver.Open(ctx, "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=2", nil)
	if !errors.Is(err, pgsaver.ErrUnavailable) {
		t.Fatalf("Open of an unreachable server: %v; want ErrUnavailable", err)
	}
	if !strings.Contains(err.Error(), "cannot connect") {
		t.Errorf("the error should say it cannot connect: %q", err)
	}
	if _, err := pgsaver.Open(ctx, "::not a url::", nil); err == nil || !strings.Contains(err.Error(), "connection string") {
		t.Errorf("Open with a malformed connection string: %v", err)
	}
	if _, err := pgsaver.New(ctx, nil, nil); err == nil {
		t.Error("New with a nil pool: no error")
	}
}

func TestMigrate(t *testing.T) {
	ctx := context.Background()
	_, b := setup(t)
	fresh := b.schema + "_m"
	if _, err := b.admin.Exec(ctx, "CREATE SCHEMA "+fresh); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.admin.Exec(context.Background(), "DROP SCHEMA "+fresh+" CASCADE") })
	pool := newPool(t, fresh, nil)
	checkpointtest.Migrate(t, checkpointtest.SQLMigration{
		Migrate: func(ctx context.Context) error { return pgsaver.Migrate(ctx, pool) },
		Recorded: func() (n int, err error) {
			err = pool.QueryRow(ctx, "SELECT count(*) FROM trellis_checkpoint_migrations").Scan(&n)
			return n, err
		},
		Future: func() error {
			_, err := pool.Exec(ctx, "INSERT INTO trellis_checkpoint_migrations (version, name) VALUES (999, 'future')")
			return err
		},
		Want: pgsaver.SchemaVersion,
	})
}

func TestMissingTablesHint(t *testing.T) {
	ctx := context.Background()
	s, b := setup(t)
	if _, err := b.admin.Exec(ctx, "DROP TABLE "+b.schema+".trellis_checkpoints"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Get(ctx, checkpoint.Ref{ThreadID: "t"})
	if err == nil || !strings.Contains(err.Error(), "Migrate") {
		t.Errorf("Get with the tables gone: %v; want a hint to run Migrate", err)
	}
}

func TestDamagedRows(t *testing.T) {
	ctx := context.Background()
	s, b := setup(t)
	head := put(t, s, "t", "")
	if _, err := b.pool.Exec(ctx, `UPDATE trellis_checkpoints SET state = '{"v": {"a": 7}}'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, checkpoint.Ref{ThreadID: "t"}); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("Get of a damaged row: %v; want an error saying it is damaged", err)
	}
	// A looping chain ends in an error, not a hang.
	if _, err := b.pool.Exec(ctx, `UPDATE trellis_checkpoints SET state = '{"v": {"a": "2"}}'`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.pool.Exec(ctx, `INSERT INTO trellis_checkpoint_blobs (space, channel, version, base, data)
SELECT id, 'a', '2', '1', ''::bytea FROM trellis_checkpoint_spaces UNION ALL SELECT id, 'a', '1', '2', ''::bytea FROM trellis_checkpoint_spaces`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, checkpoint.Ref{ThreadID: "t", CheckpointID: head}); err == nil || !strings.Contains(err.Error(), "loops") {
		t.Errorf("Get of a looping chain: %v; want an error saying it loops", err)
	}
}

// What only a SQL saver rejects, and the errors' prefix. (The conformance suite checks the rest.)
func TestBadPuts(t *testing.T) {
	ctx := context.Background()
	s, _ := setup(t)
	for name, cp := range map[string]checkpoint.Checkpoint{
		"metadata":  {Metadata: map[string]any{"ch": make(chan int)}},
		"CreatedAt": {CreatedAt: time.Date(1200, 1, 1, 0, 0, 0, 0, time.UTC)},
		"no ID":     {},
	} {
		if name != "no ID" {
			cp.ID = checkpoint.NewID()
		}
		err := s.Put(ctx, checkpoint.PutRequest{ThreadID: "t", Checkpoint: cp})
		if err == nil || !strings.Contains(err.Error(), name) || !strings.HasPrefix(err.Error(), "pgsaver: put") {
			t.Errorf("Put with a bad %s: %v; want a pgsaver: put error mentioning it", name, err)
		}
	}
	for _, err := range s.List(ctx, checkpoint.ListOptions{ThreadID: "t", Metadata: map[string]any{"bad": func() {}}}) {
		if err == nil || !strings.Contains(err.Error(), "filter") {
			t.Errorf("List with a filter that is not JSON: %v", err)
		}
	}
}

// The suite on an encrypted saver; then, reading the tables directly, no stored value shows a
// planted secret.
func TestEncrypted(t *testing.T) {
	keys, err := encrypt.NewKeyring(encrypt.Key{ID: "k1", Secret: []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver {
		s, _ := setup(t)
		return checkpoint.Encrypt(s, keys)
	})
	s, b := setup(t)
	checkpointtest.PlantSecret(t, checkpoint.Encrypt(s, keys))
	ctx := context.Background()
	for table, cols := range map[string]string{
		"trellis_checkpoints":       "convert_to(state::text || coalesce(metadata::text, ''), 'UTF8')",
		"trellis_checkpoint_blobs":  "data",
		"trellis_checkpoint_writes": "value",
	} {
		rows, err := b.admin.Query(ctx, "SELECT "+cols+" FROM "+b.schema+"."+table)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var cell []byte
			if err := rows.Scan(&cell); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(cell), checkpointtest.Secret) {
				t.Errorf("%s holds the secret in plaintext: %q", table, cell)
			}
			n++
		}
		rows.Close()
		if n == 0 {
			t.Errorf("%s is empty: nothing was checked", table)
		}
	}
}
