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

type serveOpts struct {
	databaseURL string
	keys        map[string]server.Principal
}

// served starts a server with only the analyst: dev mode on SQLite unless opts say otherwise.
func served(t testing.TB, cfg analyst.Options, opts ...serveOpts) *httptest.Server {
	t.Helper()
	c := server.Config{Apps: []server.App{analyst.New(cfg)}, DataDir: t.TempDir(), Dev: true, Logger: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		c.DatabaseURL = o.databaseURL
		if o.keys != nil {
			c.Dev = false
			c.Auth = server.AuthConfig{APIKeys: o.keys}
		}
	}
	s, err := server.New(c)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() { hs.Close(); s.Close() })
	return hs
}

func request(t testing.TB, key, method, url string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

func call(t testing.TB, key, method, url string, body any) map[string]any {
	t.Helper()
	code, raw := request(t, key, method, url, body)
	if code >= 300 {
		t.Fatalf("%s %s: %d %s", method, url, code, raw)
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
	key    string
	thread string
	values map[string]any
}

// askedVoltra starts a session on a fresh offline analyst and asks voltraQuestion as dana: the
// run waits at the plan gate.
func askedVoltra(t testing.TB) *session {
	t.Helper()
	s := newSession(t, served(t, analyst.Options{}), "")
	s.ask(voltraQuestion, dana)
	return s
}

func newSession(t testing.TB, hs *httptest.Server, key string) *session {
	th := call(t, key, "POST", hs.URL+"/threads", map[string]any{})
	return &session{t: t, base: hs.URL, key: key, thread: th["thread_id"].(string)}
}

// ask starts a run with a user message (and extra input keys).
func (s *session) ask(text string, extra map[string]any) map[string]any {
	s.t.Helper()
	in := map[string]any{"messages": []any{map[string]any{"role": "user", "content": text}}}
	for k, v := range extra {
		in[k] = v
	}
	s.values = call(s.t, s.key, "POST", s.base+"/threads/"+s.thread+"/runs/wait", map[string]any{"assistant_id": "analyst", "input": in})
	return s.values
}

// resume answers the pending interrupt with an Agent Inbox response.
func (s *session) resume(typ string, args any) map[string]any {
	s.t.Helper()
	s.values = call(s.t, s.key, "POST", s.base+"/threads/"+s.thread+"/runs/wait", map[string]any{"assistant_id": "analyst",
		"command": map[string]any{"resume": []any{map[string]any{"type": typ, "args": args}}}})
	return s.values
}

// gate returns the action and the request of the interrupt the run waits at ("" when none).
func (s *session) gate() (string, map[string]any) {
	s.t.Helper()
	ints, _ := s.values["__interrupt__"].([]any)
	if len(ints) == 0 {
		return "", nil
	}
	if len(ints) != 1 {
		s.t.Fatalf("want one interrupt, got %v", ints)
	}
	val := ints[0].(map[string]any)["value"].([]any)
	req := val[0].(map[string]any)
	return req["action_request"].(map[string]any)["action"].(string), req
}

func (s *session) wantGate(action string) map[string]any {
	s.t.Helper()
	got, req := s.gate()
	if got != action {
		s.t.Fatalf("waiting at %q, want %q; last message %q", got, action, s.lastMessage())
	}
	return req
}

func (s *session) lastMessage() string {
	return messageText(s.values, -1)
}

// messageText is message i of the values (negative from the end).
func messageText(v map[string]any, i int) string {
	msgs, _ := v["messages"].([]any)
	if i < 0 {
		i += len(msgs)
	}
	if i < 0 || i >= len(msgs) {
		return ""
	}
	c, _ := msgs[i].(map[string]any)["content"].(string)
	return c
}

func (s *session) findings() map[string]any {
	f, _ := s.values["research_findings"].(map[string]any)
	return f
}

var dana = map[string]any{"user_id": "dana", "profile": map[string]any{"name": "Dana Whitfield", "role": "Senior manager", "project": "Tidewater", "frameworks": "SWOT"}}

const voltraQuestion = "Is Voltra a threat to our B2B fleet leasing plans?"

// memoryOf reads a user's four namespaces through the app's route (dev mode reads "dev"; the
// graph's state has the user's memory_context).
func factsIn(v map[string]any, ns string) int {
	mc, _ := v["memory_context"].(map[string]any)
	s, _ := mc[ns].(string)
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}

func TestEndToEndOffline(t *testing.T) {
	t.Parallel()
	s := askedVoltra(t)
	s.wantGate("Review research plan")
	s.resume("accept", nil)
	s.wantGate("Review discoveries")
	s.resume("accept", nil)
	s.wantGate("Review final report")
	s.resume("accept", nil)
	if act, _ := s.gate(); act != "" {
		t.Fatalf("still waiting at %s", act)
	}
	if s.values["report_id"] == nil || !strings.Contains(s.lastMessage(), "Saved your report") {
		t.Fatalf("not saved: %v", s.lastMessage())
	}
}

func toJSONString(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}

func httptestServer(t testing.TB, s *server.Server) string {
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return hs.URL
}
