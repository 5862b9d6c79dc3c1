// Package ui serves the trellis web UI: the application shell and the Studio pages, a
// single-page application built with Vite from the TypeScript sources in this directory and
// embedded from dist/, so that the binary serves it on a machine without Node.
//
// Handler is what cmd/trellis passes to the server (server.Config.UI), which mounts it at / and
// under /ui/. Files under /ui/ are served from dist/ (hashed assets with a year's cache); any
// other path under /ui/ (a client route such as /ui/threads/ID) gets index.html, so that a
// reload or a shared link opens the right page. See docs/ui.md.
//
// The one setting is the map's tiles ([Options], [New], [Configurable]): the pages read it from
// GET /ui/config.json, and the Content-Security-Policy allows the tile server's origin for images
// only when it is set. With none, maps show their markers on the offline base map the build
// ships (land, borders, US state and county lines, under /ui/assets/) and nothing leaves the
// machine.
package ui

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

//go:embed all:dist
var dist embed.FS

// csp allows only the server itself: scripts, styles, fonts and API calls all come from the
// origin that served the page, so no request leaves the machine. %s is where images may come
// from besides: nothing more, or the map tiles' origin when they are configured.
const csp = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:%s; connect-src 'self'; font-src 'self' data:; object-src 'none'; base-uri 'self'; frame-ancestors 'self'"

// Options configure the UI. A nil *Options and the zero value serve no map tiles.
type Options struct {
	// MapTiles is the URL template of the map pages' tiles, in Leaflet's form:
	// https://tile.openstreetmap.org/{z}/{x}/{y}.png ({z}, {x} and {y} required; {s} for a
	// subdomain, as the host's first label only; {r} for "@2x" on high-density screens). Empty
	// means no tiles: the maps show their markers on a blank background.
	MapTiles string
	// MapAttribution is the text credited in the map's corner (the tile provider's terms
	// usually ask for one); empty with OpenStreetMap's tiles credits its contributors.
	MapAttribution string
}

// Config is what GET /ui/config.json answers: the settings the pages read at run time.
type Config struct {
	MapTiles       string `json:"map_tiles"`
	MapAttribution string `json:"map_attribution"`
}

// Handler serves the embedded UI with no map tiles.
func Handler() http.Handler {
	h, err := New(nil)
	if err != nil {
		panic(err) // no options, nothing to refuse
	}
	return h
}

// New serves the embedded UI with the options, or says which option is wrong and how.
func New(opts *Options) (*UI, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		return nil, fmt.Errorf("ui: the embedded build has no dist directory: %w", err)
	}
	index, err := fs.ReadFile(sub, "index.html")
	if err != nil {
		// A checkout whose dist was never built: answer with a page that says how to build it.
		index = []byte("<!doctype html><title>trellis</title><p>The web UI was not built: run <code>npm ci &amp;&amp; npm run build</code> in ui/.</p>")
	}
	h := &UI{files: sub, index: index, csp: fmt.Sprintf(csp, "")}
	if o.MapTiles != "" {
		origin, err := TileOrigin(o.MapTiles)
		if err != nil {
			return nil, err
		}
		h.csp = fmt.Sprintf(csp, " "+origin)
		if o.MapAttribution == "" && strings.Contains(origin, "openstreetmap.org") {
			o.MapAttribution = "© OpenStreetMap contributors"
		}
	}
	h.config, _ = json.Marshal(Config(o))
	return h, nil
}

// Configurable is what a UI handler offers to take the map setting after it was made: the
// trellis command's --map-tiles and --map-attribution flags go through it.
type Configurable interface {
	WithMap(tiles, attribution string) (http.Handler, error)
}

// WithMap is the same UI with map tiles (see [Options]).
func (h *UI) WithMap(tiles, attribution string) (http.Handler, error) {
	return New(&Options{MapTiles: tiles, MapAttribution: attribution})
}

// TileOrigin checks a tile URL template and gives the origin the CSP must allow for it, such as
// https://tile.openstreetmap.org, or https://*.tile.example.com for a {s} subdomain.
func TileOrigin(tmpl string) (string, error) {
	bad := func(why string) error {
		return fmt.Errorf("map tiles %q: %s; give a template such as https://tile.openstreetmap.org/{z}/{x}/{y}.png, or nothing for no tiles", tmpl, why)
	}
	for _, p := range []string{"{z}", "{x}", "{y}"} {
		if !strings.Contains(tmpl, p) {
			return "", bad("it has no " + p)
		}
	}
	scheme, rest, ok := strings.Cut(tmpl, "://")
	if !ok || (scheme != "https" && scheme != "http") {
		return "", bad("it is not an http:// or https:// URL")
	}
	host, _, _ := strings.Cut(rest, "/")
	wild := false
	if h, ok := strings.CutPrefix(host, "{s}."); ok {
		host, wild = h, true
	}
	if host == "" || strings.ContainsAny(host, "{}@ ;,'\"") {
		return "", bad("its host must be a plain name (a {s} subdomain only as its first label)")
	}
	u, err := url.Parse(scheme + "://" + host + "/")
	if err != nil || u.Host != host || u.Hostname() == "" {
		return "", bad("its host is not a valid host name")
	}
	if wild {
		host = "*." + host
	}
	return scheme + "://" + host, nil
}

// UI is the handler of the embedded UI.
type UI struct {
	files  fs.FS
	index  []byte
	csp    string
	config []byte
}

func (h *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the web UI answers GET and HEAD only", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Security-Policy", h.csp)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	p := r.URL.Path
	if p == "/" || p == "/ui" || p == "/ui/" || !strings.HasPrefix(p, "/ui/") {
		h.serveIndex(w, r)
		return
	}
	name := strings.TrimPrefix(path.Clean(p), "/ui/")
	if name == "config.json" {
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("Content-Type", "application/json")
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(h.config))
		return
	}
	if f, err := fs.Stat(h.files, name); err == nil && !f.IsDir() && name != "index.html" {
		data, err := fs.ReadFile(h.files, name)
		if err != nil {
			http.Error(w, "ui: "+err.Error(), http.StatusInternalServerError)
			return
		}
		if strings.HasPrefix(name, "assets/") {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache")
		}
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(data))
		return
	}
	// A file the build does not have: a missing asset is a 404, anything else a client route.
	if strings.HasPrefix(name, "assets/") || path.Ext(name) != "" {
		http.NotFound(w, r)
		return
	}
	h.serveIndex(w, r)
}

func (h *UI) serveIndex(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(h.index))
}
