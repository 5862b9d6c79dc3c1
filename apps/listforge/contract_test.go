package listforge_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/listforge"
	"github.com/trellis-go/trellis/apps/listforge/catalog"
	"github.com/trellis-go/trellis/apps/listforge/ebay"
	"github.com/trellis-go/trellis/apps/listforge/research"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/servertest"
)

// nullArrays returns the paths of the JSON document's fields that are null where the API
// promises arrays: every field named in arrays.
func nullArrays(v any, path string, arrays map[string]bool, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if val == nil && arrays[k] {
				*out = append(*out, path+"."+k)
			}
			nullArrays(val, path+"."+k, arrays, out)
		}
	case []any:
		for _, val := range x {
			nullArrays(val, path+"[]", arrays, out)
		}
	}
}

// The API's contract: arrays are arrays (a research with nothing missing has missingInfo []),
// a body over the limit is 413 naming the limit, and the searches ask for 20 sold and 10
// active listings unless the settings say otherwise.
func TestAPIContract(t *testing.T) {
	t.Parallel()
	market := catalog.NewServer(catalog.Generate(time.Now()))
	e := serve(t, t.TempDir(), "", listforge.Options{Offline: market})
	key := "key-acme-ana-0000000"
	it := e.demoItem(key, catalog.DemoUPC)
	var started struct{ JobID string }
	e.do(key, "POST", "/api/v1/items/"+it.ID+"/research", nil, &started)
	progress(t, e, key, started.JobID)

	arrays := map[string]bool{"missingInfo": true, "priceBands": true, "demandSignals": true, "recommendedMarketplaces": true, "notes": true,
		"category": true, "records": true, "actions": true, "toolCalls": true, "stepHistory": true, "items": true, "media": true}
	for _, path := range []string{"/api/v1/items/" + it.ID + "/research/latest", "/api/v1/items/" + it.ID + "/evidence",
		"/api/v1/items/" + it.ID + "/research/jobs/" + started.JobID, "/api/v1/items/" + it.ID + "/research/jobs",
		"/api/v1/items/" + it.ID + "/research/history", "/api/v1/items", "/api/v1/items/" + it.ID + "/audit"} {
		var doc any
		if code := e.do(key, "GET", path, nil, &doc); code != 200 {
			t.Fatalf("GET %s: %d", path, code)
		}
		var nulls []string
		nullArrays(doc, "", arrays, &nulls)
		if len(nulls) > 0 {
			t.Errorf("GET %s: null where arrays belong: %v", path, nulls)
		}
	}
	var latest struct {
		Data map[string]json.RawMessage `json:"data"`
	}
	e.do(key, "GET", "/api/v1/items/"+it.ID+"/research/latest", nil, &latest)
	if m := string(latest.Data["missingInfo"]); !strings.HasPrefix(m, "[") {
		t.Fatalf("missingInfo is %s, want an array", m)
	}

	// The searches the job made: 20 sold, 10 active.
	sold, active := market.Queries(ebay.SalesPath), market.Queries(ebay.SearchPath)
	if len(sold) == 0 || len(active) == 0 {
		t.Fatalf("no searches recorded: %d sold %d active", len(sold), len(active))
	}
	if sold[0].Get("limit") != "20" {
		t.Errorf("sold search limit %q, want 20", sold[0].Get("limit"))
	}
	for _, q := range active {
		if q.Get("q") != "" && q.Get("limit") != "10" {
			t.Errorf("active search limit %q, want 10", q.Get("limit"))
		}
	}

	// A body over 1 MiB: 413, naming the limit.
	big := `{"title":"` + strings.Repeat("x", listforge.MaxBody) + `"}`
	for _, c := range []struct{ method, path string }{{"POST", "/api/v1/items"}, {"PATCH", "/api/v1/items/" + it.ID},
		{"POST", "/api/v1/items/" + it.ID + "/research"}} {
		req, _ := http.NewRequest(c.method, e.url+"/apps/listforge"+c.path, bytes.NewReader([]byte(big)))
		req.Header.Set("x-api-key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var out struct{ Detail, Hint string }
		_ = json.Unmarshal(body, &out)
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(out.Detail, "1 MiB") || !strings.Contains(out.Detail, "1048576") {
			t.Errorf("%s %s with %d bytes: %d %s", c.method, c.path, len(big), resp.StatusCode, body)
		}
	}
	// Bad JSON under the limit is still 400 naming the body.
	var bad struct{ Detail string }
	req, _ := http.NewRequest("POST", e.url+"/apps/listforge/api/v1/items", strings.NewReader(`{"title": `))
	req.Header.Set("x-api-key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = json.NewDecoder(resp.Body).Decode(&bad)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(bad.Detail, "field body:") {
		t.Fatalf("bad JSON: %d %+v", resp.StatusCode, bad)
	}
}

// The search limits are settings; a bad one stops the app from building with its name.
func TestSearchLimitsAreSettings(t *testing.T) {
	t.Parallel()
	market := catalog.NewServer(catalog.Generate(time.Now()))
	s := servertest.Start(t, server.Config{Apps: []server.App{listforge.New(listforge.Options{Offline: market})}, DataDir: t.TempDir(),
		Auth:        server.AuthConfig{APIKeys: keys},
		AppSettings: map[string]server.AppSettings{"listforge": {"search_sold_limit": "7", "search_active_limit": "3"}}})
	e := &env{t: t, url: s.URL, s: s.Server}
	key := "key-acme-ana-0000000"
	it := e.demoItem(key, catalog.DemoUPC)
	var started struct{ JobID string }
	e.do(key, "POST", "/api/v1/items/"+it.ID+"/research", nil, &started)
	progress(t, e, key, started.JobID)
	if q := market.Queries(ebay.SalesPath); len(q) == 0 || q[0].Get("limit") != "7" {
		t.Fatalf("sold searches %v, want limit 7", q)
	}
	_, err := server.New(server.Config{Apps: []server.App{listforge.App()}, DataDir: t.TempDir(), Dev: true, Logger: slog.New(slog.DiscardHandler),
		AppSettings: map[string]server.AppSettings{"listforge": {"search_sold_limit": "lots"}}})
	if err == nil || !strings.Contains(err.Error(), "search_sold_limit") {
		t.Fatalf("a bad limit: %v", err)
	}
	if err := (research.Limits{Sold: 500}).Check(); err == nil {
		t.Fatal("a limit of 500 was accepted")
	}
}
