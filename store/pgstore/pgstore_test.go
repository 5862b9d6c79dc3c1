package pgstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

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
	cfg.MaxConns = 4
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func TestConformance(t *testing.T) {
	for _, mode := range []pgstore.VectorMode{pgstore.VectorAuto, pgstore.VectorExact} {
		name := string(mode)
		if name == "" {
			name = "auto"
		}
		t.Run(name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, cfg store.Config) store.Store {
				s, err := pgstore.New(context.Background(), schemaPool(t), &pgstore.Options{Config: cfg, Vector: mode})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			})
		})
	}
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
