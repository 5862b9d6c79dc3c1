package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// migration is one step of the schema. Steps are applied in order, each once, each in its own
// transaction, and recorded in store_schema_migrations.
type migration struct {
	version int
	name    string
	sql     string
}

var migrations = []migration{
	{1, "items, full-text index and vector change log", `
CREATE TABLE store_items (
	prefix     TEXT    NOT NULL,
	key        TEXT    NOT NULL,
	value      TEXT    NOT NULL,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	expires_at INTEGER,
	ttl_ns     INTEGER,
	fts_text   TEXT,
	vec        BLOB,
	PRIMARY KEY (prefix, key)
);
CREATE INDEX store_items_updated ON store_items (updated_at DESC);
CREATE INDEX store_items_expires ON store_items (expires_at) WHERE expires_at IS NOT NULL;

CREATE VIRTUAL TABLE store_fts USING fts5 (
	fts_text, content = 'store_items', content_rowid = 'rowid',
	tokenize = 'unicode61 remove_diacritics 0'
);
CREATE TRIGGER store_items_fts_insert AFTER INSERT ON store_items WHEN new.fts_text IS NOT NULL BEGIN
	INSERT INTO store_fts (rowid, fts_text) VALUES (new.rowid, new.fts_text);
END;
CREATE TRIGGER store_items_fts_delete AFTER DELETE ON store_items WHEN old.fts_text IS NOT NULL BEGIN
	INSERT INTO store_fts (store_fts, rowid, fts_text) VALUES ('delete', old.rowid, old.fts_text);
END;
CREATE TRIGGER store_items_fts_update AFTER UPDATE OF fts_text ON store_items BEGIN
	INSERT INTO store_fts (store_fts, rowid, fts_text) SELECT 'delete', old.rowid, old.fts_text WHERE old.fts_text IS NOT NULL;
	INSERT INTO store_fts (rowid, fts_text) SELECT new.rowid, new.fts_text WHERE new.fts_text IS NOT NULL;
END;

-- Every put and delete of a vector appends here, so each process's in-memory vector index can
-- catch up with writes made by other processes.
CREATE TABLE store_vector_changes (
	seq    INTEGER PRIMARY KEY AUTOINCREMENT,
	prefix TEXT NOT NULL,
	key    TEXT NOT NULL,
	at     INTEGER NOT NULL
);

CREATE TABLE store_meta (
	name  TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
`},
	{2, "saved vector graph", `
-- The HNSW graph of the vector index as of change seq, written by vector.Index.SaveGraph (links
-- only; the vectors stay in store_items), so that opening a large store loads the graph
-- instead of building it.
CREATE TABLE store_vector_graph (
	id    INTEGER PRIMARY KEY CHECK (id = 1),
	seq   INTEGER NOT NULL,
	dims  INTEGER NOT NULL,
	graph BLOB    NOT NULL
);
`},
}

// Migrate brings the store's tables in db up to date. It is safe to call from several processes
// at once and on a database that is already current; Open calls it.
func Migrate(ctx context.Context, db *sql.DB) error {
	// A current database needs no write, so a read-only replica opens fine.
	var have int
	if err := db.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM store_schema_migrations").Scan(&have); err == nil && have >= migrations[len(migrations)-1].version {
		return nil
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS store_schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		return wrap("migrate", err)
	}
	for _, m := range migrations {
		if err := apply(ctx, db, m); err != nil {
			return err
		}
	}
	return nil
}

func apply(ctx context.Context, db *sql.DB, m migration) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return wrap("migrate", err)
	}
	defer conn.Close()
	// BEGIN IMMEDIATE takes the write lock first, so two processes migrating at once serialize.
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return wrap("migrate", err)
	}
	done := false
	defer func() {
		if !done {
			conn.ExecContext(context.Background(), "ROLLBACK")
		}
	}()
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM store_schema_migrations WHERE version = ?", m.version).Scan(&n); err != nil {
		return wrap("migrate", err)
	}
	if n == 0 {
		if _, err := conn.ExecContext(ctx, m.sql); err != nil {
			return wrap(fmt.Sprintf("migrate to version %d (%s)", m.version, m.name), err)
		}
		if _, err := conn.ExecContext(ctx, "INSERT INTO store_schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", m.version, m.name, time.Now().UnixNano()); err != nil {
			return wrap("migrate", err)
		}
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return wrap("migrate", err)
	}
	done = true
	return nil
}
