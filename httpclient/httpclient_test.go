package httpclient_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trellis-go/trellis/httpclient"
	"github.com/trellis-go/trellis/httpclient/httpclienttest"
)

const recording = `[
 {"request": {"method": "GET", "path": "/v1/search", "query": {"q": "lamp"}, "header": {"X-API-Key": "k1"}},
  "response": {"status": 200, "body": {"total": 2, "items": [{"title": "Brass lamp", "price": 40}, {"title": "Desk lamp", "price": 25}]}}},
 {"request": {"method": "GET", "path": "/v1/search", "query": {"q": "*"}},
  "response": {"status": 200, "body": {"total": 0, "items": []}}},
 {"request": {"method": "POST", "path": "/v1/items"},
  "response": {"status": 201, "body": {"id": "it_1"}}},
 {"request": {"method": "GET", "path": "/v1/broken"},
  "response": {"status": 200, "headers": {"Content-Type": "text/html"}, "body": "<html>maintenance</html>"}},
 {"request": {"method": "GET", "path": "/v1/slow"},
  "response": {"status": 200, "delay": "2s", "body": {}}}
]`

type result struct {
	Total int `json:"total"`
	Items []struct {
		Title string  `json:"title"`
		Price float64 `json:"price"`
	} `json:"items"`
}

func newServer(t *testing.T) *httpclienttest.Server {
	t.Helper()
	xs, err := httpclienttest.Parse([]byte(recording))
	if err != nil {
		t.Fatal(err)
	}
	s := httpclienttest.NewServer(xs)
	t.Cleanup(s.Close)
	return s
}

func fast(o httpclient.Options) *httpclient.Options {
	o.Backoff, o.MaxBackoff = time.Millisecond, 5*time.Millisecond
	return &o
}

func TestRecordedAPI(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	c, err := httpclient.New(s.URL+"/v1/", fast(httpclient.Options{Auth: httpclient.APIKey("X-API-Key", "k1"), UserAgent: "test-agent"}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var r result
	if err := c.GetJSON(ctx, "/search", url.Values{"q": {"lamp"}}, &r); err != nil {
		t.Fatal(err)
	}
	if r.Total != 2 || r.Items[0].Title != "Brass lamp" || r.Items[1].Price != 25 {
		t.Fatalf("got %+v", r)
	}
	var created struct{ ID string }
	if err := c.PostJSON(ctx, "items", map[string]any{"title": "Lamp"}, &created); err != nil || created.ID != "it_1" {
		t.Fatalf("post: %v %+v", err, created)
	}
	reqs := s.Requests()
	if got := reqs[1]; got.Header.Get("Content-Type") != "application/json" || string(got.Body) != `{"title":"Lamp"}` || got.Header.Get("User-Agent") != "test-agent" {
		t.Errorf("post sent %+v %s", got.Header, got.Body)
	}
	// An answer that is not JSON says what came back.
	err = c.GetJSON(ctx, "broken", nil, &r)
	var de *httpclient.DecodeError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "maintenance") {
		t.Errorf("html answer: %v", err)
	}
	// No recorded exchange: a 404 that names the request.
	err = c.GetJSON(ctx, "nowhere", nil, nil)
	var se *httpclient.StatusError
	if !errors.As(err, &se) || se.Status != 404 || !strings.Contains(err.Error(), "/v1/nowhere") {
		t.Errorf("unknown path: %v", err)
	}
	// A full URL as a path is refused: requests stay on the configured API.
	if err := c.GetJSON(ctx, "http://169.254.169.254/latest", nil, nil); err == nil || !strings.Contains(err.Error(), "full URL") {
		t.Errorf("absolute path: %v", err)
	}
}

func TestRetries(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	c, _ := httpclient.New(s.URL+"/v1", fast(httpclient.Options{}))
	ctx := context.Background()
	// Three transient failures, then the answer: three retries suffice.
	s.FailNext(429, 503, 500)
	var r result
	if err := c.GetJSON(ctx, "search", url.Values{"q": {"chair"}}, &r); err != nil {
		t.Fatalf("after 3 transient failures: %v", err)
	}
	if n := len(s.Requests()); n != 4 {
		t.Errorf("%d requests, want 4", n)
	}
	// Four failures exhaust them; the error is the last answer.
	s.FailNext(502, 502, 502, 504)
	err := c.GetJSON(ctx, "search", url.Values{"q": {"chair"}}, &r)
	var se *httpclient.StatusError
	if !errors.As(err, &se) || se.Status != 504 {
		t.Errorf("exhausted: %v", err)
	}
	// A 400 is not retried, nor is a POST by default.
	before := len(s.Requests())
	s.FailNext(400)
	if err := c.GetJSON(ctx, "search", url.Values{"q": {"x"}}, nil); err == nil {
		t.Error("400 passed")
	}
	s.FailNext(503)
	if err := c.PostJSON(ctx, "items", map[string]any{}, nil); err == nil {
		t.Error("failed POST passed")
	}
	if n := len(s.Requests()) - before; n != 2 {
		t.Errorf("%d requests for a 400 and a failed POST, want 2 (no retries)", n)
	}
	// Unless the client says its writes may be retried.
	c2, _ := httpclient.New(s.URL+"/v1", fast(httpclient.Options{RetryUnsafe: true}))
	s.FailNext(503)
	if err := c2.PostJSON(ctx, "items", map[string]any{}, nil); err != nil {
		t.Errorf("RetryUnsafe POST: %v", err)
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	var gap time.Duration
	var last time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		if calls.Add(1) == 1 {
			last = now
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(429)
			return
		}
		gap = now.Sub(last)
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	c, _ := httpclient.New(srv.URL, &httpclient.Options{Backoff: time.Millisecond, MaxBackoff: 3 * time.Second})
	if err := c.GetJSON(context.Background(), "x", nil, nil); err != nil {
		t.Fatal(err)
	}
	if gap < 900*time.Millisecond {
		t.Errorf("retried after %v although the API asked for 1 s", gap)
	}
}

func TestTimeoutAndCap(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	c, _ := httpclient.New(s.URL+"/v1", fast(httpclient.Options{Timeout: 50 * time.Millisecond, Retries: -1}))
	err := c.GetJSON(context.Background(), "slow", nil, nil)
	var te *httpclient.TransportError
	if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("slow API: %v", err)
	}
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`"` + strings.Repeat("x", 5000) + `"`))
	}))
	defer big.Close()
	c, _ = httpclient.New(big.URL, &httpclient.Options{MaxResponseBytes: 1000})
	var tl *httpclient.TooLargeError
	if err := c.GetJSON(context.Background(), "x", nil, nil); !errors.As(err, &tl) {
		t.Errorf("oversized answer: %v", err)
	}
}

func TestClientCredentials(t *testing.T) {
	t.Parallel()
	var issued atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("POST /oauth/token", func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		r.ParseForm()
		if !ok || id != "app" || secret != "s3cret" || r.Form.Get("grant_type") != "client_credentials" {
			w.WriteHeader(401)
			w.Write([]byte(`{"error":"invalid_client","error_description":"unknown client"}`))
			return
		}
		n := issued.Add(1)
		fmt.Fprintf(w, `{"access_token":"tok%d","token_type":"Bearer","expires_in":7200}`, n)
	})
	var revoked sync.Map
	mux.HandleFunc("GET /api/me", func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if _, gone := revoked.Load(tok); gone || !strings.HasPrefix(tok, "tok") {
			w.WriteHeader(401)
			return
		}
		fmt.Fprintf(w, `{"token":%q}`, tok)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	cc := &httpclient.ClientCredentials{TokenURL: srv.URL + "/oauth/token", ClientID: "app", ClientSecret: "s3cret", Scopes: []string{"read"}}
	c, _ := httpclient.New(srv.URL+"/api", fast(httpclient.Options{Auth: cc}))
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var me struct{ Token string }
			if err := c.GetJSON(ctx, "me", nil, &me); err != nil || me.Token != "tok1" {
				t.Errorf("me: %v %+v", err, me)
			}
		}()
	}
	wg.Wait()
	if n := issued.Load(); n != 1 {
		t.Errorf("%d tokens fetched for 8 calls, want 1 (cached)", n)
	}
	// A revoked token: the 401 makes the client fetch a new one, once.
	revoked.Store("tok1", true)
	var me struct{ Token string }
	if err := c.GetJSON(ctx, "me", nil, &me); err != nil || me.Token != "tok2" {
		t.Errorf("after revocation: %v %+v", err, me)
	}
	// Wrong secret: the error says what the token endpoint said.
	bad, _ := httpclient.New(srv.URL+"/api", &httpclient.Options{Auth: &httpclient.ClientCredentials{TokenURL: srv.URL + "/oauth/token", ClientID: "app", ClientSecret: "nope"}})
	if err := bad.GetJSON(ctx, "me", nil, nil); err == nil || !strings.Contains(err.Error(), "unknown client") {
		t.Errorf("bad secret: %v", err)
	}
}

func TestBadConfigAndGuard(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"", "api.example.com", "ftp://x", "http://"} {
		if _, err := httpclient.New(u, nil); err == nil || !strings.Contains(err.Error(), "absolute http or https URL") {
			t.Errorf("New(%q): %v", u, err)
		}
	}
	c, _ := httpclient.New("https://api.example.com", &httpclient.Options{Auth: httpclient.Bearer("")})
	if err := c.GetJSON(context.Background(), "x", nil, nil); err == nil || !strings.Contains(err.Error(), "token is empty") {
		t.Errorf("empty token: %v", err)
	}
	// The address guard: a base URL naming a host (not a loopback literal) that resolves to this
	// machine is refused, unless AllowPrivate says the operator means it.
	s := newServer(t)
	host, _ := os.Hostname()
	addrs, err := net.LookupHost(host)
	if err != nil || len(addrs) == 0 {
		t.Skipf("this machine's name %q does not resolve (%v): the guard is tested in internal/netguard", host, err)
	}
	port := s.URL[strings.LastIndex(s.URL, ":")+1:]
	guarded, _ := httpclient.New("http://"+net.JoinHostPort(host, port), &httpclient.Options{Retries: -1})
	err = guarded.GetJSON(context.Background(), "v1/search", url.Values{"q": {"lamp"}}, nil)
	if ip := net.ParseIP(addrs[0]); ip.IsLoopback() || ip.IsPrivate() {
		if err == nil || !strings.Contains(err.Error(), "may not reach") {
			t.Errorf("a name resolving to %s reached the local server: %v", addrs[0], err)
		}
	}
	allowed, _ := httpclient.New("http://"+net.JoinHostPort(host, port), &httpclient.Options{Retries: -1, AllowPrivate: true})
	if err := allowed.GetJSON(context.Background(), "v1/search", url.Values{"q": {"lamp"}}, nil); err != nil {
		t.Errorf("AllowPrivate: %v", err)
	}
}

func TestRecordingErrors(t *testing.T) {
	t.Parallel()
	for rec, want := range map[string]string{
		`{"request": {}}`: "JSON list",
		`[{"request": {"method": "GET", "path": "no-slash"}, "response": {}}]`:          "path starting with '/'",
		`[{"request": {"method": "GET", "path": "/x"}, "response": {"delay": "soon"}}]`: "delay",
	} {
		if _, err := httpclienttest.Parse([]byte(rec)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", rec, err, want)
		}
	}
}
