package analyst_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/analyst"
	"github.com/trellis-go/trellis/httpclient"
)

// The Tavily client speaks the Search API's wire format to a local server.
func TestTavilyClientWireFormat(t *testing.T) {
	t.Parallel()
	var got analyst.TavilyRequest
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" || r.URL.Path != "/search" || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "bad request line", 400)
			return
		}
		auth = r.Header.Get("Authorization")
		_ = json.NewDecoder(r.Body).Decode(&got)
		if auth != "Bearer tvly-test" {
			w.WriteHeader(401)
			_, _ = w.Write([]byte(`{"detail":{"error":"Unauthorized: missing or invalid API key."}}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"query":"voltra leasing","follow_up_questions":null,"answer":null,"images":[],
			"results":[{"title":"Voltra Fleet","url":"https://example.com/a","content":"Voltra leases bikes.","score":0.91,"raw_content":null},
			{"title":"Other","url":"https://example.com/b","content":"Other.","score":0.42,"raw_content":null}],"response_time":0.87}`))
	}))
	defer srv.Close()
	c, err := analyst.NewTavily(srv.URL, "tvly-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Search(context.Background(), "voltra leasing", 2)
	if err != nil {
		t.Fatal(err)
	}
	if got.Query != "voltra leasing" || got.MaxResults != 2 || got.SearchDepth != "basic" {
		t.Errorf("request body %+v", got)
	}
	if len(res) != 2 || res[0].Title != "Voltra Fleet" || res[0].URL != "https://example.com/a" || res[0].Score != 0.91 {
		t.Errorf("results %+v", res)
	}
	bad, _ := analyst.NewTavily(srv.URL, "wrong", nil)
	_, err = bad.Search(context.Background(), "x", 1)
	var se *httpclient.StatusError
	if !errors.As(err, &se) || se.Status != 401 || !strings.Contains(err.Error(), "invalid API key") {
		t.Errorf("401: %v", err)
	}
	if _, err := c.Search(context.Background(), " ", 1); !errors.Is(err, analyst.ErrBadArgs) {
		t.Errorf("empty query: %v", err)
	}
	if _, err := c.Search(context.Background(), "x", 50); !errors.Is(err, analyst.ErrBadArgs) || !strings.Contains(err.Error(), "max_results") {
		t.Errorf("max_results 50: %v", err)
	}
}

// The offline web answers through the same client: sources that contradict the firm's
// assumptions, and nothing at all for a topic no page covers.
func TestOfflineWebThroughTheClient(t *testing.T) {
	t.Parallel()
	web, err := analyst.NewOfflineWeb()
	if err != nil {
		t.Fatal(err)
	}
	c, err := analyst.NewTavily("http://tavily.offline", "", web.Transport())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for q, want := range map[string]string{
		"Voltra B2B fleet leasing":         "Voltra launches Voltra Fleet",
		"battery pack prices 2026":         "Battery pack prices stop falling",
		"Madrid tender licences operators": "Madrid tender will license five",
		"corporate fleet subscription":     "pay-per-use",
	} {
		res, err := c.Search(ctx, q, 3)
		if err != nil || len(res) == 0 || !strings.Contains(res[0].Title+res[0].Content, want) {
			t.Errorf("%q: %v %+v", q, err, res)
		}
	}
	res, err := c.Search(ctx, "hydrogen cargo airships in Reykjavik", 5)
	if err != nil || len(res) != 0 {
		t.Errorf("a topic with no source: %v %+v", err, res)
	}
	// The same handler on a loopback server is a Tavily stand-in for other programs.
	srv := httptest.NewServer(web)
	defer srv.Close()
	c2, _ := analyst.NewTavily(srv.URL, "", nil)
	if res, err := c2.Search(ctx, "UrbanHop sale", 1); err != nil || len(res) != 1 {
		t.Errorf("over loopback: %v %+v", err, res)
	}
}
