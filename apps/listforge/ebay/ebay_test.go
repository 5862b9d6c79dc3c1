package ebay_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/trellis-go/trellis/apps/listforge/ebay"
)

// A local server answering as eBay documents it: the token endpoint (basic auth, form body,
// token_type "Application Access Token"), a Browse search, an Insights search the application
// may not use (403), and a token revoked once (401), which the client fetches again.
func TestClientSpeaksEbaysFormat(t *testing.T) {
	t.Parallel()
	var tokens, revoked atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("POST /identity/v1/oauth2/token", func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		if !ok || id != "app" || secret != "sec" || r.FormValue("grant_type") != "client_credentials" || r.FormValue("scope") == "" {
			w.WriteHeader(401)
			_, _ = w.Write([]byte(`{"error":"invalid_client","error_description":"client authentication failed"}`))
			return
		}
		n := tokens.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"tok` + string(rune('0'+n)) + `","expires_in":7200,"token_type":"Application Access Token"}`))
	})
	mux.HandleFunc("GET /buy/browse/v1/item_summary/search", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-EBAY-C-MARKETPLACE-ID") != "EBAY_US" {
			w.WriteHeader(400)
			return
		}
		if r.Header.Get("Authorization") == "Bearer tok1" && revoked.Add(1) == 1 {
			w.WriteHeader(401)
			_, _ = w.Write([]byte(`{"errors":[{"errorId":1001,"message":"Invalid access token."}]}`))
			return
		}
		if r.URL.Query().Get("q") != "brass lamp" || r.URL.Query().Get("limit") != "5" {
			w.WriteHeader(400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"href":"x","total":1,"limit":5,"offset":0,"itemSummaries":[{"itemId":"v1|1|0","title":"Brass lamp",
			"price":{"value":"42.50","currency":"USD"},"condition":"Used","conditionId":"3000","itemWebUrl":"https://www.ebay.com/itm/1",
			"image":{"imageUrl":"https://i.ebayimg.com/1.jpg"},"itemCreationDate":"2026-10-01T10:00:00.000Z","categories":[{"categoryId":"1","categoryName":"Lamps"}]}]}`))
	})
	mux.HandleFunc("GET /buy/marketplace_insights/v1_beta/item_sales/search", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(403)
		_, _ = w.Write([]byte(`{"errors":[{"errorId":1100,"message":"Access denied"}]}`))
	})
	hs := httptest.NewServer(mux)
	defer hs.Close()
	c, err := ebay.New(ebay.Config{BaseURL: hs.URL, ClientID: "app", ClientSecret: "sec"})
	if err != nil {
		t.Fatal(err)
	}
	ls, err := c.SearchActive(context.Background(), "brass lamp", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 1 || ls[0].Price != 42.5 || ls[0].Category != "Lamps" || ls[0].ListedAt.IsZero() || ls[0].ConditionID != "3000" {
		t.Fatalf("listings %+v", ls)
	}
	if tokens.Load() != 2 {
		t.Fatalf("%d tokens fetched, want 2 (one revoked)", tokens.Load())
	}
	sold, fellBack, err := c.SearchSold(context.Background(), "brass lamp", 5)
	if err != nil || !fellBack || len(sold) != 1 || sold[0].Sold {
		t.Fatalf("fallback: %v %v %+v", err, fellBack, sold)
	}
}
