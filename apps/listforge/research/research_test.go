package research_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/appdb"
	"github.com/trellis-go/trellis/apps/listforge/catalog"
	"github.com/trellis-go/trellis/apps/listforge/ebay"
	"github.com/trellis-go/trellis/apps/listforge/research"
	"github.com/trellis-go/trellis/apps/listforge/store"
	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/scripted"
)

var org = store.Who{Org: "acme", User: "ana"}

type fixture struct {
	st     *store.Store
	market *catalog.Server
	g      *research.Graph
	items  map[string]*store.Item
}

func setup(t *testing.T, m model.Model) *fixture {
	t.Helper()
	ctx := context.Background()
	db, err := appdb.Open(ctx, "listforge", &appdb.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	cat := catalog.Generate(now)
	srv := catalog.NewServer(cat)
	client, err := ebay.New(ebay.Config{BaseURL: "http://ebay.offline", ClientID: "id", ClientSecret: "secret", Transport: srv.Transport(), Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	g, err := research.New(research.Config{Store: st, Market: client, Model: m, Vision: m, Now: func() time.Time { return now },
		Compile: graph.CompileOptions{Saver: checkpoint.NewMemorySaver()}})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st, market: srv, g: g, items: map[string]*store.Item{}}
	for _, it := range catalog.DemoItems(cat) {
		created, err := st.CreateItem(ctx, org, it)
		if err != nil {
			t.Fatal(err)
		}
		f.items[it.Attributes["demo"].(string)] = created
	}
	return f
}

func (f *fixture) run(t *testing.T, demo string) research.State {
	t.Helper()
	out, err := f.g.Invoke(context.Background(), research.State{ItemID: f.items[demo].ID, ResearchRunID: "run-" + demo, OrganizationID: org.Org},
		graph.WithThread("t-"+demo))
	if err != nil {
		t.Fatalf("%s: %v", demo, err)
	}
	t.Logf("%s: confidence %.2f iteration %d queries %q bands %v comps %d notes %v", demo, out.OverallConfidence, out.Iteration, out.SearchQueries, out.PriceBands, len(out.Comps), out.Notes)
	return out
}

func band(s research.State, label string) float64 {
	for _, b := range s.PriceBands {
		if b.Label == label {
			return b.Amount
		}
	}
	return 0
}

// The specification's integration test: the research completes and persists the research and
// its evidence. Here through the UPC on the box.
func TestUPCMatchPersistsResearchAndEvidence(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	out := f.run(t, catalog.DemoUPC)
	if !out.Done || len(out.PriceBands) != 3 || out.Error != "" {
		t.Fatalf("done %v bands %+v error %q", out.Done, out.PriceBands, out.Error)
	}
	id := out.ProductIdentification
	if id.Source != "upc_lookup" || id.Brand != "Sony" || !strings.Contains(id.Model, "WH-1000XM4") || id.Confidence < 0.9 {
		t.Fatalf("identification %+v", id)
	}
	if out.OverallConfidence < 0.7 || out.Iteration != 0 {
		t.Fatalf("confidence %v iteration %d", out.OverallConfidence, out.Iteration)
	}
	// Used, so below the new price of $349 and above parts prices.
	if tg := band(out, "target"); tg < 150 || tg > 300 {
		t.Fatalf("target %v", tg)
	}
	saved, err := f.st.LatestResearch(context.Background(), org, f.items[catalog.DemoUPC].ID)
	if err != nil || saved == nil {
		t.Fatalf("no research saved: %v", err)
	}
	a, _ := json.Marshal(saved.Data.PriceBands)
	b, _ := json.Marshal(out.PriceBands)
	if string(a) != string(b) {
		t.Fatalf("saved bands %s, state %s", a, b)
	}
	ev, err := f.st.LatestEvidence(context.Background(), org, f.items[catalog.DemoUPC].ID, 0)
	if err != nil || ev == nil || len(ev.Records) == 0 {
		t.Fatalf("no evidence: %v", err)
	}
	for _, e := range ev.Records {
		if strings.Contains(strings.ToLower(e.Title), "case cover") || e.RelevanceScore < research.Kept {
			t.Fatalf("decoy kept as evidence: %+v", e)
		}
	}
}

func TestLabelsIdentifyTheProduct(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	out := f.run(t, catalog.DemoLabels)
	if out.ProductIdentification.Source != "labels" || out.ProductIdentification.Brand != "KitchenAid" || len(out.PriceBands) != 3 || !out.Done {
		t.Fatalf("identification %+v bands %+v", out.ProductIdentification, out.PriceBands)
	}
}

// The rare lens: the first search by name finds few sales, so should_refine sends it round the
// loop by part number; the comps found twice are not duplicated.
func TestRefineLoop(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	out := f.run(t, catalog.DemoRefine)
	if out.Iteration < 1 || len(out.SearchQueries) < 2 {
		t.Fatalf("no refine pass: iteration %d queries %v", out.Iteration, out.SearchQueries)
	}
	seen := map[string]bool{}
	for _, c := range out.Comps {
		if seen[c.ID] {
			t.Fatalf("comp %s twice", c.ID)
		}
		seen[c.ID] = true
	}
	if out.OverallConfidence < 0.7 || len(out.PriceBands) != 3 {
		t.Fatalf("confidence %v bands %+v queries %v", out.OverallConfidence, out.PriceBands, out.SearchQueries)
	}
}

func TestNoCompsContinuesWithLowConfidence(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	out := f.run(t, catalog.DemoNoComps)
	if !out.Done || out.OverallConfidence > 0.1 || !contains(out.Notes, research.MsgLimited) {
		t.Fatalf("done %v confidence %v notes %v", out.Done, out.OverallConfidence, out.Notes)
	}
	if band(out, "target") != 45 {
		t.Fatalf("estimate %+v", out.PriceBands)
	}
	if out.Iteration != 3 {
		t.Fatalf("iteration %d, want the limit 3", out.Iteration)
	}
}

func TestItemNotReadyAborts(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	out := f.run(t, catalog.DemoNotReady)
	if !strings.HasPrefix(out.Error, research.MsgNotReady) || out.Done {
		t.Fatalf("error %q done %v", out.Error, out.Done)
	}
	if r, _ := f.st.LatestResearch(context.Background(), org, f.items[catalog.DemoNotReady].ID); r != nil {
		t.Fatal("research saved for an item not ready")
	}
}

// eBay down: the search node fails with ErrPaused after the client's retries; run again from
// the checkpoint, it goes on without running the finished nodes.
func TestTimeoutPausesAndResumesFromCheckpoint(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	f.market.FailNext(503, 503, 503, 503, 503, 503, 503, 503) // sold and active searches, each tried four times
	it := f.items[catalog.DemoLabels]
	_, err := f.g.Invoke(context.Background(), research.State{ItemID: it.ID, OrganizationID: org.Org}, graph.WithThread("pause"))
	if err == nil || !strings.Contains(err.Error(), research.ErrPaused.Error()) {
		t.Fatalf("err %v, want a pause", err)
	}
	tokens := f.market.Hits(ebay.SearchPath)
	out, err := f.g.Invoke(context.Background(), research.State{}, graph.WithThread("pause"), graph.Continue())
	if err != nil || !out.Done {
		t.Fatalf("resume: %v done %v", err, out.Done)
	}
	if f.market.Hits(ebay.SearchPath) <= tokens {
		t.Fatal("the search did not run again")
	}
}

// With a configured model: vision reads the photo, the model identifies, prices within bounds
// and lists missing information; bands it moves too far are refused in code.
func TestWithAModel(t *testing.T) {
	t.Parallel()
	m := scripted.New(
		scripted.Text(`{"category":"Stand Mixers","brand":"KitchenAid","model":"Artisan 5 Quart Stand Mixer Empire Red","conditionScore":3.5,"confidence":0.9,"features":{"color":"red"},"extractedText":{}}`),
		scripted.Rule(func(req *model.Request) *model.Response {
			var in struct {
				ComputedBands []struct {
					Amount float64 `json:"amount"`
				} `json:"computedBands"`
			}
			_ = json.Unmarshal([]byte(req.Messages[1].Content), &in)
			if len(in.ComputedBands) != 3 {
				return &model.Response{}
			}
			body, _ := json.Marshal(map[string]any{"priceBands": []map[string]any{
				{"label": "floor", "amount": in.ComputedBands[0].Amount * 1.05, "confidence": 0.9, "reasoning": "quick sale"},
				{"label": "target", "amount": in.ComputedBands[1].Amount * 1.05, "confidence": 0.5, "reasoning": "balanced"},
				{"label": "ceiling", "amount": in.ComputedBands[2].Amount * 1.05, "confidence": 0.3, "reasoning": "patient"}}})
			return responseText(string(body))
		}),
		scripted.Text(`{"missingInfo":[{"field":"accessories","importance":"optional","reason":"list the attachments"}]}`),
	)
	f := setup(t, m)
	out := f.run(t, catalog.DemoLabels)
	if out.MediaAnalysis == nil || out.MediaAnalysis.Brand != "KitchenAid" || out.ProductIdentification.Brand != "KitchenAid" {
		t.Fatalf("analysis %+v id %+v", out.MediaAnalysis, out.ProductIdentification)
	}
	if out.PriceBands[1].Reasoning != "balanced" || !contains(hintFields(out), "accessories") {
		t.Fatalf("bands %+v missing %+v notes %v", out.PriceBands, out.MissingInfo, out.Notes)
	}
	if len(m.Requests()[0].Messages[1].Parts) != 2 {
		t.Fatal("the vision model was not sent the photo")
	}
}

func responseText(s string) *model.Response {
	r := &model.Response{Structured: json.RawMessage(s)}
	r.Message.Role = "assistant"
	r.Message.Content = s
	return r
}

func hintFields(s research.State) []string {
	var out []string
	for _, h := range s.MissingInfo {
		out = append(out, h.Field)
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func TestMergeCompsAndQueries(t *testing.T) {
	t.Parallel()
	a := []store.Evidence{{ID: "1", RelevanceScore: 0}, {ID: "2"}}
	got := research.MergeComps(a, []store.Evidence{{ID: "2", RelevanceScore: 0.9}, {ID: "3"}})
	if len(got) != 3 || got[1].RelevanceScore != 0.9 || len(a) != 2 || a[1].RelevanceScore != 0 {
		t.Fatalf("merge %+v (input %+v)", got, a)
	}
	if q := research.UnionQueries([]string{"a", "b"}, []string{"b", "c"}); len(q) != 3 {
		t.Fatalf("union %v", q)
	}
}

// failingSaver fails every write after the first n.
type failingSaver struct {
	checkpoint.Saver
	n int
}

func (f *failingSaver) Put(ctx context.Context, req checkpoint.PutRequest) error {
	if f.n <= 0 {
		return errors.New("disk full")
	}
	f.n--
	return f.Saver.Put(ctx, req)
}

// A checkpoint saver that fails mid-run: the job goes on without checkpoints and finishes.
func TestCheckpointerFailureDegrades(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	saver := &research.DegradingSaver{Inner: &failingSaver{Saver: checkpoint.NewMemorySaver(), n: 3}}
	st := f.st
	g, err := research.New(research.Config{Store: st, Market: f.g.Market(), Compile: graph.CompileOptions{Saver: saver}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := g.Invoke(context.Background(), research.State{ItemID: f.items[catalog.DemoLabels].ID, OrganizationID: org.Org}, graph.WithThread("degraded"))
	if err != nil || !out.Done || !saver.Degraded("degraded") {
		t.Fatalf("err %v done %v degraded %v", err, out.Done, saver.Degraded("degraded"))
	}
}
