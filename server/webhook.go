package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"time"

	"github.com/trellis-go/trellis/internal/netguard"
	"github.com/trellis-go/trellis/server/internal/engine"
)

func checkWebhook(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return badRequest("give an absolute http or https URL", "field \"webhook\" is not a URL: %q", raw)
	}
	return nil
}

// webhooks sends finished runs to their webhooks, in the background; shutdown waits for them.
type webhooks struct {
	http    *http.Client
	timeout time.Duration
	log     *slog.Logger
	bg      sync.WaitGroup
}

// loopbackPrefixes are the loopback ranges a dev server's webhooks may reach.
var loopbackPrefixes = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// newWebhooks makes the sender: allowPrivate lets webhooks reach every address, allowLoopback
// (dev mode) loopback addresses besides the public ones.
func newWebhooks(timeout time.Duration, allowPrivate, allowLoopback bool, log *slog.Logger) *webhooks {
	pol := netguard.Policy{AllowPrivate: allowPrivate}
	if allowLoopback {
		pol.Allow = loopbackPrefixes
	}
	return &webhooks{http: &http.Client{Timeout: timeout, Transport: pol.Transport()}, timeout: timeout, log: log}
}

// send POSTs the finished run to its webhook URL, in the background, once.
func (h *webhooks) send(run *Run, o engine.Outcome) {
	now := time.Now().UTC()
	payload := map[string]any{
		"run_id": run.RunID, "thread_id": run.ThreadID, "assistant_id": run.AssistantID,
		"created_at": run.CreatedAt, "updated_at": now, "metadata": run.Metadata,
		"multitask_strategy": run.MultitaskStrategy, "kwargs": run.Kwargs,
		"status": o.Status, "run_started_at": o.Started.UTC().Format(time.RFC3339Nano),
		"run_ended_at": now.Format(time.RFC3339Nano), "webhook_sent_at": now.Format(time.RFC3339Nano),
		"values": o.Values, "interrupted": o.Interrupted,
	}
	if o.Err != nil && o.Status == RunError {
		payload["error"] = o.Err.Error()
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return
	}
	h.post(run.Kwargs.Webhook, body, nil, "run_id", run.RunID, "thread_id", run.ThreadID)
}

// post POSTs body (JSON) to url in the background, once, with the headers header sets; logArgs
// name what is sent in the log of a failure.
func (h *webhooks) post(url string, body []byte, header func(http.Header), logArgs ...any) {
	h.bg.Add(1)
	go func() {
		defer h.bg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", "application/json")
		if header != nil {
			header(req.Header)
		}
		resp, err := h.http.Do(req)
		if err != nil {
			h.log.Warn("webhook failed", append(logArgs, "err", err)...)
			return
		}
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			h.log.Warn("webhook answered with an error", append(logArgs, "status", resp.StatusCode)...)
		}
	}()
}

// wait waits for the webhooks being sent, up to limit.
func (h *webhooks) wait(limit time.Duration) {
	done := make(chan struct{})
	go func() { h.bg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
	}
}
