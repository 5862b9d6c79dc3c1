package ui_test

import (
	"testing"

	"github.com/trellis-go/trellis/apps/analyst"
)

// TestBrowserAnalyst drives the analyst's inbox in Chromium (e2e/analyst.mjs), offline: a
// session from the greeting through the plan gate (feedback, then accept), the discovery gate
// and the final gate to a saved report shown as Markdown with its ID.
func TestBrowserAnalyst(t *testing.T) {
	base := serveApps(t, analyst.App())
	driveChromium(t, "analyst.mjs", base, "analyst-01-greeting", "analyst-02-plan", "analyst-03-discovery", "analyst-04-final", "analyst-05-saved", "analyst-06-phone")
}
