package rehab

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/trellis-go/trellis/apps/rehab/kb"
	"github.com/trellis-go/trellis/apps/rehab/listing"
	"github.com/trellis-go/trellis/apps/rehab/reno"
	"github.com/trellis-go/trellis/apps/rehab/store"
	"github.com/trellis-go/trellis/model/offline"
)

// Demo property IDs, as the specification's context block names them.
const (
	DemoAlfama = "abc-123"
	DemoGraca  = "def-456"
)

// DemoSummary is the last session's summary of the demo user.
const DemoSummary = "Discutimos o T2 de Alfama. Detalhámos cozinha (mau estado). Indeciso entre Alfama e Graça. Próximo: comparação formal."

// SeedDemo gives who the specification's demo state, once: João Silva of Lisbon with three of
// five profile sections, the T2 of Alfama analysed and active, the T2 of Graça saved, and a
// finished session with its summary. The analysis runs the real pipeline on the demo listing
// (with the offline model reading the photos' labels).
func SeedDemo(ctx context.Context, st *store.Store, lc *listing.Client, who store.Who) error {
	p, err := st.Profile(ctx, who)
	if err != nil || p.Exists {
		return err
	}
	au := store.Audit{Trigger: "seed", Confidence: 1}
	name, loc := "João Silva", "Lisboa"
	for _, sec := range []struct {
		name string
		d    map[string]any
	}{
		{"fiscal", map[string]any{"regime": "IRS", "primeira_habitacao": true, "habitacao_propria_permanente": true}},
		{"budget", map[string]any{"min": 150000.0, "max": 250000.0}},
		{"preferences", map[string]any{"zonas": []any{"Alfama", "Graça"}, "tipologia": "T2"}},
	} {
		u := store.ProfileUpdate{Section: sec.name, Data: sec.d, Summarize: kb.Summarize(sec.name)}
		if sec.name == "fiscal" {
			u.Name, u.Location = &name, &loc
		}
		if _, err := st.UpdateProfile(ctx, who, u, au); err != nil {
			return err
		}
	}
	pipe := &reno.Pipeline{Listings: lc, Vision: offline.New(nil)}
	for _, x := range []struct{ id, listing string }{{DemoAlfama, "12345"}, {DemoGraca, "33445566"}} {
		l, err := lc.Get(ctx, x.listing)
		if err != nil {
			return fmt.Errorf("rehab: seeding the demo: %w", err)
		}
		prop := store.Property{ID: x.id, IdealistaID: l.ID, URL: l.URL, Title: l.Title, Typology: l.Typology, Price: l.Price, AreaM2: l.AreaM2, Location: l.Location}
		for _, ph := range l.Photos {
			prop.ImageURLs = append(prop.ImageURLs, ph.URL)
		}
		it, err := st.SaveProperty(ctx, who, prop, "", au)
		if err != nil {
			return err
		}
		line := kb.IndexLine(it.Property, 0, 0)
		if x.id == DemoAlfama {
			s, err := pipe.Scrape(ctx, l.URL)
			if err != nil {
				return err
			}
			rooms := make([]store.RoomFeature, len(s.Rooms))
			for i, r := range s.Rooms {
				rooms[i] = store.RoomFeature{RoomType: r.Type, RoomIndex: r.Index, AreaM2: r.AreaM2, Condition: r.Condition, Features: r.Features, Photo: r.Photo}
			}
			if err := st.SaveRoomFeatures(ctx, who, it.PropertyID, rooms); err != nil {
				return err
			}
			res := reno.Analyze(l, it.PropertyID, s.Rooms, reno.Preferences{})
			raw, _ := json.Marshal(res)
			if _, err := st.SaveAnalysis(ctx, who, store.Analysis{PropertyID: it.PropertyID, Type: "renovation", Result: raw,
				ChatSummary: kb.ChatSummary(res), DetailSummary: kb.DetailSummary(res)}, au); err != nil {
				return err
			}
			line = kb.IndexLine(it.Property, res.TotalMin, res.TotalMax)
			if _, err := st.SetActive(ctx, who, it.PropertyID, au); err != nil {
				return err
			}
		}
		if err := st.SetIndexSummary(ctx, who, it.ID, line); err != nil {
			return err
		}
	}
	// A finished session, with its summary.
	old := st.Now
	st.Now = func() time.Time { return time.Now().Add(-48 * time.Hour) }
	defer func() { st.Now = old }()
	sess, err := st.OpenConversation(ctx, who, "", time.Minute)
	if err != nil {
		return err
	}
	for _, m := range []store.Message{
		{Role: "user", Content: "Como está a cozinha do T2 de Alfama?"},
		{Role: "assistant", Content: "A cozinha está em mau estado: azulejos antigos, humidade e bancada partida. Conta com 8.000€–12.000€."},
		{Role: "user", Content: "Estou indeciso entre Alfama e Graça."},
		{Role: "assistant", Content: "Posso fazer uma comparação formal dos dois na próxima conversa."},
	} {
		m.ConversationID = sess.Conversation.ID
		if _, err := st.AddMessage(ctx, who, m); err != nil {
			return err
		}
	}
	if err := st.SetSummary(ctx, who, sess.Conversation.ID, DemoSummary, 4); err != nil {
		return err
	}
	return st.EndConversation(ctx, who, sess.Conversation.ID)
}
