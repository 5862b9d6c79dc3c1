package appdb_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/appdb"
	"github.com/trellis-go/trellis/appdb/appdbtest"
)

var steps = []appdb.Migration{
	{Name: "notes", SQL: `CREATE TABLE notes (
		id TEXT NOT NULL,
		tenant_id TEXT NOT NULL,
		user_id TEXT NOT NULL,
		body TEXT NOT NULL,
		meta JSON NOT NULL DEFAULT '{"json": "stays text"}',
		created_at TIMESTAMP NOT NULL,
		PRIMARY KEY (tenant_id, id)
	);
	CREATE INDEX notes_user ON notes (tenant_id, user_id, created_at)`,
		Scoped: []appdb.Scope{{Table: "notes", ByUser: true}}},
	{Name: "labels", SQL: `CREATE TABLE labels (tenant_id TEXT NOT NULL, name TEXT NOT NULL, PRIMARY KEY (tenant_id, name))`,
		Scoped: []appdb.Scope{{Table: "labels"}}},
	{Name: "kinds", SQL: `CREATE TABLE kinds (name TEXT PRIMARY KEY)`},
}

type meta struct {
	Tags []string `json:"tags"`
}

func TestScopedTables(t *testing.T) {
	t.Parallel()
	appdbtest.Each(t, "notes", func(t *testing.T, db *appdb.DB) {
		ctx := context.Background()
		if err := db.Migrate(ctx, steps); err != nil {
			t.Fatal(err)
		}
		// A second Migrate (a restart) applies nothing and fails on nothing.
		if err := db.Migrate(ctx, steps); err != nil {
			t.Fatalf("migrate again: %v", err)
		}
		appdbtest.Conformance(t, db)

		alice := appdb.Who{Tenant: "acme", User: "alice"}
		bob := appdb.Who{Tenant: "acme", User: "bob"}
		eve := appdb.Who{Tenant: "evil", User: "eve"}
		when := time.Date(2026, 3, 4, 5, 6, 7, 890000, time.UTC) // Postgres keeps microseconds
		insert := func(who appdb.Who, id, body string) {
			t.Helper()
			if err := db.Tx(ctx, who, func(tx *appdb.Tx) error {
				_, err := tx.Exec(ctx, `INSERT INTO notes (id, tenant_id, user_id, body, meta, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
					id, tx.Tenant(), tx.User(), body, appdb.JSONValue(meta{Tags: []string{"a", "b?"}}), when)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		insert(alice, "n1", "alice's note with a ? in it")
		insert(bob, "n2", "bob's note")
		insert(eve, "n3", "eve's note")

		// Filtered SQL returns the caller's rows, with JSON and times read back.
		if err := db.Tx(ctx, alice, func(tx *appdb.Tx) error {
			var body string
			var m meta
			var at appdb.Time
			if err := tx.QueryRow(ctx, `SELECT body, meta, created_at FROM notes WHERE tenant_id = ? AND user_id = ? AND body LIKE '%?%'`,
				tx.Tenant(), tx.User()).Scan(&body, appdb.JSON(&m), &at); err != nil {
				return err
			}
			if body != "alice's note with a ? in it" || len(m.Tags) != 2 || m.Tags[1] != "b?" || !at.Equal(when) {
				t.Errorf("read back %q %v %v", body, m, at.Time)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}

		// Unfiltered SQL: Postgres's row security keeps each user to their own rows.
		count := func(who appdb.Who, query string) int {
			t.Helper()
			var n int
			if err := db.Tx(ctx, who, func(tx *appdb.Tx) error { return tx.QueryRow(ctx, query).Scan(&n) }); err != nil {
				t.Fatal(err)
			}
			return n
		}
		if db.Dialect() == appdb.Postgres {
			if n := count(alice, `SELECT count(*) FROM notes`); n != 1 {
				t.Errorf("alice sees %d notes through unfiltered SQL, want 1", n)
			}
			if n := count(eve, `SELECT count(*) FROM notes WHERE tenant_id = 'acme'`); n != 0 {
				t.Errorf("eve sees %d of acme's notes", n)
			}
			// Writing a row for another tenant is refused.
			err := db.Tx(ctx, eve, func(tx *appdb.Tx) error {
				_, err := tx.Exec(ctx, `INSERT INTO labels (tenant_id, name) VALUES ('acme', 'planted')`)
				return err
			})
			if err == nil || !strings.Contains(err.Error(), "row-level security") {
				t.Errorf("eve planted a row in acme: %v", err)
			}
			// Nor can an update move a row out of reach.
			if err := db.Tx(ctx, bob, func(tx *appdb.Tx) error {
				res, err := tx.Exec(ctx, `UPDATE notes SET body = 'taken' WHERE id = 'n1'`)
				if err != nil {
					return err
				}
				if n, _ := res.RowsAffected(); n != 0 {
					t.Errorf("bob updated %d of alice's notes", n)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		// System sees every tenant.
		var all int
		if err := db.System(ctx, func(tx *appdb.Tx) error { return tx.QueryRow(ctx, `SELECT count(*) FROM notes`).Scan(&all) }); err != nil || all != 3 {
			t.Errorf("system sees %d notes (%v), want 3", all, err)
		}
		// Unscoped tables are shared.
		if err := db.Tx(ctx, alice, func(tx *appdb.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO kinds (name) VALUES (?)`, "memo")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if n := count(eve, `SELECT count(*) FROM kinds`); n != 1 {
			t.Errorf("shared table: eve sees %d kinds, want 1", n)
		}
	})
}

func TestTxRollsBack(t *testing.T) {
	t.Parallel()
	appdbtest.Each(t, "rollback", func(t *testing.T, db *appdb.DB) {
		ctx := context.Background()
		if err := db.Migrate(ctx, steps); err != nil {
			t.Fatal(err)
		}
		who := appdb.Who{Tenant: "acme", User: "alice"}
		boom := errors.New("boom")
		err := db.Tx(ctx, who, func(tx *appdb.Tx) error {
			if _, err := tx.Exec(ctx, `INSERT INTO labels (tenant_id, name) VALUES (?, 'x')`, tx.Tenant()); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v", err)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Error("the panic did not go on")
				}
			}()
			db.Tx(ctx, who, func(tx *appdb.Tx) error {
				tx.Exec(ctx, `INSERT INTO labels (tenant_id, name) VALUES (?, 'y')`, tx.Tenant())
				panic("bug")
			})
		}()
		var n int
		db.System(ctx, func(tx *appdb.Tx) error { return tx.QueryRow(ctx, `SELECT count(*) FROM labels`).Scan(&n) })
		if n != 0 {
			t.Errorf("%d labels survived rolled-back transactions", n)
		}
	})
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if _, err := appdb.Open(ctx, "Bad Name", nil); err == nil || !strings.Contains(err.Error(), "lower-case") {
		t.Errorf("bad app name: %v", err)
	}
	if _, err := appdb.Open(ctx, "x", &appdb.Options{DatabaseURL: "postgres://%zz"}); err == nil {
		t.Error("a URL that does not parse was accepted")
	}
	db := appdbtest.SQLite(t, "bad")
	if err := db.Tx(ctx, appdb.Who{}, func(*appdb.Tx) error { return nil }); err == nil || !strings.Contains(err.Error(), "tenant") {
		t.Errorf("no tenant: %v", err)
	}
	for _, tc := range []struct {
		steps []appdb.Migration
		want  string
	}{
		{[]appdb.Migration{{SQL: "CREATE TABLE a (x TEXT)"}}, "no name"},
		{[]appdb.Migration{{Name: "a", SQL: "CREATE TABLE a (x TEXT)"}, {Name: "a", SQL: "SELECT 1"}}, "twice"},
		{[]appdb.Migration{{Name: "a", Postgres: "SELECT 1"}}, "no SQL for sqlite"},
		{[]appdb.Migration{{Name: "a", SQL: "CREATE TABLE a (x TEXT)", Scoped: []appdb.Scope{{Table: "A; DROP"}}}}, "scoped table name"},
		{[]appdb.Migration{{Name: "broken", SQL: "CREATE TABLE (nonsense"}}, `migration "broken"`},
	} {
		if err := db.Migrate(ctx, tc.steps); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want it to say %q", tc.steps, err, tc.want)
		}
	}
	// A step edited after it was applied.
	if err := db.Migrate(ctx, []appdb.Migration{{Name: "t", SQL: "CREATE TABLE t (x TEXT)"}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, []appdb.Migration{{Name: "t", SQL: "CREATE TABLE t (x TEXT, y TEXT)"}}); err == nil || !strings.Contains(err.Error(), "changed after it was applied") {
		t.Errorf("edited step: %v", err)
	}
}

// TestConformanceCatchesMistakes: a scoped table without its index or column fails the check.
func TestConformanceCatchesMistakes(t *testing.T) {
	t.Parallel()
	db := appdbtest.SQLite(t, "sloppy")
	if err := db.Migrate(context.Background(), []appdb.Migration{{Name: "t", SQL: `CREATE TABLE t (id TEXT PRIMARY KEY, tenant_id TEXT)`,
		Scoped: []appdb.Scope{{Table: "t", ByUser: true}}}}); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{TB: t}
	appdbtest.Conformance(rec, db)
	got := strings.Join(rec.errs, "\n")
	if !strings.Contains(got, "no user_id column") || !strings.Contains(got, "no index") {
		t.Errorf("conformance said:\n%s", got)
	}
}

type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, strings.TrimSpace(strings.ReplaceAll(format, "%s", "?")))
	_ = args
}
func (r *recorder) Helper() {}
