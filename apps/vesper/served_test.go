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
	s, err := server.New(server.Config{Apps: []server.App{App()}, DataDir: seeded(t), Dev: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/apps/vesper"+chatPath+"?token=dev", nil)
	if err != nil {
		t.Fatalf("the server does not serve /apps/vesper%s: %v", chatPath, err)
	}
	defer c.CloseNow()
	in, _ := json.Marshal(chatIn{Type: "chat.message", Content: "Show me the health status of Nazareth Solar"})
	if err := c.Write(ctx, websocket.MessageText, in); err != nil {
		t.Fatal(err)
	}
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var o chatOut
		if err := json.Unmarshal(data, &o); err != nil {
			t.Fatal(err)
		}
		if o.Type == "error" {
			t.Fatalf("error frame: %s", data)
		}
		if o.Type == "chat.complete" {
			if !strings.Contains(o.Content, "Nazareth Solar") || !strings.Contains(o.Content, "off track") {
				t.Fatalf("answer: %s", o.Content)
			}
			return
		}
	}
}

// seeded is a data directory holding the loaded warehouse, so the app does not load it again.
func seeded(t *testing.T) string {
	dir := t.TempDir()
	warehousetest.SeedDataDir(t, dir)
	return dir
}
