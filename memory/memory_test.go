package memory_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/embed"
	"github.com/trellis-go/trellis/memory"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/model/scripted"
	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/memstore"
	"github.com/trellis-go/trellis/store/sqlitestore"
)

func newStore(t *testing.T) store.Store {
	t.Helper()
	st, err := memstore.New(&memstore.Options{Config: store.Config{Index: &store.IndexConfig{Embedder: embed.NewLocal(nil), Dims: 256}}})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// eachStore runs f on the in-memory store and on SQLite, both with vector search.
func eachStore(t *testing.T, f func(t *testing.T, st store.Store)) {
	t.Run("memstore", func(t *testing.T) { t.Parallel(); f(t, newStore(t)) })
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "mem.db"), &sqlitestore.Options{Config: store.Config{Index: &store.IndexConfig{Embedder: embed.NewLocal(nil), Dims: 256}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		f(t, st)
	})
}

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// TestApplyNeverLosesAFact: random operations, deletions and malformed ones included, never
// remove a fact: every id present before is present after, and refusals are reported.
func TestApplyNeverLosesAFact(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	kinds := []string{"add", "correct", "delete", "remove", "", "replace_all", "correct"}
	doc := memory.FactDoc{}
	for round := range 200 {
		var ops []memory.Op
		for range 1 + r.IntN(4) {
			op := memory.Op{Op: kinds[r.IntN(len(kinds))], Text: fmt.Sprintf("fact %d", r.IntN(50))}
			if r.IntN(5) == 0 {
				op.Text = "  "
			}
			if len(doc.Facts) > 0 {
				op.ID = doc.Facts[r.IntN(len(doc.Facts))].ID
			}
			if r.IntN(6) == 0 {
				op.ID = "missing"
			}
			ops = append(ops, op)
		}
		next, refused := memory.Apply(doc, ops, now)
		for _, f := range doc.Facts {
			g, ok := next.Find(f.ID)
			if !ok {
				t.Fatalf("round %d: fact %s (%q) was lost by %+v", round, f.ID, f.Text, ops)
			}
			if g.Text != f.Text && !slices.Contains(g.Previous, f.Text) {
				t.Fatalf("round %d: fact %s changed from %q to %q without keeping the old text", round, f.ID, f.Text, g.Text)
			}
		}
		for _, err := range refused {
			if !errors.Is(err, memory.ErrRefused) {
				t.Fatalf("refusal %v does not match ErrRefused", err)
			}
		}
		doc = next
	}
	_, refused := memory.Apply(doc, []memory.Op{{Op: "delete", ID: "f1", Text: "x"}}, now)
	if len(refused) != 1 || !strings.Contains(refused[0].Error(), "never removed") {
		t.Fatalf("delete: refused = %v", refused)
	}
}

// TestUpdateFactsOffline: the deterministic path adds and corrects facts from the user's words,
// in English and Portuguese, and keeps corrected texts in the history.
func TestUpdateFactsOffline(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	ns := []string{"rehab", "users", "ana"}
	opts := &memory.FactsOptions{Model: offline.New(nil), Now: func() time.Time { return now }}
	turns := []string{
		"My budget is 180.000€. I live in Lisbon. What can I buy?",
		"Eu sou investidora. Prefiro apartamentos T2.",
		"Actually, my budget is 250k.",
		"O meu prazo é 6 meses.",
		"I now live in Porto.",
	}
	prev := 0
	for _, turn := range turns {
		up, err := memory.UpdateFacts(ctx, st, ns, "profile", []message.Message{message.User(turn)}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(up.Doc.Facts) < prev {
			t.Fatalf("after %q the document has %d facts, fewer than %d", turn, len(up.Doc.Facts), prev)
		}
		prev = len(up.Doc.Facts)
	}
	doc, err := memory.LoadFacts(ctx, st, ns, "profile")
	if err != nil {
		t.Fatal(err)
	}
	text := doc.Text()
	for _, want := range []string{"my budget is 250k", "I now live in Porto", "Eu sou investidora", "Prefiro apartamentos T2", "O meu prazo é 6 meses"} {
		if !strings.Contains(text, want) {
			t.Errorf("facts lack %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "180.000") || strings.Contains(text, "Lisbon") {
		t.Errorf("corrected facts still show their old text:\n%s", text)
	}
	if len(doc.Facts) != 5 {
		t.Errorf("%d facts, want 5:\n%s", len(doc.Facts), text)
	}
	for _, f := range doc.Facts {
		if f.Subject == "budget" && (len(f.Previous) != 1 || !strings.Contains(f.Previous[0], "180.000")) {
			t.Errorf("budget fact history = %q, want the old budget kept", f.Previous)
		}
	}
}

// TestUpdateFactsModelCannotDelete: a model proposing a deletion and an empty correction gets
// them refused, and the document keeps every fact.
func TestUpdateFactsModelCannotDelete(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	ns := []string{"realty", "u1"}
	// The second answer breaks the schema's enum ("delete"), as a careless provider might.
	m := &rawModel{answers: []string{
		`{"operations":[{"op":"add","text":"Looks for 3 bedrooms","subject":"bedrooms"},{"op":"add","text":"Budget 900k","subject":"budget"}]}`,
		`{"operations":[{"op":"delete","id":"f1","text":"x"},{"op":"correct","id":"f2","text":""},{"op":"correct","id":"f2","text":"Budget 1.2M"},{"op":"add","text":"Has a dog"}]}`,
	}}
	opts := &memory.FactsOptions{Model: m, Now: func() time.Time { return now }}
	if _, err := memory.UpdateFacts(ctx, st, ns, "profile", []message.Message{message.User("3 bedrooms, 900k")}, opts); err != nil {
		t.Fatal(err)
	}
	up, err := memory.UpdateFacts(ctx, st, ns, "profile", []message.Message{message.User("forget the bedrooms; budget is 1.2M; I have a dog")}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(up.Refused) != 2 {
		t.Errorf("refused = %v, want the delete and the empty correction", up.Refused)
	}
	if got := up.Doc.Text(); got != "- Looks for 3 bedrooms\n- Budget 1.2M\n- Has a dog" {
		t.Errorf("facts =\n%s", got)
	}
	if req := m.reqs[1]; req.Schema == nil || !strings.Contains(req.Messages[0].Text(), "Budget 900k") {
		t.Errorf("the model was not shown the known facts with the operations schema")
	}
}

func TestBadNamespaces(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	if _, err := memory.UpdateFacts(ctx, st, nil, "profile", nil, nil); err == nil || !strings.Contains(err.Error(), "namespace is empty") {
		t.Errorf("nil namespace: %v", err)
	}
	if _, err := memory.SaveEpisode(ctx, st, []string{"app", ""}, memory.Episode{Text: "x"}); err == nil || !strings.Contains(err.Error(), "label 1") {
		t.Errorf("empty label: %v", err)
	}
	if _, err := memory.SaveSummary(ctx, st, []string{"app"}, memory.Summary{Text: "x", Score: 7}, 0); err == nil || !strings.Contains(err.Error(), "1-5") {
		t.Errorf("score 7: %v", err)
	}
}

// TestEpisodesBySimilarityAndIsolated: episodes come back most similar first, and never from
// another namespace, including one that extends the caller's.
func TestEpisodesBySimilarityAndIsolated(t *testing.T) {
	t.Parallel()
	eachStore(t, testEpisodes)
}

func testEpisodes(t *testing.T, st store.Store) {
	ctx := context.Background()
	a, b, aChild := []string{"app", "ana"}, []string{"app", "bob"}, []string{"app", "ana", "other"}
	for _, e := range []memory.Episode{
		{Thread: "t1", Text: "Compared two apartments in Porto, chose the T2 near the river"},
		{Thread: "t2", Text: "Estimated kitchen renovation costs for a house in Braga"},
		{Thread: "t3", Text: "Asked about IMT property transfer tax on a 300k purchase"},
	} {
		if _, err := memory.SaveEpisode(ctx, st, a, e); err != nil {
			t.Fatal(err)
		}
	}
	for _, ns := range [][]string{b, aChild} {
		if _, err := memory.SaveEpisode(ctx, st, ns, memory.Episode{Thread: "x", Text: "Kitchen renovation costs in Braga, secret of " + strings.Join(ns, "/")}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := memory.SearchEpisodes(ctx, st, a, "kitchen renovation costs", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || got[0].Thread != "t2" {
		t.Fatalf("best episode = %+v, want t2", got)
	}
	for _, e := range got {
		if strings.Contains(e.Text, "secret") {
			t.Errorf("episode from another namespace leaked: %q", e.Text)
		}
	}
	got, err = memory.SearchEpisodes(ctx, st, b, "apartments in Porto", 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range got {
		if !strings.Contains(e.Text, "app/bob") {
			t.Errorf("bob sees %q", e.Text)
		}
	}
}

// TestScoredHistory: summaries under the threshold are not kept, kept ones are found by
// similarity and by minimum score, and namespaces stay apart.
func TestScoredHistory(t *testing.T) {
	t.Parallel()
	eachStore(t, testScoredHistory)
}

func testScoredHistory(t *testing.T, st store.Store) {
	ctx := context.Background()
	ns, other := []string{"analyst", "u1"}, []string{"analyst", "u2"}
	texts := []string{
		"hi there",
		"The user decided on a budget of 250000 EUR for a T3 in Porto and prefers renovated homes near the metro.",
		"Revenue by region for 2025: North grew 12%, South fell 3%; the user plans to focus on North.",
	}
	var kept int
	for i, text := range texts {
		score, err := memory.ScoreSummary(ctx, nil, text)
		if err != nil {
			t.Fatal(err)
		}
		ok, err := memory.SaveSummary(ctx, st, ns, memory.Summary{Key: fmt.Sprint("s", i), Text: text, Score: score}, 3)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			kept++
		}
		if i == 0 && (ok || score >= 3) {
			t.Errorf("small talk scored %d and kept=%v", score, ok)
		}
	}
	if kept != 2 {
		t.Fatalf("kept %d summaries, want 2", kept)
	}
	if _, err := memory.SaveSummary(ctx, st, other, memory.Summary{Text: "Revenue by region North South secret", Score: 5}, 3); err != nil {
		t.Fatal(err)
	}
	got, err := memory.SearchSummaries(ctx, st, ns, "revenue by region", 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || !strings.HasPrefix(got[0].Text, "Revenue by region for 2025") {
		t.Fatalf("best summary = %+v", got)
	}
	for _, s := range got {
		if strings.Contains(s.Text, "secret") || s.Score < 3 {
			t.Errorf("unexpected summary %+v", s)
		}
	}
	got, err = memory.SearchSummaries(ctx, st, ns, "revenue", 5, 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range got {
		if s.Score < 5 {
			t.Errorf("minScore 5 returned %+v", s)
		}
	}
	m := scripted.New(scripted.Respond(&model.Response{Message: message.Assistant(`{"score":4,"reason":"figures"}`)}))
	if s, err := memory.ScoreSummary(ctx, m, "x"); err != nil || s != 4 {
		t.Errorf("model score = %d, %v", s, err)
	}
	m = scripted.New(scripted.Text(`{"score":9}`))
	if _, err := memory.ScoreSummary(ctx, m, "x"); err == nil {
		t.Errorf("a score of 9 was accepted")
	}
}

// rawModel answers with fixed texts and no schema validation.
type rawModel struct {
	answers []string
	reqs    []*model.Request
}

func (m *rawModel) Generate(_ context.Context, req *model.Request) (*model.Response, error) {
	m.reqs = append(m.reqs, req)
	a := m.answers[0]
	m.answers = m.answers[1:]
	return &model.Response{Message: message.Assistant(a)}, nil
}

func (m *rawModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		r, err := m.Generate(ctx, req)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		yield(model.Chunk{Text: r.Message.Content}, nil)
	}
}

func TestSetPreference(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	ctx := context.Background()
	ns := []string{"realty", "search"}
	for _, p := range [][3]string{{"location", "city", "Austin"}, {"budget", "max_price", "500000"}, {"location", "city", "Denver"}} {
		if _, err := memory.SetPreference(ctx, st, ns, "preferences", p[0], p[1], p[2]); err != nil {
			t.Fatal(err)
		}
	}
	doc, err := memory.LoadFacts(ctx, st, ns, "preferences")
	if err != nil {
		t.Fatal(err)
	}
	if got := doc.Text(); got != "- [LOCATION] city: Denver\n- [BUDGET] max_price: 500000" {
		t.Errorf("preferences:\n%s", got)
	}
	if prev := doc.Facts[0].Previous; len(prev) != 1 || prev[0] != "[LOCATION] city: Austin" {
		t.Errorf("history = %q", prev)
	}
	if _, err := memory.SetPreference(ctx, st, ns, "preferences", "location", "", "x"); err == nil {
		t.Errorf("a preference without a name was accepted")
	}
}
