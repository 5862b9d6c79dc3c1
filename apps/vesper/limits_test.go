package vesper

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/trellis-go/trellis/server"
)

// TestChatWebSocketLimits: the chat WebSocket goes through the tenant's limits and the Origin
// check of the appstream kit. 20 connection attempts of one tenant over a burst of 4 (issue 12:
// all 20 were accepted) give 4 connections and 16 refusals with 429 and Retry-After; a foreign
// Origin is refused with 403 before it costs the tenant anything; past the open-stream limit a
// connection is refused with 429 until one closes.
func TestChatWebSocketLimits(t *testing.T) {
	url := func(hs *httptest.Server) string {
		return "ws" + strings.TrimPrefix(hs.URL, "http") + "/apps/vesper" + chatPath + "?token=dev"
	}
	dial := func(hs *httptest.Server, hdr http.Header) (*websocket.Conn, *http.Response) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, resp, err := websocket.Dial(ctx, url(hs), &websocket.DialOptions{HTTPHeader: hdr})
		if err != nil {
			if resp == nil {
				t.Fatalf("dial: %v", err)
			}
			return nil, resp
		}
		t.Cleanup(func() { c.CloseNow() })
		return c, resp
	}
	dir := seeded(t)
	serve := func(cfg server.Config) *httptest.Server {
		cfg.Apps, cfg.DataDir, cfg.Dev = []server.App{App()}, dir, true
		s, err := server.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(s.Handler())
		t.Cleanup(func() { hs.CloseClientConnections(); hs.Close(); s.Close() })
		return hs
	}

	hs := serve(server.Config{RateLimit: 0.01, RateBurst: 4})
	if _, resp := dial(hs, http.Header{"Origin": {"https://evil.test"}}); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign origin: %d, want 403", resp.StatusCode)
	}
	accepted, refused := 0, 0
	for range 20 {
		c, resp := dial(hs, nil)
		switch {
		case c != nil:
			accepted++
		case resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") != "":
			refused++
		default:
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	if accepted != 4 || refused != 16 {
		t.Fatalf("accepted %d, refused %d; want 4 and 16", accepted, refused)
	}

	hs = serve(server.Config{MaxStreamsPerTenant: 2})
	first, _ := dial(hs, nil)
	if c, resp := dial(hs, nil); c == nil {
		t.Fatalf("second stream: %d", resp.StatusCode)
	}
	if _, resp := dial(hs, nil); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("third stream: %d, want 429", resp.StatusCode)
	}
	first.Close(websocket.StatusNormalClosure, "")
	// The slot is freed once the server has seen the close; wait for it by retrying.
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, resp := dial(hs, nil)
		if c != nil {
			break
		}
		if resp.StatusCode != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("after one closed: %d", resp.StatusCode)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
