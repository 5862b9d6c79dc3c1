package pgsaver

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/trellis-go/trellis/checkpoint/internal/sqlcore"
)

// migrations are the checkpoint tables' (see sqlcore.Migrations) in this database's types. Tables are created in the first schema of the search_path.
var migrations = sqlcore.Migrations(sqlcore.Types{
	Serial: "bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY", Int: "bigint", Text: "text", Key: `text COLLATE "C"`, JSON: "jsonb", Bytes: "bytea",
})

// migrator records the migrations in a table of its own.
var migrator = sqlcore.Schema{Migrations: migrations, Table: `CREATE TABLE IF NOT EXISTS trellis_checkpoint_migrations (
	version    integer PRIMARY KEY,
	name       text NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
)`, Record: "INSERT INTO trellis_checkpoint_migrations (version, name) VALUES ($1, $2)"}

// SchemaVersion is the schema version this package's migrations bring a database to.
var SchemaVersion = sqlcore.Latest(migrations)

// DB is what [Migrate] needs: *pgxpool.Pool and *pgx.Conn both have it.
type DB interface {
	Begin(ctx context.Context) (pgx.Tx, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Migrate brings the checkpoint tables in the first schema of the connection's search_path up to
// [SchemaVersion]. It is safe to run again, and from several processes at once: they take a
// transaction-scoped advisory lock, so one applies what is missing and the others then find
// nothing to do. [New] runs it; a deploy step (trellis migrate) may too.
//
// A database whose schema is newer than this package knows is an error: an older binary must
// not write to it. A database that is up to date is only read, so a read-only replica can be
// opened for reads.
func Migrate(ctx context.Context, db DB) error {
	if err := migrate(ctx, db); err != nil {
		return wrap(ctx, "migrate", "", err)
	}
	return nil
}

func migrate(ctx context.Context, db DB) error {
	// The fast path names the current schema's table: unqualified, it could be another
	// schema's further along the search_path (say public's), current while this schema is empty.
	var current int
	var schema string
	err := db.QueryRow(ctx, "SELECT current_schema()").Scan(&schema)
	if err == nil {
		err = db.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+pgx.Identifier{schema, "trellis_checkpoint_migrations"}.Sanitize()).Scan(&current)
	}
	var pgErr *pgconn.PgError
	switch {
	case err == nil && current == SchemaVersion:
		return nil
	case err == nil && current > SchemaVersion:
		return sqlcore.TooNew(current, SchemaVersion)
	case err != nil && !(errors.As(err, &pgErr) && pgErr.Code == "42P01"): // undefined_table is expected
		return err
	}
	return pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('trellis_checkpoint_migrations.' || current_schema()))"); err != nil {
			return err
		}
		return sqlcore.ApplyIn(ctx, migrator, tx.Exec, tx.QueryRow)

	})
}
