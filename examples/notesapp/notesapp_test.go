package notesapp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/trellis-go/trellis/appdb/appdbtest"
	"github.com/trellis-go/trellis/examples/notesapp"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/appstream"
)

var keys = map[string]server.Principal{
	"key-acme-ann-000000": {Tenant: "acme", User: "ann"},
	"key-acme-bob-000000": {Tenant: "acme", User: "bob"},
	"key-globex-eve-0000": {Tenant: "globex", User: "eve"},
}

// TestNotesApp runs the example app on SQLite and on Postgres: notes saved through the REST
// route are the caller's alone (app tables scoped to tenant and user) and are memory items of
// the tenant's store; a question over the kit's WebSocket runs through the run API and streams
// tokens and progress, and the agent's per-call context is not stored in the thread.
func TestNotesApp(t *testing.T) {
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			cfg := server.Config{DataDir: t.TempDir()}
			if db == "postgres" {
				cfg.DatabaseURL = appdbtest.PostgresURL(t) // skips, saying so, without Postgres
			}
			cfg.Apps = []server.App{notesapp.App()}
			cfg.Auth = server.AuthConfig{APIKeys: keys}
			cfg.Logger = slog.New(slog.DiscardHandler)
			s, err := server.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(s.Handler())
			t.Cleanup(func() { hs.CloseClientConnections(); hs.Close(); s.Close() })
			call := func(key, method, path string, body any, out any) int {
				t.Helper()
				var rd io.Reader
				if body != nil {
					b, _ := json.Marshal(body)
					rd = bytes.NewReader(b)
				}
				req, _ := http.NewRequest(method, hs.URL+path, rd)
				req.Header.Set("x-api-key", key)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				if out != nil {
					_ = json.NewDecoder(resp.Body).Decode(out)
				}
				return resp.StatusCode
			}
			const ann, bob, eve = "key-acme-ann-000000", "key-acme-bob-000000", "key-globex-eve-0000"

			var note notesapp.Note
			if code := call(ann, "POST", "/apps/notes/api/notes", map[string]string{"text": "The dentist is on Friday at 10"}, &note); code != 201 || note.ID == "" {
				t.Fatalf("save a note: %d %+v", code, note)
			}
			var bad map[string]string
			if code := call(ann, "POST", "/apps/notes/api/notes", map[string]string{"text": " "}, &bad); code != 400 || !strings.Contains(bad["error"], `"text"`) {
				t.Fatalf("an empty note: %d %v", code, bad)
			}
			if code := call("", "GET", "/apps/notes/api/notes", nil, nil); code != 401 {
				t.Fatalf("no credentials: %d", code)
			}
			for key, want := range map[string]int{ann: 1, bob: 0, eve: 0} {
				var list []notesapp.Note
				if code := call(key, "GET", "/apps/notes/api/notes", nil, &list); code != 200 || len(list) != want {
					t.Fatalf("%s lists %d notes (%d), want %d", key, len(list), code, want)
				}
			}
			// The note is a memory item of ann's tenant, which another tenant does not see.
			var item struct{ Value map[string]any }
			path := "/store/items?namespace=notes.ann&key=" + note.ID
			if code := call(ann, "GET", path, nil, &item); code != 200 || item.Value["text"] != note.Text {
				t.Fatalf("the store item for its tenant: %d %+v", code, item)
			}
			var other *struct{ Value map[string]any }
			if code := call(eve, "GET", path, nil, &other); code != 200 || other != nil {
				t.Fatalf("the store item for another tenant: %d %+v, want null (not found)", code, other)
			}

			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http")+"/apps/notes/ws?token="+ann, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.CloseNow()
			q, _ := json.Marshal(map[string]any{"id": "q1", "type": "ask", "data": map[string]string{"text": "When is the dentist?"}})
			if err := ws.Write(ctx, websocket.MessageText, q); err != nil {
				t.Fatal(err)
			}
			seen := map[string]int{}
			var answer struct{ ThreadID, Text string }
			for seen["ack"] == 0 {
				_, b, err := ws.Read(ctx)
				if err != nil {
					t.Fatal(err)
				}
				var f appstream.Frame
				if err := json.Unmarshal(b, &f); err != nil {
					t.Fatal(err)
				}
				seen[f.Type]++
				switch f.Type {
				case "answer":
					var a struct {
						ThreadID string `json:"thread_id"`
						Text     string `json:"text"`
					}
					_ = json.Unmarshal(f.Data, &a)
					answer.ThreadID, answer.Text = a.ThreadID, a.Text
				case "error":
					t.Fatalf("error frame: %s", b)
				}
			}
			if seen["token"] == 0 || seen["progress"] == 0 || seen["answer"] != 1 || answer.Text == "" {
				t.Fatalf("frames %v, answer %+v", seen, answer)
			}
			// The notes were context for the model call only: the thread holds the question and the
			// answer, no system message.
			var state struct {
				Values struct {
					Messages []struct{ Type string } `json:"messages"`
				} `json:"values"`
			}
			if code := call(ann, "GET", "/threads/"+answer.ThreadID+"/state", nil, &state); code != 200 {
				t.Fatalf("the thread's state: %d", code)
			}
			for _, m := range state.Values.Messages {
				if m.Type == "system" {
					t.Fatalf("the per-call context was stored in the thread: %+v", state.Values.Messages)
				}
			}
			if len(state.Values.Messages) < 2 {
				t.Fatalf("the thread holds %d messages", len(state.Values.Messages))
			}
		})
	}
}
