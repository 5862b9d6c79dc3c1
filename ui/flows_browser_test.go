package ui_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/servertest"
	"github.com/trellis-go/trellis/ui"
)

// serveApps starts a dev-mode trellis server with apps and the UI on a loopback port.
func serveApps(t *testing.T, apps ...server.App) string {
	t.Helper()
	return serveConfig(t, server.Config{Dev: true, Apps: apps})
}

// serveConfig starts a trellis server with cfg on a loopback port (servertest.Start), with the UI
// (ui.Handler unless cfg.UI is set).
func serveConfig(t *testing.T, cfg server.Config) string {
	t.Helper()
	if cfg.UI == nil {
		cfg.UI = ui.Handler()
	}
	return servertest.Start(t, cfg).URL
}

// flow is one run of a browser flow script.
type flow struct {
	script      string   // in e2e/
	base        string   // the server under test
	extra       []string // arguments after the screenshot directory
	env         []string // more environment variables
	timeout     time.Duration
	screenshots []string // names the script saves, each checked to show a rendered page
}

// driveChromium runs the browser flow e2e/<script> against base, then checks that each named
// screenshot it saved shows a rendered page.
func driveChromium(t *testing.T, script, base string, screenshots ...string) {
	t.Helper()
	drive(t, flow{script: script, base: base, screenshots: screenshots})
}

// drive runs f with node (`node e2e/<script> <base> <shot dir> <extra...>`). It skips, saying
// which, when node, ui/node_modules or Chromium is missing.
func drive(t *testing.T, f flow) {
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
	if f.timeout == 0 {
		f.timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join("e2e", f.script), f.base, shots}, f.extra...)...)
	cmd.Env = append(append(os.Environ(), "TRELLIS_CHROMIUM="+chromium()), f.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	t.Logf("e2e/%s:\n%s", f.script, out.String())
	if err != nil {
		t.Fatalf("the browser flows of %s failed: %v", f.script, err)
	}
	for _, name := range f.screenshots {
		checkScreenshot(t, filepath.Join(shots, name+".png"))
	}
}
