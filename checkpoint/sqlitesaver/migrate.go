package sqlitesaver

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/trellis-go/trellis/checkpoint/internal/sqlcore"
)

// migrations are applied in order, each once, each in its own transaction. Never edit one that
// has shipped: add another.
var migrations = []sqlcore.Migration{
	{Version: 1, Name: "checkpoint tables", SQL: `
CREATE TABLE trellis_checkpoint_spaces (
	id        INTEGER PRIMARY KEY,
	thread_id TEXT NOT NULL,
	ns        TEXT NOT NULL,
	head      TEXT NOT NULL,
	UNIQUE (thread_id, ns)
);
CREATE TABLE trellis_checkpoints (
	space      INTEGER NOT NULL,
	id         TEXT NOT NULL,
	parent_id  TEXT NOT NULL,
	step       INTEGER NOT NULL,
	source     TEXT NOT NULL,
	created_at INTEGER,
	state      TEXT NOT NULL,
	metadata   TEXT,
	PRIMARY KEY (space, id)
) WITHOUT ROWID;
CREATE TABLE trellis_checkpoint_blobs (
	space   INTEGER NOT NULL,
	channel TEXT NOT NULL,
	version TEXT NOT NULL,
	base    TEXT NOT NULL,
	data    BLOB NOT NULL,
	PRIMARY KEY (space, channel, version)
);
CREATE TABLE trellis_checkpoint_writes (
	seq           INTEGER PRIMARY KEY,
	space         INTEGER NOT NULL,
	checkpoint_id TEXT NOT NULL,
	task_id       TEXT NOT NULL,
	channel       TEXT NOT NULL,
	value         BLOB
);
CREATE INDEX trellis_checkpoint_writes_by_checkpoint ON trellis_checkpoint_writes (space, checkpoint_id, task_id);
`},
}

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
		if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS trellis_checkpoint_migrations (
	version    INTEGER PRIMARY KEY,
	name       TEXT NOT NULL,
	applied_at TEXT NOT NULL
)`); err != nil {
			return err
		}
		if err := conn.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM trellis_checkpoint_migrations").Scan(&current); err != nil {
			return err
		}
		return sqlcore.Apply(migrations, current, func(sql string) error {
			_, err := conn.ExecContext(ctx, sql)
			return err
		}, func(m sqlcore.Migration) error {
			_, err := conn.ExecContext(ctx, "INSERT INTO trellis_checkpoint_migrations (version, name, applied_at) VALUES (?, ?, ?)",
				m.Version, m.Name, time.Now().UTC().Format(time.RFC3339))
			return err
		})
	})
}
