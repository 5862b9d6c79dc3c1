package analyst_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/analyst"
	"github.com/trellis-go/trellis/server"
)

// A question about one competitor in a theme is answered from what is known about that
// competitor: a passage about it is among the first two, even when other documents cover the
// theme more fully (the planner asks such questions for every competitor a request names).
func TestRetrievalKeepsTheNamedCompetitor(t *testing.T) {
	t.Parallel()
	a, _ := harness(t, analyst.Options{}, nil)
	ctx := context.Background()
	for _, c := range []struct{ q, name string }{
		{"What is Spinlane doing in B2B fleet leasing?", "Spinlane"},
		{"What is UrbanHop doing in B2B fleet leasing?", "UrbanHop"},
		{"How are Spinlane's corporate fleet deals in Germany going?", "Spinlane"},
		{"What is Cityglide doing in battery costs and swapping?", "Cityglide"},
	} {
		res, err := a.KB().Retrieve(ctx, server.DevPrincipal.Tenant, c.q, 5, nil)
		if err != nil {
			t.Fatal(err)
		}
		// One of the first two passages is about the competitor: it names it and no more than
		// one other competitor (the fact sheet listing them all is not).
		about := func(c0 analyst.Chunk) bool {
			text := strings.ToLower(c0.Title() + " " + c0.Content)
			others := 0
			for _, rival := range []string{"voltra", "spinlane", "urbanhop", "cityglide"} {
				if rival != strings.ToLower(c.name) && strings.Contains(text, rival) {
					others++
				}
			}
			return strings.Contains(text, strings.ToLower(c.name)) && others <= 1
		}
		if !slices.ContainsFunc(res[:min(2, len(res))], about) {
			var titles []string
			for _, r := range res {
				titles = append(titles, r.Title())
			}
			t.Errorf("%q → %v: none of the first two passages is about %s", c.q, titles, c.name)
		}
	}
}
