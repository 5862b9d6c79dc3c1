package ui_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/listforge"
	"github.com/trellis-go/trellis/apps/listforge/catalog"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/ui"
)

// TestBrowserListforge drives ListForge's pages in Chromium (e2e/listforge.mjs): the items,
// one created and edited field by field, research on a demo item with its eight steps going
// live and the pricing and evidence cards filled, then the specification's E2E chat test (a
// question answered with a price, streamed), a proposed change applied once, and the empty,
// error and phone-sized states, and, on a server that wants an API key, the empty list and a chat
// over a WebSocket signed with ?token=. It then checks each screenshot.
func TestBrowserListforge(t *testing.T) {
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
	// The offline marketplace answers each API call after a pause, so that a research job
	// takes a few seconds and its steps can be seen going by one after another.
	market := catalog.NewServer(catalog.Generate(time.Now()))
	market.Delay = 300 * time.Millisecond
	s, err := server.New(server.Config{Dev: true, DataDir: t.TempDir(), UI: ui.Handler(), Logger: slog.New(slog.DiscardHandler),
		Apps: []server.App{listforge.AppWith(listforge.Options{Offline: market})}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		hs.Close()
		s.Close()
	})
	// A server that wants an API key, whose organisation starts with no items.
	const key = "lf-e2e-key-0123456789abcdef"
	s2, err := server.New(server.Config{DataDir: t.TempDir(), UI: ui.Handler(), Logger: slog.New(slog.DiscardHandler),
		Auth: server.AuthConfig{APIKeys: map[string]server.Principal{key: {User: "ana", Tenant: "e2e", Permissions: []string{"*"}}}},
		Apps: []server.App{listforge.AppWith(listforge.Options{NoDemo: true})}})
	if err != nil {
		t.Fatal(err)
	}
	hs2 := httptest.NewServer(s2.Handler())
	t.Cleanup(func() {
		hs2.Close()
		s2.Close()
	})

	shots := os.Getenv("TRELLIS_UI_SHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("e2e", "listforge.mjs"), hs.URL, shots, hs2.URL)
	cmd.Env = append(os.Environ(), "TRELLIS_E2E_API_KEY="+key, "TRELLIS_CHROMIUM="+chromium())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	t.Logf("e2e/listforge.mjs:\n%s", out.String())
	if err != nil {
		t.Fatalf("the browser flows failed: %v", err)
	}
	for _, name := range []string{"lf-01-items", "lf-02-details", "lf-03-research-live", "lf-04-research-done", "lf-05-chat-answer",
		"lf-06-chat-applied", "lf-07-changes", "lf-08-not-found", "lf-09-phone", "lf-10-research-dark", "lf-11-not-ready", "lf-12-empty"} {
		checkScreenshot(t, filepath.Join(shots, name+".png"))
	}
}
