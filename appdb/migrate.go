package appdb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Migration is one step of an application's schema. Steps apply once each, in the order given,
// and are recorded by Name; a step whose SQL changed after it was applied is an error (add a new
// step instead).
type Migration struct {
	// Name identifies the step. Required and unique.
	Name string
	// SQL runs on both databases, after the type names JSON, TIMESTAMP and BLOB are translated.
	// Several statements are separated by ';'.
	SQL string
	// SQLite and Postgres, when set, replace SQL on that database.
	SQLite, Postgres string
	// Scoped lists the tables this step creates that hold tenants' rows.
	Scoped []Scope
}

// Scope declares a table that holds tenants' rows: it has a tenant_id column, and a user_id
// column when ByUser.
type Scope struct {
	Table string
	// ByUser scopes rows to their user within the tenant as well.
	ByUser bool
}

// Migrate applies the steps not applied yet, each in a transaction of its own; on Postgres a
// lock keeps two servers from migrating the same schema at once. It also records every scoped
// table (applied before or now), which Tables reports.
func (d *DB) Migrate(ctx context.Context, steps []Migration) error {
	seen := map[string]bool{}
	for i, m := range steps {
		if strings.TrimSpace(m.Name) == "" {
			return fmt.Errorf("appdb: %s: migration %d has no name", d.app, i+1)
		}
		if seen[m.Name] {
			return fmt.Errorf("appdb: %s: migration %q is listed twice", d.app, m.Name)
		}
		seen[m.Name] = true
		if strings.TrimSpace(m.statement(d.dialect)) == "" {
			return fmt.Errorf("appdb: %s: migration %q has no SQL for %s", d.app, m.Name, d.dialect)
		}
		for _, sc := range m.Scoped {
			if !identRE.MatchString(sc.Table) {
				return fmt.Errorf("appdb: %s: migration %q: scoped table name %q: use lower-case letters, digits and '_'", d.app, m.Name, sc.Table)
			}
		}
	}
	if err := d.System(ctx, func(tx *Tx) error {
		if d.dialect == Postgres {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(?)`, d.lockKey()); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS appdb_migrations (
			name TEXT PRIMARY KEY, position INTEGER NOT NULL, checksum TEXT NOT NULL, applied_at TEXT NOT NULL)`)
		return err
	}); err != nil && !isDuplicate(err) {
		return err
	}
	for i, m := range steps {
		if err := d.apply(ctx, i, m); err != nil {
			return err
		}
		d.mu.Lock()
		for _, sc := range m.Scoped {
			d.scoped[sc.Table] = sc
		}
		d.mu.Unlock()
	}
	return nil
}

func (d *DB) apply(ctx context.Context, position int, m Migration) error {
	stmt := m.statement(d.dialect)
	sum := sha256.Sum256([]byte(stmt + "\x00" + scopesKey(m.Scoped)))
	checksum := hex.EncodeToString(sum[:8])
	return d.System(ctx, func(tx *Tx) error {
		if d.dialect == Postgres {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(?)`, d.lockKey()); err != nil {
				return err
			}
		}
		var have string
		err := tx.QueryRow(ctx, `SELECT checksum FROM appdb_migrations WHERE name = ?`, m.Name).Scan(&have)
		switch {
		case err == nil && have == checksum:
			return nil
		case err == nil:
			return fmt.Errorf("appdb: %s: migration %q changed after it was applied: leave applied steps as they are and add a new step", d.app, m.Name)
		case !IsNotFound(err):
			return err
		}
		for _, s := range splitStatements(stmt) {
			if _, err := tx.tx.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("appdb: %s: migration %q: %w", d.app, m.Name, err)
			}
		}
		if d.dialect == Postgres {
			for _, sc := range m.Scoped {
				if err := d.secure(ctx, tx, sc); err != nil {
					return fmt.Errorf("appdb: %s: migration %q: row security on %s: %w", d.app, m.Name, sc.Table, err)
				}
			}
			if err := d.grant(ctx, tx); err != nil {
				return fmt.Errorf("appdb: %s: migration %q: grant the scoped role: %w", d.app, m.Name, err)
			}
		}
		_, err = tx.Exec(ctx, `INSERT INTO appdb_migrations (name, position, checksum, applied_at) VALUES (?, ?, ?, ?)`,
			m.Name, position, checksum, time.Now().UTC().Format(time.RFC3339))
		return err
	})
}

// secure turns on row-level security for a scoped table and gives the scoped role its rights.
func (d *DB) secure(ctx context.Context, tx *Tx, sc Scope) error {
	cond := `tenant_id = current_setting('trellis.tenant', true)`
	if sc.ByUser {
		cond += ` AND user_id = current_setting('trellis.user', true)`
	}
	stmts := []string{
		"ALTER TABLE " + sc.Table + " ENABLE ROW LEVEL SECURITY",
		"ALTER TABLE " + sc.Table + " FORCE ROW LEVEL SECURITY",
		"DROP POLICY IF EXISTS appdb_scope ON " + sc.Table,
		"CREATE POLICY appdb_scope ON " + sc.Table + " USING (" + cond + ") WITH CHECK (" + cond + ")",
	}
	for _, s := range stmts {
		if _, err := tx.tx.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// grant gives the scoped role the use of every table and sequence of the schema (tables that are
// not scoped are shared by the app's tenants, as the app decides).
func (d *DB) grant(ctx context.Context, tx *Tx) error {
	if d.role == "" {
		return nil
	}
	for _, s := range []string{
		"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA " + d.schema + " TO " + d.role,
		"GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA " + d.schema + " TO " + d.role,
	} {
		if _, err := tx.tx.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// Tables lists the scoped tables Migrate has seen.
func (d *DB) Tables() []Scope {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]Scope, 0, len(d.scoped))
	for _, sc := range d.scoped {
		out = append(out, sc)
	}
	return out
}

func scopesKey(scopes []Scope) string {
	var b strings.Builder
	for _, sc := range scopes {
		fmt.Fprintf(&b, "%s:%v;", sc.Table, sc.ByUser)
	}
	return b.String()
}

func (m Migration) statement(d Dialect) string {
	switch {
	case d == SQLite && m.SQLite != "":
		return m.SQLite
	case d == Postgres && m.Postgres != "":
		return m.Postgres
	}
	return translate(m.SQL, d)
}

var typeRE = regexp.MustCompile(`(?i)\b(JSON|TIMESTAMP|BLOB)\b`)

// translate maps the portable type names to the dialect's, outside quoted text.
func translate(stmt string, d Dialect) string {
	var b strings.Builder
	for i, part := range strings.Split(stmt, "'") {
		if i > 0 {
			b.WriteByte('\'')
		}
		if i%2 == 1 {
			b.WriteString(part)
			continue
		}
		b.WriteString(typeRE.ReplaceAllStringFunc(part, func(t string) string {
			switch strings.ToUpper(t) {
			case "JSON":
				if d == Postgres {
					return "JSONB"
				}
				return "TEXT"
			case "TIMESTAMP":
				if d == Postgres {
					return "TIMESTAMPTZ"
				}
				return "TIMESTAMP"
			case "BLOB":
				if d == Postgres {
					return "BYTEA"
				}
			}
			return t
		}))
	}
	return b.String()
}

// splitStatements splits on ';' outside quotes and dollar-quoted bodies.
func splitStatements(s string) []string {
	var out []string
	start, quote, dollar := 0, byte(0), ""
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case dollar != "":
			if strings.HasPrefix(s[i:], dollar) {
				i += len(dollar) - 1
				dollar = ""
			}
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '$':
			if j := strings.IndexByte(s[i+1:], '$'); j >= 0 && identRE.MatchString(s[i+1:i+1+j]+"x") {
				dollar = s[i : i+j+2]
				i += j + 1
			}
		case c == ';':
			if t := strings.TrimSpace(s[start:i]); t != "" {
				out = append(out, t)
			}
			start = i + 1
		}
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, t)
	}
	return out
}
