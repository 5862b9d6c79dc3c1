package example_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/example"
	"github.com/trellis-go/trellis/server"
)

func post(t *testing.T, url string, body any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("POST %s: %d %s", url, resp.StatusCode, data)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("POST %s: %v in %s", url, err, data)
	}
	return out
}

// With approve_tools in the run's configuration, the example assistant pauses before its tool
// call at an Agent Inbox interrupt, served through the API, and goes on once the call is accepted.
func TestApprovalThroughTheAPI(t *testing.T) {
	s, err := server.New(server.Config{Apps: []server.App{example.App()}, DataDir: t.TempDir(), Dev: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()

	thread := post(t, hs.URL+"/threads", map[string]any{})
	tid := thread["thread_id"].(string)
	runs := hs.URL + "/threads/" + tid + "/runs/wait"
	out := post(t, runs, map[string]any{
		"assistant_id": "example",
		"input":        map[string]any{"messages": []any{map[string]any{"role": "user", "content": "convert 10 km to miles"}}},
		"config":       map[string]any{"configurable": map[string]any{"approve_tools": true}},
	})
	ins, _ := out["__interrupt__"].([]any)
	if len(ins) != 1 {
		t.Fatalf("no interrupt before the tool call: %v", out)
	}
	value, _ := json.Marshal(ins[0].(map[string]any)["value"])
	if !strings.Contains(string(value), `"action":"convert_units"`) || !strings.Contains(string(value), `"allow_accept":true`) {
		t.Fatalf("interrupt value %s is not an Agent Inbox request for convert_units", value)
	}
	out = post(t, runs, map[string]any{
		"assistant_id": "example",
		"command":      map[string]any{"resume": []any{map[string]any{"type": "accept"}}},
		"config":       map[string]any{"configurable": map[string]any{"approve_tools": true}},
	})
	final, _ := json.Marshal(out["messages"])
	if _, paused := out["__interrupt__"]; paused || !strings.Contains(string(final), "6.21") {
		t.Fatalf("after accepting: %s", final)
	}

	// Without the flag the same question runs straight through.
	thread = post(t, hs.URL+"/threads", map[string]any{})
	out = post(t, hs.URL+"/threads/"+thread["thread_id"].(string)+"/runs/wait", map[string]any{
		"assistant_id": "example",
		"input":        map[string]any{"messages": []any{map[string]any{"role": "user", "content": "convert 10 km to miles"}}},
	})
	if _, paused := out["__interrupt__"]; paused {
		t.Fatalf("paused without approve_tools: %v", out)
	}
}

// The assistant "example" declares the configurable value it reads: its schemas name
// approve_tools, and the interview, which reads none, declares no config.
func TestExampleDeclaresItsConfig(t *testing.T) {
	s, err := server.New(server.Config{Apps: []server.App{example.New(example.Options{})}, DataDir: t.TempDir(), Dev: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	for id, want := range map[string]bool{"example": true, "interview": false} {
		resp, err := http.Get(hs.URL + "/assistants/" + id + "/schemas")
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(out["config_schema"])
		if got := strings.Contains(string(raw), `"approve_tools"`); got != want {
			t.Errorf("%s: config_schema %s, want approve_tools declared: %v", id, raw, want)
		}
	}
}
