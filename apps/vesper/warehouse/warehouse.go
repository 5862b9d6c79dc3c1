package warehouse

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite"
)

// Config says where the warehouse lives and how queries run. The zero value
// of every field is a documented default; Open checks the config in one place.
type Config struct {
	// Dialect is SQLite (the default) or Postgres.
	Dialect Dialect
	// DSN is the SQLite database file (default "vesper.db"; it must be a
	// file, since queries use a second, read-only connection) or the
	// Postgres connection string (required for Postgres).
	DSN string
	// Schema is the Postgres schema that holds the tables and views
	// (default "vesper"). It must be a plain lower-case identifier. Ignored
	// on SQLite.
	Schema string
	// ReaderRole is the Postgres role every query runs as (default
	// Schema+"_reader"). Open creates it, with a companion Schema+"_owner"
	// role that owns the views, when they are missing. The reader may read
	// the views and nothing else.
	ReaderRole string
	// MaxRows caps every result (default 500). A result that had more rows
	// says so in Result.Truncated.
	MaxRows int
	// Timeout bounds every query (default 10s).
	Timeout time.Duration
	// MaxResultBytes bounds the text of one result (default 1 MiB): rows
	// past it are left out, and Result.CutBytes and Note say so.
	MaxResultBytes int
	// MaxValueBytes bounds one value of a result (default 8 KiB): a longer
	// string is cut and ends in "…" (Result.CutValues counts them).
	MaxValueBytes int
	// MaxValueBuild is the largest string or blob a query may build on
	// SQLite (default 1 MiB, SQLITE_LIMIT_LENGTH on the query's connection):
	// a query past it fails with a QueryError that says so.
	MaxValueBuild int
	// WorkMemBytes is PostgreSQL's work_mem for a query (default 8 MiB): the
	// memory each sort or hash may take before it spills to disk.
	WorkMemBytes int64
	// Data is what Open loads into an empty warehouse: nil means the
	// generated data set, Generate(). Ignored when CSVDir is set.
	Data *Dataset
	// CSVDir, when set, is a folder of real data: one <view>.csv per view,
	// with a header row naming the view's columns. Missing files leave the
	// view empty.
	CSVDir string
	// NoLoad leaves an empty warehouse empty (tests and custom loaders).
	NoLoad bool
}

var identRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,40}$`)

func (c *Config) setDefaults() error {
	if c.Dialect == "" {
		c.Dialect = SQLite
	}
	switch c.Dialect {
	case SQLite:
		if c.DSN == "" {
			c.DSN = "vesper.db"
		}
		if c.DSN == ":memory:" || strings.Contains(c.DSN, "mode=memory") {
			return fmt.Errorf("%w: SQLite DSN %q is in memory; give a file path, since queries use a second read-only connection", ErrConfig, c.DSN)
		}
	case Postgres:
		if c.DSN == "" {
			return fmt.Errorf("%w: Postgres needs a DSN such as postgres://user@127.0.0.1:5432/db", ErrConfig)
		}
	default:
		return fmt.Errorf("%w: unknown dialect %q; use %q or %q", ErrConfig, c.Dialect, SQLite, Postgres)
	}
	if c.Schema == "" {
		c.Schema = "vesper"
	}
	if !identRE.MatchString(c.Schema) {
		return fmt.Errorf("%w: schema %q must be a lower-case identifier (letters, digits, _)", ErrConfig, c.Schema)
	}
	if c.ReaderRole == "" {
		c.ReaderRole = c.Schema + "_reader"
	}
	if !identRE.MatchString(c.ReaderRole) {
		return fmt.Errorf("%w: reader role %q must be a lower-case identifier", ErrConfig, c.ReaderRole)
	}
	if c.MaxRows < 0 || c.Timeout < 0 || c.MaxResultBytes < 0 || c.MaxValueBytes < 0 || c.MaxValueBuild < 0 || c.WorkMemBytes < 0 {
		return fmt.Errorf("%w: MaxRows, Timeout, MaxResultBytes, MaxValueBytes, MaxValueBuild and WorkMemBytes must not be negative", ErrConfig)
	}
	if c.MaxResultBytes == 0 {
		c.MaxResultBytes = 1 << 20
	}
	if c.MaxValueBytes == 0 {
		c.MaxValueBytes = 8 << 10
	}
	if c.MaxValueBuild == 0 {
		c.MaxValueBuild = 1 << 20
	}
	if c.WorkMemBytes == 0 {
		c.WorkMemBytes = 8 << 20
	}
	if c.MaxRows == 0 {
		c.MaxRows = 500
	}
	if c.Timeout == 0 {
		c.Timeout = 10 * time.Second
	}
	return nil
}

// Warehouse is the analytics data behind the Vesper tools: the approved
// views, on SQLite or Postgres, and the read-only tenant-scoped executor
// over them. A Warehouse is safe for concurrent use.
type Warehouse struct {
	cfg Config
	rw  *sql.DB // migrations and loading
	ro  *sql.DB // queries: read-only on SQLite; SET ROLE reader on Postgres
}

// Open connects, creates the tables, views, roles and policies that are
// missing, and loads data into an empty warehouse (see Config.Data, CSVDir).
func Open(ctx context.Context, cfg Config) (*Warehouse, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	w := &Warehouse{cfg: cfg}
	var err error
	switch cfg.Dialect {
	case SQLite:
		rwDSN := "file:" + cfg.DSN + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)"
		roDSN := "file:" + cfg.DSN + "?mode=ro&_pragma=query_only(1)&_pragma=busy_timeout(10000)"
		if w.rw, err = sql.Open("sqlite", rwDSN); err != nil {
			return nil, err
		}
		w.rw.SetMaxOpenConns(1)
		if w.ro, err = sql.Open("sqlite", roDSN); err != nil {
			w.rw.Close()
			return nil, err
		}
	case Postgres:
		if w.rw, err = sql.Open("pgx", cfg.DSN); err != nil {
			return nil, err
		}
		w.ro = w.rw
	}
	if err := w.migrate(ctx); err != nil {
		w.Close()
		return nil, err
	}
	if !cfg.NoLoad {
		empty, err := w.isEmpty(ctx)
		if err == nil && empty {
			if cfg.CSVDir != "" {
				err = w.LoadCSVDir(ctx, cfg.CSVDir)
			} else {
				data := cfg.Data
				if data == nil {
					data = Generate()
				}
				err = w.Load(ctx, data)
			}
		}
		if err != nil {
			w.Close()
			return nil, err
		}
	}
	// A warehouse loaded before the price rollup existed gets it now.
	built, err := w.rollupBuilt(ctx)
	if err == nil && !built {
		err = w.RebuildRollup(ctx)
	}
	if err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// Close closes the connections.
func (w *Warehouse) Close() error {
	var errs []error
	if w.ro != nil && w.ro != w.rw {
		errs = append(errs, w.ro.Close())
	}
	if w.rw != nil {
		errs = append(errs, w.rw.Close())
	}
	return errors.Join(errs...)
}

// Dialect reports the SQL flavour.
func (w *Warehouse) Dialect() Dialect { return w.cfg.Dialect }

// Config returns the config with its defaults filled in.
func (w *Warehouse) Config() Config { return w.cfg }

// DB is the read-write handle, for the app's own tables (such as the
// per-tenant tool settings); tools never query through it.
func (w *Warehouse) DB() *sql.DB { return w.rw }

// table qualifies a table or view name for the read-write handle.
func (w *Warehouse) table(name string) string {
	if w.cfg.Dialect == Postgres {
		return w.cfg.Schema + "." + name
	}
	return name
}

// Table qualifies one of the app's own table names for use on DB().
func (w *Warehouse) Table(name string) string { return w.table(name) }

func (w *Warehouse) migrate(ctx context.Context) error {
	switch w.cfg.Dialect {
	case SQLite:
		return w.migrateSQLite(ctx)
	default:
		return w.migratePostgres(ctx)
	}
}

func (w *Warehouse) migrateSQLite(ctx context.Context) error {
	stmts := []string{`CREATE TABLE IF NOT EXISTS vesper_meta (key TEXT PRIMARY KEY, value TEXT)`}
	for _, v := range Views {
		stmts = append(stmts, SQLite.createTable(v))
		for i, ix := range indexes[v.Name] {
			stmts = append(stmts, fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s_ix%d ON %s (%s)", v.BaseTable(), i, v.BaseTable(), ix))
		}
		stmts = append(stmts, fmt.Sprintf("CREATE VIEW IF NOT EXISTS %s AS SELECT %s FROM %s", v.Name, columnList(v), v.BaseTable()))
	}
	stmts = append(stmts, priceIndexDDL("")...)
	stmts = append(stmts, rollupDDL(SQLite, "", "", "")...)
	for _, s := range stmts {
		if _, err := w.rw.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("warehouse: migrate sqlite: %w (statement: %s)", err, s)
		}
	}
	return nil
}

func (w *Warehouse) migratePostgres(ctx context.Context) error {
	s := w.cfg.Schema
	reader := QuoteIdent(w.cfg.ReaderRole)
	owner := QuoteIdent(s + "_owner")
	tx, err := w.rw.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("warehouse: migrate postgres: %w", err)
	}
	defer tx.Rollback()
	stmts := []string{
		fmt.Sprintf("SELECT pg_advisory_xact_lock(hashtext('vesper_migrate_' || %s))", quoteLiteral(s)),
		"CREATE SCHEMA IF NOT EXISTS " + s,
		fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.vesper_meta (key TEXT PRIMARY KEY, value TEXT)", s),
		createRole(w.cfg.ReaderRole),
		createRole(s + "_owner"),
		fmt.Sprintf("GRANT USAGE ON SCHEMA %s TO %s, %s", s, reader, owner),
		fmt.Sprintf("GRANT %s TO CURRENT_USER", reader),
	}
	for _, v := range Views {
		base := s + "." + v.BaseTable()
		stmts = append(stmts, strings.Replace(Postgres.createTable(v), v.BaseTable(), base, 1))
		for i, ix := range indexes[v.Name] {
			stmts = append(stmts, fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s_ix%d ON %s (%s)", v.BaseTable(), i, base, ix))
		}
		if v.Tenant {
			stmts = append(stmts,
				fmt.Sprintf("ALTER TABLE %s ENABLE ROW LEVEL SECURITY", base),
				fmt.Sprintf("ALTER TABLE %s FORCE ROW LEVEL SECURITY", base),
				fmt.Sprintf("DROP POLICY IF EXISTS tenant_rows ON %s", base),
				fmt.Sprintf("CREATE POLICY tenant_rows ON %s USING (tenant_id = current_setting('vesper.tenant', true))", base),
			)
		}
		stmts = append(stmts,
			fmt.Sprintf("GRANT SELECT ON %s TO %s", base, owner),
			fmt.Sprintf("CREATE OR REPLACE VIEW %s.%s AS SELECT %s FROM %s", s, v.Name, columnList(v), base),
			fmt.Sprintf("ALTER VIEW %s.%s OWNER TO %s", s, v.Name, owner),
			fmt.Sprintf("GRANT SELECT ON %s.%s TO %s", s, v.Name, reader),
		)
	}
	stmts = append(stmts, priceIndexDDL(s)...)
	stmts = append(stmts, rollupDDL(Postgres, s, reader, owner)...)
	for _, st := range stmts {
		if _, err := tx.ExecContext(ctx, st); err != nil {
			return fmt.Errorf("warehouse: migrate postgres: %w (statement: %s)", err, st)
		}
	}
	return tx.Commit()
}

func createRole(name string) string {
	return fmt.Sprintf(`DO $$ BEGIN CREATE ROLE %s NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$`, QuoteIdent(name))
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// DropPostgres removes a Postgres warehouse: its schema and its two roles.
// Tests use it to clean up; it is not undoable.
func DropPostgres(ctx context.Context, db *sql.DB, schema string) error {
	if !identRE.MatchString(schema) {
		return fmt.Errorf("%w: schema %q must be a lower-case identifier", ErrConfig, schema)
	}
	stmts := []string{"DROP SCHEMA IF EXISTS " + schema + " CASCADE"}
	for _, r := range []string{schema + "_reader", schema + "_owner"} {
		stmts = append(stmts,
			fmt.Sprintf(`DO $$ BEGIN EXECUTE 'DROP OWNED BY %s'; EXCEPTION WHEN undefined_object THEN NULL; END $$`, QuoteIdent(r)),
			"DROP ROLE IF EXISTS "+QuoteIdent(r))
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("warehouse: drop %s: %w", schema, err)
		}
	}
	return nil
}

func (w *Warehouse) isEmpty(ctx context.Context) (bool, error) {
	var n int
	err := w.rw.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+w.table("vesper_meta")+" WHERE key = 'loaded'").Scan(&n)
	if err != nil {
		return false, fmt.Errorf("warehouse: read load marker: %w", err)
	}
	return n == 0, nil
}
