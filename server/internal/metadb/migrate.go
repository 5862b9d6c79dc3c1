package metadb

import (
	"context"
	"fmt"
	"time"
)

// migrations are applied in order, once each. Never edit one that has shipped: add another.
var migrations = []struct {
	version int
	sql     string
}{
	{1, `
CREATE TABLE IF NOT EXISTS trellis_threads (
	tenant     TEXT NOT NULL,
	thread_id  TEXT NOT NULL PRIMARY KEY,
	metadata   TEXT NOT NULL,
	status     TEXT NOT NULL,
	vals       TEXT,
	interrupts TEXT,
	temporary  INTEGER NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS trellis_threads_by_tenant ON trellis_threads (tenant, created_at);
CREATE TABLE IF NOT EXISTS trellis_runs (
	tenant       TEXT NOT NULL,
	run_id       TEXT NOT NULL PRIMARY KEY,
	thread_id    TEXT NOT NULL,
	assistant_id TEXT NOT NULL,
	status       TEXT NOT NULL,
	metadata     TEXT NOT NULL,
	kwargs       TEXT NOT NULL,
	multitask    TEXT NOT NULL,
	created_at   BIGINT NOT NULL,
	updated_at   BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS trellis_runs_by_thread ON trellis_runs (tenant, thread_id, created_at);
CREATE INDEX IF NOT EXISTS trellis_runs_by_status ON trellis_runs (status);
CREATE TABLE IF NOT EXISTS trellis_run_events (
	run_id TEXT NOT NULL,
	seq    BIGINT NOT NULL,
	event  TEXT NOT NULL,
	data   TEXT NOT NULL,
	PRIMARY KEY (run_id, seq)
);
`},
	{2, `
ALTER TABLE trellis_runs ADD COLUMN lease_owner TEXT;
ALTER TABLE trellis_runs ADD COLUMN lease_until BIGINT NOT NULL DEFAULT 0;
ALTER TABLE trellis_runs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
`},
	{3, `
CREATE TABLE IF NOT EXISTS trellis_assistants (
	tenant       TEXT NOT NULL,
	assistant_id TEXT NOT NULL PRIMARY KEY,
	graph_id     TEXT NOT NULL,
	name         TEXT NOT NULL,
	description  TEXT,
	config       TEXT NOT NULL,
	context      TEXT NOT NULL,
	metadata     TEXT NOT NULL,
	version      INTEGER NOT NULL,
	created_at   BIGINT NOT NULL,
	updated_at   BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS trellis_assistants_by_tenant ON trellis_assistants (tenant, created_at);
CREATE TABLE IF NOT EXISTS trellis_assistant_versions (
	assistant_id TEXT NOT NULL,
	version      INTEGER NOT NULL,
	graph_id     TEXT NOT NULL,
	name         TEXT NOT NULL,
	description  TEXT,
	config       TEXT NOT NULL,
	context      TEXT NOT NULL,
	metadata     TEXT NOT NULL,
	created_at   BIGINT NOT NULL,
	PRIMARY KEY (assistant_id, version)
);
CREATE INDEX IF NOT EXISTS trellis_runs_by_assistant ON trellis_runs (assistant_id);
`},
	{4, `
CREATE INDEX IF NOT EXISTS trellis_threads_by_update ON trellis_threads (tenant, updated_at);
`},
	{5, `
ALTER TABLE trellis_threads ADD COLUMN ttl_ms BIGINT NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS trellis_threads_by_ttl ON trellis_threads (ttl_ms) WHERE ttl_ms > 0;
`},
	{6, `
ALTER TABLE trellis_runs ADD COLUMN progress TEXT;
ALTER TABLE trellis_runs ADD COLUMN last_error TEXT;
ALTER TABLE trellis_runs ADD COLUMN next_attempt_at BIGINT NOT NULL DEFAULT 0;
`},
	{7, `
CREATE TABLE IF NOT EXISTS trellis_crons (
	tenant           TEXT NOT NULL,
	cron_id          TEXT NOT NULL PRIMARY KEY,
	assistant_id     TEXT NOT NULL,
	thread_id        TEXT,
	user_id          TEXT,
	principal        TEXT NOT NULL,
	schedule         TEXT NOT NULL,
	payload          TEXT NOT NULL,
	metadata         TEXT NOT NULL,
	on_run_completed TEXT,
	end_time         BIGINT NOT NULL DEFAULT 0,
	next_run_date    BIGINT NOT NULL DEFAULT 0,
	enabled          INTEGER NOT NULL DEFAULT 1,
	created_at       BIGINT NOT NULL,
	updated_at       BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS trellis_crons_by_tenant ON trellis_crons (tenant, created_at);
CREATE INDEX IF NOT EXISTS trellis_crons_due ON trellis_crons (next_run_date) WHERE enabled = 1;
`},
	{8, `
ALTER TABLE trellis_threads ADD COLUMN state_updated_at BIGINT NOT NULL DEFAULT 0;
UPDATE trellis_threads SET state_updated_at = updated_at;
CREATE INDEX IF NOT EXISTS trellis_threads_by_state_update ON trellis_threads (tenant, state_updated_at);
`},
}

// Migrate creates the tables, or brings them up to date: it applies the migrations not applied
// yet, in order, each in a transaction. On Postgres an advisory lock makes replicas starting at
// once take turns.
func (m *DB) Migrate(ctx context.Context) error {
	if _, err := m.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS trellis_server_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("server: migrate: %w", err)
	}
	for _, mg := range migrations {
		var n int
		if err := m.queryRow(ctx, `SELECT count(*) FROM trellis_server_migrations WHERE version = $1`, mg.version).Scan(&n); err != nil {
			return fmt.Errorf("server: migrate: %w", err)
		}
		if n > 0 {
			continue
		}
		tx, err := m.db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("server: migrate: %w", err)
		}
		if m.postgres {
			// Serialise concurrent replicas migrating the same database.
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7265001)`); err != nil {
				tx.Rollback()
				return fmt.Errorf("server: migrate: %w", err)
			}
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM trellis_server_migrations WHERE version = $1`, mg.version).Scan(&n); err != nil || n > 0 {
				tx.Rollback()
				if err != nil {
					return fmt.Errorf("server: migrate: %w", err)
				}
				continue
			}
		}
		if _, err := tx.ExecContext(ctx, mg.sql); err != nil {
			tx.Rollback()
			return fmt.Errorf("server: migration %d: %w", mg.version, err)
		}
		if _, err := tx.ExecContext(ctx, m.Q(`INSERT INTO trellis_server_migrations (version, applied_at) VALUES ($1, $2)`), mg.version, time.Now().UnixMilli()); err != nil {
			tx.Rollback()
			return fmt.Errorf("server: migration %d: %w", mg.version, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("server: migration %d: %w", mg.version, err)
		}
	}
	return nil
}
