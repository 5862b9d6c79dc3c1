package sqlitesaver

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/trellis-go/trellis/checkpoint/internal/sqlcore"
)

// migrations are the checkpoint tables' (see sqlcore.Migrations) in this database's types.
var migrations = sqlcore.Migrations(sqlcore.Types{
	Serial: "INTEGER PRIMARY KEY", Int: "INTEGER", Text: "TEXT", Key: "TEXT", JSON: "TEXT", Bytes: "BLOB", Clustered: " WITHOUT ROWID",
})

// migrator records the migrations in a table of its own.
var migrator = sqlcore.Schema{Migrations: migrations, Table: `CREATE TABLE IF NOT EXISTS trellis_checkpoint_migrations (
	version    INTEGER PRIMARY KEY,
	name       TEXT NOT NULL,
	applied_at TEXT NOT NULL
)`, Record: "INSERT INTO trellis_checkpoint_migrations (version, name, applied_at) VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))"}

// SchemaVersion is the schema version this package's migrations bring a database to.
var SchemaVersion = sqlcore.Latest(migrations)

// Migrate brings the database's checkpoint tables up to [SchemaVersion]. It is safe to run
// again, and from several processes at once: the first one applies what is missing, the others
// wait for it and find nothing to do. [New] runs it; a deploy step (trellis migrate) may too.
//
// A database whose schema is newer than this package knows is an error: an older binary must
// not write to it.
func Migrate(ctx context.Context, db *sql.DB) error {
	if err := migrate(ctx, db); err != nil {
		return wrap(ctx, "migrate", "", err)
	}
	return nil
}

func migrate(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// Up to date already: read only, so that a read-only database can still be opened for reads.
	var current int
	err = conn.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM trellis_checkpoint_migrations").Scan(&current)
	if err == nil && current == SchemaVersion {
		return nil
	}
	// Several processes may migrate at once; wait for each other even on a connection opened
	// without a busy timeout.
	var timeout int
	if err := conn.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&timeout); err != nil {
		return err
	}
	if timeout == 0 {
		if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = 5000"); err != nil {
			return err
		}
		defer conn.ExecContext(context.Background(), "PRAGMA busy_timeout = 0")
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA journal_mode = WAL"); err != nil {
		return fmt.Errorf("switching to WAL mode: %w", err)
	}
	return inTx(ctx, conn, func() error {
		return sqlcore.ApplyIn(ctx, migrator, conn.ExecContext, conn.QueryRowContext)
	})
}
