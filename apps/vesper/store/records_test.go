package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/trellis-go/trellis/appdb"
	"github.com/trellis-go/trellis/appdb/appdbtest"
	"github.com/trellis-go/trellis/apps/vesper/reports"
	"github.com/trellis-go/trellis/apps/vesper/store"
	"github.com/trellis-go/trellis/apps/vesper/tools"
)

// The app's three kinds of tables (chat records, the report menu, the tool switches) are
// appdb migrations on SQLite and Postgres: applied once, again at the next start without error,
// and the records work on both.
func TestTablesByMigrations(t *testing.T) {
	appdbtest.Each(t, "vesper", func(t *testing.T, db *appdb.DB) {
		ctx := context.Background()
		for range 2 { // a second start applies nothing and fails nothing
			if _, err := store.NewRecords(ctx, db); err != nil {
				t.Fatal(err)
			}
			if _, err := reports.NewMenu(ctx, db); err != nil {
				t.Fatal(err)
			}
			if _, err := tools.NewSettings(ctx, db); err != nil {
				t.Fatal(err)
			}
		}
		var names []string
		if err := db.System(ctx, func(tx *appdb.Tx) error {
			rows, err := tx.Query(ctx, `SELECT name FROM appdb_migrations ORDER BY name`)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var n string
				if err := rows.Scan(&n); err != nil {
					return err
				}
				names = append(names, n)
			}
			return rows.Err()
		}); err != nil {
			t.Fatal(err)
		}
		want := []string{"vesper_chat_1", "vesper_chat_agent_tools_1", "vesper_menu_items_1"}
		if len(names) != len(want) || names[0] != want[0] || names[1] != want[1] || names[2] != want[2] {
			t.Fatalf("applied migrations %v, want %v", names, want)
		}

		r, err := store.NewRecords(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		id, err := r.Session(ctx, "", "vesper", "ana")
		if err != nil || id == "" {
			t.Fatalf("new session %q: %v", id, err)
		}
		if _, err := r.Session(ctx, id, "vesper", "vic"); !errors.Is(err, store.ErrNoSession) {
			t.Fatalf("another user's session: %v, want ErrNoSession", err)
		}
		if _, err := r.Session(ctx, id, "northwind", "ana"); !errors.Is(err, store.ErrNoSession) {
			t.Fatalf("another tenant's session: %v, want ErrNoSession", err)
		}
		first, err := r.Add(ctx, store.Message{SessionID: id, Tenant: "vesper", Role: "user", Content: "health of Nazareth Solar?"})
		if err != nil {
			t.Fatal(err)
		}
		calls := json.RawMessage(`[{"agent":"per_agent","tool":"get_project_health"}]`)
		second, err := r.Add(ctx, store.Message{SessionID: id, Tenant: "vesper", Role: "assistant", Content: "It is green.",
			Intent: "project_execution", AgentsUsed: []string{"per_agent"}, ToolCalls: calls, TokenCount: 9, LatencyMS: 12})
		if err != nil || second <= first {
			t.Fatalf("message ids %d then %d: %v", first, second, err)
		}
		if err := r.SetTitleOnce(ctx, id, "Nazareth health"); err != nil {
			t.Fatal(err)
		}
		if err := r.SetTitleOnce(ctx, id, "another title"); err != nil {
			t.Fatal(err)
		}
		if title, err := r.Title(ctx, id); err != nil || title != "Nazareth health" {
			t.Fatalf("title %q, %v: want the first one", title, err)
		}
		msgs, err := r.Messages(ctx, id, 0)
		if err != nil || len(msgs) != 2 {
			t.Fatalf("messages %+v, %v", msgs, err)
		}
		if m := msgs[1]; m.Role != "assistant" || m.Intent != "project_execution" || len(m.AgentsUsed) != 1 || string(m.ToolCalls) != string(calls) || m.LatencyMS != 12 {
			t.Fatalf("assistant message read back as %+v", m)
		}
		if after, _ := r.Messages(ctx, id, first); len(after) != 1 || after[0].ID != second {
			t.Fatalf("messages after the first: %+v", after)
		}
		if text, through, err := r.Summary(ctx, id); err != nil || text != "" || through != 0 {
			t.Fatalf("no summary yet: %q %d %v", text, through, err)
		}
		if err := r.AddSummary(ctx, id, "- asked about Nazareth Solar", second); err != nil {
			t.Fatal(err)
		}
		if text, through, err := r.Summary(ctx, id); err != nil || text != "- asked about Nazareth Solar" || through != second {
			t.Fatalf("summary %q through %d: %v", text, through, err)
		}
	})
}
