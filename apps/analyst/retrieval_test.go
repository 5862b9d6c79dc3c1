package analyst_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/analyst"
	"github.com/trellis-go/trellis/server"
)

// retrievalPairs are questions a consultant asks, written from the shipped documents, each with
// the title of the document that answers it.
var retrievalPairs = []struct{ q, doc string }{
	{"How many cities does Voltra operate in and how much money did it raise?", "Competitor profile Voltra"},
	{"Where does Spinlane build its bikes and how long do they last?", "Competitor profile Spinlane"},
	{"Is UrbanHop looking for a buyer?", "Competitor profile UrbanHop"},
	{"Which Nordic cities does Cityglide serve?", "Competitor profile Cityglide"},
	{"How big is the European shared micromobility market and how fast will it grow?", "European micromobility market report 2026"},
	{"What share of rides does each operator have in Europe?", "Competitive landscape review 2026"},
	{"How much shared micromobility revenue do Spain and Portugal generate?", "Iberian market report"},
	{"What do corporate buyers of e-bike fleets value most?", "B2B fleet leasing market note"},
	{"What is the swap cost per ride today and by 2028?", "Battery cost outlook"},
	{"How do cities award operating permits?", "Regulation overview for shared e-bikes"},
	{"What is the budget of the Iberian entry project?", "Project Northstar charter"},
	{"What is the payback if five operators are licensed in Madrid?", "Northstar business case draft"},
	{"Which partners could help us enter Lisbon?", "Northstar local partner scan"},
	{"What did the steering committee decide about the tender strategy?", "Northstar steering committee minutes March"},
	{"How many leased vehicles should the B2B offer reach by 2027?", "Project Tidewater charter"},
	{"What monthly price are corporate buyers willing to pay per leased bike?", "Tidewater pricing study"},
	{"What are the success criteria of the Rotterdam leasing pilot?", "Tidewater pilot plan"},
	{"How much does a battery swapping hub cost?", "Project Ember charter"},
	{"Where will the first swapping hubs be built?", "Ember hub site selection"},
	{"What net promoter score did riders give us?", "Rider survey 2025"},
	{"How much are our monthly passes?", "Consumer pricing strategy"},
	{"How often are vehicles inspected and what is utilisation?", "Fleet operations handbook summary"},
	{"How much CO2 did our fleet avoid?", "Sustainability report 2025"},
	{"What share of tenders do we win?", "City tender playbook"},
	{"What was revenue and EBITDA in the fourth quarter?", "Finance update Q4 2025"},
	{"What are the top risks in the risk register?", "Group risk register"},
	{"Where did Voltra cut its pass price?", "Voltra pricing watch"},
	{"How many riders joined Spinlane's courier battery subscription in Vienna?", "Spinlane Vienna courier trial note"},
	{"What does downtime cost a delivery firm per rider?", "Customer interview a delivery firm"},
	{"How did shared e-bike rides in Madrid grow last year?", "Madrid market note"},
}

// Retrieval over the shipped corpus: the document that answers each question is among the five
// retrieved, for at least 90% of the questions (recall at 5), offline.
func TestRetrievalRecallAt5(t *testing.T) {
	t.Parallel()
	a, _ := harness(t, analyst.Options{}, nil)
	ctx := context.Background()
	hits := 0
	for _, p := range retrievalPairs {
		res, err := a.KB().Retrieve(ctx, server.DevPrincipal.Tenant, p.q, 5, nil)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		var titles []string
		for _, c := range res {
			titles = append(titles, c.Title())
			found = found || c.Title() == p.doc
		}
		if found {
			hits++
		} else {
			t.Logf("miss: %q → %v (want %q)", p.q, titles, p.doc)
		}
	}
	recall := float64(hits) / float64(len(retrievalPairs))
	t.Logf("recall@5 = %.3f over %d questions", recall, len(retrievalPairs))
	if len(retrievalPairs) < 20 || recall < 0.9 {
		t.Fatalf("recall@5 = %.3f over %d questions, want >= 0.9", recall, len(retrievalPairs))
	}
}

// Questions worded with the corpus's synonyms, or naming a time frame, find their documents:
// the query is rewritten with the vocabulary's synonyms and the time frame read from the app's
// clock.
func TestRetrievalWithSynonymsAndTimeFrames(t *testing.T) {
	t.Parallel()
	now := func() time.Time { return time.Date(2026, 4, 2, 9, 0, 0, 0, time.UTC) }
	a, _ := harness(t, analyst.Options{Now: now}, nil)
	ctx := context.Background()
	pairs := []struct{ q, doc string }{
		{"Which rival holds licences in Porto?", "Competitor profile UrbanHop"},
		{"Which public bike scheme limits our pricing power in Madrid?", "Madrid market note"},
		{"Which tariff per vehicle did buyers prefer for the lease?", "Tidewater pricing study"},
		{"What did riders tell us in the survey last year?", "Rider survey 2025"},
		{"What are the latest fee cuts by Voltra?", "Voltra pricing watch"},
		{"What does a university want from a bicycle contract?", "Customer interview a university campus"},
		{"How much turnover did we make last quarter of 2025?", "Finance update Q4 2025"},
	}
	for _, p := range pairs {
		res, err := a.KB().Retrieve(ctx, server.DevPrincipal.Tenant, p.q, 3, nil)
		if err != nil {
			t.Fatal(err)
		}
		var titles []string
		for _, c := range res {
			titles = append(titles, c.Title())
		}
		if !slices.Contains(titles, p.doc) {
			t.Errorf("%q → %v, want %q among the first three", p.q, titles, p.doc)
		}
	}
	// "Latest" is a time frame, not a word to match: the recent note on a competitor comes
	// before its older profile.
	res, err := a.KB().Retrieve(ctx, server.DevPrincipal.Tenant, "What are the latest moves of Voltra?", 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) == 0 || res[0].Title() != "Voltra pricing watch" {
		t.Errorf("the latest moves: %+v", res)
	}
}
