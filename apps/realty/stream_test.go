package realty_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/realty"
	"github.com/trellis-go/trellis/server"
)

// TestChatStreamOnTheKit: POST /chat/stream is admitted by the appstream kit: a foreign Origin
// is refused with 403, a bad body is still answered 400 before the stream, the tenant's rate
// counts the requests (a burst of 3; a stream costs two, its admission and its run; past it a
// request is refused with 429 and Retry-After), and the events keep their shape (token…, done).
func TestChatStreamOnTheKit(t *testing.T) {
	t.Parallel()
	s, err := server.New(server.Config{Apps: []server.App{realty.App()}, DataDir: t.TempDir(), Dev: true,
		RateLimit: 0.01, RateBurst: 3, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() { hs.Close(); s.Close() })
	url := hs.URL + "/apps/realty/chat/stream"
	do := func(body, origin string) *http.Response {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	if r := do(`{"session_id":"kit-1","message":"hello"}`, "https://evil.test"); r.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign origin: %d, want 403", r.StatusCode)
	}
	if r := do(`{"session_id":"kit-1"}`, ""); r.StatusCode != http.StatusBadRequest {
		t.Fatalf("no message: %d, want 400", r.StatusCode)
	}
	evs := events(t, url, `{"session_id":"kit-1","message":"3 bedroom homes in Austin"}`)
	if len(evs) == 0 || evs[len(evs)-1].Type != "done" || evs[len(evs)-1].SessionID != "kit-1" {
		t.Fatalf("events: %+v", evs)
	}
	if r := do(`{"session_id":"kit-1","message":"hello"}`, ""); r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Fatalf("past the burst: %d, want 429 with Retry-After", r.StatusCode)
	}
}
