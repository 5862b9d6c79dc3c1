package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

type migration struct {
	version int
	name    string
	sql     string
}

// The tables live in the first schema of the connection's search_path, so one database can
// hold several stores (tests give each its own schema).
var migrations = []migration{
	{1, "items with full-text index", `
CREATE TABLE store_items (
	prefix     text COLLATE "C" NOT NULL,
	key        text COLLATE "C" NOT NULL,
	value      jsonb       NOT NULL,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL,
	expires_at timestamptz,
	ttl_ns     bigint,
	fts_text   text,
	tsv        tsvector GENERATED ALWAYS AS (to_tsvector('simple', coalesce(fts_text, ''))) STORED,
	vec        bytea,
	PRIMARY KEY (prefix, key)
);
CREATE INDEX store_items_tsv ON store_items USING gin (tsv);
CREATE INDEX store_items_updated ON store_items (updated_at DESC);
CREATE INDEX store_items_expires ON store_items (expires_at) WHERE expires_at IS NOT NULL;
CREATE TABLE store_meta (
	name  text PRIMARY KEY,
	value text NOT NULL
);
`},
}

// migrationLock is the advisory lock key that serializes migrations across processes.
const migrationLock = 0x7472656c6c6973 // "trellis"

// Migrate brings the store's tables up to date in the first schema of the search_path. Several
// processes may call it at once; Open calls it.
func Migrate(ctx context.Context, db *pgxpool.Pool) error {
	// The fast path reads the migrations table of the current schema by its qualified name: an
	// unqualified name would find another schema's table further along the search_path (say
	// public's) and take that schema's tables as this one's.
	var have int
	var schema string
	err := db.QueryRow(ctx, "SELECT current_schema()").Scan(&schema)
	if err == nil {
		err = db.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+pgx.Identifier{schema, "store_schema_migrations"}.Sanitize()).Scan(&have)
	}
	if err == nil && have >= migrations[len(migrations)-1].version {
		return nil
	}
	return wrap("migrate", pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrationLock)); err != nil {
			return wrap("migrate", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS store_schema_migrations (
			version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return wrap("migrate", err)
		}
		for _, m := range migrations {
			var n int
			if err := tx.QueryRow(ctx, "SELECT count(*) FROM store_schema_migrations WHERE version = $1", m.version).Scan(&n); err != nil {
				return wrap("migrate", err)
			}
			if n > 0 {
				continue
			}
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return wrap(fmt.Sprintf("migrate to version %d (%s)", m.version, m.name), err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO store_schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name); err != nil {
				return wrap("migrate", err)
			}
		}
		return nil
	}))
}
