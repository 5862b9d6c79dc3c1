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

	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/ui"
)

// serveApps starts a dev-mode trellis server with apps and the UI on a loopback port.
func serveApps(t *testing.T, apps ...server.App) string {
	t.Helper()
	s, err := server.New(server.Config{Dev: true, Apps: apps, DataDir: t.TempDir(), UI: ui.Handler(), Logger: slog.New(slog.DiscardHandler)})
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

// driveChromium runs the browser flow e2e/<script> against base, then checks that each named
// screenshot it saved shows a rendered page. It skips, saying which, when node,
// ui/node_modules or Chromium is missing.
func driveChromium(t *testing.T, script, base string, screenshots ...string) {
	t.Helper()
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
	shots := os.Getenv("TRELLIS_UI_SHOTS") // keep the screenshots somewhere to look at them
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("e2e", script), base, shots)
	cmd.Env = append(os.Environ(), "TRELLIS_CHROMIUM="+chromium())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	t.Logf("e2e/%s:\n%s", script, out.String())
	if err != nil {
		t.Fatalf("the browser flows of %s failed: %v", script, err)
	}
	for _, name := range screenshots {
		checkScreenshot(t, filepath.Join(shots, name+".png"))
	}
}
