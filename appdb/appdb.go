// Package appdb keeps an application's own tables beside the server's data: one SQLite file per
// application, or one Postgres schema, with migrations written once for both, and transactions
// scoped to a tenant and a user.
//
// An application opens its database in Build from what the server hands it:
//
//	db, err := appdb.Open(ctx, "notes", &appdb.Options{DataDir: deps.DataDir, DatabaseURL: deps.DatabaseURL})
//	err = db.Migrate(ctx, []appdb.Migration{{
//		Name:   "notes",
//		SQL:    `CREATE TABLE notes (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, body TEXT NOT NULL, meta JSON NOT NULL, created_at TIMESTAMP NOT NULL)`,
//		Scoped: []appdb.Scope{{Table: "notes", ByUser: true}},
//	}})
//
// and reads and writes inside [DB.Tx], which names who acts:
//
//	err = db.Tx(ctx, appdb.Who{Tenant: p.Tenant, User: p.User}, func(tx *appdb.Tx) error {
//		_, err := tx.Exec(ctx, `INSERT INTO notes VALUES (?, ?, ?, ?, ?, ?)`, id, tx.Tenant(), tx.User(), body, appdb.JSONValue(meta), time.Now())
//		return err
//	})
//
// # One SQL for two databases
//
// Statements use '?' placeholders on both databases (they become $1, $2... on Postgres). In
// migrations, three type names are translated: JSON (JSONB on Postgres, TEXT on SQLite),
// TIMESTAMP (TIMESTAMPTZ on Postgres) and BLOB (BYTEA on Postgres). Anything else that differs
// goes in a migration's SQLite and Postgres fields.
//
// # Scoping
//
// A migration lists the tables it creates that hold tenants' rows ([Scope]). Such a table has a
// tenant_id column (and user_id when scoped by user). On Postgres each gets row-level security:
// a transaction runs as a role without the right to bypass it, with the tenant and user as
// transaction-local settings, so a statement that forgets its filter still sees only its own
// tenant's (and user's) rows, and cannot write rows for another. On SQLite the filter is the
// application's SQL's job: write `WHERE tenant_id = ?` every time; [appdbtest.Conformance]
// checks the tables either way. [DB.System] runs a transaction for work that spans tenants
// (seeding, background jobs).
package appdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // database/sql driver "sqlite"
)

// Dialect is the kind of database behind a DB.
type Dialect int

const (
	// SQLite is a file (or, without a data directory, memory) opened with modernc.org/sqlite.
	SQLite Dialect = iota
	// Postgres is a schema of the server's Postgres database.
	Postgres
)

func (d Dialect) String() string {
	if d == Postgres {
		return "postgres"
	}
	return "sqlite"
}

// Options says where an application's tables live. Pass the server's AppDeps fields.
type Options struct {
	// DataDir is where the server keeps SQLite files: the app's file is DataDir/apps/<App>.db.
	// Empty (and no DatabaseURL) keeps the tables in memory, for tests and demos.
	DataDir string
	// DatabaseURL, when set, is the server's Postgres database. The app's tables go in the schema
	// app_<App> (with '-' as '_'), or <search_path>_app_<App> when the URL sets a search_path,
	// so that servers kept apart by search_path keep their apps apart too.
	DatabaseURL string
	// Schema overrides the Postgres schema name.
	Schema string
}

// Who names the tenant and user a transaction acts for.
type Who struct {
	Tenant string
	User   string
}

// DB is an application's database.
type DB struct {
	db      *sql.DB
	dialect Dialect
	app     string
	schema  string // Postgres only
	role    string // Postgres: the role scoped transactions run as; "" when it could not be made
	mu      sync.Mutex
	scoped  map[string]Scope
}

var appRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,39}$`)

// Open opens (creating where needed) the database of the application called app (lower-case
// letters, digits and '-'; it names the SQLite file and the Postgres schema). Nil opts, like a
// zero field, means the documented default: the tables in memory. Close it when the app closes.
func Open(ctx context.Context, app string, opts *Options) (*DB, error) {
	o := openArgs{App: app}
	if opts != nil {
		o.Options = *opts
	}
	return open(ctx, o)
}

// openArgs is Open's arguments in one value.
type openArgs struct {
	Options
	App string
}

func open(ctx context.Context, opts openArgs) (*DB, error) {
	if !appRE.MatchString(opts.App) {
		return nil, fmt.Errorf("appdb: app name %q: use lower-case letters, digits and '-', starting with a letter", opts.App)
	}
	d := &DB{app: opts.App, scoped: map[string]Scope{}}
	if opts.DatabaseURL != "" {
		if err := d.openPostgres(ctx, opts); err != nil {
			return nil, err
		}
		return d, nil
	}
	dsn := "file:appdb-" + opts.App + "?mode=memory&cache=private"
	if opts.DataDir != "" {
		dir := filepath.Join(opts.DataDir, "apps")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("appdb: %s: cannot create %s: %w", opts.App, dir, err)
		}
		dsn = "file:" + filepath.Join(dir, opts.App+".db") +
			"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_txlock=immediate"
	} else {
		dsn += "&_pragma=foreign_keys(1)"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("appdb: %s: %w", opts.App, err)
	}
	// One connection: SQLite has one writer at a time, and an in-memory database lives only as
	// long as its connection.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("appdb: %s: open SQLite: %w", opts.App, err)
	}
	d.db, d.dialect = db, SQLite
	return d, nil
}

var identRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

func (d *DB) openPostgres(ctx context.Context, opts openArgs) error {
	cfg, err := pgx.ParseConfig(opts.DatabaseURL)
	if err != nil {
		return fmt.Errorf("appdb: %s: the database URL does not parse: %w", opts.App, err)
	}
	schema := opts.Schema
	if schema == "" {
		schema = "app_" + strings.ReplaceAll(opts.App, "-", "_")
		if sp := strings.TrimSpace(strings.Split(cfg.RuntimeParams["search_path"], ",")[0]); sp != "" {
			schema = strings.ToLower(strings.Trim(sp, `"`)) + "_" + schema
		}
	}
	if !identRE.MatchString(schema) {
		return fmt.Errorf("appdb: %s: schema name %q: use lower-case letters, digits and '_'", opts.App, schema)
	}
	cfg.RuntimeParams["search_path"] = schema
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(8)
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA IF NOT EXISTS "+schema); err != nil && !isDuplicate(err) {
		db.Close()
		return fmt.Errorf("appdb: %s: cannot create schema %s (is Postgres up, and may this user create schemas?): %w", opts.App, schema, err)
	}
	d.db, d.dialect, d.schema = db, Postgres, schema
	d.role = d.ensureRole(ctx)
	return nil
}

// rlsRole is the role scoped transactions switch to. It has no login and cannot bypass row
// security, so the policies hold even when the server connects as a superuser or the owner.
const rlsRole = "trellis_app_scoped"

// ensureRole makes the scoped role (once per cluster) and lets it use the schema. It returns ""
// when the connecting user may not make roles: the policies then hold for every connecting
// user that does not own the tables.
func (d *DB) ensureRole(ctx context.Context) string {
	_, err := d.db.ExecContext(ctx, `DO $$ BEGIN
		IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '`+rlsRole+`') THEN
			CREATE ROLE `+rlsRole+` NOLOGIN NOBYPASSRLS;
		END IF;
	END $$`)
	if err != nil && !isDuplicate(err) {
		return ""
	}
	if _, err := d.db.ExecContext(ctx, "GRANT "+rlsRole+" TO CURRENT_USER"); err != nil && !isDuplicate(err) {
		// A superuser may SET ROLE to any role without the grant.
		_ = err
	}
	if _, err := d.db.ExecContext(ctx, "GRANT USAGE ON SCHEMA "+d.schema+" TO "+rlsRole); err != nil {
		return ""
	}
	return rlsRole
}

// isDuplicate reports a Postgres error from two servers creating the same object at once.
func isDuplicate(err error) bool {
	s := err.Error()
	return strings.Contains(s, "already exists") || strings.Contains(s, "duplicate key") || strings.Contains(s, "23505") || strings.Contains(s, "42710")
}

// Dialect reports which database this is.
func (d *DB) Dialect() Dialect { return d.dialect }

// Schema is the Postgres schema holding the app's tables ("" on SQLite).
func (d *DB) Schema() string { return d.schema }

// SQL is the database handle, for what this package does not cover. Statements through it are
// not scoped and keep their dialect's placeholders.
func (d *DB) SQL() *sql.DB { return d.db }

// Close closes the database.
func (d *DB) Close() error { return d.db.Close() }

// Tx runs fn in a transaction acting for who: committed when fn returns nil, rolled back when it
// returns an error or panics (the panic goes on). A tenant is required.
func (d *DB) Tx(ctx context.Context, who Who, fn func(tx *Tx) error) error {
	if who.Tenant == "" {
		return errors.New("appdb: a scoped transaction needs a tenant: pass the caller's principal (or use System for work across tenants)")
	}
	return d.run(ctx, who, true, fn)
}

// System runs fn in a transaction that is not scoped: it sees and writes every tenant's rows.
// Use it for seeding and for background work across tenants, never for a request's work.
func (d *DB) System(ctx context.Context, fn func(tx *Tx) error) error {
	return d.run(ctx, Who{}, false, fn)
}

func (d *DB) run(ctx context.Context, who Who, scoped bool, fn func(tx *Tx) error) (err error) {
	sqlTx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("appdb: %s: begin: %w", d.app, err)
	}
	tx := &Tx{tx: sqlTx, db: d, who: who}
	defer func() {
		if p := recover(); p != nil {
			sqlTx.Rollback()
			panic(p)
		}
		if err != nil {
			sqlTx.Rollback()
			return
		}
		if cerr := sqlTx.Commit(); cerr != nil {
			err = fmt.Errorf("appdb: %s: commit: %w", d.app, cerr)
		}
	}()
	if d.dialect == Postgres && scoped {
		if _, err := sqlTx.ExecContext(ctx, `SELECT set_config('trellis.tenant', $1, true), set_config('trellis.user', $2, true)`, who.Tenant, who.User); err != nil {
			return fmt.Errorf("appdb: %s: set scope: %w", d.app, err)
		}
		if d.role != "" {
			if _, err := sqlTx.ExecContext(ctx, "SET LOCAL ROLE "+d.role); err != nil {
				return fmt.Errorf("appdb: %s: switch to the scoped role: %w", d.app, err)
			}
		}
	}
	return fn(tx)
}

// lockKey is the advisory lock migrations of one schema take on Postgres.
func (d *DB) lockKey() int64 {
	h := fnv.New64a()
	h.Write([]byte("appdb:" + d.schema))
	return int64(h.Sum64() >> 1)
}
