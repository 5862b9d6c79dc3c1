package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/trellis-go/trellis/appdb"
	"github.com/trellis-go/trellis/appdb/appdbtest"
	"github.com/trellis-go/trellis/apps/listforge/store"
)

var (
	acme  = store.Who{Org: "acme", User: "ana"}
	acmeB = store.Who{Org: "acme", User: "bob"}
	other = store.Who{Org: "globex", User: "gil"}
)

func open(t *testing.T, db *appdb.DB) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	appdbtest.Conformance(t, db)
	return s
}

func TestDomain(t *testing.T) {
	t.Parallel()
	appdbtest.Each(t, "listforge", func(t *testing.T, db *appdb.DB) {
		ctx := context.Background()
		s := open(t, db)
		for _, w := range []store.Who{acme, other} {
			if created, err := s.EnsureMember(ctx, w); err != nil || !created {
				t.Fatal(created, err)
			}
			if created, _ := s.EnsureMember(ctx, w); created {
				t.Fatal("the organisation was recorded twice")
			}
		}
		price := 120.0
		it, err := s.CreateItem(ctx, acme, store.Item{Title: "Sony headphones", Condition: "used", DefaultPrice: &price,
			Media: []store.Media{{URL: "data:image/png;brand=Sony;base64,AA=="}}, Attributes: map[string]any{"color": "black"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateItem(ctx, acme, store.Item{Title: "x", LifecycleStatus: "gone"}); !isField(err, "lifecycleStatus") {
			t.Fatalf("bad status: %v", err)
		}
		// Audited single-field updates.
		if _, err := s.UpdateField(ctx, acme, it.ID, "defaultPrice", 99.5, "comps say so"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateField(ctx, acme, it.ID, "colour", "red", ""); !isField(err, "field") {
			t.Fatalf("unknown field: %v", err)
		}
		got, err := s.GetItem(ctx, acme, it.ID)
		if err != nil || *got.DefaultPrice != 99.5 || got.Attributes["color"] != "black" || len(got.Media) != 1 {
			t.Fatalf("item %+v %v", got, err)
		}
		trail, err := s.AuditTrail(ctx, acme, it.ID)
		if err != nil || len(trail) != 1 || trail[0].Field != "defaultPrice" || trail[0].OldValue != 120.0 || trail[0].Reason != "comps say so" {
			t.Fatalf("audit %+v %v", trail, err)
		}
		// Another organisation sees none of it.
		if _, err := s.GetItem(ctx, other, it.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("other org reads the item: %v", err)
		}
		if _, err := s.UpdateField(ctx, other, it.ID, "title", "mine", ""); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("other org updates the item: %v", err)
		}
		if p, _ := s.ListItems(ctx, other, 1, 10); p.Total != 0 {
			t.Fatalf("other org lists %d items", p.Total)
		}
		if _, err := s.CreateRun(ctx, other, store.ResearchRun{ItemID: it.ID}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("other org researches the item: %v", err)
		}

		// Research: one current row per item.
		run, err := s.CreateRun(ctx, acme, store.ResearchRun{ItemID: it.ID, ThreadID: "t", RunID: "r"})
		if err != nil || run.Status != store.RunPending {
			t.Fatalf("run %+v %v", run, err)
		}
		if _, err := s.UpdateRun(ctx, acme, run.ID, func(r *store.ResearchRun) bool {
			r.Status, r.CurrentNode, r.StepCount = store.RunRunning, "analyze_media", 2
			r.StepHistory = append(r.StepHistory, store.Step{Node: "load_context", Status: "success"})
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if r, _ := s.GetRun(ctx, acme, run.ID); r.CurrentNode != "analyze_media" || len(r.StepHistory) != 1 {
			t.Fatalf("run %+v", r)
		}
		for i := 0; i < 3; i++ {
			if _, err := s.SaveResearch(ctx, acme, it.ID, run.ID, store.ResearchData{PriceBands: []store.PriceBand{{Label: "target", Amount: float64(100 + i)}}}); err != nil {
				t.Fatal(err)
			}
		}
		latest, err := s.LatestResearch(ctx, acme, it.ID)
		if err != nil || latest.Data.PriceBands[0].Amount != 102 || !latest.IsCurrent {
			t.Fatalf("latest %+v %v", latest, err)
		}
		hist, err := s.ResearchHistory(ctx, acme, it.ID, 1, 2)
		if err != nil || hist.Total != 3 || len(hist.Items) != 2 || hist.Items[1].IsCurrent {
			t.Fatalf("history %+v %v", hist, err)
		}
		if r, _ := s.LatestResearch(ctx, other, it.ID); r != nil {
			t.Fatal("other org reads the research")
		}
		p := 10.0
		if _, err := s.SaveEvidence(ctx, acme, it.ID, run.ID, []store.Evidence{{Type: "sold_listing", Source: "ebay", Title: "a", Price: &p, RelevanceScore: 0.9}}); err != nil {
			t.Fatal(err)
		}
		if b, err := s.LatestEvidence(ctx, acme, it.ID, 0); err != nil || b == nil || len(b.Records) != 1 || *b.Records[0].Price != 10 {
			t.Fatalf("evidence %+v %v", b, err)
		}

		// Chat: sessions belong to their user; an action applies once.
		ss, err := s.CreateSession(ctx, acme, it.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetSession(ctx, acmeB, ss.ID); !errors.Is(err, store.ErrNotYours) {
			t.Fatalf("another user reads the session: %v", err)
		}
		if _, err := s.GetSession(ctx, other, ss.ID); !errors.Is(err, store.ErrNotYours) {
			t.Fatalf("another org reads the session: %v", err)
		}
		if _, err := s.AddMessage(ctx, acme, store.Message{SessionID: ss.ID, Role: "user", Content: "set the price to 80"}); err != nil {
			t.Fatal(err)
		}
		m, err := s.AddMessage(ctx, acme, store.Message{SessionID: ss.ID, Role: "assistant", Content: "I can update it.",
			Actions: []store.Action{{Type: "update_field", Payload: map[string]any{"field": "defaultPrice", "value": 80.0}}}})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		applied, refused := 0, 0
		for i := 0; i < 4; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, err := s.ApplyAction(ctx, acme, m.ID, 0, func(tx *appdb.Tx, a store.Action) (any, error) {
					return s.UpdateFieldTx(ctx, tx, acme, it.ID, "defaultPrice", a.Payload["value"], "chat")
				})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					applied++
				case errors.Is(err, store.ErrAlreadyApplied):
					refused++
				default:
					t.Errorf("apply: %v", err)
				}
			}()
		}
		wg.Wait()
		if applied != 1 || refused != 3 {
			t.Fatalf("applied %d refused %d, want 1 and 3", applied, refused)
		}
		if trail, _ := s.AuditTrail(ctx, acme, it.ID); len(trail) != 2 {
			t.Fatalf("the action was applied %d times", len(trail)-1)
		}
		msgs, err := s.Messages(ctx, acme, ss.ID, 1, 10)
		if err != nil || msgs.Total != 2 || !msgs.Items[1].Actions[0].Applied || msgs.Items[0].Role != "user" {
			t.Fatalf("messages %+v %v", msgs, err)
		}
		if _, err := s.DeleteItem(ctx, acme, it.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetItem(ctx, acme, it.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatal("deleted item still there")
		}
	})
}

func isField(err error, field string) bool {
	var fe *store.FieldError
	return errors.As(err, &fe) && fe.Field == field
}
