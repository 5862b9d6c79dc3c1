package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/server/internal/stream"
	"github.com/trellis-go/trellis/tool"
)

var testSecret = []byte("0123456789abcdef0123456789abcdef-test-secret")

func authCfg() Config {
	return Config{Auth: AuthConfig{JWTSecret: testSecret, Issuer: "https://issuer.test", Audience: "trellis-test",
		APIKeys: map[string]Principal{"svc-key-0123456789abcdef": {User: "svc", Tenant: "acme", Permissions: []string{"*", PermTenantWide}}}}}
}

func token(claims map[string]any) string {
	base := map[string]any{"sub": "ann", "tenant": "acme", "iss": "https://issuer.test", "aud": "trellis-test", "exp": time.Now().Add(time.Hour).Unix(), "permissions": []string{"read"}}
	for k, v := range claims {
		if v == nil {
			delete(base, k)
		} else {
			base[k] = v
		}
	}
	return SignJWT(testSecret, base)
}

func TestAuthRejects(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{cfg: authCfg()})
	noneTok := func() string {
		enc := base64.RawURLEncoding
		c, _ := json.Marshal(map[string]any{"sub": "ann", "tenant": "acme", "iss": "https://issuer.test", "aud": "trellis-test", "exp": time.Now().Add(time.Hour).Unix()})
		return enc.EncodeToString([]byte(`{"alg":"none"}`)) + "." + enc.EncodeToString(c) + "."
	}()
	cases := map[string]string{
		"no credentials": "",
		"expired":        token(map[string]any{"exp": time.Now().Add(-time.Hour).Unix()}),
		"alg none":       noneTok,
		"wrong audience": token(map[string]any{"aud": "someone-else"}),
		"wrong issuer":   token(map[string]any{"iss": "https://evil.test"}),
		"no exp":         token(map[string]any{"exp": nil}),
		"no tenant":      token(map[string]any{"tenant": nil}),
		"bad signature":  token(nil)[:len(token(nil))-4] + "AAAA",
		"not a jwt":      "garbage",
	}
	for name, tok := range cases {
		t.Run(name, func(t *testing.T) {
			b.token = tok
			var body map[string]any
			if code := b.do("POST", "/threads/search", map[string]any{}, &body); code != 401 {
				t.Fatalf("status %d, want 401 (%v)", code, body)
			}
			if tok != "" && strings.Contains(body["detail"].(string), tok) {
				t.Fatal("the error echoes the token")
			}
		})
	}
	b.token = token(nil)
	b.mustDo("POST", "/threads/search", map[string]any{}, nil, 200)
	// The API key works as a bearer and as x-api-key.
	b.token = "svc-key-0123456789abcdef"
	b.mustDo("POST", "/threads/search", map[string]any{}, nil, 200)
	// Health stays open.
	b.token = ""
	b.mustDo("GET", "/healthz", nil, nil, 200)
}

func TestConfigNeedsAuthOrDev(t *testing.T) {
	t.Parallel()
	_, err := New(Config{Graphs: []GraphSpec{{ID: "flow", Build: buildFlow}}, DataDir: t.TempDir()})
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "--dev") {
		t.Fatalf("no auth: %v", err)
	}
	_, err = New(Config{Graphs: []GraphSpec{{ID: "flow", Build: buildFlow}}, DataDir: t.TempDir(), Auth: AuthConfig{JWTSecret: testSecret}})
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "Issuer") {
		t.Fatalf("jwt without iss/aud: %v", err)
	}
	_, err = New(Config{Graphs: []GraphSpec{{ID: "bad id!", Build: buildFlow}}, Dev: true, DataDir: t.TempDir()})
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("bad graph id: %v", err)
	}
}

func TestDevServeRefusesNonLoopback(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ln := fakeListener{addr: &netTCPAddr}
	if err := b.srv.Serve(context.Background(), ln); !errors.Is(err, ErrConfig) {
		t.Fatalf("dev mode on 0.0.0.0: %v", err)
	}
}

func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{cfg: authCfg()})
	b.token = token(map[string]any{"tenant": "acme"})
	tid := b.newThread(map[string]any{"secret": "acme"})
	var run Run
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "t"}}, &run, 200)
	b.mustDo("GET", "/threads/"+tid+"/runs/"+run.RunID+"/join", nil, nil, 200)
	b.mustDo("PUT", "/store/items", map[string]any{"namespace": []string{"docs"}, "key": "k", "value": map[string]any{"v": 1}}, nil, 204)

	b.token = token(map[string]any{"tenant": "globex", "sub": "eve"})
	for _, p := range []string{"/threads/" + tid, "/threads/" + tid + "/state", "/threads/" + tid + "/runs/" + run.RunID} {
		if code := b.do("GET", p, nil, nil); code != 404 {
			t.Fatalf("other tenant GET %s: %d, want 404", p, code)
		}
	}
	var item json.RawMessage
	if code := b.do("GET", "/store/items?namespace=docs&key=k", nil, &item); code != 200 || string(item) != "null" {
		t.Fatalf("other tenant's store item: %d %s, want 200 null (as for any missing item)", code, item)
	}
	if code := b.do("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "flow"}, nil); code != 404 {
		t.Fatalf("other tenant run: %d", code)
	}
	// Creating a thread with the other tenant's ID does not reveal or take it.
	if code := b.do("POST", "/threads", map[string]any{"thread_id": tid}, nil); code != 409 {
		t.Fatalf("other tenant create with taken id: %d", code)
	}
	var found []Thread
	b.mustDo("POST", "/threads/search", map[string]any{}, &found, 200)
	if len(found) != 0 {
		t.Fatalf("other tenant sees %d threads", len(found))
	}
	var ns struct{ Namespaces [][]string }
	b.mustDo("POST", "/store/namespaces", map[string]any{}, &ns, 200)
	if len(ns.Namespaces) != 0 {
		t.Fatalf("other tenant sees namespaces %v", ns.Namespaces)
	}
}

// TestToolsSeeCallInfo checks that a run's principal reaches nodes and tools as tool.CallInfo.
func TestToolsSeeCallInfo(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen tool.CallInfo
	cfg := authCfg()
	cfg.Graphs = nil
	b := setup(t, setupOpts{cfg: cfg})
	// Register an extra graph on a second server sharing nothing with the first.
	cfg2 := authCfg()
	cfg2.DataDir = t.TempDir()
	cfg2.Logger = b.srv.log
	cfg2.Graphs = []GraphSpec{{ID: "who", Build: func(d Deps) (graph.Runnable, error) {
		g := graph.New[flowState]()
		g.AddNode("look", func(ctx context.Context, s flowState) (flowState, error) {
			info, _ := tool.CallInfoFrom(ctx)
			mu.Lock()
			seen = info
			mu.Unlock()
			return flowState{Steps: []string{"look"}}, nil
		})
		g.AddEdge(graph.START, "look").AddEdge("look", graph.END)
		return graph.Erase(g.Compile(graph.CompileOptions{Saver: d.Saver}))
	}}}
	s2, err := New(cfg2)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	h := httptest.NewServer(s2.Handler())
	defer h.Close()
	b2 := &bundle{t: t, srv: s2, http: h, token: token(map[string]any{"permissions": []string{"tickets:write", "read"}})}
	b2.mustDo("POST", "/runs/wait", map[string]any{"assistant_id": "who", "input": map[string]any{}}, nil, 200)
	mu.Lock()
	defer mu.Unlock()
	if seen.User != "ann" || seen.Tenant != "acme" || !seen.Has("tickets:write") || seen.RunID == "" || seen.ThreadID == "" {
		t.Fatalf("call info: %+v", seen)
	}
}

func TestWebhook(t *testing.T) {
	t.Parallel()
	got := make(chan map[string]any, 1)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		json.NewDecoder(r.Body).Decode(&m)
		got <- m
	}))
	defer hook.Close()
	b := setup(t, setupOpts{cfg: Config{WebhookAllowPrivate: true}}) // the receiver is on loopback
	tid := b.newThread(nil)
	var run Run
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "w"}, "webhook": hook.URL + "/done"}, &run, 200)
	select {
	case m := <-got:
		if m["run_id"] != run.RunID || m["status"] != RunSuccess || m["values"] == nil {
			t.Fatalf("webhook payload: %v", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no webhook call")
	}
}

func TestWebSocket(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{cfg: Config{WebSocketBuffer: 4}})
	tid := b.newThread(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	wsURL := "ws" + strings.TrimPrefix(b.http.URL, "http") + "/threads/" + tid + "/ws"

	// A foreign origin is refused.
	_, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://evil.example"}}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign origin: %v %v", err, resp)
	}

	c, _, err := websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	send := func(m map[string]any) {
		data, _ := json.Marshal(m)
		if err := c.Write(ctx, websocket.MessageText, data); err != nil {
			t.Fatal(err)
		}
	}
	read := func() wsOut {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var m wsOut
		json.Unmarshal(data, &m)
		return m
	}
	untilDone := func() []wsOut {
		var evs []wsOut
		for {
			m := read()
			if m.Type == "error" {
				t.Fatalf("error: %s", m.Detail)
			}
			evs = append(evs, m)
			if m.Type == "done" {
				return evs
			}
		}
	}
	send(map[string]any{"type": "bogus"})
	if m := read(); m.Type != "error" || !strings.Contains(m.Detail, "bogus") {
		t.Fatalf("unknown type: %+v", m)
	}
	send(map[string]any{"type": "run", "assistant_id": "flow", "input": map[string]any{"topic": "ws"}})
	evs := untilDone()
	if evs[0].Type != "run" || evs[1].Event != "metadata" {
		t.Fatalf("first messages: %+v %+v", evs[0], evs[1])
	}
	runID := evs[0].RunID
	send(map[string]any{"type": "resume", "assistant_id": "flow", "resume": "fine"})
	evs = untilDone()
	var final map[string]any
	for _, e := range evs {
		if e.Event == "values" {
			json.Unmarshal(e.Data, &final)
		}
	}
	if final["approved"] != "fine" {
		t.Fatalf("resumed over ws: %v", final)
	}
	// Subscribe to the first run again from event 2: the rest, in order.
	send(map[string]any{"type": "subscribe", "run_id": runID, "last_event_id": 2})
	evs = untilDone()
	if evs[0].ID != 3 {
		t.Fatalf("subscribe resumed at %d", evs[0].ID)
	}
}

// TestWebSocketSlowClient checks that a client whose outbox stays full is dropped with an
// error, while the run's log (and so the run) never waits for it.
func TestWebSocketSlowClient(t *testing.T) {
	t.Parallel()
	b := setup(t)
	l := stream.NewLog()
	for i := 0; i < 10; i++ {
		l.Append("values", json.RawMessage(`{}`))
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	wc := &wsConn{s: b.srv, out: make(chan wsOut, 2), ctx: ctx, cancel: cancel, subs: map[string]bool{}, grace: 20 * time.Millisecond}
	wc.follow(&Run{RunID: "r1"}, l, 0) // nobody drains wc.out
	wc.wg.Wait()
	if !errors.Is(context.Cause(ctx), errSlowClient) {
		t.Fatalf("cause %v, want the slow-client error", context.Cause(ctx))
	}
	// The producer side never blocked: appending more is immediate.
	l.Append("values", json.RawMessage(`{}`))
	if l.Last() != 11 {
		t.Fatalf("log at %d", l.Last())
	}
}

var netTCPAddr = net.TCPAddr{IP: net.IPv4zero, Port: 1}

type fakeListener struct{ addr net.Addr }

func (f fakeListener) Accept() (net.Conn, error) { return nil, io.EOF }
func (f fakeListener) Close() error              { return nil }
func (f fakeListener) Addr() net.Addr            { return f.addr }
