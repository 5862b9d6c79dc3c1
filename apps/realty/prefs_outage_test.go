package realty_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/realty"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/model/openai"
	"github.com/trellis-go/trellis/model/scripted"
	"github.com/trellis-go/trellis/server"
)

func call(id, name, args string) *model.Response {
	return &model.Response{Message: message.Assistant("", message.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}), FinishReason: model.FinishToolCalls}
}

// Saving criteria keeps exactly what the user said: values the model took from earlier results
// (a kind of home, a price, a room count the user never wrote) are not saved, and a short
// confirmation saves what the assistant suggested.
func testPreferencesFromTheUsersWords(t *testing.T, dbURL string) {
	var mu sync.Mutex
	var saveResults []string
	var prefsSeen string
	lastTool := func(req *model.Request) {
		m := req.Messages[len(req.Messages)-1]
		mu.Lock()
		saveResults = append(saveResults, m.Text())
		mu.Unlock()
	}
	m := scripted.New(
		scripted.Rule(func(*model.Request) *model.Response {
			return call("s1", "search_properties", `{"location":"Austin, TX"}`)
		}),
		scripted.Text("Here are homes in Austin: condos, townhouses and houses from $250,000."),
		// The model adds a kind of home, rooms and a minimum price from the results.
		scripted.Rule(func(*model.Request) *model.Response {
			return call("p1", "save_search_criteria", `{"location":"Austin, TX","max_price":700000,"min_price":250000,"property_type":"CONDO","bedrooms":3}`)
		}),
		scripted.Rule(func(req *model.Request) *model.Response {
			lastTool(req)
			return &model.Response{Message: message.Assistant("Saved."), FinishReason: model.FinishStop}
		}),
		scripted.Text("Shall I also save 3 bedrooms and townhouses?"),
		scripted.Rule(func(*model.Request) *model.Response {
			return call("p2", "save_search_criteria", `{"bedrooms":3,"property_type":"TOWNHOUSE","max_price":450000,"location":"Seattle, WA"}`)
		}),
		scripted.Rule(func(req *model.Request) *model.Response {
			lastTool(req)
			return &model.Response{Message: message.Assistant("Saved those too."), FinishReason: model.FinishStop}
		}),
		// A new session: the saved preferences are in its context.
		scripted.Rule(func(req *model.Request) *model.Response {
			for _, m := range req.Messages {
				if strings.HasPrefix(m.Text(), "Saved preferences") {
					mu.Lock()
					prefsSeen = m.Text()
					mu.Unlock()
				}
			}
			return &model.Response{Message: message.Assistant("Hello again."), FinishReason: model.FinishStop}
		}),
	)
	roles := model.NewRoles(m, "scripted").With(model.RoleFast, offline.New(nil), "offline")
	s, err := server.New(server.Config{Apps: []server.App{realty.New(realty.Options{TimeZone: time.UTC})}, Models: roles, DataDir: t.TempDir(), DatabaseURL: dbURL, Dev: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	defer func() { hs.Close(); s.Close() }()
	base := hs.URL + "/apps/realty"
	for _, q := range []string{"Find homes in Austin", "Save my search criteria: Austin, under $700k", "What else should I save?", "yes, save that"} {
		var r realty.ChatResponse
		if code := post(t, base+"/chat", `{"session_id": "prefs-1", "message": "`+q+`"}`, &r); code != 200 {
			t.Fatalf("%q: %d %+v", q, code, r)
		}
	}
	var r realty.ChatResponse
	if code := post(t, base+"/chat", `{"session_id": "prefs-2", "message": "hi"}`, &r); code != 200 {
		t.Fatalf("%d %+v", code, r)
	}
	want := "Saved preferences (property/preferences.md):\n[LOCATION] location: Austin, TX\n[BUDGET] max_price: 700000\n[ROOMS] bedrooms: 3\n[TYPE] property_type: TOWNHOUSE"
	if prefsSeen != want {
		t.Errorf("the later session saw\n%s\nwant\n%s", prefsSeen, want)
	}
	if len(saveResults) != 2 {
		t.Fatalf("save results %q", saveResults)
	}
	for _, dropped := range []string{"min_price 250000", "property_type CONDO", "bedrooms 3"} {
		if !strings.Contains(saveResults[0], dropped) {
			t.Errorf("the first save does not say %q was left out: %q", dropped, saveResults[0])
		}
	}
	for _, dropped := range []string{"max_price 450000", "location Seattle"} {
		if !strings.Contains(saveResults[1], dropped) {
			t.Errorf("the confirmed save does not say %q was left out: %q", dropped, saveResults[1])
		}
	}
	if m.Remaining() != 0 {
		t.Errorf("%d scripted steps left", m.Remaining())
	}
}

func TestPreferencesFromTheUsersWordsSQLite(t *testing.T) {
	t.Parallel()
	testPreferencesFromTheUsersWords(t, "")
}

func TestPreferencesFromTheUsersWordsPostgres(t *testing.T) {
	t.Parallel()
	url, _ := pgSchema(t)
	testPreferencesFromTheUsersWords(t, url)
}

// modelServer is a local Chat Completions server whose behaviour the test switches: "refuse"
// (the client's dialer reaches a closed port), "hang", "500", or "ok".
type modelServer struct {
	mode  atomic.Value
	stop  chan struct{}
	calls atomic.Int64
}

func (m *modelServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.calls.Add(1)
	switch m.mode.Load() {
	case "hang":
		select {
		case <-r.Context().Done():
		case <-m.stop:
		}
		return
	case "500":
		w.WriteHeader(500)
		fmt.Fprint(w, `{"error":{"message":"internal","type":"server_error"}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Back again.\"}}]}\n\n")
	fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func TestModelOutage(t *testing.T) {
	t.Parallel()
	ms := &modelServer{stop: make(chan struct{})}
	ms.mode.Store("ok")
	up := httptest.NewServer(ms)
	defer func() { close(ms.stop); up.Close() }()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	upAddr := strings.TrimPrefix(up.URL, "http://")
	dial := &net.Dialer{}
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		if ms.mode.Load() == "refuse" {
			return dial.DialContext(ctx, network, closed)
		}
		return dial.DialContext(ctx, network, upAddr)
	}}}
	main, err := openai.New("m", &openai.Options{APIKey: "k", BaseURL: up.URL + "/v1", MaxRetries: -1, HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	roles := model.NewRoles(main, "local").With(model.RoleFast, offline.New(nil), "offline")
	app := realty.New(realty.Options{TimeZone: time.UTC, FirstToken: 700 * time.Millisecond, ModelAttempts: 3, ModelBackoff: 20 * time.Millisecond, ModelRetryAfter: 4 * time.Second})
	s, err := server.New(server.Config{Apps: []server.App{app}, Models: roles, DataDir: t.TempDir(), Dev: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	defer func() { hs.Close(); s.Close() }()
	base := hs.URL + "/apps/realty"

	for _, c := range []struct {
		mode string
		code int
	}{{"refuse", 503}, {"hang", 503}, {"500", 502}} {
		ms.mode.Store(c.mode)
		before := ms.calls.Load()
		start := time.Now()
		resp, err := http.Post(base+"/chat", "application/json", strings.NewReader(`{"session_id": "out-1", "message": "find homes in Austin"}`))
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]string
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		took := time.Since(start)
		if resp.StatusCode != c.code || resp.Header.Get("Retry-After") != "4" || !strings.Contains(body["detail"], "model is unavailable") {
			t.Errorf("%s: POST /chat %d Retry-After %q %v, want %d with Retry-After 4", c.mode, resp.StatusCode, resp.Header.Get("Retry-After"), body, c.code)
		}
		if took > 6*time.Second {
			t.Errorf("%s: POST /chat took %s", c.mode, took)
		}
		if c.mode != "refuse" && ms.calls.Load()-before != 3 {
			t.Errorf("%s: the model got %d requests, want 3 attempts", c.mode, ms.calls.Load()-before)
		}

		start = time.Now()
		evs := events(t, base+"/chat/stream", `{"session_id": "out-1", "message": "find homes in Denver"}`)
		took = time.Since(start)
		last := evs[len(evs)-1]
		if last.Type != "error" || last.Status != c.code || last.RetryAfter != 4 || !strings.Contains(last.Message, "model is unavailable") {
			t.Errorf("%s: the stream ended with %+v", c.mode, last)
		}
		if took > 6*time.Second {
			t.Errorf("%s: the stream ended after %s", c.mode, took)
		}
	}
	// The model is back: the same session answers.
	ms.mode.Store("ok")
	var r realty.ChatResponse
	if code := post(t, base+"/chat", `{"session_id": "out-1", "message": "are you there?"}`, &r); code != 200 || r.Message != "Back again." {
		t.Errorf("after the outage: %d %+v", code, r)
	}
	evs := events(t, base+"/chat/stream", `{"session_id": "out-1", "message": "still there?"}`)
	if last := evs[len(evs)-1]; last.Type != "done" {
		t.Errorf("stream after the outage ended with %+v", last)
	}
}

// The model calls' timeouts and retries come from the app's settings too
// (TRELLIS_APP_REALTY_MODEL_ATTEMPTS, ..._MODEL_RETRY_AFTER, ..._FIRST_TOKEN_TIMEOUT), and a bad
// one stops the server at start, naming it.
func TestModelSettings(t *testing.T) {
	t.Parallel()
	ms := &modelServer{stop: make(chan struct{})}
	ms.mode.Store("500")
	up := httptest.NewServer(ms)
	defer func() { close(ms.stop); up.Close() }()
	main, err := openai.New("m", &openai.Options{APIKey: "k", BaseURL: up.URL + "/v1", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	roles := model.NewRoles(main, "local").With(model.RoleFast, offline.New(nil), "offline")
	settings := map[string]server.AppSettings{"realty": {"model_attempts": "2", "model_retry_after": "7s", "first_token_timeout": "2s", "model_retry_budget": "30s"}}
	s, err := server.New(server.Config{Apps: []server.App{realty.New(realty.Options{TimeZone: time.UTC})}, Models: roles, AppSettings: settings,
		DataDir: t.TempDir(), Dev: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	defer func() { hs.Close(); s.Close() }()
	before := ms.calls.Load()
	resp, err := http.Post(hs.URL+"/apps/realty/chat", "application/json", strings.NewReader(`{"session_id": "set-1", "message": "find homes in Austin"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 502 || resp.Header.Get("Retry-After") != "7" || ms.calls.Load()-before != 2 {
		t.Errorf("POST /chat %d Retry-After %q after %d model requests, want 502, 7 and 2 attempts", resp.StatusCode, resp.Header.Get("Retry-After"), ms.calls.Load()-before)
	}
	for key, bad := range map[string]string{"first_token_timeout": "soon", "model_attempts": "0", "model_retry_after": "-1s"} {
		_, err := server.New(server.Config{Apps: []server.App{realty.App()}, Models: roles, AppSettings: map[string]server.AppSettings{"realty": {key: bad}},
			DataDir: t.TempDir(), Dev: true, Logger: slog.New(slog.DiscardHandler)})
		if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "TRELLIS_APP_REALTY_"+strings.ToUpper(key)) {
			t.Errorf("%s=%s: err = %v, want the setting named", key, bad, err)
		}
	}
}
