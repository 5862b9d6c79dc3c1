package server

import (
	"errors"
	"net/http"
	"testing"
)

// TestCORS: with Config.CORS a listed origin's preflight is answered before authentication
// with the methods, headers and credentials allowed, and its requests carry the CORS headers;
// another origin gets none. Without it no CORS header is sent.
func TestCORS(t *testing.T) {
	t.Parallel()
	cfg := authCfg()
	cfg.CORS = &CORSConfig{AllowOrigins: []string{"https://app.example.com", "https://*.studio.test"}, AllowCredentials: true}
	b := setup(t, setupOpts{cfg: cfg})
	send := func(method, origin string, hdr map[string]string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, b.http.URL+"/threads/search", nil)
		req.Header.Set("Origin", origin)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	pre := send("OPTIONS", "https://eu.studio.test", map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type"})
	if pre.StatusCode != 204 || pre.Header.Get("Access-Control-Allow-Origin") != "https://eu.studio.test" ||
		pre.Header.Get("Access-Control-Allow-Credentials") != "true" || pre.Header.Get("Access-Control-Allow-Methods") != "POST" {
		t.Fatalf("preflight: %d %v", pre.StatusCode, pre.Header)
	}
	if h := pre.Header.Get("Access-Control-Allow-Headers"); h != "authorization, content-type" {
		t.Errorf("preflight allows headers %q", h)
	}
	bad := send("OPTIONS", "https://evil.example", map[string]string{"Access-Control-Request-Method": "POST"})
	if bad.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("a foreign origin's preflight is allowed: %v", bad.Header)
	}
	// A real request: the API still authenticates it (401 without credentials) and the answer
	// carries the CORS headers the page needs to read it.
	resp := send("POST", "https://app.example.com", nil)
	if resp.StatusCode != 401 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" {
		t.Errorf("request from an allowed origin: %d %v", resp.StatusCode, resp.Header)
	}
	resp = send("POST", "https://app.example.com", map[string]string{"Authorization": "Bearer " + token(nil)})
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Expose-Headers") == "" {
		t.Errorf("authenticated request: %d %v", resp.StatusCode, resp.Header)
	}

	plain := setup(t)
	req, _ := http.NewRequest("OPTIONS", plain.http.URL+"/threads/search", nil)
	req.Header.Set("Origin", "https://app.example.com")
	req.Header.Set("Access-Control-Request-Method", "POST")
	r2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("CORS headers without Config.CORS: %v", r2.Header)
	}
}

func TestCORSConfigErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []CORSConfig{
		{},
		{AllowOrigins: []string{"*"}, AllowCredentials: true},
		{AllowOrigins: []string{"app.example.com"}},
		{AllowOrigins: []string{"https://*.*.example.com"}},
	} {
		_, err := New(Config{Dev: true, DataDir: t.TempDir(), CORS: &c, Graphs: []GraphSpec{{ID: "flow", Build: buildFlow}}})
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Hint == "" {
			t.Errorf("CORS %+v: %v, want a ConfigError with a hint", c, err)
		}
	}
}
