package realty

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/trellis-go/trellis/memory"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/store"
)

// Memory is the app's layered memory on the trellis store, per tenant:
//
//   - L1, per skill: preferences.md, typed entries "[TYPE] key: value" (an entry of the same
//     type and key is overwritten, any other appended), always in the context;
//   - L3, per skill: scored summaries of useful tool results (saved at a score of 3 or more),
//     retrieved by similarity to the user's message;
//   - L2, per session: one episode per exchange, retrieved by similarity for the turns older
//     than the last five (which the model sees verbatim);
//   - the session records (title, last activity) that list the sessions.
//
// Skills and sessions have namespaces of their own: none reads another's.
type Memory struct {
	Store store.Store
	// Model scores results (L3); nil or the offline model scores by rule.
	Model model.Model
	// Sanitize, when set, is applied to every text the memory writes (preference values, L3
	// summaries, L2 episodes, session titles): no secret reaches a stored row.
	Sanitize func(string) string
}

func (m *Memory) clean(s string) string {
	if m.Sanitize == nil {
		return s
	}
	return m.Sanitize(s)
}

// PreferencesFile is the key of a skill's L1 document.
const PreferencesFile = "preferences.md"

func skillNS(tenant, skill string) []string { return []string{"realty", tenant, "skills", skill} }
func sessionNS(tenant, session string) []string {
	return []string{"realty", tenant, "sessions", session}
}
func sessionsNS(tenant string) []string { return []string{"realty", tenant, "session_index"} }

// Preferences returns a skill's preferences.md: one "[TYPE] key: value" line per entry, in the
// order they were first saved; "" when none.
func (m *Memory) Preferences(ctx context.Context, tenant, skill string) (string, error) {
	doc, err := memory.LoadFacts(ctx, m.Store, skillNS(tenant, skill), PreferencesFile)
	if err != nil {
		return "", err
	}
	lines := make([]string, 0, len(doc.Facts))
	for _, f := range doc.Facts {
		lines = append(lines, f.Text)
	}
	return strings.Join(lines, "\n"), nil
}

// SavePreference writes "[TYPE] key: value" to a skill's preferences.md: the entry of the same
// type and key is overwritten, otherwise the entry is appended.
func (m *Memory) SavePreference(ctx context.Context, tenant, skill, typ, key, value string) error {
	_, err := memory.SetPreference(ctx, m.Store, skillNS(tenant, skill), PreferencesFile, strings.ToUpper(strings.TrimSpace(typ)), strings.TrimSpace(key), m.clean(value))
	return err
}

// ScoreAndSave scores a summary of a tool's result (1-5) and keeps it in the skill's L3 history
// when the score is 3 or more. It returns the score and whether it was kept.
func (m *Memory) ScoreAndSave(ctx context.Context, tenant, skill, session, summary string) (int, bool, error) {
	summary = m.clean(summary)
	score, err := memory.ScoreSummary(ctx, m.Model, summary)
	if err != nil {
		return 0, false, nil // a scorer that fails scores 0: nothing is saved
	}
	kept, err := memory.SaveSummary(ctx, m.Store, skillNS(tenant, skill), memory.Summary{Text: summary, Score: score, Thread: session}, 3)
	return score, kept, err
}

// History returns the skill's L3 summaries most similar to query (score 3 or more).
func (m *Memory) History(ctx context.Context, tenant, skill, query string, n int) ([]string, error) {
	past, err := memory.SearchSummaries(ctx, m.Store, skillNS(tenant, skill), query, 3, n)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(past))
	for i, s := range past {
		out[i] = s.Text
	}
	return out, nil
}

// SaveEpisode keeps one exchange of a session (L2), numbered by its turn.
func (m *Memory) SaveEpisode(ctx context.Context, tenant, session string, turn int, text string) error {
	_, err := memory.SaveEpisode(ctx, m.Store, sessionNS(tenant, session), memory.Episode{
		Key: fmt.Sprintf("turn-%06d", turn), Thread: session, Text: m.clean(text), Data: map[string]any{"turn": turn}})
	return err
}

// Episodes returns the session's exchanges most similar to query among those before turn
// before (the older turns; the latest ones are in the context verbatim).
func (m *Memory) Episodes(ctx context.Context, tenant, session, query string, before, n int) ([]string, error) {
	eps, err := memory.SearchEpisodes(ctx, m.Store, sessionNS(tenant, session), query, n*3)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range eps {
		t, _ := strconv.Atoi(fmt.Sprint(e.Data["turn"]))
		if t >= before {
			continue
		}
		out = append(out, e.Text)
		if len(out) == n {
			break
		}
	}
	return out, nil
}

// Session is a session's record.
type Session struct {
	ID        string    `json:"id"`
	Title     string    `json:"title,omitempty"`
	Turns     int       `json:"turns"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ErrNoSession is a session the caller does not have.
var ErrNoSession = errors.New("realty: no such session")

// Session reads a session's record.
func (m *Memory) Session(ctx context.Context, tenant, id string) (Session, error) {
	it, err := m.Store.Get(ctx, store.GetRequest{Namespace: sessionsNS(tenant), Key: id})
	if errors.Is(err, store.ErrNotFound) {
		return Session{}, ErrNoSession
	}
	if err != nil {
		return Session{}, err
	}
	return sessionOf(it.Key, it.Value, it.CreatedAt, it.UpdatedAt), nil
}

func sessionOf(id string, v map[string]any, created, updated time.Time) Session {
	s := Session{ID: id, CreatedAt: created, UpdatedAt: updated}
	s.Title, _ = v["title"].(string)
	if n, ok := v["turns"].(float64); ok {
		s.Turns = int(n)
	} else if n, ok := v["turns"].(int); ok {
		s.Turns = n
	}
	if t, ok := v["updated"].(string); ok {
		if p, err := time.Parse(time.RFC3339Nano, t); err == nil {
			s.UpdatedAt = p
		}
	}
	return s
}

// PutSession writes a session's record.
func (m *Memory) PutSession(ctx context.Context, tenant string, s Session) error {
	return m.Store.Put(ctx, store.PutRequest{Namespace: sessionsNS(tenant), Key: s.ID, NoIndex: true,
		Value: map[string]any{"title": m.clean(s.Title), "turns": s.Turns, "updated": s.UpdatedAt.UTC().Format(time.RFC3339Nano)}})
}

// Sessions lists the tenant's sessions, most recent first.
func (m *Memory) Sessions(ctx context.Context, tenant string) ([]Session, error) {
	var out []Session
	for off := 0; ; off += 200 {
		items, err := m.Store.Search(ctx, store.SearchRequest{NamespacePrefix: sessionsNS(tenant), Limit: 200, Offset: off})
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			if len(it.Namespace) != len(sessionsNS(tenant)) {
				continue
			}
			out = append(out, sessionOf(it.Key, it.Value, it.CreatedAt, it.UpdatedAt))
		}
		if len(items) < 200 {
			break
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].UpdatedAt.After(out[j].UpdatedAt) })
	return out, nil
}

// DeleteSession removes a session's record and its episodes.
func (m *Memory) DeleteSession(ctx context.Context, tenant, id string) error {
	if err := m.Store.Delete(ctx, store.DeleteRequest{Namespace: sessionsNS(tenant), Key: id}); err != nil {
		return err
	}
	for {
		items, err := m.Store.Search(ctx, store.SearchRequest{NamespacePrefix: sessionNS(tenant, id), Limit: 100})
		if err != nil {
			return err
		}
		if len(items) == 0 {
			return nil
		}
		for _, it := range items {
			if err := m.Store.Delete(ctx, store.DeleteRequest{Namespace: it.Namespace, Key: it.Key}); err != nil {
				return err
			}
		}
	}
}
