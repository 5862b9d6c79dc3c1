// Package pgcache is a [cache.Cache] in Postgres, in the table trellis_cache of the pool's
// search path. Many processes may share it.
package pgcache

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trellis-go/trellis/cache"
)

// Options configure a cache.
type Options struct {
	// Now is the clock expiry is measured with; nil means time.Now.
	Now func() time.Time
}

// Cache is a [cache.Cache] on Postgres.
type Cache struct {
	pool *pgxpool.Pool
	own  bool
	now  func() time.Time
}

var _ cache.Cache = (*Cache)(nil)

const schema = `CREATE TABLE IF NOT EXISTS trellis_cache (
	ns         text NOT NULL,
	key        text NOT NULL,
	value      bytea NOT NULL,
	expires_at timestamptz,
	PRIMARY KEY (ns, key)
)`

// Open connects to connString and returns a cache that owns the pool: Close closes it.
func Open(ctx context.Context, connString string, opts *Options) (*Cache, error) {
	pool, err := pgxpool.New(ctx, connString)
	if err != nil {
		return nil, fmt.Errorf("pgcache: open: %w", err)
	}
	c, err := New(ctx, pool, opts)
	if err != nil {
		pool.Close()
		return nil, err
	}
	c.own = true
	return c, nil
}

// New returns a cache on pool, creating its table if needed. The caller keeps ownership of
// pool.
func New(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*Cache, error) {
	if pool == nil {
		return nil, errors.New("pgcache: no pool: pass an open *pgxpool.Pool or use Open")
	}
	// Several processes may create the table at once: serialise them on an advisory lock.
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('trellis_cache'))`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, schema)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("pgcache: creating table trellis_cache: %w", err)
	}
	c := &Cache{pool: pool, now: time.Now}
	if opts != nil && opts.Now != nil {
		c.now = opts.Now
	}
	return c, nil
}

// Close closes the pool if Open opened it.
func (c *Cache) Close() {
	if c.own {
		c.pool.Close()
	}
}

// Get implements [cache.Cache], in one query.
func (c *Cache) Get(ctx context.Context, keys []cache.Key) (map[cache.Key][]byte, error) {
	out := map[cache.Key][]byte{}
	if len(keys) == 0 {
		return out, nil
	}
	nss, ks := make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		nss[i], ks[i] = k.NS, k.Key
	}
	rows, err := c.pool.Query(ctx, `SELECT c.ns, c.key, c.value FROM trellis_cache c
		JOIN unnest($1::text[], $2::text[]) AS q(ns, key) ON c.ns = q.ns AND c.key = q.key
		WHERE c.expires_at IS NULL OR c.expires_at > $3`, nss, ks, c.now())
	if err != nil {
		return nil, fmt.Errorf("pgcache: get: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k cache.Key
		var val []byte
		if err := rows.Scan(&k.NS, &k.Key, &val); err != nil {
			return nil, fmt.Errorf("pgcache: get: %w", err)
		}
		if val == nil {
			val = []byte{}
		}
		out[k] = val
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgcache: get: %w", err)
	}
	return out, nil
}

// Set implements [cache.Cache]: the entries are stored in one transaction, and expired
// entries are deleted with them.
func (c *Cache) Set(ctx context.Context, entries []cache.Entry) error {
	if err := cache.Validate(entries); err != nil {
		return err
	}
	now := c.now()
	err := pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		for _, e := range entries {
			var exp *time.Time
			if e.TTL > 0 {
				t := now.Add(e.TTL)
				exp = &t
			}
			val := e.Value
			if val == nil {
				val = []byte{}
			}
			if _, err := tx.Exec(ctx, `INSERT INTO trellis_cache (ns, key, value, expires_at) VALUES ($1, $2, $3, $4)
				ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`, e.Key.NS, e.Key.Key, val, exp); err != nil {
				return fmt.Errorf("%q/%q: %w", e.Key.NS, e.Key.Key, err)
			}
		}
		_, err := tx.Exec(ctx, `DELETE FROM trellis_cache WHERE expires_at IS NOT NULL AND expires_at <= $1`, now)
		return err
	})
	if err != nil {
		return fmt.Errorf("pgcache: set: %w", err)
	}
	return nil
}

// Clear implements [cache.Cache].
func (c *Cache) Clear(ctx context.Context, namespaces []string) error {
	var err error
	if namespaces == nil {
		_, err = c.pool.Exec(ctx, `DELETE FROM trellis_cache`)
	} else if len(namespaces) > 0 {
		_, err = c.pool.Exec(ctx, `DELETE FROM trellis_cache WHERE ns = ANY($1::text[])`, namespaces)
	}
	if err != nil {
		return fmt.Errorf("pgcache: clear: %w", err)
	}
	return nil
}
