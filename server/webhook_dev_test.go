package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestWebhookLoopbackInDev: a dev server (which listens on loopback only) sends run webhooks to
// loopback addresses, as LangGraph's dev server does (a server with authentication refuses
// them unless WebhookAllowPrivate is set: TestWebhookToLoopbackIsRefused).
func TestWebhookLoopbackInDev(t *testing.T) {
	t.Parallel()
	got := make(chan map[string]any, 1)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		got <- m
	}))
	defer hook.Close()

	dev := setup(t) // dev mode: no Auth
	var run Run
	dev.mustDo("POST", "/runs", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "w"}, "webhook": hook.URL + "/done"}, &run, 200)
	select {
	case m := <-got:
		if m["run_id"] != run.RunID {
			t.Fatalf("webhook payload: %v", m)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the dev server sent no webhook to a loopback address")
	}

}
