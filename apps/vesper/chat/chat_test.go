package chat_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/trellis-go/trellis/apps/vesper/app"
	"github.com/trellis-go/trellis/apps/vesper/chat"
	"github.com/trellis-go/trellis/apps/vesper/reports"
	"github.com/trellis-go/trellis/apps/vesper/tools"
	"github.com/trellis-go/trellis/apps/vesper/warehouse"
	"github.com/trellis-go/trellis/apps/vesper/warehousetest"
)

func TestMain(m *testing.M) { warehousetest.Main(m) }

var tokens = map[string]chat.Principal{
	"admin-token":  {Tenant: "vesper", User: "ana", Permissions: []string{"*"}},
	"viewer-token": {Tenant: "vesper", User: "vic", Permissions: []string{"chat:read_project_data"}},
}

func setup(t *testing.T, compressAt int) (*httptest.Server, *chat.Records) {
	t.Helper()
	ctx := context.Background()
	w := warehousetest.SQLite(t)
	now := func() time.Time { return warehouse.Today.Add(10 * time.Hour) }
	menu, err := reports.NewMenu(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range reports.DefaultItems("vesper") {
		if err := menu.Put(ctx, it); err != nil {
			t.Fatal(err)
		}
	}
	linker := &reports.Linker{Menu: menu}
	a, err := app.New(app.Config{Toolkit: tools.New(w, &tools.Options{Now: now}), Linker: linker, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := chat.NewRecords(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	h := &chat.Handler{App: a, Records: rec, Linker: linker, CompressAt: compressAt,
		Authenticate: func(_ context.Context, tok string) (chat.Principal, error) {
			if p, ok := tokens[tok]; ok {
				return p, nil
			}
			return chat.Principal{}, chat.ErrUnauthorized
		}}
	mux := http.NewServeMux()
	mux.Handle(chat.Path, h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, rec
}

func dial(t *testing.T, srv *httptest.Server, token string) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http")+chat.Path+"?token="+token, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c
}

// exchange sends one frame and reads frames up to chat.complete or error.
func exchange(t *testing.T, c *websocket.Conn, frame string) (types []string, streamed string, last chat.Out) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		t.Fatal(err)
	}
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var o chat.Out
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
	b, _ := json.Marshal(chat.In{Type: "chat.message", Content: q})
	return string(b)
}

func TestAppendixBOverWebSocket(t *testing.T) {
	srv, rec := setup(t, 0)
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
	srv, _ := setup(t, 0)
	_, resp, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http")+chat.Path+"?token=nope", nil)
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
	srv, rec := setup(t, 6)
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
	// The next turn starts from the summary and the messages after it.
	_, _, o := exchange(t, c, msg("Show me all projects that are off track (red)"))
	if o.Type != "chat.complete" || !strings.Contains(o.Content, "3 projects") {
		t.Fatalf("after compression: %+v", o)
	}
}
