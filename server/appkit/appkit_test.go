package appkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/appkit"
	"github.com/trellis-go/trellis/server/servertest"
)

// errorBody reads an error answer and fails unless it is the API's shape: detail, and hint
// when there is one, and nothing else.
func errorBody(t *testing.T, res *http.Response) (detail, hint string) {
	t.Helper()
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type %q", ct)
	}
	var body map[string]string
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatalf("the error is not a JSON object of strings: %v", err)
	}
	for k := range body {
		if k != "detail" && k != "hint" {
			t.Fatalf("the error has a key %q besides detail and hint: %v", k, body)
		}
	}
	if body["detail"] == "" {
		t.Fatalf("the error has no detail: %v", body)
	}
	return body["detail"], body["hint"]
}

func TestErrorShape(t *testing.T) {
	cases := []struct {
		err          error
		status       int
		detail, hint string
	}{
		{appkit.Problem(http.StatusNotFound, "no note \"n1\" of yours", "GET /api/v1/notes lists yours"), 404, "no note \"n1\" of yours", "GET /api/v1/notes lists yours"},
		{appkit.BadRequest("send a whole number from 1 to 50", "limit %q is not a number", "x"), 400, "limit \"x\" is not a number", "send a whole number from 1 to 50"},
		{fmt.Errorf("notes: reading: %w", server.ErrNotFound), 404, "notes: reading: server: not found", ""},
		{errors.New("the disk is full"), 500, "the disk is full", ""},
	}
	for _, c := range cases {
		rec := httptest.NewRecorder()
		appkit.Error(rec, c.err)
		res := rec.Result()
		if res.StatusCode != c.status {
			t.Errorf("%v: status %d, want %d", c.err, res.StatusCode, c.status)
		}
		detail, hint := errorBody(t, res)
		if detail != c.detail || hint != c.hint {
			t.Errorf("%v: detail %q hint %q, want %q %q", c.err, detail, hint, c.detail, c.hint)
		}
	}
	rec := httptest.NewRecorder()
	appkit.Fail(rec, http.StatusConflict, "the change was applied already", "")
	if rec.Code != 409 {
		t.Fatalf("Fail: %d", rec.Code)
	}
	if d, h := errorBody(t, rec.Result()); d != "the change was applied already" || h != "" {
		t.Fatalf("Fail: %q %q", d, h)
	}
	rec = httptest.NewRecorder()
	appkit.JSON(rec, http.StatusCreated, map[string]string{"a": "<b>"})
	if rec.Code != 201 || strings.TrimSpace(rec.Body.String()) != `{"a":"<b>"}` {
		t.Fatalf("JSON: %d %s", rec.Code, rec.Body)
	}
}

// whoApp answers GET /who with the caller, behind the server's guard, and GET /open with the
// caller of an unguarded route (which has none).
var whoApp = server.App{Name: "who", Build: func(ctx context.Context, d server.AppDeps) (*server.AppParts, error) {
	who := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := appkit.Caller(w, r)
		if !ok {
			return
		}
		appkit.JSON(w, http.StatusOK, map[string]string{"user": p.User, "tenant": p.Tenant})
	})
	mux := http.NewServeMux()
	mux.Handle("GET /who", d.Guard(who))
	mux.Handle("GET /open", who)
	return &server.AppParts{Handler: mux}, nil
}}

func get(t *testing.T, url, key string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

func TestPrincipalInDevMode(t *testing.T) {
	s := servertest.Start(t, server.Config{Dev: true, Apps: []server.App{whoApp}})
	res := get(t, s.URL+"/apps/who/who", "")
	var got map[string]string
	if res.StatusCode != 200 || json.NewDecoder(res.Body).Decode(&got) != nil {
		t.Fatalf("dev mode: %d", res.StatusCode)
	}
	if got["user"] != server.DevPrincipal.User || got["tenant"] != server.DevPrincipal.Tenant {
		t.Fatalf("dev mode acts as %v, want the dev principal", got)
	}
	// A route the app left unguarded has no caller, even in dev mode.
	if res := get(t, s.URL+"/apps/who/open", ""); res.StatusCode != 401 {
		t.Fatalf("an unguarded route: %d, want 401", res.StatusCode)
	}
}

func TestPrincipalOutsideDevMode(t *testing.T) {
	s := servertest.Start(t, server.Config{Apps: []server.App{whoApp},
		Auth: server.AuthConfig{APIKeys: map[string]server.Principal{"key-ana-0123456789ab": {User: "ana", Tenant: "acme"}}}})
	res := get(t, s.URL+"/apps/who/who", "key-ana-0123456789ab")
	var got map[string]string
	if res.StatusCode != 200 || json.NewDecoder(res.Body).Decode(&got) != nil {
		t.Fatalf("with a key: %d", res.StatusCode)
	}
	if got["user"] != "ana" || got["tenant"] != "acme" {
		t.Fatalf("acts as %v, want ana of acme", got)
	}
	for _, path := range []string{"/who", "/open"} {
		res := get(t, s.URL+"/apps/who"+path, "")
		if res.StatusCode != 401 {
			t.Fatalf("%s without credentials: %d, want 401 (never the dev principal)", path, res.StatusCode)
		}
		if d, _ := errorBody(t, res); d == "" {
			t.Fatal("no detail")
		}
	}
	// The kit's own 401 names what to send.
	rec := httptest.NewRecorder()
	if _, ok := appkit.Caller(rec, httptest.NewRequest("GET", "/x", nil)); ok || rec.Code != 401 || rec.Header().Get("WWW-Authenticate") == "" {
		t.Fatalf("Caller without a principal: ok=%v %d", ok, rec.Code)
	}
	if _, h := errorBody(t, rec.Result()); !strings.Contains(h, "X-Api-Key") {
		t.Fatalf("the 401's hint does not say what to send: %q", h)
	}
}

func TestChunks(t *testing.T) {
	for _, text := range []string{"", "one", "O imóvel custa 250 mil euros.\n\nQueres ver?", "  two  spaces ", "a\tb\nc"} {
		cs := appkit.Chunks(text)
		if strings.Join(cs, "") != text {
			t.Fatalf("%q: the chunks %q do not join to the text", text, cs)
		}
		for _, c := range cs {
			if strings.TrimSpace(c) == "" && len(cs) > 1 {
				t.Fatalf("%q: a chunk of white space alone: %q", text, cs)
			}
			if len(strings.Fields(c)) > 1 {
				t.Fatalf("%q: a chunk of more than one word: %q", text, c)
			}
		}
	}
	if got := appkit.Chunks("The cheapest home is here"); len(got) != 5 || got[1] != " cheapest" {
		t.Fatalf("chunks %q", got)
	}
}

type state struct {
	Messages []message.Message `json:"messages"`
}

func TestEmitTextStreamsTokens(t *testing.T) {
	const answer = "Three homes match: the cheapest is on Oak Street."
	g := graph.New[state]()
	g.AddNode("answer", func(ctx context.Context, s state) (state, error) {
		id := appkit.EmitText(ctx, "", answer, map[string]any{"provider": "rules"})
		return state{Messages: []message.Message{{ID: id, Role: message.RoleAssistant, Content: answer}}}, nil
	})
	g.AddEdge(graph.START, "answer")
	g.AddEdge("answer", graph.END)
	c, err := g.Compile(graph.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	var ids []string
	n := 0
	for ev, err := range c.Stream(context.Background(), state{}, graph.WithStreamModes(graph.ModeMessages, graph.ModeValues)) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Mode {
		case graph.ModeMessages:
			ch := ev.Data.(graph.MessageChunk)
			if ch.Metadata["provider"] != "rules" || ch.Metadata["node"] != "answer" {
				t.Fatalf("chunk metadata %v", ch.Metadata)
			}
			text.WriteString(ch.Message.Content)
			ids = append(ids, ch.Message.ID)
			n++
		case graph.ModeValues:
			if ms := ev.Data.(state).Messages; len(ms) == 1 && ms[0].ID != ids[0] {
				t.Fatalf("the message's ID %q is not the chunks' %q", ms[0].ID, ids[0])
			}
		}
	}
	if text.String() != answer || n != len(strings.Fields(answer)) {
		t.Fatalf("streamed %d chunks %q", n, text.String())
	}
	for _, id := range ids {
		if id != ids[0] || id == "" {
			t.Fatalf("chunks of one message with IDs %q", ids)
		}
	}
	// Outside a run nothing is sent and the ID is still given.
	if id := appkit.EmitText(context.Background(), "m1", answer, nil); id != "m1" {
		t.Fatalf("id %q", id)
	}
}

func TestLastUser(t *testing.T) {
	msgs := []message.Message{message.User("first"), message.Assistant("a"), message.User("second"), message.Assistant("b")}
	if got := appkit.LastUser(msgs); got != "second" {
		t.Fatalf("LastUser %q", got)
	}
	if appkit.LastUser(nil) != "" || appkit.UserTurns(nil) != 0 || appkit.UserTurns(msgs) != 2 {
		t.Fatal("LastUser/UserTurns of an empty or two-turn conversation")
	}
}

// An app built without the server's guard answers 401 on its guarded routes.
func TestGuardWithoutTheServer(t *testing.T) {
	h := appkit.Guard(server.AppDeps{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("a route without a guard was served")
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	if rec.Code != 401 {
		t.Fatalf("%d, want 401", rec.Code)
	}
	if d, h := errorBody(t, rec.Result()); !strings.Contains(d, "Guard") || h == "" {
		t.Fatalf("detail %q hint %q", d, h)
	}
}

// Every calls the chore until stopped, and refuses a bad interval or a nil function.
func TestEvery(t *testing.T) {
	calls := make(chan struct{}, 10)
	stop, err := appkit.Every(time.Millisecond, func(ctx context.Context) {
		select {
		case calls <- struct{}{}:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	<-calls
	<-calls
	stop()
	if _, err := appkit.Every(0, func(context.Context) {}); err == nil || !strings.Contains(err.Error(), "positive interval") {
		t.Errorf("a zero interval: %v", err)
	}
	if _, err := appkit.Every(time.Second, nil); err == nil {
		t.Error("a nil function was taken")
	}
}
