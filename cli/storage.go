package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/trellis-go/trellis/embed"
	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/pgstore"
	"github.com/trellis-go/trellis/store/sqlitestore"
)

// storage holds the flags that say where trellis keeps its data: a data directory with SQLite
// files by default, Postgres when a database URL is given.
type storage struct {
	dataDir     string
	databaseURL string
}

func (s *storage) flags(fs *flag.FlagSet) {
	dir := os.Getenv("TRELLIS_DATA_DIR")
	if dir == "" {
		dir = ".trellis"
	}
	fs.StringVar(&s.dataDir, "data-dir", dir, "directory of the SQLite databases (env TRELLIS_DATA_DIR)")
	fs.StringVar(&s.databaseURL, "database-url", os.Getenv("TRELLIS_DATABASE_URL"), "Postgres URL; when set, data lives there instead of the data directory (env TRELLIS_DATABASE_URL)")
}

func (s *storage) sqlitePath(name string) (string, error) {
	if err := os.MkdirAll(s.dataDir, 0o755); err != nil {
		return "", fmt.Errorf("creating the data directory: %w (choose another with --data-dir)", err)
	}
	return filepath.Join(s.dataDir, name), nil
}

// openStore opens the long-term memory store, with the embedder the environment asks for.
func (s *storage) openStore(ctx context.Context) (store.Store, func() error, string, error) {
	emb, dims, which, err := embed.FromEnv()
	if err != nil {
		return nil, nil, "", err
	}
	cfg := store.Config{Index: &store.IndexConfig{Embedder: emb, Dims: dims}}
	if s.databaseURL != "" {
		st, err := pgstore.Open(ctx, s.databaseURL, &pgstore.Options{Config: cfg})
		if err != nil {
			return nil, nil, "", err
		}
		return st, st.Close, "postgres, embeddings: " + which, nil
	}
	path, err := s.sqlitePath("store.db")
	if err != nil {
		return nil, nil, "", err
	}
	st, err := sqlitestore.Open(ctx, path, &sqlitestore.Options{Config: cfg})
	if err != nil {
		return nil, nil, "", err
	}
	return st, st.Close, path + ", embeddings: " + which, nil
}
