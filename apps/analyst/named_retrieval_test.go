package analyst_test

import (
	"context"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/analyst"
	"github.com/trellis-go/trellis/server"
)

// A question about one competitor in a theme is answered from what is known about that
// competitor: the passage ranked first names it, even when other documents cover the theme
// more fully (the planner asks such questions for every competitor a request names).
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
		if len(res) == 0 || !strings.Contains(strings.ToLower(res[0].Title()+" "+res[0].Content), strings.ToLower(c.name)) {
			var titles []string
			for _, r := range res {
				titles = append(titles, r.Title())
			}
			t.Errorf("%q → %v: the first passage does not name %s", c.q, titles, c.name)
		}
	}
}
