package sqlitestore_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/encrypt"
	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/sqlitestore"
	"github.com/trellis-go/trellis/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.RunModes(t, []string{"hnsw", "exact"}, func(t *testing.T, cfg store.Config, mode string) (store.Store, error) {
		return sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "store.db"), &sqlitestore.Options{Config: cfg, ExactVectors: mode == "exact"})
	})
}

func setup(t *testing.T, path string, cfg store.Config) *sqlitestore.Store {
	t.Helper()
	s, err := sqlitestore.Open(context.Background(), path, &sqlitestore.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func indexed() store.Config {
	return store.Config{Index: &store.IndexConfig{Embedder: &storetest.TopicEmbedder{}, Dims: storetest.TopicDims}}
}

func TestReopenKeepsItemsAndVectors(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	s := setup(t, path, indexed())
	if err := s.Put(ctx, store.PutRequest{Namespace: []string{"a"}, Key: "k", Value: map[string]any{"text": "apples in the orchard"}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2 := setup(t, path, indexed())
	res, err := s2.Search(ctx, store.SearchRequest{Query: "fruit"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Key != "k" {
		t.Fatalf("after reopen the vector index lost the item: %+v", res)
	}
	// Reopening with another dimension is refused.
	_, err = sqlitestore.Open(ctx, path, &sqlitestore.Options{Config: store.Config{Index: &store.IndexConfig{Embedder: &storetest.TopicEmbedder{WrongDims: 8}, Dims: 8}}})
	if !errors.Is(err, store.ErrDimension) {
		t.Fatalf("reopen with 8 dims over 16-dim vectors: %v", err)
	}
}

func TestTwoProcessesShareVectors(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	a := setup(t, path, indexed())
	b := setup(t, path, indexed())
	if _, err := b.Search(ctx, store.SearchRequest{Query: "fruit"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Put(ctx, store.PutRequest{Namespace: []string{"n"}, Key: "x", Value: map[string]any{"text": "bananas"}}); err != nil {
		t.Fatal(err)
	}
	res, err := b.Search(ctx, store.SearchRequest{Query: "fruit"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Key != "x" {
		t.Fatalf("b did not see a's put: %+v", res)
	}
	if err := a.Delete(ctx, store.DeleteRequest{Namespace: []string{"n"}, Key: "x"}); err != nil {
		t.Fatal(err)
	}
	res, err = b.Search(ctx, store.SearchRequest{Query: "fruit"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 0 {
		t.Fatalf("b still finds a's deleted item: %+v", res)
	}
}

func TestReadOnlyDatabase(t *testing.T) {
	// Opened with mode=ro, since file permissions do not stop root.
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "ro.db")
	s := setup(t, path, store.Config{})
	if err := s.Put(ctx, store.PutRequest{Namespace: []string{"a"}, Key: "k", Value: map[string]any{"v": 1}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ro, err := sqlitestore.New(ctx, db, nil)
	if err != nil {
		t.Fatalf("opening a current database read-only: %v", err)
	}
	if _, err := ro.Get(ctx, store.GetRequest{Namespace: []string{"a"}, Key: "k"}); err != nil {
		t.Fatalf("read from a read-only database: %v", err)
	}
	err = ro.Put(ctx, store.PutRequest{Namespace: []string{"a"}, Key: "k2", Value: map[string]any{"v": 2}})
	if !errors.Is(err, store.ErrReadOnly) || !strings.Contains(err.Error(), "not writable") {
		t.Fatalf("write to a read-only database: %v", err)
	}
}

func TestUnopenableFile(t *testing.T) {
	_, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "no", "such", "dir", "s.db"), nil)
	if !errors.Is(err, store.ErrUnavailable) || !strings.HasPrefix(err.Error(), "store: sqlite") {
		t.Fatalf("open in a missing folder: %v", err)
	}
	if _, err := sqlitestore.Open(context.Background(), "", nil); err == nil {
		t.Fatal("empty path accepted")
	}
}

func TestMigrateIsIdempotent(t *testing.T) {
	ctx := context.Background()
	s := setup(t, filepath.Join(t.TempDir(), "m.db"), store.Config{})
	for range 2 {
		if err := sqlitestore.Migrate(ctx, s.DB()); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := s.DB().QueryRow("SELECT count(*) FROM store_schema_migrations").Scan(&n); err != nil || n != 2 {
		t.Fatalf("migrations recorded: %d, %v", n, err)
	}
}

// A store big enough saves its vector graph; the next open loads it instead of building it,
// then replays the changes made after the save.
func TestSavedVectorGraph(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "g.db")
	var logs bytes.Buffer
	cfg := indexed()
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	s := setup(t, path, cfg)
	words := []string{"apples", "bananas", "rivers", "mountains", "engines", "compilers", "violins", "tax"}
	for i := range 2100 {
		text := fmt.Sprintf("%s and %s number %d", words[i%len(words)], words[(i/8)%len(words)], i)
		if err := s.Put(ctx, store.PutRequest{Namespace: []string{"kb"}, Key: fmt.Sprint(i), Value: map[string]any{"text": text}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Search(ctx, store.SearchRequest{Query: "fruit"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	var seq int64
	if err := setup(t, path, store.Config{}).DB().QueryRow("SELECT seq FROM store_vector_graph").Scan(&seq); err != nil {
		t.Fatalf("no saved graph after closing a store of 2100 vectors: %v", err)
	}
	// Another writer changes things after the save.
	w := setup(t, path, store.Config{Index: &store.IndexConfig{Embedder: &storetest.TopicEmbedder{}, Dims: storetest.TopicDims}})
	if err := w.Put(ctx, store.PutRequest{Namespace: []string{"fresh"}, Key: "new", Value: map[string]any{"text": "violins and violins"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Delete(ctx, store.DeleteRequest{Namespace: []string{"kb"}, Key: "6"}); err != nil {
		t.Fatal(err)
	}
	logs.Reset()
	s2 := setup(t, path, cfg)
	if !strings.Contains(logs.String(), "vector graph loaded") {
		t.Fatalf("the reopened store did not load the saved graph; logs:\n%s", logs.String())
	}
	res, err := s2.Search(ctx, store.SearchRequest{NamespacePrefix: []string{"fresh"}, Query: "violins"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Key != "new" {
		t.Fatalf("a put made after the save is not found: %+v", res)
	}
	res, err = s2.Search(ctx, store.SearchRequest{NamespacePrefix: []string{"kb"}, Query: "violins", Limit: 300})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) < 10 {
		t.Fatalf("only %d results for violins", len(res))
	}
	for _, r := range res {
		if r.Key == "6" {
			t.Fatal("an item deleted after the save came back")
		}
	}
	// A damaged saved graph is rebuilt, not trusted.
	if _, err := w.DB().Exec("UPDATE store_vector_graph SET graph = x'00010203'"); err != nil {
		t.Fatal(err)
	}
	logs.Reset()
	s3 := setup(t, path, cfg)
	if !strings.Contains(logs.String(), "unreadable; rebuilding") {
		t.Fatalf("a damaged graph was not reported; logs:\n%s", logs.String())
	}
	if res, err := s3.Search(ctx, store.SearchRequest{NamespacePrefix: []string{"fresh"}, Query: "violins"}); err != nil || len(res) != 1 {
		t.Fatalf("search after rebuilding: %+v, %v", res, err)
	}
}

// A text query whose every term many items hold takes the page from those items, newest
// first; with too few of them it falls back to ranking the items holding any term.
func TestTextSearchAllTermsFirst(t *testing.T) {
	ctx := context.Background()
	clock := time.Unix(1_700_000_000, 0)
	cfg := store.Config{Now: func() time.Time { clock = clock.Add(time.Second); return clock }}
	s := setup(t, filepath.Join(t.TempDir(), "t.db"), cfg)
	for i := range 30 {
		text := "common words everywhere number " + fmt.Sprint(i)
		if i%2 == 0 {
			text += " rare"
		}
		if err := s.Put(ctx, store.PutRequest{Namespace: []string{"d"}, Key: fmt.Sprintf("%02d", i), Value: map[string]any{"text": text}}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.Search(ctx, store.SearchRequest{Query: "common rare", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range res {
		keys = append(keys, r.Key)
	}
	if got, want := strings.Join(keys, " "), "28 26 24 22 20"; got != want {
		t.Fatalf("page of 5 for two terms: %s, want the newest items with both: %s", got, want)
	}
	res, err = s.Search(ctx, store.SearchRequest{Query: "common rare", Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 20 {
		t.Fatalf("%d results, want 20 (15 with both terms, 5 with one)", len(res))
	}
	for i, r := range res {
		n, _ := strconv.Atoi(r.Key)
		if both := n%2 == 0; both != (i < 15) {
			t.Fatalf("result %d is %s: items with both terms must come first", i, r.Key)
		}
	}
}

// An encrypted store on SQLite: the flows work, and no row of any of the file's tables shows a
// value's text.
func TestEncrypted(t *testing.T) {
	keys, err := encrypt.NewKeyring(encrypt.Key{ID: "k1", Secret: []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.db")
	s := setup(t, path, indexed())
	storetest.Encrypted(t, store.Encrypt(s, keys))
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table'`)
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
	for _, table := range tables {
		rows, err := db.Query(`SELECT * FROM "` + table + `"`)
		if err != nil {
			continue // a virtual table's shadow the driver cannot read whole
		}
		cols, _ := rows.Columns()
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
				if strings.Contains(text, storetest.Secret) {
					t.Errorf("%s.%s shows the secret in plaintext", table, cols[i])
				}
			}
		}
		rows.Close()
	}
	if len(tables) == 0 {
		t.Fatal("no table was checked")
	}
}

// A batch whose write fails in the database leaves none of its writes applied: the batch is
// one transaction. A trigger refuses one key, after the batch's checks have passed.
func TestBatchRollsBack(t *testing.T) {
	ctx := context.Background()
	s := setup(t, filepath.Join(t.TempDir(), "s.db"), indexed())
	ns := []string{"tx"}
	if err := s.Put(ctx, store.PutRequest{Namespace: ns, Key: "kept", Value: map[string]any{"text": "kept apples"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().Exec(`CREATE TRIGGER refuse_boom BEFORE INSERT ON store_items WHEN NEW.key = 'boom' BEGIN SELECT RAISE(ABORT, 'boom refused'); END`); err != nil {
		t.Fatal(err)
	}
	_, err := store.Batch(ctx, s, []store.Op{
		store.PutRequest{Namespace: ns, Key: "a", Value: map[string]any{"text": "orchard fruit"}},
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
	// Nor did the vector index take the rolled-back put.
	res, err := s.Search(ctx, store.SearchRequest{Query: "fruit"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Key == "a" {
			t.Fatal("a search finds the rolled-back put")
		}
	}
	// Without the refused key the same batch applies whole.
	if _, err := store.Batch(ctx, s, []store.Op{
		store.PutRequest{Namespace: ns, Key: "a", Value: map[string]any{"text": "orchard fruit"}},
		store.DeleteRequest{Namespace: ns, Key: "kept"},
	}); err != nil {
		t.Fatal(err)
	}
	res, err = s.Search(ctx, store.SearchRequest{Query: "fruit"})
	if err != nil || len(res) != 1 || res[0].Key != "a" {
		t.Fatalf("after the batch a search finds %d items (%v), want [a]", len(res), err)
	}
}
