package vesper

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/trellis-go/trellis/appdb/appdbtest"
	"github.com/trellis-go/trellis/apps/vesper/store"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/trellis-go/trellis/apps/vesper/reports"
	"github.com/trellis-go/trellis/apps/vesper/tools"
	"github.com/trellis-go/trellis/apps/vesper/warehouse"
	"github.com/trellis-go/trellis/apps/vesper/warehousetest"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/appstream"
)

var tokens = map[string]server.Principal{
	"admin-token":  {Tenant: "vesper", User: "ana", Permissions: []string{"*"}},
	"viewer-token": {Tenant: "vesper", User: "vic", Permissions: []string{"chat:read_project_data"}},
}

// key is the API key a test token name stands for (keys are at least 16 characters).
func key(name string) string { return name + "-0123456789abcdef" }

func setupChat(t *testing.T, compressAt int) (*httptest.Server, *store.Records) {
	t.Helper()
	return serve(t, warehousetest.SQLite(t), tokens, compressAt)
}

// serve runs a trellis server with the app "vesper" over w: the assistant and the chat
// WebSocket at /apps/vesper/ws/v1/chat, each token name an API key for its principal.
func serve(t *testing.T, w *warehouse.Warehouse, principals map[string]server.Principal, compressAt int) (*httptest.Server, *store.Records) {
	t.Helper()
	now := func() time.Time { return warehouse.Today.Add(10 * time.Hour) }
	var rec *store.Records
	db := appdbtest.SQLite(t, "vesper")
	vesper := server.App{Name: "vesper", Build: func(ctx context.Context, d server.AppDeps) (*server.AppParts, error) {
		menu, err := reports.NewMenu(ctx, db)
		if err != nil {
			return nil, err
		}
		tenants := map[string]bool{}
		for _, p := range principals {
			tenants[p.Tenant] = true
		}
		for tenant := range tenants {
			for _, it := range reports.DefaultItems(tenant) {
				if err := menu.Put(ctx, it); err != nil {
					return nil, err
				}
			}
		}
		linker := &reports.Linker{Menu: menu}
		a, err := newAssistant(assistantConfig{Toolkit: tools.New(w, &tools.Options{Now: now}), Linker: linker, Now: now, Compile: d.Compile})
		if err != nil {
			return nil, err
		}
		if rec, err = store.NewRecords(ctx, db); err != nil {
			return nil, err
		}
		h := &chatHandler{App: a, Runs: d.Runs, Records: rec, Linker: linker, CompressAt: compressAt, Kit: appstream.New(d, nil)}
		mux := http.NewServeMux()
		mux.Handle(chatPath, h)
		return &server.AppParts{Graphs: []server.AppGraph{{ID: "vesper", Graph: a.Graph.Runnable()}}, Handler: mux}, nil
	}}
	keys := map[string]server.Principal{}
	for name, p := range principals {
		keys[key(name)] = p
	}
	s, err := server.New(server.Config{Apps: []server.App{vesper}, DataDir: t.TempDir(), Auth: server.AuthConfig{APIKeys: keys},
		Logger: slog.New(slog.DiscardHandler), ShutdownGrace: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		s.Close()
	})
	return srv, rec
}

// wsURL is the chat WebSocket's address with a token (a name from the test's principals).
func wsURL(srv *httptest.Server, token string) string {
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/apps/vesper" + chatPath + "?token=" + key(token)
}

func dial(t *testing.T, srv *httptest.Server, token string) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.Dial(context.Background(), wsURL(srv, token), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c
}

// exchange sends one frame and reads frames up to chat.complete or error.
func exchange(t *testing.T, c *websocket.Conn, frame string) (types []string, streamed string, last chatOut) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		t.Fatal(err)
	}
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var o chatOut
		if err := json.Unmarshal(b, &o); err != nil {
			t.Fatal(err)
		}
		types = append(types, o.Type)
		streamed += o.Token
		if o.Type == "chat.complete" || o.Type == "error" {
			return types, streamed, o
		}
	}
}

func msg(q string) string {
	b, _ := json.Marshal(chatIn{Type: "chat.message", Content: q})
	return string(b)
}

func TestAppendixBOverWebSocket(t *testing.T) {
	srv, rec := setupChat(t, 0)
	c := dial(t, srv, "admin-token")
	cases := []struct{ q, want, link string }{
		{"What was the average day-ahead price for NP15 in CAISO for 2025 from Ascend?", "**$48.73/MWh** based on 8,760 hourly data points", "Day-Ahead Curves Dashboard"},
		{"What is the health status of Nazareth Solar?", "| Interconnection | 🔴 Red | 40% | Sep 2025 | Phase II study delayed |", "Project Health Report"},
		{"Show me all projects that are off track (red)", "There are **3 projects** currently flagged as **off track** 🔴", ""},
		{"Compare Ascend vs Hitachi day-ahead prices for SP15 in CAISO for 2025", "**$2.66/MWh (5.1%) higher**", ""},
		{"What milestone dates changed in the last week?", "| Feb 23 | Mojave BESS | Mechanical Completion | Dec 2026 | Feb 2027 | +2 months |", ""},
	}
	var session string
	for _, tc := range cases {
		types, streamed, done := exchange(t, c, msg(tc.q))
		if types[0] != "chat.thinking" || done.Type != "chat.complete" {
			t.Fatalf("%q: frames %v (%s)", tc.q, types, done.Message)
		}
		if streamed != done.Content {
			t.Errorf("%q: the tokens do not add up to the answer:\n%q\n%q", tc.q, streamed, done.Content)
		}
		if !strings.Contains(done.Content, tc.want) {
			t.Errorf("%q: answer lacks %q:\n%s", tc.q, tc.want, done.Content)
		}
		if tc.link != "" {
			found := false
			for _, l := range done.Links {
				found = found || l.ReportName == tc.link
			}
			if !found {
				t.Errorf("%q: deep links %+v lack %s", tc.q, done.Links, tc.link)
			}
		}
		session = done.SessionID
	}
	ctx := context.Background()
	msgs, err := rec.Messages(ctx, session, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 10 {
		t.Fatalf("%d messages recorded, want 10", len(msgs))
	}
	a := msgs[3] // B.2's answer
	if a.Role != "assistant" || a.Intent != "project_execution" || len(a.AgentsUsed) != 1 || a.AgentsUsed[0] != "per_agent" ||
		!strings.Contains(string(a.ToolCalls), "get_project_health") || !strings.Contains(string(a.DeepLinks), "Project Health Report") || a.TokenCount == 0 {
		t.Errorf("B.2 record: %+v", a)
	}
	title, err := rec.Title(ctx, session)
	if err != nil || title == "" || len(title) > 80 {
		t.Errorf("title %q, %v", title, err)
	}
}

func TestErrorsAndAuth(t *testing.T) {
	srv, _ := setupChat(t, 0)
	_, resp, err := websocket.Dial(context.Background(), wsURL(srv, "nope"), nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("bad token: err %v resp %v", err, resp)
	}
	c := dial(t, srv, "viewer-token")
	for _, bad := range []string{"not json", `{"type":"chat.typing"}`, `{"type":"chat.message","content":"  "}`} {
		_, _, o := exchange(t, c, bad)
		if o.Type != "error" || !strings.Contains(o.Message, "chat:") {
			t.Errorf("%s: got %+v", bad, o)
		}
	}
	// The connection survives bad frames; a denied tool is explained.
	_, _, o := exchange(t, c, msg("What is the budget vs actuals for Nazareth Solar?"))
	if o.Type != "chat.complete" || !strings.Contains(o.Content, "You don't have access") {
		t.Fatalf("viewer asking for budgets: %+v", o)
	}
}

func TestLongSessionsAreCompressed(t *testing.T) {
	srv, rec := setupChat(t, 6)
	c := dial(t, srv, "admin-token")
	var session string
	for range 4 {
		_, _, o := exchange(t, c, msg("What is the health status of Nazareth Solar?"))
		session = o.SessionID
	}
	ctx := context.Background()
	text, through, err := rec.Summary(ctx, session)
	if err != nil || text == "" || through == 0 {
		t.Fatalf("summary %q through %d: %v", text, through, err)
	}
	// Offline, the summary is faithful to the session: it names the project asked about.
	if !strings.Contains(text, "Nazareth Solar") {
		t.Fatalf("the summary %q does not name the project the session asked about", text)
	}
	// The next turn starts from the summary and the messages after it.
	_, _, o := exchange(t, c, msg("Show me all projects that are off track (red)"))
	if o.Type != "chat.complete" || !strings.Contains(o.Content, "3 projects") {
		t.Fatalf("after compression: %+v", o)
	}
}

// A session is one thread: a follow-up that changes one filter keeps the others, and the
// conversation is the thread's state through the Agent Protocol as well.
func TestFollowUpsKeepFilters(t *testing.T) {
	srv, _ := setupChat(t, 0)
	c := dial(t, srv, "admin-token")
	_, _, first := exchange(t, c, msg("Compare Ascend vs Hitachi day-ahead prices for SP15 in CAISO for 2025"))
	if first.Type != "chat.complete" || !strings.Contains(first.Content, "SP15") {
		t.Fatalf("first: %+v", first)
	}
	_, _, o := exchange(t, c, msg("What about NP15?"))
	if o.Type != "chat.complete" || o.Intent != "dayahead_curve" || !strings.Contains(o.Content, "NP15") || !strings.Contains(o.Content, "2025") {
		t.Fatalf("follow-up lost the filters: %+v", o)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/threads/"+threadID(o.SessionID)+"/state", nil)
	req.Header.Set("X-Api-Key", key("admin-token"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Values struct {
			Messages []struct {
				Type    string `json:"type"`
				Content string `json:"content"`
			} `json:"messages"`
		} `json:"values"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode != 200 {
		t.Fatalf("thread state: %d %v", resp.StatusCode, err)
	}
	if n := len(st.Values.Messages); n != 4 || st.Values.Messages[2].Content != "What about NP15?" {
		t.Errorf("the thread holds %d messages: %+v", n, st.Values.Messages)
	}
}

// A turn whose connection went away before its answer was recorded (the server restarted, or
// the client left) is finished when the client comes back to the session: the run that was
// started answers, and the answer is recorded once.
func TestUnfinishedTurnIsCompletedOnReconnect(t *testing.T) {
	srv, rec := setupChat(t, 0)
	c := dial(t, srv, "admin-token")
	_, _, o := exchange(t, c, msg("Hello there"))
	session := o.SessionID
	c.CloseNow()
	// What a turn does before it streams: the user's message recorded, the run started.
	ctx := context.Background()
	q := "What is the health status of Nazareth Solar?"
	id, err := rec.Add(ctx, store.Message{SessionID: session, Tenant: "vesper", Role: "user", Content: q})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"assistant_id": "vesper", "input": map[string]any{"messages": []any{map[string]any{"type": "human", "content": q}}},
		"metadata": map[string]any{"vesper_message_id": fmt.Sprint(id)}, "multitask_strategy": "enqueue"})
	req, _ := http.NewRequest("POST", srv.URL+"/threads/"+threadID(session)+"/runs", strings.NewReader(string(body)))
	req.Header.Set("X-Api-Key", key("admin-token"))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("start the run: %v %v", err, resp.Status)
	}
	resp.Body.Close()

	c2, _, err := websocket.Dial(ctx, wsURL(srv, "admin-token")+"&session_id="+session, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.CloseNow()
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var done chatOut
	for done.Type != "chat.complete" {
		_, b, err := c2.Read(rctx)
		if err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(b, &done)
		if done.Type == "error" {
			t.Fatalf("error frame: %s", b)
		}
	}
	if !strings.Contains(done.Content, "Nazareth Solar") || done.SessionID != session {
		t.Fatalf("the finished turn: %+v", done)
	}
	msgs, err := rec.Messages(ctx, session, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(msgs); n != 4 || msgs[3].Role != "assistant" || !strings.Contains(msgs[3].Content, "Nazareth Solar") {
		t.Fatalf("records after the finished turn: %d %+v", n, msgs)
	}
	// The next turn goes on as usual, and nothing is recorded twice.
	_, _, o = exchange(t, c2, msg("Show me all projects that are off track (red)"))
	if o.Type != "chat.complete" || !strings.Contains(o.Content, "3 projects") {
		t.Fatalf("next turn: %+v", o)
	}
	if msgs, _ := rec.Messages(ctx, session, 0); len(msgs) != 6 {
		t.Errorf("%d records, want 6 (no answer recorded twice)", len(msgs))
	}
}
