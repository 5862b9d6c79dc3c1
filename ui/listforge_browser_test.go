package ui_test

import (
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/listforge"
	"github.com/trellis-go/trellis/apps/listforge/catalog"
	"github.com/trellis-go/trellis/server"
)

// TestBrowserListforge drives ListForge's pages in Chromium (e2e/listforge.mjs): the items,
// one created and edited field by field, research on a demo item with its eight steps going
// live and the pricing and evidence cards filled, then the specification's E2E chat test (a
// question answered with a price, streamed), a proposed change applied once, and the empty,
// error and phone-sized states, and, on a server that wants an API key, the empty list and a chat
// over a WebSocket signed with ?token=. It then checks each screenshot.
func TestBrowserListforge(t *testing.T) {
	// The offline marketplace answers each API call after a pause, so that a research job
	// takes a few seconds and its steps can be seen going by one after another.
	market := catalog.NewServer(catalog.Generate(time.Now()))
	market.Delay = 300 * time.Millisecond
	base := serveConfig(t, server.Config{Dev: true, Apps: []server.App{listforge.New(listforge.Options{Offline: market})}})
	// A server that wants an API key, whose organisation starts with no items.
	const key = "lf-e2e-key-0123456789abcdef"
	authBase := serveConfig(t, server.Config{Apps: []server.App{listforge.New(listforge.Options{NoDemo: true})},
		Auth: server.AuthConfig{APIKeys: map[string]server.Principal{key: {User: "ana", Tenant: "e2e", Permissions: []string{"*"}}}}})
	drive(t, flow{script: "listforge.mjs", base: base, extra: []string{authBase}, env: []string{"TRELLIS_E2E_API_KEY=" + key}, timeout: 6 * time.Minute,
		screenshots: []string{"lf-01-items", "lf-02-details", "lf-03-research-live", "lf-04-research-done", "lf-05-chat-answer",
			"lf-06-chat-applied", "lf-07-changes", "lf-08-not-found", "lf-09-phone", "lf-10-research-dark", "lf-11-not-ready", "lf-12-empty"}})
}
