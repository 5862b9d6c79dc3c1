package reports_test

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/trellis-go/trellis/appdb/appdbtest"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/vesper/reports"
)

// fakePowerBI speaks the identity platform's token endpoint and the Power
// BI REST API's report and GenerateToken calls.
type fakePowerBI struct {
	mu          sync.Mutex
	tokens      int
	generates   int
	failWith    int // HTTP status for REST calls; 0: succeed
	unavailable int // how many report reads answer 503 before one succeeds
	reads       int // report reads answered
	badSecret   bool
	tokenExpiry time.Time
	srv         *httptest.Server
}

func newFake(t *testing.T) *fakePowerBI {
	f := &fakePowerBI{tokenExpiry: time.Date(2026, 2, 27, 11, 0, 0, 0, time.UTC)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /aad-tenant/oauth2/v2.0/token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if r.Form.Get("grant_type") != "client_credentials" || r.Form.Get("scope") != "https://analysis.windows.net/powerbi/api/.default" {
			http.Error(w, `{"error":"invalid_request","error_description":"bad form"}`, 400)
			return
		}
		if f.badSecret || r.Form.Get("client_secret") != "s3cret" {
			w.WriteHeader(401)
			io.WriteString(w, `{"error":"invalid_client","error_description":"AADSTS7000215: Invalid client secret provided."}`)
			return
		}
		f.mu.Lock()
		f.tokens++
		f.mu.Unlock()
		json.NewEncoder(w).Encode(map[string]any{"token_type": "Bearer", "expires_in": 3599, "access_token": "aad-token"})
	})
	rest := func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get("Authorization") != "Bearer aad-token" {
			w.WriteHeader(403)
			io.WriteString(w, `{"error":{"code":"TokenExpired","message":"no token"}}`)
			return false
		}
		if f.failWith != 0 {
			w.WriteHeader(f.failWith)
			io.WriteString(w, `{"error":{"code":"PowerBINotAuthorizedException","message":"not authorized"}}`)
			return false
		}
		return true
	}
	mux.HandleFunc("GET /v1.0/myorg/groups/{ws}/reports/{id}", func(w http.ResponseWriter, r *http.Request) {
		if !rest(w, r) {
			return
		}
		f.mu.Lock()
		f.reads++
		busy := f.unavailable > 0
		if busy {
			f.unavailable--
		}
		f.mu.Unlock()
		if busy {
			w.WriteHeader(503)
			io.WriteString(w, `{"error":{"code":"ServiceUnavailable","message":"try again"}}`)
			return
		}
		id := r.PathValue("id")
		json.NewEncoder(w).Encode(map[string]any{"id": id, "name": "Report " + id, "datasetId": "ds",
			"embedUrl": "https://app.powerbi.com/reportEmbed?reportId=" + id + "&groupId=" + r.PathValue("ws"),
			"webUrl":   "https://app.powerbi.com/groups/" + r.PathValue("ws") + "/reports/" + id})
	})
	mux.HandleFunc("POST /v1.0/myorg/groups/{ws}/reports/{id}/GenerateToken", func(w http.ResponseWriter, r *http.Request) {
		if !rest(w, r) {
			return
		}
		var body map[string]string
		json.NewDecoder(r.Body).Decode(&body)
		if body["accessLevel"] != "View" {
			w.WriteHeader(400)
			io.WriteString(w, `{"error":{"code":"InvalidRequest","message":"accessLevel"}}`)
			return
		}
		f.mu.Lock()
		f.generates++
		n := f.generates
		f.mu.Unlock()
		json.NewEncoder(w).Encode(map[string]any{"token": "embed-" + string(rune('0'+n)), "tokenId": "tid", "expiration": f.tokenExpiry.Format(time.RFC3339)})
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func setup(t *testing.T) (*reports.PowerBI, *fakePowerBI, *time.Time) {
	t.Helper()
	f := newFake(t)
	now := time.Date(2026, 2, 27, 9, 0, 0, 0, time.UTC)
	c, err := reports.NewPowerBI(reports.PowerBIConfig{AuthorityURL: f.srv.URL, TenantID: "aad-tenant", ClientID: "app", ClientSecret: "s3cret",
		BaseURL: f.srv.URL + "/v1.0/myorg", Transport: f.srv.Client().Transport, Backoff: time.Millisecond, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return c, f, &now
}

func TestEmbedReportCaches(t *testing.T) {
	c, f, now := setup(t)
	ctx := context.Background()
	e, err := c.EmbedReport(ctx, "ws1", "r1")
	if err != nil {
		t.Fatal(err)
	}
	if e.Token != "embed-1" || !strings.Contains(e.EmbedURL, "reportId=r1") || e.Name != "Report r1" {
		t.Errorf("embed = %+v", e)
	}
	*now = now.Add(54 * time.Minute)
	if e, _ = c.EmbedReport(ctx, "ws1", "r1"); e.Token != "embed-1" || f.generates != 1 {
		t.Errorf("within 55 minutes the token is reused: %+v, %d calls", e, f.generates)
	}
	*now = now.Add(2 * time.Minute)
	if e, _ = c.EmbedReport(ctx, "ws1", "r1"); e.Token != "embed-2" {
		t.Errorf("after 55 minutes a new token: %+v", e)
	}
	if f.tokens != 2 {
		t.Errorf("service principal token fetched %d times, want twice (it lasts an hour less five minutes)", f.tokens)
	}
	// a token Power BI expires early is not reused past its expiration
	f.tokenExpiry = now.Add(10 * time.Minute)
	c.EmbedReport(ctx, "ws1", "r2")
	*now = now.Add(10 * time.Minute)
	if e, _ = c.EmbedReport(ctx, "ws1", "r2"); f.generates != 4 {
		t.Errorf("expired token reused: %+v (%d generates)", e, f.generates)
	}
}

func TestPowerBIErrors(t *testing.T) {
	c, f, _ := setup(t)
	ctx := context.Background()
	f.failWith = 403
	_, err := c.EmbedReport(ctx, "ws1", "r1")
	var ae *reports.APIError
	if !errors.As(err, &ae) || ae.Status != 403 || ae.Code != "PowerBINotAuthorizedException" || !strings.Contains(err.Error(), "service principal to the workspace") {
		t.Errorf("403: %v", err)
	}
	f.failWith = 404
	if _, err = c.EmbedReport(ctx, "ws1", "r1"); !errors.As(err, &ae) || !strings.Contains(err.Error(), "report IDs") {
		t.Errorf("404: %v", err)
	}
	c2, _ := reports.NewPowerBI(reports.PowerBIConfig{AuthorityURL: f.srv.URL, TenantID: "aad-tenant", ClientID: "app", ClientSecret: "wrong",
		BaseURL: f.srv.URL + "/v1.0/myorg", Transport: f.srv.Client().Transport})
	if _, err = c2.EmbedReport(ctx, "ws1", "r1"); !errors.As(err, &ae) || ae.Code != "invalid_client" || !strings.Contains(err.Error(), "client ID and secret") {
		t.Errorf("bad secret: %v", err)
	}
	if _, err = c2.EmbedReport(ctx, "", "r1"); !errors.Is(err, reports.ErrPowerBIConfig) {
		t.Errorf("no workspace: %v", err)
	}
	for _, cfg := range []reports.PowerBIConfig{{}, {TenantID: "t", ClientID: "c", ClientSecret: "s", BaseURL: "not a url"}} {
		if _, err := reports.NewPowerBI(cfg); !errors.Is(err, reports.ErrPowerBIConfig) {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
}

// The REST API is called through httpclient: a read that answers 503 is tried again (twice by
// default), and one that keeps failing gives the API's code and message.
func TestPowerBIRetriesReads(t *testing.T) {
	c, f, _ := setup(t)
	ctx := context.Background()
	f.unavailable = 2
	e, err := c.EmbedReport(ctx, "ws1", "r1")
	if err != nil || e.Name != "Report r1" || f.reads != 3 {
		t.Fatalf("after two 503s: %+v, %v (%d reads, want 3)", e, err, f.reads)
	}
	f.unavailable, f.reads = 10, 0
	_, err = c.EmbedReport(ctx, "ws1", "r2")
	var ae *reports.APIError
	if !errors.As(err, &ae) || ae.Status != 503 || ae.Code != "ServiceUnavailable" || f.reads != 3 {
		t.Fatalf("a 503 that stays: %v (%d reads, want 3)", err, f.reads)
	}
}

func menu(t *testing.T) *reports.Menu {
	t.Helper()
	m, err := reports.NewMenu(context.Background(), appdbtest.SQLite(t, "vesper"))
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range reports.DefaultItems("vesper") {
		if err := m.Put(context.Background(), it); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func TestLinks(t *testing.T) {
	ctx := context.Background()
	m := menu(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	keys := []string{"per_project_health_report", "per_project_report", "price_curve_hourly_report", "price_curve_comparison_report", "no_such_report"}

	plain := (&reports.Linker{Menu: m, Log: quiet}).Links(ctx, "vesper", keys)
	if len(plain) != 3 {
		t.Fatalf("links = %+v", plain)
	}
	if plain[0].ReportName != "Project Health Report" || plain[0].EmbedToken != "" ||
		plain[0].URL != "https://app.powerbi.com/groups/6f1c0de2-0000-4000-8000-00000000000a/reports/0b7a1f10-0000-4000-8000-000000000005" {
		t.Errorf("without Power BI: %+v", plain[0])
	}
	c, f, _ := setup(t)
	embedded := (&reports.Linker{Menu: m, PowerBI: c, Log: quiet}).Links(ctx, "vesper", keys)
	if len(embedded) != 3 || embedded[0].EmbedToken == "" || !strings.Contains(embedded[0].URL, "reportEmbed") {
		t.Errorf("with Power BI: %+v", embedded)
	}
	_ = f
	degraded := (&reports.Linker{Menu: m, PowerBI: failing{}, Log: quiet}).Links(ctx, "vesper", keys)
	if len(degraded) != 3 || degraded[0].EmbedToken != "" || !strings.HasPrefix(degraded[0].URL, "https://app.powerbi.com/groups/") {
		t.Errorf("a Power BI failure must degrade to the report page: %+v", degraded)
	}
	if other := (&reports.Linker{Menu: m, Log: quiet}).Links(ctx, "northwind", keys); len(other) != 0 {
		t.Errorf("a tenant without menu items gets links: %+v", other)
	}
	if err := m.Put(ctx, reports.MenuItem{Tenant: "vesper"}); err == nil {
		t.Error("menu item without key and label: want an error")
	}
}

type failing struct{}

func (failing) EmbedReport(context.Context, string, string) (reports.Embed, error) {
	return reports.Embed{}, errors.New("power bi is down")
}
