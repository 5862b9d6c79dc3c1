package research_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/listforge/research"
	"github.com/trellis-go/trellis/apps/listforge/store"
	"github.com/trellis-go/trellis/model/modeltest"
	"github.com/trellis-go/trellis/model/openai"
)

// scores is a model's reply scoring listings first..last: 0.95 for those whose title holds
// good, 0.1 for the others.
func scores(comps []store.Evidence, first, last int, good string) modeltest.Reply {
	type score struct {
		ID        string  `json:"id"`
		Relevance float64 `json:"relevance"`
		Reason    string  `json:"reason"`
	}
	var out struct {
		Scores []score `json:"scores"`
	}
	for _, c := range comps[first : last+1] {
		sc := score{ID: c.ID, Relevance: 0.1, Reason: "another variant by its description"}
		if strings.Contains(c.Title, good) {
			sc.Relevance, sc.Reason = 0.95, "same variant"
		}
		out.Scores = append(out.Scores, sc)
	}
	b, _ := json.Marshal(out)
	return modeltest.Reply{Text: string(b)}
}

// batchIDs reads the listings' IDs a request sent.
func batchIDs(t *testing.T, r modeltest.Request) []string {
	msgs, _ := r.Body["messages"].([]any)
	var ids []string
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		text, _ := mm["content"].(string)
		var in struct {
			Listings []struct{ ID string } `json:"listings"`
		}
		if mm["role"] == "user" && json.Unmarshal([]byte(text), &in) == nil {
			for _, l := range in.Listings {
				ids = append(ids, l.ID)
			}
		}
	}
	return ids
}

// With a model configured, the borderline comparables (the rules neither price nor exclude
// them: here listings that do not state the storage) are scored by the model in batches; the
// ones the rules exclude are not sent; when the model fails, the rule scores stay.
func TestModelScoresBorderlineComps(t *testing.T) {
	t.Parallel()
	item := &store.Item{Title: "Apple iPhone 13 128GB Unlocked", Condition: "Used"}
	var comps []store.Evidence
	add := func(title string, n int) {
		for i := 0; i < n; i++ {
			p := 400.0
			comps = append(comps, store.Evidence{ID: fmt.Sprintf("ebay:%d", len(comps)), Type: "sold_listing", Title: title, Price: &p, Condition: "Used"})
		}
	}
	add("Apple iPhone 13 128GB Unlocked", 5)            // priced by the rules
	add("Apple iPhone 13 256GB Unlocked", 4)            // excluded by the rules
	add("Apple iPhone 13 Blue Unlocked 128 in desc", 9) // borderline: the model says yes
	add("Apple iPhone 13 Pink Unlocked", 11)            // borderline: the model says no

	// The borderline listings are 9 to 28, sent in two batches.
	srv := modeltest.NewOpenAI(t, scores(comps, 9, 23, "in desc"), scores(comps, 24, 28, "in desc"),
		modeltest.Reply{Status: 500, ErrorType: "server_error", ErrorMessage: "overloaded"}, modeltest.Reply{Status: 500, ErrorType: "server_error", ErrorMessage: "overloaded"})
	m, err := openai.New("gpt-test", &openai.Options{BaseURL: srv.URL + "/v1", APIKey: "test", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	scored, sum, msgs, err := research.ScoreCompRelevance(context.Background(), comps, nil, item, m)
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || len(batchIDs(t, reqs[0])) != research.ModelBatch || len(batchIDs(t, reqs[1])) != 5 || len(msgs) != 2 {
		t.Fatalf("%d requests, messages %d", len(reqs), len(msgs))
	}
	for _, r := range reqs {
		for _, id := range batchIDs(t, r) {
			var n int
			fmt.Sscanf(id, "ebay:%d", &n)
			if n < 9 {
				t.Errorf("listing %s, which the rules decide, was sent to the model", id)
			}
		}
	}
	if sum.ModelScored != 20 || sum.Priced != 14 || sum.Dropped != 15 {
		t.Fatalf("summary %+v", sum)
	}
	for _, c := range scored {
		rel := c.ExtractedData["relevance"].(map[string]any)
		switch {
		case strings.Contains(c.Title, "256GB"):
			if rel["by"] != "rules" || c.RelevanceScore >= research.Kept {
				t.Errorf("%s: %.2f %v", c.Title, c.RelevanceScore, rel)
			}
		case strings.Contains(c.Title, "in desc"):
			if rel["by"] != "model" || c.RelevanceScore != 0.95 || rel["ruleScore"] == nil {
				t.Errorf("%s: %.2f %v", c.Title, c.RelevanceScore, rel)
			}
		case strings.Contains(c.Title, "Pink"):
			if rel["by"] != "model" || c.RelevanceScore != 0.1 {
				t.Errorf("%s: %.2f %v", c.Title, c.RelevanceScore, rel)
			}
		}
	}

	// The model fails: the rule scores stay.
	rules, _, _, _ := research.ScoreCompRelevance(context.Background(), comps, nil, item, nil)
	fallback, sum, _, err := research.ScoreCompRelevance(context.Background(), comps, nil, item, m)
	if err != nil || sum.ModelScored != 0 {
		t.Fatalf("fallback: %v %+v", err, sum)
	}
	for i := range fallback {
		if fallback[i].RelevanceScore != rules[i].RelevanceScore {
			t.Fatalf("%s: %.2f, the rules say %.2f", fallback[i].Title, fallback[i].RelevanceScore, rules[i].RelevanceScore)
		}
	}
}
