package appstream_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/appstream"
)

// rawFrame is the demo's own protocol on a Socket: socket.io's shape, {"event", "data"}.
type rawFrame struct {
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data,omitempty"`
}

// rawSocket refuses ?deny= with a 404 of its own, then answers each message: "echo" with its
// data, "join" and "pub" with a room, "slow" after a while (the client keeps being pinged).
func rawSocket(w http.ResponseWriter, r *http.Request, p server.Principal) func(*appstream.Socket) error {
	if r.URL.Query().Get("deny") != "" {
		http.Error(w, "no such session", http.StatusNotFound)
		return nil
	}
	return func(s *appstream.Socket) error {
		if err := s.SendFrame(rawFrame{Event: "hello", Data: json.RawMessage(`"` + p.User + `"`)}); err != nil {
			return err
		}
		for {
			b, err := s.Read()
			if err != nil {
				return err
			}
			var f rawFrame
			if err := json.Unmarshal(b, &f); err != nil {
				_ = s.SendFrame(rawFrame{Event: "error", Data: json.RawMessage(`"not JSON"`)})
				continue
			}
			var room string
			_ = json.Unmarshal(f.Data, &room)
			switch f.Event {
			case "echo":
				err = s.SendFrame(f)
			case "join":
				if err = s.Join(room); err == nil {
					err = s.SendFrame(rawFrame{Event: "joined", Data: f.Data})
				}
			case "pub":
				err = s.PublishFrame(s.Context(), room, rawFrame{Event: "news", Data: f.Data})
			case "slow":
				// Longer than several ping intervals, while the client sends more.
				select {
				case <-time.After(1200 * time.Millisecond):
				case <-s.Context().Done():
				}
				err = s.SendFrame(rawFrame{Event: "slow-done"})
			case "bye":
				_ = s.SendFrame(rawFrame{Event: "bye"})
				return nil
			}
			if err != nil {
				return err
			}
		}
	}
}

// rawEvents reads a JSON body before it streams: a bad one is answered 400 in the app's shape.
func rawEvents(w http.ResponseWriter, r *http.Request, p server.Principal) func(*appstream.Stream) error {
	var in struct {
		Say string `json:"say"`
	}
	if json.NewDecoder(r.Body).Decode(&in) != nil || in.Say == "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":"send {\"say\": \"...\"}","field":"say"}`)
		return nil
	}
	return func(s *appstream.Stream) error {
		for _, typ := range []string{"thinking", "message"} {
			if err := s.SendFrame(map[string]string{"type": typ, "content": in.Say + " to " + p.User}); err != nil {
				return err
			}
		}
		return nil
	}
}

func (n *node) rawURL(token, query string) string {
	return "ws" + strings.TrimPrefix(n.hs.URL, "http") + "/apps/kitdemo/raw?token=" + token + query
}

func readRaw(t *testing.T, c *websocket.Conn) rawFrame {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, b, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var f rawFrame
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("frame %s: %v", b, err)
	}
	return f
}

func sendRaw(t *testing.T, c *websocket.Conn, event string, data any) {
	t.Helper()
	d, _ := json.Marshal(data)
	b, _ := json.Marshal(rawFrame{Event: event, Data: d})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatalf("write: %v", err)
	}
}

// TestSocketOwnProtocol: a Socket is admitted as a Conn is (credentials, Origin, the tenant's
// rate), its open function can refuse before the upgrade, and its frames are the app's own
// (no acks added), rooms included.
func TestSocketOwnProtocol(t *testing.T) {
	t.Parallel()
	n := start(t, server.Config{RateLimit: 0.01, RateBurst: 3}, &demo{})
	if _, code := dial(t, n.rawURL("", ""), nil); code != http.StatusUnauthorized {
		t.Fatalf("no credentials: %d, want 401", code)
	}
	if _, code := dial(t, n.rawURL(tok("ann", "acme"), ""), http.Header{"Origin": {"https://evil.test"}}); code != http.StatusForbidden {
		t.Fatalf("foreign origin: %d, want 403", code)
	}
	if _, code := dial(t, n.rawURL(tok("ann", "acme"), "&deny=1"), nil); code != http.StatusNotFound {
		t.Fatalf("refused by open: %d, want its 404", code)
	}
	ann, _ := dial(t, n.rawURL(tok("ann", "acme"), ""), nil)
	bob, _ := dial(t, n.rawURL(tok("bob", "acme"), ""), nil)
	for who, c := range map[string]*websocket.Conn{"ann": ann, "bob": bob} {
		if f := readRaw(t, c); f.Event != "hello" || string(f.Data) != `"`+who+`"` {
			t.Fatalf("%s's first frame: %+v", who, f)
		}
	}
	sendRaw(t, ann, "echo", map[string]int{"x": 1})
	if f := readRaw(t, ann); f.Event != "echo" || string(f.Data) != `{"x":1}` {
		t.Fatalf("echo: %+v", f)
	}
	for _, c := range []*websocket.Conn{ann, bob} {
		sendRaw(t, c, "join", "shop")
		if f := readRaw(t, c); f.Event != "joined" {
			t.Fatalf("join: %+v", f)
		}
	}
	sendRaw(t, ann, "pub", "shop")
	for _, c := range []*websocket.Conn{ann, bob} {
		if f := readRaw(t, c); f.Event != "news" || string(f.Data) != `"shop"` {
			t.Fatalf("room frame: %+v", f)
		}
	}
	// Frames the handler queued before returning are written before the close.
	sendRaw(t, ann, "bye", nil)
	if f := readRaw(t, ann); f.Event != "bye" {
		t.Fatalf("bye: %+v", f)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, _, err := ann.Read(ctx); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Fatalf("after bye: %v, want a normal closure", err)
	}
	// The tenant's request rate counts admitted attempts: a burst of 3, used by the refused one, ann and bob.
	if _, code := dial(t, n.rawURL(tok("cy", "acme"), ""), nil); code != http.StatusTooManyRequests {
		t.Fatalf("past the burst: %d, want 429", code)
	}
}

// TestSocketBusyHandlerKeepsClient: while the app works on one message and the client sends
// more, the client is not let go for a missing pong (its pong waits behind its messages), and
// the messages are all handled in order.
func TestSocketBusyHandlerKeepsClient(t *testing.T) {
	t.Parallel()
	d := &demo{opts: appstream.Options{PingInterval: 150 * time.Millisecond}}
	n := start(t, server.Config{}, d)
	c, _ := dial(t, n.rawURL(tok("ann", "acme"), ""), nil)
	readRaw(t, c)
	sendRaw(t, c, "slow", nil)
	sendRaw(t, c, "echo", 1)
	sendRaw(t, c, "echo", 2)
	for _, want := range []string{"slow-done", "echo", "echo"} {
		if f := readRaw(t, c); f.Event != want {
			t.Fatalf("got %+v, want %s", f, want)
		}
	}
}

// TestEventStreamOwnShape: an EventStream's open function answers a bad request itself, and the
// events keep the app's shape: named by the frame's "type", the frame as the data.
func TestEventStreamOwnShape(t *testing.T) {
	t.Parallel()
	n := start(t, server.Config{}, &demo{})
	post := func(body string) *http.Response {
		req, _ := http.NewRequest("POST", n.hs.URL+"/apps/kitdemo/events", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok("ann", "acme"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	if r := post(`{}`); r.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad body: %d, want 400", r.StatusCode)
	}
	r := post(`{"say":"hi"}`)
	if r.StatusCode != 200 {
		t.Fatalf("stream: %d", r.StatusCode)
	}
	var events []string
	sc := bufio.NewScanner(r.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "event: ") || strings.HasPrefix(line, "data: ") {
			events = append(events, line)
		}
	}
	want := []string{"event: thinking", `data: {"content":"hi to ann","type":"thinking"}`, "event: message", `data: {"content":"hi to ann","type":"message"}`}
	if strings.Join(events, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(events, "\n"), strings.Join(want, "\n"))
	}
}
