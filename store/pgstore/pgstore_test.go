package pgstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trellis-go/trellis/encrypt"
	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/pgstore"
	"github.com/trellis-go/trellis/store/storetest"
)

// dsn is the test database; TRELLIS_TEST_POSTGRES overrides it.
func dsn() string {
	if d := os.Getenv("TRELLIS_TEST_POSTGRES"); d != "" {
		return d
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

// schemaPool returns a pool whose search_path is a fresh schema, dropped at cleanup, so tests
// running at once against the same database never see each other's tables.
func schemaPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	return schemaPoolWith(t, nil)
}

// schemaPoolWith is schemaPool with extra session settings.
func schemaPoolWith(t *testing.T, params map[string]string) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	admin, err := pgxpool.New(ctx, dsn())
	if err == nil {
		pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		err = admin.Ping(pctx)
		cancel()
	}
	if err != nil {
		t.Skipf("Postgres unreachable: %v (set TRELLIS_TEST_POSTGRES to a reachable database)", err)
	}
	b := make([]byte, 6)
	rand.Read(b)
	schema := "store_test_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		admin.Close()
	})
	cfg, err := pgxpool.ParseConfig(dsn())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema + ",public"
	for k, v := range params {
		cfg.ConnConfig.RuntimeParams[k] = v
	}
	cfg.MaxConns = 4
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func TestConformance(t *testing.T) {
	storetest.RunModes(t, []string{"auto", "exact"}, func(t *testing.T, cfg store.Config, mode string) (store.Store, error) {
		vm := pgstore.VectorExact
		if mode == "auto" {
			vm = pgstore.VectorAuto
		}
		return pgstore.New(context.Background(), schemaPool(t), &pgstore.Options{Config: cfg, Vector: vm})
	})
}

func indexed() store.Config {
	return store.Config{Logger: slog.New(slog.DiscardHandler), Index: &store.IndexConfig{Embedder: &storetest.TopicEmbedder{}, Dims: storetest.TopicDims}}
}

func TestPGVectorMode(t *testing.T) {
	pool := schemaPool(t)
	ctx := context.Background()
	var available bool
	if err := pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')").Scan(&available); err != nil {
		t.Fatal(err)
	}
	s, err := pgstore.New(ctx, pool, &pgstore.Options{Config: indexed(), Vector: pgstore.VectorPGVector})
	if !available {
		if err == nil || !strings.Contains(err.Error(), "not installed") {
			t.Fatalf("pgvector mode without the extension: %v", err)
		}
		t.Skip("pgvector is not installed on this server: the exact-scan path is tested by TestConformance/exact and /auto")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.UsesPGVector() {
		t.Fatal("pgvector mode is not using pgvector")
	}
	storetest.Run(t, func(t *testing.T, cfg store.Config) store.Store {
		s, err := pgstore.New(ctx, schemaPool(t), &pgstore.Options{Config: cfg, Vector: pgstore.VectorPGVector})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestDimensionMismatchOnOpen(t *testing.T) {
	pool := schemaPool(t)
	ctx := context.Background()
	s, err := pgstore.New(ctx, pool, &pgstore.Options{Config: indexed()})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	cfg := indexed()
	cfg.Index = &store.IndexConfig{Embedder: &storetest.TopicEmbedder{WrongDims: 8}, Dims: 8}
	_, err = pgstore.New(ctx, pool, &pgstore.Options{Config: cfg})
	if !errors.Is(err, store.ErrDimension) {
		t.Fatalf("reopen with another dimension: %v", err)
	}
}

func TestServerDown(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Port 1 on loopback: nothing listens there.
	_, err := pgstore.Open(ctx, "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=2", nil)
	if !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), "cannot reach Postgres") {
		t.Fatalf("open against a closed port: %v", err)
	}
	if _, err := pgstore.Open(ctx, "postgres://%zz", nil); err == nil || !strings.Contains(err.Error(), "connection string") {
		t.Fatalf("bad connection string: %v", err)
	}
}

func TestOutageDuringUse(t *testing.T) {
	pool := schemaPool(t)
	ctx := context.Background()
	s, err := pgstore.New(ctx, pool, &pgstore.Options{Config: store.Config{Logger: slog.New(slog.DiscardHandler)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, store.PutRequest{Namespace: []string{"a"}, Key: "k", Value: map[string]any{"v": 1}}); err != nil {
		t.Fatal(err)
	}
	// Losing the pool mid-run must surface as an error on the call, not a panic or a hang.
	pool.Close()
	err = s.Put(ctx, store.PutRequest{Namespace: []string{"a"}, Key: "k2", Value: map[string]any{"v": 2}})
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("put after the connection is gone: %v", err)
	}
	if _, err := s.Search(ctx, store.SearchRequest{}); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("search after the connection is gone: %v", err)
	}
}

func TestReadOnlySession(t *testing.T) {
	pool := schemaPool(t)
	ctx := context.Background()
	if _, err := pgstore.New(ctx, pool, nil); err != nil {
		t.Fatal(err)
	}
	cfg := pool.Config()
	cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	ro, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	s, err := pgstore.New(ctx, ro, &pgstore.Options{Config: store.Config{Logger: slog.New(slog.DiscardHandler)}})
	if err != nil {
		t.Fatalf("opening a migrated schema read-only: %v", err)
	}
	err = s.Put(ctx, store.PutRequest{Namespace: []string{"a"}, Key: "k", Value: map[string]any{"v": 1}})
	if !errors.Is(err, store.ErrReadOnly) || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("put on a read-only session: %v", err)
	}
	if _, err := s.Get(ctx, store.GetRequest{Namespace: []string{"a"}, Key: "k"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get on a read-only session: %v", err)
	}
}

func TestMigrateConcurrently(t *testing.T) {
	pool := schemaPool(t)
	ctx := context.Background()
	errs := make(chan error, 3)
	for range 3 {
		go func() { errs <- pgstore.Migrate(ctx, pool) }()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM store_schema_migrations").Scan(&n); err != nil || n != 1 {
		t.Fatalf("migrations recorded: %d, %v", n, err)
	}
}

// pgvectorInstalled skips the test when the server has no pgvector (bash .ci/pgvector.sh
// builds it).
func pgvectorInstalled(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	var available bool
	if err := pool.QueryRow(context.Background(), "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')").Scan(&available); err != nil {
		t.Fatal(err)
	}
	if !available {
		t.Skip("pgvector is not installed on this server (bash .ci/pgvector.sh installs it)")
	}
}

// logTo returns a config whose logger writes text lines into buf.
func logTo(buf *strings.Builder, mu *sync.Mutex) store.Config {
	cfg := indexed()
	cfg.Logger = slog.New(slog.NewTextHandler(lockedWriter{buf, mu}, nil))
	return cfg
}

type lockedWriter struct {
	b  *strings.Builder
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func TestPGVectorLogsAndBackfills(t *testing.T) {
	pool := schemaPool(t)
	pgvectorInstalled(t, pool)
	ctx := context.Background()
	var buf strings.Builder
	var mu sync.Mutex
	// Items written by an exact-mode store have no pgvector rows yet.
	ex, err := pgstore.New(ctx, pool, &pgstore.Options{Config: logTo(&buf, &mu), Vector: pgstore.VectorExact})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"apples and pears from the orchard", "a car in the garage", "sailing a boat on the sea", "a song on the piano"}
	for i, text := range texts {
		if err := ex.Put(ctx, store.PutRequest{Namespace: []string{"kb"}, Key: fmt.Sprint(i), Value: map[string]any{"text": text}}); err != nil {
			t.Fatal(err)
		}
	}
	ex.Close()
	if !strings.Contains(buf.String(), "index=exact") {
		t.Fatalf("exact mode did not say so in the log:\n%s", buf.String())
	}
	buf.Reset()
	s, err := pgstore.New(ctx, pool, &pgstore.Options{Config: logTo(&buf, &mu)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.UsesPGVector() {
		t.Fatalf("auto mode with pgvector installed is not using it; log:\n%s", buf.String())
	}
	log := buf.String()
	for _, want := range []string{"index=pgvector", "copied vectors into pgvector", "vectors=4"} {
		if !strings.Contains(log, want) {
			t.Fatalf("log lacks %q:\n%s", want, log)
		}
	}
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM store_vectors").Scan(&n); err != nil || n != 4 {
		t.Fatalf("store_vectors holds %d rows (%v), want 4", n, err)
	}
	res, err := s.Search(ctx, store.SearchRequest{NamespacePrefix: []string{"kb"}, Query: "vehicle", Limit: 1})
	if err != nil || len(res) != 1 || res[0].Key != "1" {
		t.Fatalf("semantic search over backfilled vectors: %v %v", res, err)
	}
}

// TestPGVectorSelectivePrefix checks that a page under a rare prefix is full although its
// items are far down the HNSW order of the whole table (more than ef_search rows away).
func TestPGVectorSelectivePrefix(t *testing.T) {
	// On a table this small the planner would rather sort every row (an exact answer); these
	// settings make it walk the HNSW index as it does on a large table.
	pool := schemaPoolWith(t, map[string]string{"enable_seqscan": "off", "enable_sort": "off"})
	pgvectorInstalled(t, pool)
	ctx := context.Background()
	s, err := pgstore.New(ctx, pool, &pgstore.Options{Config: indexed(), Vector: pgstore.VectorPGVector})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 400 {
		if err := s.Put(ctx, store.PutRequest{Namespace: []string{"many"}, Key: fmt.Sprint(i), Value: map[string]any{"text": fmt.Sprintf("apples %d", i), "n": i}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 12 {
		if err := s.Put(ctx, store.PutRequest{Namespace: []string{"few"}, Key: fmt.Sprint(i), Value: map[string]any{"text": fmt.Sprintf("guitar song %d", i), "n": i}}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.Search(ctx, store.SearchRequest{NamespacePrefix: []string{"few"}, Query: "fruit apples", Limit: 10})
	if err != nil || len(res) != 10 {
		t.Fatalf("search under the rare prefix: %d results, %v", len(res), err)
	}
	for _, r := range res {
		if r.Namespace[0] != "few" {
			t.Fatalf("result outside the prefix: %v", r.Namespace)
		}
	}
	// The point is the index scan: make sure the planner took it (statistics reach
	// pg_stat_user_indexes within a second or so of the transaction's end).
	deadline := time.Now().Add(5 * time.Second)
	for {
		var scans int64
		err := pool.QueryRow(ctx, `SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_user_indexes
			WHERE schemaname = current_schema() AND indexrelname = 'store_vectors_hnsw'`).Scan(&scans)
		if err != nil {
			t.Fatal(err)
		}
		if scans > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the search did not use the HNSW index, so this test checks nothing")
		}
		time.Sleep(200 * time.Millisecond)
	}
	// A filter that only Go checks ($gte) leaves 4 of the 12.
	res, err = s.Search(ctx, store.SearchRequest{NamespacePrefix: []string{"few"}, Query: "fruit", Filter: map[string]any{"n": map[string]any{"$gte": 8}}, Limit: 10})
	if err != nil || len(res) != 4 {
		t.Fatalf("filtered search under the rare prefix: %d results, %v", len(res), err)
	}
}

// TestPGVectorFallback opens auto mode as a role that may not create the extension, in a
// database without it: the store falls back to the exact scan, says so, and searches.
func TestPGVectorFallback(t *testing.T) {
	admin := schemaPool(t)
	pgvectorInstalled(t, admin)
	ctx := context.Background()
	b := make([]byte, 4)
	rand.Read(b)
	name := "store_novec_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, "CREATE ROLE "+name+" LOGIN NOSUPERUSER"); err != nil {
		t.Skipf("cannot create a role to test without pgvector: %v", err)
	}
	t.Cleanup(func() { admin.Exec(context.Background(), "DROP ROLE IF EXISTS "+name) })
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name+" OWNER "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	cfg, err := pgxpool.ParseConfig(dsn())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.User, cfg.ConnConfig.Database = name, name
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var buf strings.Builder
	var mu sync.Mutex
	s, err := pgstore.New(ctx, pool, &pgstore.Options{Config: logTo(&buf, &mu)})
	if err != nil {
		t.Fatalf("auto mode must fall back, not fail: %v", err)
	}
	defer s.Close()
	if s.UsesPGVector() {
		t.Fatal("a role that cannot create the extension is using pgvector")
	}
	if log := buf.String(); !strings.Contains(log, "index=exact") || !strings.Contains(log, "could not be enabled") {
		t.Fatalf("the fallback is not in the log:\n%s", log)
	}
	for i, text := range []string{"a car in the garage", "apples from the orchard"} {
		if err := s.Put(ctx, store.PutRequest{Namespace: []string{"kb"}, Key: fmt.Sprint(i), Value: map[string]any{"text": text}}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.Search(ctx, store.SearchRequest{Query: "fruit", Limit: 1})
	if err != nil || len(res) != 1 || res[0].Key != "1" {
		t.Fatalf("exact search after the fallback: %v %v", res, err)
	}
	// pgvector mode as that role is an error that says why.
	if _, err := pgstore.New(ctx, pool, &pgstore.Options{Config: indexed(), Vector: pgstore.VectorPGVector}); err == nil || !strings.Contains(err.Error(), "pgvector") {
		t.Fatalf("pgvector mode without the right to create it: %v", err)
	}
}

// An encrypted store on Postgres: the flows work, and no row of any of the store's tables shows
// a value's text.
func TestEncrypted(t *testing.T) {
	keys, err := encrypt.NewKeyring(encrypt.Key{ID: "k1", Secret: []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	pool := schemaPool(t)
	ctx := context.Background()
	s, err := pgstore.New(ctx, pool, &pgstore.Options{Config: indexed()})
	if err != nil {
		t.Fatal(err)
	}
	storetest.Encrypted(t, store.Encrypt(s, keys))
	rows, err := pool.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	checked := 0
	for _, table := range tables {
		var leaks int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+table+` t WHERE t::text LIKE '%' || $1 || '%'`, storetest.Secret).Scan(&leaks); err != nil {
			t.Fatal(err)
		}
		if leaks > 0 {
			t.Errorf("%d rows of %s show the secret in plaintext", leaks, table)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no table was checked")
	}
}

// A batch whose write fails in the database leaves none of its writes applied: the batch is
// one transaction. A trigger refuses one key, after the batch's checks have passed.
func TestBatchRollsBack(t *testing.T) {
	ctx := context.Background()
	pool := schemaPool(t)
	s, err := pgstore.New(ctx, pool, &pgstore.Options{Config: store.Config{Logger: slog.New(slog.DiscardHandler)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ns := []string{"tx"}
	if err := s.Put(ctx, store.PutRequest{Namespace: ns, Key: "kept", Value: map[string]any{"text": "kept"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.key = 'boom' THEN RAISE EXCEPTION 'boom refused'; END IF; RETURN NEW; END $$`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `CREATE TRIGGER refuse_boom BEFORE INSERT ON store_items FOR EACH ROW EXECUTE FUNCTION refuse_boom()`); err != nil {
		t.Fatal(err)
	}
	_, err = store.Batch(ctx, s, []store.Op{
		store.PutRequest{Namespace: ns, Key: "a", Value: map[string]any{"text": "a"}},
		store.DeleteRequest{Namespace: ns, Key: "kept"},
		store.PutRequest{Namespace: ns, Key: "boom", Value: map[string]any{"text": "x"}},
	})
	if err == nil || !strings.Contains(err.Error(), "boom refused") || !strings.Contains(err.Error(), "none applied") {
		t.Fatalf("batch: %v, want the trigger's error saying none applied", err)
	}
	if _, err := s.Get(ctx, store.GetRequest{Namespace: ns, Key: "a"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the failed batch's first put is there: %v", err)
	}
	if _, err := s.Get(ctx, store.GetRequest{Namespace: ns, Key: "kept"}); err != nil {
		t.Fatalf("the failed batch's delete applied: %v", err)
	}
	if _, err := store.Batch(ctx, s, []store.Op{
		store.PutRequest{Namespace: ns, Key: "a", Value: map[string]any{"text": "a"}},
		store.DeleteRequest{Namespace: ns, Key: "kept"},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, store.GetRequest{Namespace: ns, Key: "a"}); err != nil {
		t.Fatalf("after the batch: %v", err)
	}
}
