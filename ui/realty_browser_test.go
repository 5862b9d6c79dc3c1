package ui_test

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/realty"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/ui"
)

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
	plain := serveConfig(t, server.Config{Dev: true, Apps: []server.App{realty.App()}})
	tiles, tileHits := tileServer(t)
	withTiles, err := ui.New(&ui.Options{MapTiles: tiles + "/{z}/{x}/{y}.png", MapAttribution: "test tiles"})
	if err != nil {
		t.Fatal(err)
	}
	tiled := serveConfig(t, server.Config{Dev: true, Apps: []server.App{realty.App()}, UI: withTiles})
	drive(t, flow{script: "realty.mjs", base: plain, extra: []string{tiled, tiles}, timeout: 8 * time.Minute,
		screenshots: []string{"r01-search-grid", "r02-list-reloaded", "r03-detail-map", "r03-detail-map-dark", "r04-hint", "r05-sessions", "r06-phone", "r07-tiles"}})
	if tileHits.Load() == 0 {
		t.Error("the tile server got no request with tiles configured")
	}
}
