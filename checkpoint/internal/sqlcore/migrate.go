package sqlcore

import (
	"context"
	"fmt"
	"strings"
)

// Migration is one step of a saver's schema.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Latest is the version the migrations bring a database to.
func Latest(ms []Migration) int { return ms[len(ms)-1].Version }

// Apply runs, in a transaction the caller holds, the migrations after current: exec runs one
// migration's SQL, record notes that it was applied. A database newer than ms is an error.
func Apply(ms []Migration, current int, exec func(sql string) error, record func(Migration) error) error {
	if current > Latest(ms) {
		return TooNew(current, Latest(ms))
	}
	for _, m := range ms {
		if m.Version <= current {
			continue
		}
		if err := exec(m.SQL); err != nil {
			return fmt.Errorf("migration %d (%s): %w", m.Version, m.Name, err)
		}
		if err := record(m); err != nil {
			return err
		}
	}
	return nil
}

// TooNew is the error for a database whose schema is newer than this build knows: an older
// binary must not write to it.
func TooNew(current, known int) error {
	return fmt.Errorf("the database's checkpoint schema is at version %d, newer than the %d this build knows; run a newer trellis", current, known)
}

// Types are a database's column types, to write the checkpoint tables' layout once for both
// savers.
type Types struct {
	Serial string // an integer key the database assigns itself
	Int    string // a 64-bit integer
	Text   string
	// Key is a text compared and sorted byte by byte (checkpoint IDs, whose order is their
	// time order).
	Key   string
	JSON  string
	Bytes string
	// Clustered follows the checkpoints table's definition: a table stored in its primary
	// key's order where the database has a choice.
	Clustered string
}

// Migrations are a saver's migrations, written with its database's types. They are applied in
// order, each once, each in its own transaction. Never edit one that has shipped: add another.
func Migrations(t Types) []Migration {
	return []Migration{
		{Version: 1, Name: "checkpoint tables", SQL: Tables(t)},
	}
}

// Tables is the SQL of the first migration: the checkpoint tables and their index, in types.
func Tables(t Types) string {
	return strings.NewReplacer("{serial}", t.Serial, "{int}", t.Int, "{text}", t.Text, "{key}", t.Key,
		"{json}", t.JSON, "{bytes}", t.Bytes, "{clustered}", t.Clustered).Replace(tables)
}

// tables is the layout of the checkpoint tables, with a {type} where the databases differ.
const tables = `
CREATE TABLE trellis_checkpoint_spaces (
	id        {serial},
	thread_id {text} NOT NULL,
	ns        {text} NOT NULL,
	head      {key} NOT NULL,
	UNIQUE (thread_id, ns)
);
CREATE TABLE trellis_checkpoints (
	space      {int} NOT NULL,
	id         {key} NOT NULL,
	parent_id  {text} NOT NULL,
	step       {int} NOT NULL,
	source     {text} NOT NULL,
	created_at {int},
	state      {json} NOT NULL,
	metadata   {json},
	PRIMARY KEY (space, id)
){clustered};
CREATE TABLE trellis_checkpoint_blobs (
	space   {int} NOT NULL,
	channel {text} NOT NULL,
	version {text} NOT NULL,
	base    {text} NOT NULL,
	data    {bytes} NOT NULL,
	PRIMARY KEY (space, channel, version)
);
CREATE TABLE trellis_checkpoint_writes (
	seq           {serial},
	space         {int} NOT NULL,
	checkpoint_id {key} NOT NULL,
	task_id       {text} NOT NULL,
	channel       {text} NOT NULL,
	value         {bytes}
);
CREATE INDEX trellis_checkpoint_writes_by_checkpoint ON trellis_checkpoint_writes (space, checkpoint_id, task_id);
`

// Schema is a saver's migrations and how its database records them.
type Schema struct {
	Migrations []Migration
	// Table creates trellis_checkpoint_migrations, the record of the migrations applied, if
	// it is missing.
	Table string
	// Record is the statement that records one migration; its arguments are the version and
	// the name.
	Record string
}

// ApplyIn runs, in a transaction the caller holds, what every migration run does: it creates the
// record table if needed, reads the version the database is at and applies the migrations
// after it, recording each. exec and queryRow run statements in the transaction: a pgx.Tx's
// Exec and QueryRow, or a *sql.Conn's ExecContext and QueryRowContext.
func ApplyIn[R any, W interface{ Scan(dest ...any) error }](ctx context.Context, sc Schema,
	exec func(ctx context.Context, q string, args ...any) (R, error), queryRow func(ctx context.Context, q string, args ...any) W) error {
	run := func(q string, args ...any) error {
		_, err := exec(ctx, q, args...)
		return err
	}
	if err := run(sc.Table); err != nil {
		return err
	}
	var current int
	if err := queryRow(ctx, "SELECT coalesce(max(version), 0) FROM trellis_checkpoint_migrations").Scan(&current); err != nil {
		return err
	}
	return Apply(sc.Migrations, current, func(sql string) error { return run(sql) }, func(m Migration) error {
		return run(sc.Record, m.Version, m.Name)
	})
}
