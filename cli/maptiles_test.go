package cli

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/example"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/ui"
)

// mapUI is a UI handler that records the map setting it was given.
type mapUI struct {
	http.Handler
	tiles, attribution string
}

func (m *mapUI) WithMap(tiles, attribution string) (http.Handler, error) {
	m.tiles, m.attribution = tiles, attribution
	return m, nil
}

func TestServeMapTiles(t *testing.T) {
	// A bad template is a usage error naming the flag and saying what to give.
	p := Program{Apps: []server.App{example.App()}, UI: ui.Handler()}
	var out, errb bytes.Buffer
	err := p.Run(context.Background(), []string{"serve", "--dev", "--apps", "example", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--map-tiles", "https://tiles.example.org/{z}/{x}.png"}, nil, &out, &errb)
	if ExitCode(err) != 2 || !strings.Contains(err.Error(), "--map-tiles") || !strings.Contains(err.Error(), "no {y}") {
		t.Fatalf("a template without {y}: %v", err)
	}
	// A program whose UI has no maps says so.
	p.UI = http.NotFoundHandler()
	err = p.Run(context.Background(), []string{"serve", "--dev", "--apps", "example", "--data-dir", t.TempDir(), "--map-tiles", "https://tiles.example.org/{z}/{x}/{y}.png"}, nil, &out, &errb)
	if ExitCode(err) != 2 || !strings.Contains(err.Error(), "no web UI with maps") {
		t.Fatalf("a UI without maps: %v", err)
	}
	// The environment variables reach the UI.
	m := &mapUI{Handler: http.NotFoundHandler()}
	p.UI = m
	t.Setenv("TRELLIS_MAP_TILES", "https://tiles.example.org/{z}/{x}/{y}.png")
	t.Setenv("TRELLIS_MAP_ATTRIBUTION", "© Example")
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // serve starts and stops at once
	if err := p.Run(ctx, []string{"serve", "--dev", "--apps", "example", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir()}, nil, &out, &errb); err != nil {
		t.Fatalf("serve: %v\n%s", err, errb.String())
	}
	if m.tiles != "https://tiles.example.org/{z}/{x}/{y}.png" || m.attribution != "© Example" {
		t.Errorf("the UI got tiles %q and attribution %q", m.tiles, m.attribution)
	}
}
