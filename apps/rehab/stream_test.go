package rehab_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/server"
)

// TestChatStreamOnTheKit: the chat's SSE stream is admitted by the appstream kit. A foreign
// Origin is refused with 403; the tenant's request rate counts the chat requests (a burst of 3:
// past it a request is refused with 429 and Retry-After); a bad body is still answered 400 naming the
// field, before the stream; the events keep their shape (checked by chat()).
func TestChatStreamOnTheKit(t *testing.T) {
	t.Parallel()
	hs := serve(t, server.Config{Dev: true, RateLimit: 0.01, RateBurst: 3})
	req, _ := http.NewRequest("POST", hs.URL+"/apps/rehab/api/v1/chat", strings.NewReader(`{"message":"Olá"}`))
	req.Header.Set("Origin", "https://evil.test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign origin: %d, want 403", resp.StatusCode)
	}
	if code, body, _ := chat(t, hs.URL, "", `{"message":""}`); code != http.StatusBadRequest || !strings.Contains(body, `"detail":"rehab: field \"message\"`) {
		t.Fatalf("empty message: %d %s", code, body)
	}
	code, _, evs := chat(t, hs.URL, "", `{"message":"Olá"}`)
	if code != 200 || len(evs) < 2 || evs[0].Type != "thinking" || evs[0].ID != "1" || answerOf(evs) == "" {
		t.Fatalf("chat: %d %+v", code, evs)
	}
	for _, e := range evs {
		if e.Type == "error" {
			t.Fatalf("error event: %+v", e)
		}
	}
	resp = send(t, "POST", hs.URL+"/apps/rehab/api/v1/chat", "", `{"message":"Olá"}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("past the burst: %d, want 429 with Retry-After", resp.StatusCode)
	}
}

// Two profile sections updated in one step (the facts of one message) are two action events on
// the stream, not only the last.
func TestChatStreamsEveryAction(t *testing.T) {
	t.Parallel()
	hs := serve(t, server.Config{Dev: true})
	_, _, evs := chat(t, hs.URL, "", `{"message":"afinal é para investimento, nao vou morar la"}`)
	var actions []string
	for _, e := range evs {
		if e.Type == "action" {
			actions = append(actions, e.Summary)
		}
	}
	if len(actions) != 2 {
		t.Fatalf("actions %q, want the fiscal and the goals updates", actions)
	}
}
