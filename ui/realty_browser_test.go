package ui_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/realty"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/ui"
)

// serveRealty starts a dev server with the realty app (offline: no key) and the UI.
func serveRealty(t *testing.T, h http.Handler) string {
	t.Helper()
	s, err := server.New(server.Config{Dev: true, Apps: []server.App{realty.App()}, DataDir: t.TempDir(), UI: h,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		hs.Close()
		s.Close()
	})
	return hs.URL
}

// tileServer answers every tile with a 256x256 PNG in two colours, and counts the requests.
func tileServer(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 256, 256))
	for y := range 256 {
		for x := range 256 {
			c := color.RGBA{0xcd, 0xe6, 0xc8, 0xff}
			if x%64 < 2 || y%64 < 2 {
				c = color.RGBA{0x9a, 0xb0, 0xc0, 0xff}
			}
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(b.Bytes())
	}))
	t.Cleanup(hs.Close)
	return hs.URL, &n
}

// TestBrowserRealty drives the realty app's page in Chromium through e2e/realty.mjs (a search
// streamed into cards, grid and list kept across a reload, details and the map's markers with no
// tiles, a hint, sessions switched and deleted, a phone-sized screen, then tiles from a tile
// server when they are configured), then checks each screenshot it saved.
func TestBrowserRealty(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the browser tests need it (apt-get install nodejs)")
	}
	if _, err := os.Stat("node_modules/playwright-core"); err != nil {
		t.Skip("ui/node_modules is missing: run npm ci in ui/ (.ci/run does)")
	}
	if _, err := os.Stat(chromium()); err != nil {
		t.Skipf("%s is missing: apt-get install chromium (.ci/run does)", chromium())
	}
	plain := serveRealty(t, ui.Handler())
	tiles, tileHits := tileServer(t)
	withTiles, err := ui.New(ui.Options{MapTiles: tiles + "/{z}/{x}/{y}.png", MapAttribution: "test tiles"})
	if err != nil {
		t.Fatal(err)
	}
	tiled := serveRealty(t, withTiles)

	shots := os.Getenv("TRELLIS_UI_SHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("e2e", "realty.mjs"), plain, shots, tiled, tiles)
	cmd.Env = append(os.Environ(), "TRELLIS_CHROMIUM="+chromium())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	t.Logf("e2e/realty.mjs:\n%s", out.String())
	if err != nil {
		t.Fatalf("the realty page's browser flows failed: %v", err)
	}
	if tileHits.Load() == 0 {
		t.Error("the tile server got no request with tiles configured")
	}
	for _, name := range []string{"r01-search-grid", "r02-list-reloaded", "r03-detail-map", "r03-detail-map-dark", "r04-hint", "r05-sessions", "r06-phone", "r07-tiles"} {
		checkScreenshot(t, filepath.Join(shots, name+".png"))
	}
}
