// Package ui serves the trellis web UI: the application shell and the Studio pages, a
// single-page application built with Vite from the TypeScript sources in this directory and
// embedded from dist/, so that the binary serves it on a machine without Node.
//
// Handler is what cmd/trellis passes to the server (server.Config.UI), which mounts it at / and
// under /ui/. Files under /ui/ are served from dist/ (hashed assets with a year's cache); any
// other path under /ui/ (a client route such as /ui/threads/ID) gets index.html, so that a
// reload or a shared link opens the right page. See docs/ui.md.
package ui

import (
	"bytes"
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed all:dist
var dist embed.FS

// csp allows only the server itself: scripts, styles, fonts and API calls all come from the
// origin that served the page, so no request leaves the machine.
const csp = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; font-src 'self' data:; object-src 'none'; base-uri 'self'; frame-ancestors 'self'"

// Handler serves the embedded UI.
func Handler() http.Handler {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic("ui: the embedded build has no dist directory: " + err.Error())
	}
	index, err := fs.ReadFile(sub, "index.html")
	if err != nil {
		// A checkout whose dist was never built: answer with a page that says how to build it.
		index = []byte("<!doctype html><title>trellis</title><p>The web UI was not built: run <code>npm ci &amp;&amp; npm run build</code> in ui/.</p>")
	}
	return &handler{files: sub, index: index}
}

type handler struct {
	files fs.FS
	index []byte
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the web UI answers GET and HEAD only", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Security-Policy", csp)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	p := r.URL.Path
	if p == "/" || p == "/ui" || p == "/ui/" || !strings.HasPrefix(p, "/ui/") {
		h.serveIndex(w, r)
		return
	}
	name := strings.TrimPrefix(path.Clean(p), "/ui/")
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

func (h *handler) serveIndex(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(h.index))
}
