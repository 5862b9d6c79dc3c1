package analyst

import (
	"context"
	"testing"
	"time"

	"github.com/trellis-go/trellis/appdb"
	"github.com/trellis-go/trellis/appdb/appdbtest"
	tables "github.com/trellis-go/trellis/apps/analyst/store"
	"github.com/trellis-go/trellis/embed"
	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/memstore"
)

// The tables pass the app conformance suite on both databases, and a report is invisible to
// another user even through SQL that forgets its filter (row-level security on Postgres).
func TestTablesAndReportIsolation(t *testing.T) {
	appdbtest.Each(t, "analyst", func(t *testing.T, db *appdb.DB) {
		ctx := context.Background()
		if err := db.Migrate(ctx, tables.Migrations); err != nil {
			t.Fatal(err)
		}
		appdbtest.Conformance(t, db)
		st, err := memstore.New(&memstore.Options{Config: store.Config{Index: &store.IndexConfig{Embedder: embed.NewLocal(nil), Dims: 256}}})
		if err != nil {
			t.Fatal(err)
		}
		a := &Analyst{tables: tables.New(db), now: time.Now}
		a.kb = &KB{tables: a.tables, shared: st, loaded: map[string]bool{}}
		r := Report{ID: "r1", UserID: "alice", SessionID: "t1", Title: "Alice's report", Content: "# Alice's report\n\nVoltra entered leasing.",
			Format: "markdown", TopicTags: []string{"voltra"}, ProjectName: "Tidewater", CreatedAt: time.Now().UTC()}
		if n, err := a.StoreReport(ctx, "acme", r, ""); err != nil || n == 0 {
			t.Fatal(n, err)
		}
		if got, found, err := a.GetReport(ctx, "acme", "alice", "r1"); err != nil || !found || got.ProjectName != "Tidewater" || got.Chunks == 0 {
			t.Fatalf("alice's own report: %+v %v %v", got, found, err)
		}
		if _, found, err := a.GetReport(ctx, "acme", "bob", "r1"); err != nil || found {
			t.Fatalf("bob reads alice's report: %v %v", found, err)
		}
		if list, err := a.Reports(ctx, "acme", "bob"); err != nil || len(list) != 0 {
			t.Fatalf("bob's list: %v %v", list, err)
		}
		if db.Dialect() == appdb.Postgres {
			var n int
			err := db.Tx(ctx, appdb.Who{Tenant: "acme", User: "bob"}, func(tx *appdb.Tx) error {
				return tx.QueryRow(ctx, `SELECT COUNT(*) FROM reports`).Scan(&n)
			})
			if err != nil || n != 0 {
				t.Fatalf("unfiltered SQL as bob sees %d reports (%v)", n, err)
			}
			err = db.Tx(ctx, appdb.Who{Tenant: "other", User: "carol"}, func(tx *appdb.Tx) error {
				return tx.QueryRow(ctx, `SELECT COUNT(*) FROM report_chunks`).Scan(&n)
			})
			if err != nil || n != 0 {
				t.Fatalf("another tenant sees %d report chunks (%v)", n, err)
			}
		}
		// The chunks are found by the same tenant's search, not by another tenant's.
		if cs, err := a.kb.Search(ctx, "acme", "Voltra leasing", 3, map[string]any{"document_type": "report"}, 0); err != nil || len(cs) == 0 {
			t.Fatalf("acme's search: %v %v", cs, err)
		}
		if cs, err := a.kb.Search(ctx, "other", "Voltra leasing", 3, nil, 0); err != nil || len(cs) != 0 {
			t.Fatalf("another tenant's search finds %v (%v)", cs, err)
		}
	})
}
