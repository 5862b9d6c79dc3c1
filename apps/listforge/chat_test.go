package listforge_test

import (
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/listforge"
	"github.com/trellis-go/trellis/apps/listforge/catalog"
	"github.com/trellis-go/trellis/apps/listforge/research"
	"github.com/trellis-go/trellis/apps/listforge/store"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/model/scripted"
	"github.com/trellis-go/trellis/server"
)

func TestRouteIntent(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"What price should I list this for?":    "question",
		"How fast will it sell?":                "question",
		"Set the price to $120":                 "action",
		"change the title to Sony XM4 black":    "action",
		"list it at 99":                         "action",
		"Can you refresh the research?":         "research",
		"please re-run the research, it's old":  "research",
		"what did similar ones sell for":        "question",
		"mark the condition as like new please": "action",
	} {
		if got := route(t, text).Intent; got != want {
			t.Errorf("%q: %s, want %s", text, got, want)
		}
	}
}

func TestParseUpdate(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]listforge.ProposedUpdate{
		"Set the price to $289":                     {Field: "defaultPrice", Value: 289.0},
		"list it for 99.50":                         {Field: "defaultPrice", Value: 99.5},
		"change the title to Sony WH-1000XM4 Black": {Field: "title", Value: "Sony WH-1000XM4 Black"},
		"set condition to \"like new\"":             {Field: "condition", Value: "like new"},
		"mark it as fair condition":                 {Field: "condition", Value: "fair"},
		"flag it as good condition please.":         {Field: "condition", Value: "good"},
		"mark the condition used":                   {Field: "condition", Value: "used"},
	} {
		r := route(t, text)
		if r.Intent != "action" || r.Update != want {
			t.Errorf("%q: %+v, want %+v", text, r, want)
		}
	}
	if r := route(t, "make it better"); r.Update.Field != "" {
		t.Errorf("no field should be no update: %+v", r)
	}
}

// The chat on a configured model: the model classifies, writes the answer (streamed), extracts
// the update to propose; when it fails, the fallback answer of Appendix B.
func TestChatWithAModel(t *testing.T) {
	t.Parallel()
	m := scripted.New(
		scripted.Text(`{"intent":"question","topic":"why"}`),
		scripted.Text("List it at $300: recent sales cluster there."),
		scripted.Text(`{"intent":"action"}`),
		scripted.Text(`{"field":"title","value":"KitchenAid Artisan mixer, red"}`),
		scripted.Text(`{"intent":"question"}`),
		scripted.Fail("", errors.New("provider timeout")),
	)
	roles := model.NewRoles(offline.New(nil), "offline").With(model.RoleFast, m, "scripted")
	s, err := server.New(server.Config{Apps: []server.App{listforge.App()}, DataDir: t.TempDir(), Models: roles,
		Auth: server.AuthConfig{APIKeys: keys}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		hs.Close()
		s.Close()
	})
	e := &env{t: t, url: hs.URL}
	it := e.demoItem(key, catalog.DemoLabels)
	var started struct{ JobID string }
	e.do(key, "POST", "/api/v1/items/"+it.ID+"/research", nil, &started)
	progress(t, e, key, started.JobID)
	var sess struct{ SessionID string }
	e.do(key, "POST", "/api/v1/items/"+it.ID+"/chat/sessions", nil, &sess)
	c := e.dial(key, listforge.ChatWSPath)
	send(t, c, "join_session", map[string]string{"sessionId": sess.SessionID})
	read(t, c)
	turn := func(text string) (string, store.Message) {
		send(t, c, "send_message", map[string]string{"sessionId": sess.SessionID, "content": text})
		_, answer, streamed := readTurn(t, c)
		return streamed, answer
	}
	streamed, msg := turn("What should I ask for it?")
	if msg.Content != "List it at $300: recent sales cluster there." || streamed != msg.Content {
		t.Fatalf("answer %q streamed %q", msg.Content, streamed)
	}
	// The model's topic (why the price) implies the research's price as an action to apply.
	if len(msg.Actions) == 0 || msg.Actions[0].Type != "suggest_price" {
		t.Fatalf("actions with a model: %+v", msg.Actions)
	}
	_, msg = turn("Call it something nicer")
	if len(msg.Actions) != 1 || msg.Actions[0].Payload["field"] != "title" || msg.Actions[0].Payload["value"] != "KitchenAid Artisan mixer, red" {
		t.Fatalf("proposal %+v", msg)
	}
	_, msg = turn("And the demand?")
	if msg.Content != listforge.MsgTrouble {
		t.Fatalf("fallback %q", msg.Content)
	}
	reqs := m.Requests()
	if len(reqs) != 6 || !strings.Contains(reqs[1].Messages[1].Content, "Artisan") {
		t.Fatalf("%d model requests; the answer's context: %v", len(reqs), reqs[1].Messages)
	}
}

// The offline answers, from the research.
func TestOfflineAnswers(t *testing.T) {
	t.Parallel()
	it := &store.Item{Title: "Red stand mixer"}
	if a := listforge.AnswerTopic("price", 0, it, nil, nil); !strings.Contains(a, "no research") {
		t.Fatalf("no research: %q", a)
	}
	p := 300.0
	res := &store.Research{Data: store.ResearchData{OverallConfidence: 0.8,
		PriceBands:    []store.PriceBand{{Label: "floor", Amount: 280}, {Label: "target", Amount: 300, Reasoning: "median"}, {Label: "ceiling", Amount: 320}},
		DemandSignals: []store.DemandSignal{{Metric: "sell_through_rate", Value: 0.6, Period: "90d"}, {Metric: "days_to_sell", Value: 9}},
		MissingInfo:   []store.MissingInfoHint{{Field: "condition", Importance: "required", Reason: "moves the price", SuggestedPrompt: "What condition?"}},
		ProductID:     &store.ProductIdentification{Brand: "KitchenAid", Model: "Artisan", Confidence: 0.8, Source: "labels"}}}
	other := 310.0
	ev := []store.Evidence{{Title: "KitchenAid Artisan", Price: &p, Condition: "Used", SoldDate: "2026-11-01T00:00:00Z", RelevanceScore: 0.9},
		{Title: "KitchenAid Artisan 6 Quart", Price: &other, Condition: "Used", RelevanceScore: 0.55}}
	res.Data.Comparables = &store.CompSummary{Considered: 40, Kept: 22, Priced: 18, Dropped: 18, Outliers: 2, Reasons: map[string]int{"storage differs": 8, "an accessory, not the item": 10}}
	for q, want := range map[string]string{
		"What price should I list it for?":   "$300",
		"what did similar ones sell for?":    "KitchenAid Artisan: $300",
		"how fast will it sell?":             "60%",
		"what else would improve it?":        "What condition?",
		"which model is it?":                 "KitchenAid Artisan",
		"how many comparables did you find?": "40 comparables: 22 kept, 18 used for the price",
		"why this price?":                    "an accessory, not the item: 10",
		"is $350 too high?":                  "above the ceiling",
		"is $250 too low?":                   "below the floor",
	} {
		r := route(t, q)
		if a := listforge.AnswerTopic(r.Topic, r.Price, it, res, ev); !strings.Contains(a, want) {
			t.Errorf("%q: %q, want %q in it", q, a, want)
		}
	}
	if a := listforge.AnswerTopic(route(t, "what did similar ones sell for?").Topic, 0, it, res, ev); strings.Contains(a, "6 Quart") {
		t.Errorf("another variant listed among the closest: %q", a)
	}
	// A price question implies a suggest_price action at the target; a count does not.
	act, ok := listforge.SuggestPrice(route(t, "What should I ask for it?").Topic, it, res)
	if !ok || act.Type != "suggest_price" || act.Payload["amount"] != 300.0 || act.Payload["reason"] == "" {
		t.Fatalf("suggest_price %+v %v", act, ok)
	}
	if _, ok := listforge.SuggestPrice(route(t, "how many comps?").Topic, it, res); ok {
		t.Fatal("a count question suggested a price")
	}
}

// Found by using the app as a seller: a question naming the listings compared goes to the
// comparables, not to comparing a price; "why" about an estimate made without comparables says
// so (no quartiles, no "0 listings"); "fair condition" sets the condition "fair".
func TestSellerChatTurns(t *testing.T) {
	t.Parallel()
	for _, q := range []string{"which listings did you compare it to?", "what sales did you compare mine with?", "which items did you compare it against?"} {
		if r := route(t, q); r.Topic != "comps" {
			t.Errorf("%q: topic %q (intent %q), want comps", q, r.Topic, r.Intent)
		}
	}
	it := &store.Item{Title: "Phone"}
	res := &store.Research{Data: store.ResearchData{OverallConfidence: 0.1,
		PriceBands: []store.PriceBand{{Label: "floor", Amount: 520, Reasoning: "No comparable sales were found; an estimate around your asking price."},
			{Label: "target", Amount: 650, Reasoning: "No comparable sales were found; an estimate around your asking price."},
			{Label: "ceiling", Amount: 780, Reasoning: "No comparable sales were found; an estimate around your asking price."}},
		MissingInfo: []store.MissingInfoHint{{Field: "brand", Importance: "required", SuggestedPrompt: "What brand is it?"}},
		Comparables: &store.CompSummary{Reasons: map[string]int{}}}}
	for _, q := range []string{"why is the confidence so low?", "how did you come up with 650?"} {
		a := listforge.AnswerTopic(route(t, q).Topic, 0, it, res, nil)
		if !strings.Contains(a, "not based on sales") || strings.Contains(a, "quartile") || strings.Contains(a, "Of 0") || !strings.Contains(a, "What brand is it?") {
			t.Errorf("%q: %q", q, a)
		}
	}
}

// A seller correcting what the item is ("it's actually the 256GB one") is offered the title
// with the corrected attribute, not a price.
func TestCorrectionProposesTitle(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ title, msg, want string }{
		{"iPhone 13 Pro Max 128 gig graphite", "it's actually the 256GB one", "iPhone 13 Pro Max 256GB graphite"},
		{"Galaxy S21 128GB", "oh wait, actually it's 256 gigs", "Galaxy S21 256gb"},
		{"Apple Watch Series 7 41mm GPS", "my mistake, it's the 45mm one", "Apple Watch Series 7 45mm GPS"},
		{"Nike Dunk Low", "correction: size 10.5", "Nike Dunk Low size 10.5"},
	} {
		if r := route(t, c.msg); r.Intent != "action" || r.Update.Field != "" {
			t.Errorf("%q: %+v, want an action naming no field (the correction reads it)", c.msg, r)
			continue
		}
		got, ok := research.CorrectTitle(c.title, c.msg)
		if !ok || got != c.want {
			t.Errorf("%q on %q: %q %v, want %q", c.msg, c.title, got, ok, c.want)
		}
	}
	if _, ok := research.CorrectTitle("iPhone 13 Pro Max 256GB", "it's actually the 256GB one"); ok {
		t.Error("a title that already says it was changed")
	}
}

// Questions a seller asked, with the topic that answers them: "used" no longer draws a price
// question to the count (its tool's description said "used for the price"), and "so few"
// asks for the count with its reasons.
func TestSellerQuestionTopics(t *testing.T) {
	t.Parallel()
	for q, want := range map[string]string{
		"ballpark, what are these going for used?": "price",
		"used price?":                     "price",
		"what did the used ones sell for": "comps",
		"only two comps? why so few":      "count",
		"why so few comparables?":         "count",
		"hmm, not many sales to go on?":   "count",
		"only 3 listings, really?":        "count",
		"how many did you use":            "count",
	} {
		if r := route(t, q); r.Intent != "question" || r.Topic != want {
			t.Errorf("%q: %s %s, want %s", q, r.Intent, r.Topic, want)
		}
	}
}
