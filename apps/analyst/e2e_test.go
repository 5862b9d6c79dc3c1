package analyst_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/analyst"
	"github.com/trellis-go/trellis/server"
)

// served starts a server with only the analyst.
func served(t testing.TB, cfg analyst.Config) *httptest.Server {
	t.Helper()
	s, err := server.New(server.Config{Apps: []server.App{analyst.AppWith(cfg)}, DataDir: t.TempDir(), Dev: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() { hs.Close(); s.Close() })
	return hs
}

func call(t testing.TB, method, url string, body any) map[string]any {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, raw)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: %s", method, url, raw)
	}
	if e, ok := out["__error__"]; ok {
		t.Fatalf("%s %s: run failed: %v", method, url, e)
	}
	return out
}

// session is one thread driven through the Agent Protocol.
type session struct {
	t      testing.TB
	base   string
	thread string
}

func newSession(t testing.TB, hs *httptest.Server) *session {
	th := call(t, "POST", hs.URL+"/threads", map[string]any{})
	return &session{t: t, base: hs.URL, thread: th["thread_id"].(string)}
}

func (s *session) run(input map[string]any) map[string]any {
	s.t.Helper()
	return call(s.t, "POST", s.base+"/threads/"+s.thread+"/runs/wait", map[string]any{"assistant_id": "analyst", "input": input})
}

func (s *session) resume(typ string, args any) map[string]any {
	s.t.Helper()
	return call(s.t, "POST", s.base+"/threads/"+s.thread+"/runs/wait", map[string]any{"assistant_id": "analyst",
		"command": map[string]any{"resume": []any{map[string]any{"type": typ, "args": args}}}})
}

// pending returns the action of the interrupt the values wait at, and the request.
func pending(t testing.TB, v map[string]any) (string, map[string]any) {
	t.Helper()
	ints, _ := v["__interrupt__"].([]any)
	if len(ints) != 1 {
		t.Fatalf("want one interrupt, got %v", v["__interrupt__"])
	}
	val := ints[0].(map[string]any)["value"].([]any)
	req := val[0].(map[string]any)
	return req["action_request"].(map[string]any)["action"].(string), req
}

func lastMessage(v map[string]any) string {
	msgs, _ := v["messages"].([]any)
	if len(msgs) == 0 {
		return ""
	}
	m := msgs[len(msgs)-1].(map[string]any)
	s, _ := m["content"].(string)
	return s
}

func TestEndToEndOffline(t *testing.T) {
	t.Parallel()
	hs := served(t, analyst.Config{})
	s := newSession(t, hs)
	v := s.run(map[string]any{"user_id": "dana", "profile": map[string]any{"name": "Dana Whitfield", "project": "Tidewater", "frameworks": "SWOT"},
		"messages": []any{map[string]any{"role": "user", "content": "Is Voltra a threat to our B2B fleet leasing plans?"}}})
	action, req := pending(t, v)
	if action != "Review research plan" {
		t.Fatalf("action %q", action)
	}
	t.Log(req["description"])
	v = s.resume("accept", nil)
	action, req = pending(t, v)
	if action != "Review discoveries" {
		t.Fatalf("action %q", action)
	}
	t.Log(req["description"])
	v = s.resume("accept", nil)
	action, req = pending(t, v)
	if action != "Review final report" {
		t.Fatalf("action %q", action)
	}
	t.Log(req["description"])
	v = s.resume("accept", nil)
	if v["report_id"] == nil || !strings.Contains(lastMessage(v), "Saved your report") {
		t.Fatalf("not saved: %v", lastMessage(v))
	}
	t.Log(lastMessage(v))
}
