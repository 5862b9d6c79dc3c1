package ui

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, path string) (*http.Response, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	res := rec.Result()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func TestHandlerServesTheShellAndItsAssets(t *testing.T) {
	t.Parallel()
	h := Handler()
	res, index := get(t, h, "GET", "/")
	if res.StatusCode != 200 || !strings.Contains(index, `<div id="root">`) {
		t.Fatalf("GET / = %d %q, want the index", res.StatusCode, index)
	}
	if res.Header.Get("Content-Security-Policy") == "" || res.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("index headers = %v", res.Header)
	}
	// Client routes get the index, so that a reload or a link opens the page.
	for _, p := range []string{"/ui/", "/ui", "/ui/threads", "/ui/threads/0a1b/runs/2c3d", "/ui/assistants/example/graph"} {
		if res, body := get(t, h, "GET", p); res.StatusCode != 200 || body != index {
			t.Errorf("GET %s = %d, want the index", p, res.StatusCode)
		}
	}
	// Every asset the index names is served, with a long cache and its type.
	n := 0
	for _, part := range strings.Split(index, `"`) {
		if !strings.HasPrefix(part, "/ui/assets/") {
			continue
		}
		n++
		res, body := get(t, h, "GET", part)
		if res.StatusCode != 200 || len(body) == 0 {
			t.Errorf("GET %s = %d", part, res.StatusCode)
		}
		if !strings.Contains(res.Header.Get("Cache-Control"), "immutable") {
			t.Errorf("GET %s Cache-Control = %q", part, res.Header.Get("Cache-Control"))
		}
		want := map[bool]string{true: "text/javascript", false: "text/css"}[strings.HasSuffix(part, ".js")]
		if !strings.HasPrefix(res.Header.Get("Content-Type"), want) {
			t.Errorf("GET %s Content-Type = %q, want %s", part, res.Header.Get("Content-Type"), want)
		}
	}
	if n < 2 {
		t.Errorf("the index names %d assets, want the script and the styles: %s", n, index)
	}
	if res, _ := get(t, h, "GET", "/ui/assets/missing-abc.js"); res.StatusCode != 404 {
		t.Errorf("a missing asset = %d, want 404", res.StatusCode)
	}
	if res, _ := get(t, h, "POST", "/ui/"); res.StatusCode != 405 || res.Header.Get("Allow") == "" {
		t.Errorf("POST /ui/ = %d, want 405 with Allow", res.StatusCode)
	}
}

// No request may leave the machine: the built files name no other origin than the server.
func TestBuildLoadsNothingFromElsewhere(t *testing.T) {
	t.Parallel()
	_, index := get(t, Handler(), "GET", "/")
	for _, bad := range []string{"http://", "https://", "//cdn", "//fonts"} {
		if strings.Contains(index, bad) {
			t.Errorf("index.html names %q", bad)
		}
	}
}
