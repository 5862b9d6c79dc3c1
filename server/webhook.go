package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

func checkWebhook(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return badRequest("give an absolute http or https URL", "field \"webhook\" is not a URL: %q", raw)
	}
	return nil
}

// webhook POSTs the finished run to its webhook URL, in the background, once.
func (r *runner) webhook(run *Run, status string, started time.Time, values json.RawMessage, runErr error, interrupted bool) {
	payload := map[string]any{
		"run_id": run.RunID, "thread_id": run.ThreadID, "assistant_id": run.AssistantID,
		"created_at": run.CreatedAt, "updated_at": time.Now().UTC(), "metadata": run.Metadata,
		"multitask_strategy": run.MultitaskStrategy, "kwargs": run.Kwargs,
		"status": status, "run_started_at": started.UTC().Format(time.RFC3339Nano),
		"run_ended_at": time.Now().UTC().Format(time.RFC3339Nano), "webhook_sent_at": time.Now().UTC().Format(time.RFC3339Nano),
		"values": values, "interrupted": interrupted,
	}
	if runErr != nil && status == RunError {
		payload["error"] = runErr.Error()
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return
	}
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), r.cfg.WebhookTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, run.Kwargs.Webhook, bytes.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := r.http.Do(req)
		if err != nil {
			r.log.Warn("webhook failed", "run_id", run.RunID, "thread_id", run.ThreadID, "err", err)
			return
		}
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			r.log.Warn("webhook answered with an error", "run_id", run.RunID, "thread_id", run.ThreadID, "status", resp.StatusCode)
		}
	}()
}
