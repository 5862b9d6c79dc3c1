package ui

import (
	"io"
	"io/fs"
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

func TestConfigAndPolicyFollowTheMapSetting(t *testing.T) {
	t.Parallel()
	// No tiles: config.json says so and images may come only from the server.
	res, body := get(t, Handler(), "GET", "/ui/config.json")
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /ui/config.json = %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if body != `{"map_tiles":"","map_attribution":""}` {
		t.Errorf("config.json = %s", body)
	}
	if c := res.Header.Get("Content-Security-Policy"); !strings.Contains(c, "img-src 'self' data: blob:;") {
		t.Errorf("CSP without tiles = %q", c)
	}

	h, err := New(&Options{MapTiles: "https://{s}.tile.example.org/{z}/{x}/{y}{r}.png?key=abc"})
	if err != nil {
		t.Fatal(err)
	}
	res, body = get(t, h, "GET", "/ui/config.json")
	if !strings.Contains(body, `"map_tiles":"https://{s}.tile.example.org/{z}/{x}/{y}{r}.png?key=abc"`) {
		t.Errorf("config.json = %s", body)
	}
	if c := res.Header.Get("Content-Security-Policy"); !strings.Contains(c, "img-src 'self' data: blob: https://*.tile.example.org;") || strings.Contains(c, "connect-src 'self' https") {
		t.Errorf("CSP with tiles = %q, want the tile origin for images only", c)
	}
	// The index and assets get the same policy.
	if res, _ := get(t, h, "GET", "/ui/"); !strings.Contains(res.Header.Get("Content-Security-Policy"), "tile.example.org") {
		t.Errorf("the index's CSP = %q", res.Header.Get("Content-Security-Policy"))
	}
	// OpenStreetMap's tiles credit its contributors unless told otherwise.
	osm, err := New(&Options{MapTiles: "https://tile.openstreetmap.org/{z}/{x}/{y}.png"})
	if err != nil {
		t.Fatal(err)
	}
	if _, body := get(t, osm, "GET", "/ui/config.json"); !strings.Contains(body, "OpenStreetMap contributors") {
		t.Errorf("config.json with OSM tiles = %s", body)
	}
}

func TestTileOrigin(t *testing.T) {
	t.Parallel()
	for tmpl, want := range map[string]string{
		"https://tile.openstreetmap.org/{z}/{x}/{y}.png":         "https://tile.openstreetmap.org",
		"http://127.0.0.1:8081/tiles/{z}/{x}/{y}.png":            "http://127.0.0.1:8081",
		"https://{s}.basemaps.example.com/light/{z}/{x}/{y}.png": "https://*.basemaps.example.com",
	} {
		if got, err := TileOrigin(tmpl); err != nil || got != want {
			t.Errorf("TileOrigin(%q) = %q, %v; want %q", tmpl, got, err, want)
		}
	}
	for tmpl, why := range map[string]string{
		"https://tile.example.org/{z}/{x}.png":      "no {y}",
		"ftp://tile.example.org/{z}/{x}/{y}.png":    "not an http",
		"tile.example.org/{z}/{x}/{y}.png":          "not an http",
		"https://tiles-{s}.example.org/{z}/{x}/{y}": "plain name",
		"https://x.org; script-src */{z}/{x}/{y}":   "plain name",
		"https:///{z}/{x}/{y}.png":                  "plain name",
		"https://user@tile.example.org/{z}/{x}/{y}": "plain name",
	} {
		_, err := TileOrigin(tmpl)
		if err == nil || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "such as https://") {
			t.Errorf("TileOrigin(%q) = %v, want an error saying %q and what to give", tmpl, err, why)
		}
		if _, err := New(&Options{MapTiles: tmpl}); err == nil {
			t.Errorf("New with tiles %q did not fail", tmpl)
		}
	}
}

// The map's offline base layer ships in the build: the world's countries and the United States'
// counties as TopoJSON files under /ui/assets/, served as JSON from the server itself.
func TestBuildShipsTheOfflineBaseMap(t *testing.T) {
	t.Parallel()
	entries, err := fs.ReadDir(dist, "dist/assets")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, e := range entries {
		for _, name := range []string{"countries-50m-", "counties-10m-"} {
			if !strings.HasPrefix(e.Name(), name) || !strings.HasSuffix(e.Name(), ".json") {
				continue
			}
			found[name] = true
			res, body := get(t, Handler(), "GET", "/ui/assets/"+e.Name())
			if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
				t.Errorf("GET %s = %d %s", e.Name(), res.StatusCode, res.Header.Get("Content-Type"))
			}
			if !strings.HasPrefix(body, `{"type":"Topology"`) {
				t.Errorf("%s is not TopoJSON: %.40s", e.Name(), body)
			}
		}
	}
	if len(found) != 2 {
		t.Errorf("the build's base map files: found %v, want countries-50m and counties-10m", found)
	}
}
