package vesper

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/trellis-go/trellis/apps/vesper/warehousetest"
	"github.com/trellis-go/trellis/server"
)

// TestServedWebSocket runs the server the way `trellis serve --dev` does, with the vesper
// app, and asks a question over the app's WebSocket route under /apps/vesper/.
func TestServedWebSocket(t *testing.T) {
	o, _ := askServed(t, serveDev(t, server.Config{}), "Show me the health status of Nazareth Solar")
	if !strings.Contains(o.Content, "Nazareth Solar") || !strings.Contains(o.Content, "off track") {
		t.Fatalf("answer: %s", o.Content)
	}
}

// serveDev serves the vesper app the way `trellis serve --dev` does, on a data directory
// holding the loaded warehouse, with cfg's other fields, until the test ends.
func serveDev(t *testing.T, cfg server.Config) *httptest.Server {
	t.Helper()
	cfg.Apps, cfg.DataDir, cfg.Dev = []server.App{App()}, seeded(t), true
	s, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		hs.Close()
		s.Close()
	})
	return hs
}

// askServed asks one question over the served app's chat WebSocket with the dev token and
// returns the chat.complete frame and the tokens streamed before it; an error frame fails the
// test.
func askServed(t *testing.T, hs *httptest.Server, question string) (chatOut, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http")+"/apps/vesper"+chatPath+"?token=dev", nil)
	if err != nil {
		t.Fatalf("the server does not serve /apps/vesper%s: %v", chatPath, err)
	}
	defer c.CloseNow()
	in, _ := json.Marshal(chatIn{Type: "chat.message", Content: question})
	_, streamed, last := exchange(t, c, string(in))
	if last.Type == "error" {
		t.Fatalf("error frame: %+v", last)
	}
	return last, streamed
}

// seeded is a data directory holding the loaded warehouse, so the app does not load it again.
func seeded(t *testing.T) string {
	dir := t.TempDir()
	warehousetest.SeedDataDir(t, dir)
	return dir
}
