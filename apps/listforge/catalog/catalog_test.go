package catalog_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/listforge/catalog"
	"github.com/trellis-go/trellis/apps/listforge/ebay"
)

var day = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

func TestCatalogueShape(t *testing.T) {
	t.Parallel()
	c := catalog.Generate(day)
	if len(c.Products) < 48 {
		t.Fatalf("%d products, want at least 48", len(c.Products))
	}
	upcs := map[string]bool{}
	for _, p := range c.Products {
		if !catalog.ValidUPC(p.UPC) || upcs[p.UPC] {
			t.Fatalf("product %s: UPC %s invalid or repeated", p.Title(), p.UPC)
		}
		upcs[p.UPC] = true
	}
	kinds := map[string]int{}
	oldest := c.Now
	conds := map[string]bool{}
	for _, l := range c.Listings {
		kinds[l.Kind]++
		conds[l.Condition] = true
		if l.Sold && l.SoldAt.Before(oldest) {
			oldest = l.SoldAt
		}
	}
	if kinds["outlier"] == 0 || kinds["decoy"] == 0 || len(conds) < 5 {
		t.Fatalf("kinds %v conditions %v", kinds, conds)
	}
	if age := c.Now.Sub(oldest); age < 80*24*time.Hour || age > 91*24*time.Hour {
		t.Fatalf("oldest sale %v ago, want about 90 days", age)
	}
	again := catalog.Generate(day.Add(5 * time.Hour))
	if len(again.Listings) != len(c.Listings) || again.Listings[7] != c.Listings[7] {
		t.Fatal("the same day should give the same catalogue")
	}
}

// Condition moves prices: used sales of a product average well below new ones.
func TestConditionEffects(t *testing.T) {
	t.Parallel()
	c := catalog.Generate(day)
	p, ok := c.Find("Sony WH-1000XM4 Black")
	if !ok {
		t.Fatal("no WH-1000XM4")
	}
	sum := map[string]float64{}
	n := map[string]float64{}
	for _, l := range c.Listings {
		if l.ProductID == p.ID && l.Kind == "normal" && l.Sold {
			sum[l.Condition] += l.Price
			n[l.Condition]++
		}
	}
	if n["New"] == 0 || n["Used"] == 0 || sum["Used"]/n["Used"] > 0.85*sum["New"]/n["New"] {
		t.Fatalf("new %v/%v used %v/%v", sum["New"], n["New"], sum["Used"], n["Used"])
	}
}

func setup(t *testing.T, mut func(*catalog.Server)) (*catalog.Server, *ebay.Client) {
	t.Helper()
	srv := catalog.NewServer(catalog.Generate(day))
	srv.ClientID, srv.ClientSecret = "app-id", "app-secret"
	if mut != nil {
		mut(srv)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	c, err := ebay.New(ebay.Config{BaseURL: hs.URL, ClientID: "app-id", ClientSecret: "app-secret", Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

// The client against a local server speaking eBay's format: a token by client credentials,
// then a Browse search, a GTIN lookup with getItem, and Insights sales.
func TestClientAgainstLocalServer(t *testing.T) {
	t.Parallel()
	srv, c := setup(t, nil)
	ctx := context.Background()
	active, err := c.SearchActive(ctx, "Sony WH-1000XM4", 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(active) == 0 || active[0].Price <= 0 || active[0].Currency != "USD" || active[0].Sold || active[0].ListedAt.IsZero() {
		t.Fatalf("active %+v", active)
	}
	p, _ := srv.Cat.Find("Sony WH-1000XM4 Black")
	byGTIN, err := c.SearchGTIN(ctx, p.UPC, 5)
	if err != nil || len(byGTIN) == 0 {
		t.Fatalf("gtin: %v %v", byGTIN, err)
	}
	it, err := c.GetItem(ctx, byGTIN[0].ItemID)
	if err != nil {
		t.Fatal(err)
	}
	if it.Brand != "Sony" || it.MPN != p.MPN || it.GTIN != p.UPC || it.Aspects["Model"] != "WH-1000XM4" {
		t.Fatalf("item %+v", it)
	}
	sold, fellBack, err := c.SearchSold(ctx, "Sony WH-1000XM4", 50)
	if err != nil || fellBack || len(sold) == 0 || !sold[0].Sold || sold[0].SoldAt.IsZero() {
		t.Fatalf("sold %d fellBack %v err %v", len(sold), fellBack, err)
	}
	if srv.Hits(ebay.TokenPath) != 1 {
		t.Fatalf("the token was fetched %d times, want once", srv.Hits(ebay.TokenPath))
	}
}

func TestSoldFallsBackToActive(t *testing.T) {
	t.Parallel()
	_, c := setup(t, func(s *catalog.Server) { s.NoInsights = true })
	ls, fellBack, err := c.SearchSold(context.Background(), "Nintendo Switch OLED", 20)
	if err != nil || !fellBack || len(ls) == 0 || ls[0].Sold {
		t.Fatalf("fellBack %v listings %d err %v", fellBack, len(ls), err)
	}
}

func TestRetriesThenGivesUp(t *testing.T) {
	t.Parallel()
	srv, c := setup(t, nil)
	srv.FailNext(503, 504)
	if _, err := c.SearchActive(context.Background(), "GoPro", 5); err != nil {
		t.Fatalf("two failures should be retried: %v", err)
	}
	srv.FailNext(503, 503, 503, 503)
	_, err := c.SearchActive(context.Background(), "GoPro", 5)
	if err == nil || !ebay.Transient(err) {
		t.Fatalf("four failures: err %v, want a transient error", err)
	}
}

func TestBadKeysAndBadRequests(t *testing.T) {
	t.Parallel()
	srv, _ := setup(t, nil)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	c, err := ebay.New(ebay.Config{BaseURL: hs.URL, ClientID: "app-id", ClientSecret: "wrong", Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SearchActive(context.Background(), "GoPro", 5); err == nil || !strings.Contains(err.Error(), "token") {
		t.Fatalf("wrong secret: %v", err)
	}
	if _, err := ebay.New(ebay.Config{}); err == nil {
		t.Fatal("no keys should be refused")
	}
	// A request without a token is refused in eBay's error shape.
	resp, err := http.Get(hs.URL + ebay.SearchPath + "?q=x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("no token: %d", resp.StatusCode)
	}
}

// The in-process transport serves the same answers as the loopback server.
func TestInProcessTransport(t *testing.T) {
	t.Parallel()
	srv := catalog.NewServer(catalog.Generate(day))
	c, err := ebay.New(ebay.Config{BaseURL: "http://ebay.offline", ClientID: "offline", ClientSecret: "offline", Transport: srv.Transport()})
	if err != nil {
		t.Fatal(err)
	}
	ls, _, err := c.SearchSold(context.Background(), "KitchenAid Artisan", 10)
	if err != nil || len(ls) == 0 {
		t.Fatalf("%v %v", ls, err)
	}
}
