package ui_test

import (
	"testing"

	"github.com/trellis-go/trellis/apps/rehab"
)

// TestBrowserRehab drives the Rehabify page in Chromium (e2e/rehab.mjs): a Portuguese message
// streams its answer token by token while the portfolio and the action log update, a todo, a
// comparison and the PDF report, a removal that waits for the consent the page gives, a reload.
func TestBrowserRehab(t *testing.T) {
	base := serveApps(t, rehab.App())
	driveChromium(t, "rehab.mjs", base, "rehab-01-start", "rehab-02-analysis", "rehab-03-todo-compare", "rehab-04-consent", "rehab-05-removed", "rehab-06-phone")
}
