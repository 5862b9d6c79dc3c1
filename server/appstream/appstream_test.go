package appstream_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/appstream"
	"github.com/trellis-go/trellis/server/internal/dbtest"
)

var secret = []byte("0123456789abcdef0123456789abcdef-kit-secret")

func tok(user, tenant string) string {
	return server.SignJWT(secret, map[string]any{"sub": user, "tenant": tenant, "iss": "https://issuer.test",
		"aud": "kit-test", "exp": time.Now().Add(time.Hour).Unix()})
}

// demo is a small app on the kit: a WebSocket whose "say" messages are published to a room,
// "echo" is answered, "fail" fails with a code; an SSE stream that joins ?room= and greets.
type demo struct {
	opts   appstream.Options
	closed chan string // a user whose WebSocket ended
	kit    *appstream.Kit
}

func (d *demo) app() server.App {
	return server.App{Name: "kitdemo", Build: func(ctx context.Context, deps server.AppDeps) (*server.AppParts, error) {
		o := d.opts
		if o.CanJoin == nil {
			o.CanJoin = func(p server.Principal, room string) bool { return !strings.HasPrefix(room, "private") }
		}
		d.kit = appstream.New(deps, &o)
		g := graph.New[askState]()
		g.AddNode("answer", func(ctx context.Context, s askState) (askState, error) {
			p, _ := server.PrincipalFrom(ctx)
			return askState{Reply: "echo: " + s.Text + " for " + p.User}, nil
		})
		g.AddEdge(graph.START, "answer").AddEdge("answer", graph.END)
		echo, err := g.Compile(deps.Compile)
		if err != nil {
			return nil, err
		}
		mux := http.NewServeMux()
		mux.Handle("GET /ws", d.kit.WebSocket(appstream.Handler{
			OnMessage: func(c *appstream.Conn, m appstream.Message) error {
				switch m.Type {
				case "say":
					return c.Publish(c.Context(), m.Room, "said", m.Data)
				case "echo":
					return c.Send("echo", m.Data)
				case "blast":
					// Frames far larger than the socket buffers, for a client that does not read.
					big := strings.Repeat("x", 1<<20)
					for range 64 {
						if err := c.Send("blast", big); err != nil {
							return err
						}
					}
					return nil
				case "fail":
					return &appstream.Error{Code: "nope", Message: "this always fails"}
				case "ask":
					// A run through the server's run machinery, for the connection's principal.
					run, err := deps.Runs.Start(c.Context(), c.Principal(), server.RunRequest{AssistantID: "kitecho", Input: m.Data})
					if err != nil {
						return err
					}
					out, err := deps.Runs.Wait(c.Context(), c.Principal(), run.ThreadID, run.RunID)
					if err != nil {
						return err
					}
					return c.Send("answer", map[string]any{"thread_id": run.ThreadID, "run_id": run.RunID, "output": out})
				case "peek":
					var ref struct{ ThreadID, RunID string }
					if err := json.Unmarshal(m.Data, &ref); err != nil {
						return &appstream.Error{Code: "bad_message", Message: err.Error()}
					}
					run, err := deps.Runs.Get(c.Context(), c.Principal(), ref.ThreadID, ref.RunID)
					if err != nil {
						return &appstream.Error{Code: "not_found", Message: err.Error()}
					}
					return c.Send("run", map[string]string{"status": string(run.Status)})
				}
				return &appstream.Error{Code: "unknown_type", Message: m.Type}
			},
			OnClose: func(c *appstream.Conn) {
				if d.closed != nil {
					d.closed <- c.Principal().User
				}
			},
		}))
		mux.Handle("GET /raw", d.kit.Socket(rawSocket))
		mux.Handle("POST /events", d.kit.EventStream(rawEvents))
		mux.Handle("GET /sse/room/{room}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			room := r.PathValue("room")
			d.kit.SSE(func(s *appstream.Stream) error {
				if err := s.Join(room); err != nil {
					return err
				}
				if err := s.Send("joined", map[string]string{"room": room, "user": s.Principal().User}); err != nil {
					return err
				}
				<-s.Context().Done()
				return nil
			}).ServeHTTP(w, r)
		}))
		return &server.AppParts{Handler: mux, Graphs: []server.AppGraph{{ID: "kitecho", Graph: echo.Runnable()}}}, nil
	}}
}

type askState struct {
	Text  string `json:"text,omitempty"`
	Reply string `json:"reply,omitempty"`
}

type node struct {
	srv *server.Server
	hs  *httptest.Server
	d   *demo
}

func start(t *testing.T, cfg server.Config, d *demo) *node {
	t.Helper()
	cfg.Apps = []server.App{d.app()}
	if cfg.DataDir == "" && cfg.DatabaseURL == "" {
		cfg.DataDir = t.TempDir()
	}
	cfg.Auth = server.AuthConfig{JWTSecret: secret, Issuer: "https://issuer.test", Audience: "kit-test", PerUser: cfg.Auth.PerUser}
	cfg.Logger = slog.New(slog.DiscardHandler)
	s, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		s.Close()
	})
	return &node{srv: s, hs: hs, d: d}
}

func (n *node) wsURL(token string) string {
	u := "ws" + strings.TrimPrefix(n.hs.URL, "http") + "/apps/kitdemo/ws"
	if token != "" {
		u += "?token=" + token
	}
	return u
}

// dial connects; it returns the HTTP status of a refused upgrade.
func dial(t *testing.T, url string, hdr http.Header) (*websocket.Conn, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		if resp != nil {
			return nil, resp.StatusCode
		}
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c, 101
}

func send(t *testing.T, c *websocket.Conn, f map[string]any) {
	t.Helper()
	b, _ := json.Marshal(f)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, c *websocket.Conn) appstream.Frame {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, b, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var f appstream.Frame
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("frame %s: %v", b, err)
	}
	return f
}

// TestWebSocketAdmission checks the checks before an upgrade: credentials (401), the Origin
// (403 unless same-origin or allowed), and then acks, duplicates, errors and bad messages.
func TestWebSocketAdmission(t *testing.T) {
	t.Parallel()
	n := start(t, server.Config{WebSocketOrigins: []string{"*.trusted.test"}}, &demo{})
	if _, code := dial(t, n.wsURL(""), nil); code != http.StatusUnauthorized {
		t.Fatalf("no credentials: %d, want 401", code)
	}
	if _, code := dial(t, n.wsURL("garbage"), nil); code != http.StatusUnauthorized {
		t.Fatalf("bad token: %d, want 401", code)
	}
	bad := http.Header{"Origin": {"https://evil.test"}}
	if _, code := dial(t, n.wsURL(tok("ann", "acme")), bad); code != http.StatusForbidden {
		t.Fatalf("foreign origin: %d, want 403", code)
	}
	same := http.Header{"Origin": {n.hs.URL}}
	if _, code := dial(t, n.wsURL(tok("ann", "acme")), same); code != 101 {
		t.Fatalf("same origin: %d", code)
	}
	// The bearer header works as well as ?token=, from an allowed origin.
	hdr := http.Header{"Origin": {"https://app.trusted.test"}, "Authorization": {"Bearer " + tok("ann", "acme")}}
	c, code := dial(t, n.wsURL(""), hdr)
	if code != 101 {
		t.Fatalf("allowed origin: %d", code)
	}

	send(t, c, map[string]any{"id": "m1", "type": "echo", "data": map[string]any{"x": 1}})
	if f := read(t, c); f.Type != "echo" || string(f.Data) != `{"x":1}` {
		t.Fatalf("echo: %+v", f)
	}
	if f := read(t, c); f.Type != "ack" || f.ID != "m1" || f.Duplicate {
		t.Fatalf("ack: %+v", f)
	}
	// A resent message is acknowledged again and not handled twice.
	send(t, c, map[string]any{"id": "m1", "type": "echo", "data": map[string]any{"x": 1}})
	if f := read(t, c); f.Type != "ack" || f.ID != "m1" || !f.Duplicate {
		t.Fatalf("resent: %+v", f)
	}
	send(t, c, map[string]any{"id": "m2", "type": "fail"})
	if f := read(t, c); f.Type != "error" || f.ID != "m2" || f.Code != "nope" {
		t.Fatalf("failure: %+v", f)
	}
	// A failed message is not remembered: resending it runs it again.
	send(t, c, map[string]any{"id": "m2", "type": "fail"})
	if f := read(t, c); f.Type != "error" || f.ID != "m2" {
		t.Fatalf("failure again: %+v", f)
	}
	if err := c.Write(context.Background(), websocket.MessageText, []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	if f := read(t, c); f.Type != "error" || f.Code != "bad_message" {
		t.Fatalf("bad JSON: %+v", f)
	}
	send(t, c, map[string]any{"id": "m3"})
	if f := read(t, c); f.Type != "error" || f.Code != "bad_message" || f.ID != "m3" || !strings.Contains(f.Message, `"type"`) {
		t.Fatalf("no type: %+v", f)
	}
	send(t, c, map[string]any{"id": "m4", "type": "join", "room": "private-1"})
	if f := read(t, c); f.Type != "error" || f.Code != "forbidden" {
		t.Fatalf("forbidden room: %+v", f)
	}
}

// TestWebSocketTenantLimits: 20 connections of one tenant over a burst of 4 are not all
// accepted (the vesper WebSocket accepted them all): the rate refuses past the burst, and the
// open-stream limit refuses past the maximum until a connection ends.
func TestWebSocketTenantLimits(t *testing.T) {
	t.Parallel()
	n := start(t, server.Config{RateLimit: 0.01, RateBurst: 4}, &demo{})
	accepted, refused := 0, 0
	for range 20 {
		switch _, code := dial(t, n.wsURL(tok("ann", "acme")), nil); code {
		case 101:
			accepted++
		case http.StatusTooManyRequests:
			refused++
		default:
			t.Fatalf("status %d", code)
		}
	}
	if accepted != 4 || refused != 16 {
		t.Fatalf("accepted %d, refused %d; want 4 and 16", accepted, refused)
	}
	// Another tenant has its own budget.
	if _, code := dial(t, n.wsURL(tok("eve", "globex")), nil); code != 101 {
		t.Fatalf("other tenant: %d", code)
	}

	d := &demo{closed: make(chan string, 4)}
	n2 := start(t, server.Config{MaxStreamsPerTenant: 2}, d)
	c1, _ := dial(t, n2.wsURL(tok("ann", "acme")), nil)
	if _, code := dial(t, n2.wsURL(tok("bob", "acme")), nil); code != 101 {
		t.Fatalf("second stream: %d", code)
	}
	if _, code := dial(t, n2.wsURL(tok("cy", "acme")), nil); code != http.StatusTooManyRequests {
		t.Fatalf("third stream: %d, want 429", code)
	}
	c1.Close(websocket.StatusNormalClosure, "")
	select {
	case <-d.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the closed connection was not released")
	}
	if _, code := dial(t, n2.wsURL(tok("cy", "acme")), nil); code != 101 {
		t.Fatalf("after one closed: %d", code)
	}
}

// TestWebSocketMessageRate: past the per-connection message rate a message is refused with
// retry_after_ms and not handled.
func TestWebSocketMessageRate(t *testing.T) {
	t.Parallel()
	n := start(t, server.Config{}, &demo{opts: appstream.Options{MessageRate: 1}})
	c, _ := dial(t, n.wsURL(tok("ann", "acme")), nil)
	for i := range 3 {
		send(t, c, map[string]any{"id": fmt.Sprint("r", i), "type": "fail"})
	}
	var limited appstream.Frame
	for range 3 {
		if f := read(t, c); f.Code == "rate_limited" {
			limited = f
		}
	}
	if limited.ID != "r2" || limited.RetryAfterMS <= 0 {
		t.Fatalf("rate limited frame: %+v", limited)
	}
}

// TestWebSocketHeartbeatAndDeadline: a client that stops reading is let go, both by the
// heartbeat (it does not answer pings) and by the write deadline (it does not take its frames).
func TestWebSocketHeartbeatAndDeadline(t *testing.T) {
	t.Parallel()
	d := &demo{closed: make(chan string, 4), opts: appstream.Options{PingInterval: 100 * time.Millisecond}}
	n := start(t, server.Config{}, d)
	// Never reading, the client never answers a ping.
	dial(t, n.wsURL(tok("ann", "acme")), nil)
	select {
	case u := <-d.closed:
		if u != "ann" {
			t.Fatalf("closed %s", u)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a client that answers no ping was kept")
	}

	d2 := &demo{closed: make(chan string, 4), opts: appstream.Options{PingInterval: time.Hour, WriteTimeout: 200 * time.Millisecond, SendBuffer: 2}}
	n2 := start(t, server.Config{}, d2)
	c, _ := dial(t, n2.wsURL(tok("bob", "acme")), nil)
	send(t, c, map[string]any{"type": "blast"})
	select {
	case u := <-d2.closed:
		if u != "bob" {
			t.Fatalf("closed %s", u)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a client that takes no frames was kept")
	}
}

// TestRoomsStayInTheirTenant: a frame said in a room reaches every connection of the tenant that
// joined it, the sender's too, and none of another tenant's in a room of the same name.
func TestRoomsStayInTheirTenant(t *testing.T) {
	t.Parallel()
	n := start(t, server.Config{}, &demo{})
	ann, _ := dial(t, n.wsURL(tok("ann", "acme")), nil)
	bob, _ := dial(t, n.wsURL(tok("bob", "acme")), nil)
	eve, _ := dial(t, n.wsURL(tok("eve", "globex")), nil)
	for i, c := range []*websocket.Conn{ann, bob, eve} {
		send(t, c, map[string]any{"id": fmt.Sprint("j", i), "type": "join", "room": "lobby"})
		if f := read(t, c); f.Type != "ack" || f.Room != "lobby" {
			t.Fatalf("join: %+v", f)
		}
	}
	send(t, ann, map[string]any{"id": "s1", "type": "say", "room": "lobby", "data": "hi"})
	got := map[string]bool{}
	for range 2 {
		f := read(t, ann)
		got[f.Type] = true
	}
	if !got["said"] || !got["ack"] {
		t.Fatalf("sender got %v", got)
	}
	if f := read(t, bob); f.Type != "said" || f.Room != "lobby" || string(f.Data) != `"hi"` {
		t.Fatalf("bob: %+v", f)
	}
	// Eve (another tenant) gets nothing: her next frame is the answer to her own echo.
	send(t, eve, map[string]any{"id": "e1", "type": "echo", "data": 1})
	if f := read(t, eve); f.Type != "echo" {
		t.Fatalf("eve got %+v", f)
	}
	// Server code publishes to a tenant's room too.
	if err := n.d.kit.Publish(context.Background(), "acme", "lobby", "notice", map[string]int{"n": 1}); err != nil {
		t.Fatal(err)
	}
	if f := read(t, bob); f.Type != "notice" {
		t.Fatalf("bob: %+v", f)
	}
}

// TestSSE: the stream is admitted as a WebSocket is, sends frames as named events, follows a
// room, and sends heartbeat comments.
func TestSSE(t *testing.T) {
	t.Parallel()
	n := start(t, server.Config{}, &demo{opts: appstream.Options{PingInterval: 50 * time.Millisecond}})
	get := func(path, token string, hdr http.Header) *http.Response {
		req, _ := http.NewRequest("GET", n.hs.URL+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		for k, v := range hdr {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	if r := get("/apps/kitdemo/sse/room/lobby", "", nil); r.StatusCode != 401 {
		t.Fatalf("no credentials: %d", r.StatusCode)
	}
	if r := get("/apps/kitdemo/sse/room/lobby", tok("ann", "acme"), http.Header{"Origin": {"https://evil.test"}}); r.StatusCode != 403 {
		t.Fatalf("foreign origin: %d", r.StatusCode)
	}
	r := get("/apps/kitdemo/sse/room/lobby", tok("ann", "acme"), nil)
	if r.StatusCode != 200 || r.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", r.StatusCode, r.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(r.Body)
	next := func() (event, data string, pings int) {
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == ": ping":
				pings++
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = strings.TrimPrefix(line, "data: ")
			case line == "" && event != "":
				return event, data, pings
			}
		}
		t.Fatalf("stream ended: %v", sc.Err())
		return
	}
	if ev, data, _ := next(); ev != "joined" || !strings.Contains(data, `"user":"ann"`) {
		t.Fatalf("first event %s %s", ev, data)
	}
	// Wait for a heartbeat, then publish to the room.
	pinged := false
	for !pinged {
		if !sc.Scan() {
			t.Fatal("stream ended")
		}
		pinged = sc.Text() == ": ping"
	}
	if err := n.d.kit.Publish(context.Background(), "acme", "lobby", "notice", "hello"); err != nil {
		t.Fatal(err)
	}
	if ev, data, _ := next(); ev != "notice" || !strings.Contains(data, `"data":"hello"`) {
		t.Fatalf("room event %s %s", ev, data)
	}
}

// pgURL returns a connection string to a fresh schema of the test database, dropped when the
// test ends, or skips the test when Postgres is unreachable.
func pgURL(t *testing.T) string { return dbtest.PostgresURL(t, "kit") }

func redisURL(t *testing.T) string {
	t.Helper()
	addr := "127.0.0.1:6379"
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Skipf("Redis unreachable at %s: %v", addr, err)
	}
	c.Close()
	return "redis://" + addr + "/0"
}

// TestRoomsAcrossReplicasPostgres and TestRoomsAcrossReplicasRedis start two replicas on one
// database: a frame said on one reaches a client of the other, through LISTEN/NOTIFY or Redis.
func TestRoomsAcrossReplicasPostgres(t *testing.T) {
	t.Parallel()
	replicas(t, server.Config{DatabaseURL: pgURL(t)}, "postgres")
}

func TestRoomsAcrossReplicasRedis(t *testing.T) {
	t.Parallel()
	replicas(t, server.Config{DatabaseURL: pgURL(t), RedisURL: redisURL(t)}, "redis")
}

func replicas(t *testing.T, cfg server.Config, kind string) {
	a := start(t, cfg, &demo{})
	b := start(t, cfg, &demo{})
	ca, _ := dial(t, a.wsURL(tok("ann", "acme")), nil)
	cb, _ := dial(t, b.wsURL(tok("bob", "acme")), nil)
	room := fmt.Sprint("r-", time.Now().UnixNano()) // the bus is shared with other tests' servers
	for _, c := range []*websocket.Conn{ca, cb} {
		send(t, c, map[string]any{"id": "j", "type": "join", "room": room})
		if f := read(t, c); f.Type != "ack" {
			t.Fatalf("join: %+v", f)
		}
	}
	send(t, cb, map[string]any{"id": "s", "type": "say", "room": room, "data": map[string]string{"from": "b"}})
	if f := read(t, ca); f.Type != "said" || f.Room != room || string(f.Data) != `{"from":"b"}` {
		t.Fatalf("replica a got %+v", f)
	}
	// And from server code on a to b's client.
	if err := a.d.kit.Publish(context.Background(), "acme", room, "notice", "x"); err != nil {
		t.Fatal(err)
	}
	for {
		f := read(t, cb)
		if f.Type == "notice" {
			break
		}
		if f.Type != "said" && f.Type != "ack" {
			t.Fatalf("replica b got %+v", f)
		}
	}
	if got := a.d.kit.Transport(); got != kind {
		t.Fatalf("rooms travel by %s, want %s", got, kind)
	}
}

// TestOnePrincipal: a WebSocket's principal is the one the API knows: a run started from the
// connection acts for it (the graph reads it with server.PrincipalFrom), and with per-user
// ownership another user of the tenant can neither see that run from his own connection nor
// its thread through the API, while its owner can.
func TestOnePrincipal(t *testing.T) {
	t.Parallel()
	n := start(t, server.Config{Auth: server.AuthConfig{PerUser: true}}, &demo{})
	ann, _ := dial(t, n.wsURL(tok("ann", "acme")), nil)
	send(t, ann, map[string]any{"id": "a1", "type": "ask", "data": map[string]string{"text": "hi"}})
	f := read(t, ann)
	var answer struct {
		ThreadID string `json:"thread_id"`
		RunID    string `json:"run_id"`
		Output   askState
	}
	if err := json.Unmarshal(f.Data, &answer); err != nil || f.Type != "answer" || answer.Output.Reply != "echo: hi for ann" {
		t.Fatalf("answer %+v (%s): %v", f, f.Data, err)
	}
	if f := read(t, ann); f.Type != "ack" || f.ID != "a1" {
		t.Fatalf("ack %+v", f)
	}
	ref := map[string]string{"ThreadID": answer.ThreadID, "RunID": answer.RunID}
	bob, _ := dial(t, n.wsURL(tok("bob", "acme")), nil)
	send(t, bob, map[string]any{"id": "b1", "type": "peek", "data": ref})
	if f := read(t, bob); f.Type != "error" || f.Code != "not_found" {
		t.Fatalf("bob peeks at ann's run: %+v", f)
	}
	send(t, ann, map[string]any{"id": "a2", "type": "peek", "data": ref})
	if f := read(t, ann); f.Type != "run" || !strings.Contains(string(f.Data), "success") {
		t.Fatalf("ann peeks at her run: %+v", f)
	}
	for user, want := range map[string]int{"ann": 200, "bob": 404} {
		req, _ := http.NewRequest("GET", n.hs.URL+"/threads/"+answer.ThreadID, nil)
		req.Header.Set("Authorization", "Bearer "+tok(user, "acme"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%s GET the thread: %d, want %d", user, resp.StatusCode, want)
		}
	}
}
