package sqlcore

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/internal/backend"
)

// Rows is what the shared code reads: database/sql's and pgx's rows both have it.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// DB is what the shared code runs its statements on: a *sql.DB through [StdDB], a pgx pool
// through pgstore's adapter.
type DB interface {
	// Exec runs q and says how many rows it changed.
	Exec(ctx context.Context, q string, args ...any) (int64, error)
	QueryRow(ctx context.Context, q string, args ...any) interface{ Scan(dest ...any) error }
	// Query runs q; the caller calls done once it has read the rows.
	Query(ctx context.Context, q string, args ...any) (rows Rows, done func(), err error)
}

// StdDB is a database/sql database as a [DB].
type StdDB struct{ DB *sql.DB }

// Exec implements [DB].
func (d StdDB) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := d.DB.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// QueryRow implements [DB].
func (d StdDB) QueryRow(ctx context.Context, q string, args ...any) interface{ Scan(dest ...any) error } {
	return d.DB.QueryRowContext(ctx, q, args...)
}

// Query implements [DB].
func (d StdDB) Query(ctx context.Context, q string, args ...any) (Rows, func(), error) {
	rows, err := d.DB.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, nil, err
	}
	return rows, func() { rows.Close() }, nil
}

// Core is what a SQL store is made on besides its own SQL: its database, dialect and
// configuration, whether it is closed, its errors, and the methods that differ between the
// stores in nothing but the dialect. Each store holds one and calls it.
type Core struct {
	db       DB
	dialect  Dialect
	cfg      store.Config
	backend  string // "sqlite", "postgres": names the store in errors and logs
	classify Classify
	closed   atomic.Bool
	stop     func() // stops the sweeper; nil when none runs
}

// NewCore returns the core of a store named backend on db.
func NewCore(db DB, d Dialect, cfg store.Config, backend string, classify Classify) *Core {
	return &Core{db: db, dialect: d, cfg: cfg, backend: backend, classify: classify}
}

// Wrap turns a driver error of op into a store.BackendError with the store's hint (see [Wrap]).
func (c *Core) Wrap(op string, err error) error { return Wrap(c.backend, op, err, c.classify) }

// StartSweeper starts sweeping s, the store, every Config.SweepInterval, if that is set.
func (c *Core) StartSweeper(s store.Sweeper) {
	if c.cfg.SweepInterval > 0 {
		c.stop = store.StartSweeper(s, c.cfg.SweepInterval, c.cfg.Logger, c.backend)
	}
}

// Close marks the store closed and stops its sweeper; it reports whether the store was closed
// already.
func (c *Core) Close() bool {
	if c.closed.Swap(true) {
		return true
	}
	if c.stop != nil {
		c.stop()
	}
	return false
}

// Closed reports whether the store is closed.
func (c *Core) Closed() bool { return c.closed.Load() }

// Check is what a call about one item checks first: the store is open, the namespace and key
// are valid.
func (c *Core) Check(op string, namespace []string, key string) error {
	if c.closed.Load() {
		return store.ErrClosed
	}
	return backend.CheckGet(op, namespace, key)
}

// ListNamespaces is a store's ListNamespaces: the request checked, the distinct prefixes of
// live items under the part of the prefix before any wildcard, and the namespaces collected as
// the request asks.
func (c *Core) ListNamespaces(ctx context.Context, req store.ListNamespacesRequest) ([][]string, error) {
	if c.closed.Load() {
		return nil, store.ErrClosed
	}
	out, err := c.listNamespaces(ctx, req)
	return out, c.Wrap("list namespaces", err)
}

func (c *Core) listNamespaces(ctx context.Context, req store.ListNamespacesRequest) ([][]string, error) {
	if err := backend.CheckListNamespaces(&req); err != nil {
		return nil, err
	}
	var fixed []string
	for _, p := range req.Prefix {
		if p == "*" {
			break
		}
		fixed = append(fixed, p)
	}
	w := c.dialect.Where(fixed, nil, c.cfg.Now())
	rows, done, err := c.db.Query(ctx, "SELECT DISTINCT i.prefix FROM store_items i WHERE "+w.String(), w.Args...)
	if err != nil {
		return nil, err
	}
	defer done()
	var all [][]string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		all = append(all, store.SplitNamespace(p))
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return backend.CollectNamespaces(all, req), nil
}

// CheckDims records the index dimension on first use (in store_meta) and refuses to open with
// another; anew says how to start over ("a new file", "a new schema").
func (c *Core) CheckDims(ctx context.Context, anew string) error {
	want := strconv.Itoa(c.cfg.Index.Dims)
	_, err := c.db.Exec(ctx, "INSERT INTO store_meta (name, value) VALUES ('dims', "+c.dialect.Param(1)+") ON CONFLICT (name) DO NOTHING", want)
	var have string
	if err == nil {
		err = c.db.QueryRow(ctx, "SELECT value FROM store_meta WHERE name = 'dims'").Scan(&have)
	}
	if err != nil {
		return c.Wrap("open", err)
	}
	if have != want {
		return &store.InputError{Op: "open", Field: "IndexConfig.Dims", Problem: fmt.Sprintf("is %s but the database holds %s-dimension vectors", want, have),
			Hint: "use the embedder the database was built with, or re-ingest into " + anew, Kind: store.ErrDimension}
	}
	return nil
}

// PreparePut is [PreparePut] on an open store.
func (c *Core) PreparePut(ctx context.Context, req store.PutRequest) (*Put, error) {
	if c.closed.Load() {
		return nil, store.ErrClosed
	}
	return PreparePut(ctx, c.cfg, req)
}

// Search is a store's Search on an open store: the request checked, the items found the way the
// query asks through s, ranked and paged (see [Searcher.Search]).
func (c *Core) Search(ctx context.Context, s Searcher, req store.SearchRequest) ([]store.SearchItem, error) {
	if c.closed.Load() {
		return nil, store.ErrClosed
	}
	return s.Search(ctx, c.cfg, req)
}

// Find runs a listing query q and returns the items of its rows, each read with scan, that
// filter matches, up to max of them (all when max is 0).
func (c *Core) Find(ctx context.Context, q string, args []any, scan func(Rows) (*Row, error), filter *store.Filter, max int) ([]*Row, error) {
	rows, done, err := c.db.Query(ctx, q, args...)
	if err != nil {
		return nil, c.Wrap("search", err)
	}
	defer done()
	out, err := Matching(rows, func() (*Row, error) { return scan(rows) }, filter, max)
	return out, c.Wrap("search", err)
}

// PrepareWrites checks the writes of a batch (puts and deletes) before any is written, and
// prepares the puts: the put of writes[i] is at index i, nil for a delete.
func (c *Core) PrepareWrites(ctx context.Context, writes []store.Op) ([]*Put, error) {
	puts := make([]*Put, len(writes))
	for i, w := range writes {
		var err error
		switch o := w.(type) {
		case store.PutRequest:
			puts[i], err = c.PreparePut(ctx, o)
		case store.DeleteRequest:
			err = c.Check("delete", o.Namespace, o.Key)
		default:
			err = fmt.Errorf("store: batch: %T is not a write", w)
		}
		if err != nil {
			return nil, fmt.Errorf("store: batch write %d of %d, none applied: %w", i+1, len(writes), err)
		}
	}
	return puts, nil
}

// OpName names a batch's write in errors: "put" or "delete".
func OpName(w store.Op) string {
	if _, ok := w.(store.PutRequest); ok {
		return "put"
	}
	return "delete"
}

// OpNamespace is the namespace of a batch's write.
func OpNamespace(w store.Op) []string {
	switch o := w.(type) {
	case store.PutRequest:
		return o.Namespace
	case store.DeleteRequest:
		return o.Namespace
	}
	return nil
}

// OpKey is the key of a batch's write.
func OpKey(w store.Op) string {
	switch o := w.(type) {
	case store.PutRequest:
		return o.Key
	case store.DeleteRequest:
		return o.Key
	}
	return ""
}
