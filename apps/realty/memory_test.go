package realty_test

import (
	"context"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/realty"
	"github.com/trellis-go/trellis/embed"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/memstore"
)

func newMemory(t *testing.T) *realty.Memory {
	t.Helper()
	st, err := memstore.New(&memstore.Options{Config: store.Config{Index: &store.IndexConfig{Embedder: embed.NewLocal(nil), Dims: 256}}})
	if err != nil {
		t.Fatal(err)
	}
	return &realty.Memory{Store: st}
}

func TestPreferencesFile(t *testing.T) {
	t.Parallel()
	m := newMemory(t)
	ctx := context.Background()
	if p, err := m.Preferences(ctx, "acme", "property"); err != nil || p != "" {
		t.Fatalf("empty preferences: %q %v", p, err)
	}
	for _, e := range [][3]string{
		{"location", "location", "Austin, TX"},
		{"BUDGET", "max_price", "500000"},
		{"LOCATION", "location", "Denver, CO"}, // same type and key: overwritten in place
		{"BUDGET", "min_price", "200000"},      // same type, other key: appended
		{"ROOMS", "max_price", "9"},            // other type, same key: appended
	} {
		if err := m.SavePreference(ctx, "acme", "property", e[0], e[1], e[2]); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := m.Preferences(ctx, "acme", "property")
	want := "[LOCATION] location: Denver, CO\n[BUDGET] max_price: 500000\n[BUDGET] min_price: 200000\n[ROOMS] max_price: 9"
	if got != want {
		t.Errorf("preferences.md:\n%s\nwant\n%s", got, want)
	}
	// Other skills and tenants never see them.
	if p, _ := m.Preferences(ctx, "acme", "weather"); p != "" {
		t.Errorf("another skill sees %q", p)
	}
	if p, _ := m.Preferences(ctx, "globex", "property"); p != "" {
		t.Errorf("another tenant sees %q", p)
	}
	if err := m.SavePreference(ctx, "acme", "property", "", "k", "v"); err == nil {
		t.Error("a preference without a type was saved")
	}
}

func TestHistoryAndEpisodesAreIsolated(t *testing.T) {
	t.Parallel()
	m := newMemory(t)
	ctx := context.Background()
	useful := "search_properties {\"location\":\"Austin\"} returned 8 listings; 12 Oak St, Austin at $450000 (zpid 1); 14 Elm Ave at $520000 (zpid 2)"
	score, kept, err := m.ScoreAndSave(ctx, "acme", "property", "s1", useful)
	if err != nil || !kept || score < 3 {
		t.Fatalf("score %d kept %v err %v", score, kept, err)
	}
	if _, kept, _ := m.ScoreAndSave(ctx, "acme", "property", "s1", "ok"); kept {
		t.Error("a useless summary was kept")
	}
	h, _ := m.History(ctx, "acme", "property", "homes in Austin", 3)
	if len(h) != 1 || h[0] != useful {
		t.Errorf("history %v", h)
	}
	if h, _ := m.History(ctx, "acme", "weather", "homes in Austin", 3); len(h) != 0 {
		t.Errorf("another skill's history: %v", h)
	}
	for i, text := range []string{"User: homes in Austin\nAssistant: 8 found", "User: what about schools\nAssistant: none", "User: condos in Miami\nAssistant: 4 found"} {
		if err := m.SaveEpisode(ctx, "acme", "s1", i, text); err != nil {
			t.Fatal(err)
		}
	}
	eps, _ := m.Episodes(ctx, "acme", "s1", "Austin homes", 2, 3)
	if len(eps) == 0 || !strings.Contains(eps[0], "Austin") {
		t.Errorf("episodes %v", eps)
	}
	for _, e := range eps {
		if strings.Contains(e, "Miami") {
			t.Errorf("an episode at or after the cut: %v", eps)
		}
	}
	if eps, _ := m.Episodes(ctx, "acme", "s2", "Austin homes", 10, 3); len(eps) != 0 {
		t.Errorf("another session's episodes: %v", eps)
	}
	if err := m.DeleteSession(ctx, "acme", "s1"); err != nil {
		t.Fatal(err)
	}
	if eps, _ := m.Episodes(ctx, "acme", "s1", "Austin homes", 10, 3); len(eps) != 0 {
		t.Errorf("episodes after delete: %v", eps)
	}
}

func TestWindowKeepsFiveTurnsAndPlacesEpisodes(t *testing.T) {
	t.Parallel()
	l2 := message.System("older exchanges")
	l2.Metadata = map[string]any{"realty_layer": "L2"}
	msgs := []message.Message{message.System("identity"), message.System("prefs"), l2}
	for i := range 8 {
		msgs = append(msgs, message.User("q"+string(rune('0'+i))),
			message.Assistant("", message.ToolCall{ID: "c" + string(rune('0'+i)), Name: "search_properties"}),
			message.ToolResult("c"+string(rune('0'+i)), "search_properties", "r"),
			message.Assistant("a"+string(rune('0'+i))))
	}
	out := realty.Window(msgs)
	var roles []string
	for _, m := range out {
		roles = append(roles, string(m.Role)+":"+m.Text())
	}
	got := strings.Join(roles, " ")
	// identity, prefs, turns 2..6 verbatim (each call with its result), the episodes, then turn 7.
	if !strings.HasPrefix(got, "system:identity system:prefs user:q2 ") || !strings.Contains(got, "assistant:a6 system:older exchanges user:q7") || strings.Contains(got, "q1") {
		t.Errorf("window: %s", got)
	}
	if len(out) != 2+5*4+1+4 {
		t.Errorf("%d messages", len(out))
	}
}
