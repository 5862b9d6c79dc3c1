package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/trellis-go/trellis/appdb"
	"github.com/trellis-go/trellis/appdb/appdbtest"
	"github.com/trellis-go/trellis/apps/rehab/store"
)

func open(t *testing.T, db *appdb.DB) *store.Store {
	t.Helper()
	s, err := store.New(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	appdbtest.Conformance(t, db)
	return s
}

var (
	ana  = store.Who{Tenant: "t1", User: "ana"}
	rui  = store.Who{Tenant: "t1", User: "rui"}
	eva  = store.Who{Tenant: "t2", User: "ana"}
	trig = store.Audit{ConversationID: "c1", Trigger: "O meu orçamento é 200.000€", Confidence: 0.9}
)

func TestStore(t *testing.T) {
	t.Parallel()
	appdbtest.Each(t, "rehab", func(t *testing.T, db *appdb.DB) {
		ctx := context.Background()
		s := open(t, db)

		// Profile: created on first update, merged by key, each change logged.
		p, err := s.UpdateProfile(ctx, ana, store.ProfileUpdate{Section: "budget", Data: map[string]any{"max": 200000.0},
			Summarize: func(p *store.Profile) (string, string) { return "Orçamento: até 200.000€", "ana | 1/5" }}, trig)
		if err != nil {
			t.Fatal(err)
		}
		if !p.Exists || p.Summaries["budget"] != "Orçamento: até 200.000€" || p.Summary != "ana | 1/5" {
			t.Fatalf("profile %+v", p)
		}
		if _, err := s.UpdateProfile(ctx, ana, store.ProfileUpdate{Section: "budget", Data: map[string]any{"max": 250000.0, "min": 150000.0}}, trig); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateProfile(ctx, ana, store.ProfileUpdate{Section: "wishes"}, trig); err == nil {
			t.Error("an unknown section was accepted")
		}
		p, _ = s.Profile(ctx, ana)
		if p.Sections["budget"]["max"] != 250000.0 || p.Sections["budget"]["min"] != 150000.0 {
			t.Errorf("budget %v", p.Sections["budget"])
		}
		acts, err := s.Actions(ctx, ana, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(acts) != 3 {
			t.Fatalf("actions %+v", acts)
		}
		var sawOld bool
		for _, a := range acts {
			if a.Field == "budget.max" && a.Old == "200000" && a.New == "250000" && a.Trigger == trig.Trigger && a.Confidence == 0.9 && a.ConversationID == "c1" {
				sawOld = true
			}
		}
		if !sawOld {
			t.Errorf("no logged change of budget.max from 200000 to 250000: %+v", acts)
		}

		// Portfolio: a property saved, found by its IDs, archived softly, restored on save.
		prop := store.Property{IdealistaID: "33445566", URL: "https://www.idealista.pt/imovel/33445566/", Title: "T2 em Alfama",
			Typology: "T2", Price: 180000, AreaM2: 65, Location: "Alfama, Lisboa", ImageURLs: []string{"a.png"}}
		it, err := s.SaveProperty(ctx, ana, prop, "Alfama", trig)
		if err != nil {
			t.Fatal(err)
		}
		if it.Status != store.StatusInterested || it.Property.Price != 180000 || it.Property.ImageURLs[0] != "a.png" {
			t.Fatalf("item %+v", it)
		}
		again, err := s.SaveProperty(ctx, ana, prop, "", trig)
		if err != nil || again.ID != it.ID {
			t.Fatalf("saving twice: %v %+v", err, again)
		}
		if _, err := s.SetActive(ctx, ana, "33445566", trig); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ArchiveItem(ctx, ana, it.PropertyID, trig); err != nil {
			t.Fatal(err)
		}
		items, _ := s.Portfolio(ctx, ana, false)
		all, _ := s.Portfolio(ctx, ana, true)
		if len(items) != 0 || len(all) != 1 || all[0].Status != store.StatusArchived || all[0].IsActive {
			t.Fatalf("after archive: %+v / %+v", items, all)
		}
		if _, err := s.SetActive(ctx, ana, it.ID, trig); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("activating an archived item: %v", err)
		}
		if it2, err := s.SaveProperty(ctx, ana, prop, "", trig); err != nil || it2.Status != store.StatusInterested {
			t.Fatalf("restore: %v %+v", err, it2)
		}

		// Isolation: another user of the tenant, and the same user name in another tenant, see nothing.
		for _, who := range []store.Who{rui, eva} {
			if items, err := s.Portfolio(ctx, who, true); err != nil || len(items) != 0 {
				t.Errorf("%v sees %d items (%v)", who, len(items), err)
			}
			if _, err := s.Item(ctx, who, it.PropertyID); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%v reads another's item: %v", who, err)
			}
			if _, err := s.ArchiveItem(ctx, who, it.PropertyID, trig); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%v archives another's item: %v", who, err)
			}
			if acts, _ := s.Actions(ctx, who, 10); len(acts) != 0 {
				t.Errorf("%v sees %d actions", who, len(acts))
			}
			if p, _ := s.Profile(ctx, who); p.Exists {
				t.Errorf("%v sees a profile", who)
			}
		}
		// rui saves the same listing: his own row, his own portfolio.
		if _, err := s.SaveProperty(ctx, rui, prop, "", trig); err != nil {
			t.Fatal(err)
		}
		if items, _ := s.Portfolio(ctx, rui, false); len(items) != 1 || items[0].PropertyID == it.PropertyID {
			t.Errorf("rui's portfolio %+v", items)
		}

		// Room features and analyses.
		rooms := []store.RoomFeature{{RoomType: "kitchen", RoomIndex: 0, AreaM2: 9, Condition: "poor", Features: []string{"azulejos antigos"}}}
		if err := s.SaveRoomFeatures(ctx, ana, it.PropertyID, rooms); err != nil {
			t.Fatal(err)
		}
		got, err := s.RoomFeatures(ctx, ana, it.PropertyID)
		if err != nil || len(got) != 1 || got[0].Condition != "poor" || got[0].Features[0] != "azulejos antigos" {
			t.Fatalf("rooms %v %+v", err, got)
		}
		if got, _ := s.RoomFeatures(ctx, rui, it.PropertyID); len(got) != 0 {
			t.Errorf("rui reads ana's rooms")
		}
		if _, err := s.SaveAnalysis(ctx, ana, store.Analysis{PropertyID: it.PropertyID, Type: "renovation", Result: []byte(`{"total_min":1}`),
			ChatSummary: "Preço: 180.000€", DetailSummary: "det"}, trig); err != nil {
			t.Fatal(err)
		}
		a, err := s.LatestAnalysis(ctx, ana, it.PropertyID, "renovation")
		if err != nil || a.ChatSummary != "Preço: 180.000€" {
			t.Fatalf("analysis %v %+v", err, a)
		}

		// Conversations: reused within the timeout, ended after it.
		now := time.Date(2026, 1, 10, 10, 0, 0, 0, time.UTC)
		s.Now = func() time.Time { return now }
		sess, err := s.OpenConversation(ctx, ana, "", 30*time.Minute)
		if err != nil || !sess.Created {
			t.Fatal(err, sess)
		}
		if n, err := s.AddMessage(ctx, ana, store.Message{ConversationID: sess.Conversation.ID, Role: "user", Content: "olá"}); err != nil || n != 1 {
			t.Fatal(err, n)
		}
		if _, err := s.AddMessage(ctx, rui, store.Message{ConversationID: sess.Conversation.ID, Role: "user", Content: "x"}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("rui writes into ana's conversation: %v", err)
		}
		now = now.Add(10 * time.Minute)
		same, _ := s.OpenConversation(ctx, ana, "", 30*time.Minute)
		if same.Created || same.Conversation.ID != sess.Conversation.ID {
			t.Errorf("a conversation 10 minutes idle was not reused")
		}
		if err := s.SetSummary(ctx, ana, sess.Conversation.ID, "Discutimos o T2 de Alfama.", 1); err != nil {
			t.Fatal(err)
		}
		now = now.Add(31 * time.Minute)
		next, _ := s.OpenConversation(ctx, ana, "", 30*time.Minute)
		if !next.Created || len(next.Ended) != 1 || next.Ended[0].ID != sess.Conversation.ID {
			t.Errorf("after 31 idle minutes: %+v", next)
		}
		h, err := s.Hydrate(ctx, ana)
		if err != nil {
			t.Fatal(err)
		}
		if h.LastSummary != "Discutimos o T2 de Alfama." || len(h.Portfolio) != 1 || h.Portfolio[0].ChatSummary != "Preço: 180.000€" || !h.Profile.Exists {
			t.Errorf("hydrated %+v", h)
		}
		if h, _ := s.Hydrate(ctx, rui); h.LastSummary != "" || h.Profile.Exists {
			t.Errorf("rui hydrates %+v", h)
		}
		msgs, _ := s.Messages(ctx, ana, sess.Conversation.ID)
		if len(msgs) != 1 || msgs[0].Content != "olá" {
			t.Errorf("messages %+v", msgs)
		}
	})
}

// On Postgres the policies hold even for SQL that forgets its filters: a user sees only the
// properties of their own portfolio.
func TestPostgresPoliciesWithoutFilters(t *testing.T) {
	t.Parallel()
	db := appdbtest.Postgres(t, "rehab")
	ctx := context.Background()
	s := open(t, db)
	if _, err := s.SaveProperty(ctx, ana, store.Property{IdealistaID: "1", URL: "u"}, "", trig); err != nil {
		t.Fatal(err)
	}
	count := func(who store.Who, table string) int {
		var n int
		if err := db.Tx(ctx, who, func(tx *appdb.Tx) error {
			return tx.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n)
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if count(ana, "properties") != 1 || count(rui, "properties") != 0 || count(rui, "portfolio_items") != 0 || count(rui, "action_log") != 0 {
		t.Error("unfiltered SQL crosses users")
	}
	// A property row with no portfolio item is invisible even to its owner.
	if err := db.Tx(ctx, ana, func(tx *appdb.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO properties (tenant_id, user_id, id, idealista_id, url, created_at) VALUES (?,?,?,?,?,?)`,
			tx.Tenant(), tx.User(), "orphan", "2", "u", time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if count(ana, "properties") != 1 {
		t.Error("a property outside the portfolio is visible")
	}
}
