package analyst

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

var clock = time.Date(2026, 4, 2, 9, 0, 0, 0, time.UTC)

// A question is rewritten into a search query: its content words with their synonyms (from the
// corpus's vocabulary), its time frame read relative to the app's clock and dropped from the
// terms.
func TestRewriteReadsSynonymsAndTimeFrames(t *testing.T) {
	cases := []struct {
		q          string
		from, to   string // "" when no time frame
		want, lack []string
	}{
		{"How did rides grow last year?", "2025-01-01", "2026-01-01", []string{"rides", "grow"}, []string{"last", "year"}},
		{"What are the recent licence decisions?", "2025-10-01", "2026-04-03", []string{"licence", "decisions"}, []string{"recent"}},
		{"What did the board decide this quarter?", "2026-04-01", "2026-07-01", []string{"board", "decide"}, []string{"quarter"}},
		{"What happened to revenue in 2024?", "2024-01-01", "2025-01-01", []string{"revenue", "2024"}, nil},
		{"Which rivals lease bikes?", "", "", []string{"rivals", "lease", "bikes"}, nil},
	}
	for _, c := range cases {
		q := rewrite(c.q, clock)
		var from, to string
		if !q.From.IsZero() {
			from, to = q.From.Format("2006-01-02"), q.To.Format("2006-01-02")
		}
		if from != c.from || to != c.to {
			t.Errorf("%q: time frame %s to %s, want %s to %s", c.q, from, to, c.from, c.to)
		}
		for _, w := range c.want {
			if !slices.Contains(q.Terms, w) {
				t.Errorf("%q: terms %v lack %q", c.q, q.Terms, w)
			}
		}
		for _, w := range c.lack {
			if slices.Contains(q.Terms, w) {
				t.Errorf("%q: terms %v keep the time frame's %q", c.q, q.Terms, w)
			}
		}
	}
	// A synonym counts as the term: "licence" finds "permits", "rivals" finds "competitors".
	q := rewrite("Which rivals hold a licence?", clock)
	if got := q.shareOf("Two competitors hold permits."); got != 1 {
		t.Errorf("synonyms not matched: share %v of %v", got, q.Groups)
	}
	if got := share(contentWords("Which rivals hold a licence?"), "Two competitors hold permits."); got == 1 {
		t.Fatalf("the words alone should not match (share %v): the test proves nothing", got)
	}
	// The time frame raises a document of that period.
	q = rewrite("What did riders say last year?", clock)
	if in, out := q.relevance("Survey", "What riders say.", "2025-12-10"), q.relevance("Survey", "What riders say.", "2026-02-01"); in <= out {
		t.Errorf("the document of last year scores %v, the other %v", in, out)
	}
	if q.text() != "riders 2025" {
		t.Errorf("the web query is %q", q.text())
	}
}

// The knowledge base's passages and the web's pages rank together by one score, and a finding
// keeps one source per document and at most one saved report.
func TestSourcesRankTogether(t *testing.T) {
	a := &Analyst{now: func() time.Time { return clock }}
	q := rewrite("Is a competitor launching B2B leasing?", clock)
	kb, _ := json.Marshal([]Chunk{
		{Content: "Riders value availability first.", Metadata: map[string]any{"title": "Rider survey", "source": "corpus/survey.md", "date": "2025-12-10"}, Score: 0.9},
		{Content: "No competitor offers B2B leasing today.", Metadata: map[string]any{"title": "Leasing note", "source": "corpus/leasing.md", "date": "2026-02-18"}, Score: 0.6},
		{Content: "A competitor launches leasing.", Metadata: map[string]any{"title": "Report one", "source": "report:1", "document_type": "report"}, Score: 0.8},
		{Content: "A competitor launches B2B leasing.", Metadata: map[string]any{"title": "Report two", "source": "report:2", "document_type": "report"}, Score: 0.8},
	})
	web, _ := json.Marshal([]WebResult{
		{URL: "https://news.example/launch", Title: "Competitor launches B2B e-bike leasing", Content: "The competitor is launching a B2B leasing offer.", Score: 0.4},
		{URL: "https://news.example/launch", Title: "Competitor launches B2B e-bike leasing", Content: "The competitor is launching a B2B leasing offer.", Score: 0.4},
	})
	ss := append(a.sourcesOf("rag_tool", string(kb), q), a.sourcesOf("web_search_tool", string(web), q)...)
	got := rankSources(ss)
	var order []string
	reports := 0
	for _, s := range got {
		order = append(order, s.Title)
		if s.Kind == "report" {
			reports++
		}
	}
	if got[0].Kind != "web" || order[len(order)-1] != "Rider survey" {
		t.Errorf("the sources are not ranked by relevance across engines: %v", order)
	}
	if reports != 1 || len(got) != 4 {
		t.Errorf("want one report and no duplicate page among 4 sources: %v", order)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Score > got[i-1].Score {
			t.Errorf("not in score order: %v", got)
		}
	}
}

// TestBestSentenceNamesTheSubject: the sentence quoted from a source for a question about a
// competitor is one that names the competitor, not the one with most of the theme's words.
func TestBestSentenceNamesTheSubject(t *testing.T) {
	t.Parallel()
	q := rewrite("What is Spinlane doing in B2B fleet leasing?", time.Date(2026, 4, 2, 0, 0, 0, 0, time.UTC))
	text := "Corporate fleets are a large opportunity for B2B leasing in our markets. Spinlane trialled a battery subscription for couriers in Vienna."
	if got := bestSentence(q, text); !strings.Contains(got, "Spinlane") {
		t.Errorf("bestSentence = %q, want the sentence naming Spinlane", got)
	}
}
