// Package sqlitecache is a [cache.Cache] in a SQLite database (modernc.org/sqlite), in the table
// trellis_cache. It may share a database file with the SQLite checkpoint saver and store.
package sqlitecache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver

	"github.com/trellis-go/trellis/cache"
)

// Options configure a cache.
type Options struct {
	// Now is the clock expiry is measured with; nil means time.Now.
	Now func() time.Time
}

// Cache is a [cache.Cache] on SQLite.
type Cache struct {
	db  *sql.DB
	own bool
	now func() time.Time
}

var _ cache.Cache = (*Cache)(nil)

const schema = `CREATE TABLE IF NOT EXISTS trellis_cache (
	ns         TEXT NOT NULL,
	key        TEXT NOT NULL,
	value      BLOB NOT NULL,
	expires_at INTEGER,
	PRIMARY KEY (ns, key)
) WITHOUT ROWID`

// Open opens (creating it if needed) the SQLite file at path in WAL mode with a busy timeout,
// and returns a cache that owns it: Close closes it.
func Open(ctx context.Context, path string, opts *Options) (*Cache, error) {
	if path == "" || strings.Contains(path, "?") || strings.HasPrefix(path, ":memory:") {
		return nil, fmt.Errorf("sqlitecache: open %q: pass a plain file path (an in-memory database is private to each connection; use cache.NewMemory)", path)
	}
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	if err != nil {
		return nil, fmt.Errorf("sqlitecache: open %q: %w", path, err)
	}
	c, err := New(ctx, db, opts)
	if err != nil {
		db.Close()
		return nil, err
	}
	c.own = true
	return c, nil
}

// New returns a cache on db (opened with the "sqlite" driver, with a busy timeout), creating
// its table if needed. The caller keeps ownership of db.
func New(ctx context.Context, db *sql.DB, opts *Options) (*Cache, error) {
	if db == nil {
		return nil, errors.New("sqlitecache: no database: pass an open *sql.DB or use Open")
	}
	if _, err := db.ExecContext(ctx, schema); err != nil {
		return nil, fmt.Errorf("sqlitecache: creating table trellis_cache: %w", err)
	}
	c := &Cache{db: db, now: time.Now}
	if opts != nil && opts.Now != nil {
		c.now = opts.Now
	}
	return c, nil
}

// Close closes the database if Open opened it.
func (c *Cache) Close() error {
	if c.own {
		return c.db.Close()
	}
	return nil
}

// Get implements [cache.Cache].
func (c *Cache) Get(ctx context.Context, keys []cache.Key) (map[cache.Key][]byte, error) {
	out := map[cache.Key][]byte{}
	now := c.now().UnixNano()
	for _, k := range keys {
		var val []byte
		err := c.db.QueryRowContext(ctx, `SELECT value FROM trellis_cache WHERE ns = ? AND key = ? AND (expires_at IS NULL OR expires_at > ?)`, k.NS, k.Key, now).Scan(&val)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			continue
		case err != nil:
			return nil, fmt.Errorf("sqlitecache: get %q/%q: %w", k.NS, k.Key, err)
		}
		if val == nil {
			val = []byte{}
		}
		out[k] = val
	}
	return out, nil
}

// Set implements [cache.Cache]: the entries are stored in one transaction, and expired
// entries are deleted with them.
func (c *Cache) Set(ctx context.Context, entries []cache.Entry) error {
	if err := cache.Validate(entries); err != nil {
		return err
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlitecache: set: %w", err)
	}
	defer tx.Rollback()
	now := c.now()
	for _, e := range entries {
		var exp any
		if e.TTL > 0 {
			exp = now.Add(e.TTL).UnixNano()
		}
		val := e.Value
		if val == nil {
			val = []byte{}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO trellis_cache (ns, key, value, expires_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`, e.Key.NS, e.Key.Key, val, exp); err != nil {
			return fmt.Errorf("sqlitecache: set %q/%q: %w", e.Key.NS, e.Key.Key, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM trellis_cache WHERE expires_at IS NOT NULL AND expires_at <= ?`, now.UnixNano()); err != nil {
		return fmt.Errorf("sqlitecache: deleting expired entries: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlitecache: set: %w", err)
	}
	return nil
}

// Clear implements [cache.Cache].
func (c *Cache) Clear(ctx context.Context, namespaces []string) error {
	if namespaces == nil {
		if _, err := c.db.ExecContext(ctx, `DELETE FROM trellis_cache`); err != nil {
			return fmt.Errorf("sqlitecache: clear: %w", err)
		}
		return nil
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlitecache: clear: %w", err)
	}
	defer tx.Rollback()
	for _, ns := range namespaces {
		if _, err := tx.ExecContext(ctx, `DELETE FROM trellis_cache WHERE ns = ?`, ns); err != nil {
			return fmt.Errorf("sqlitecache: clear %q: %w", ns, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlitecache: clear: %w", err)
	}
	return nil
}
