package listforge_test

import (
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/trellis-go/trellis/appdb/appdbtest"
	"github.com/trellis-go/trellis/apps/listforge"
	"github.com/trellis-go/trellis/apps/listforge/catalog"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/servertest"
)

// TestChatReachesAnotherReplica (issue 16 item 8): a chat session followed on two replicas of
// one Postgres, by the same user in two tabs. A message sent on one replica is seen on the
// other as on the first: the user's message, the streamed tokens, the answer and an applied
// action, through the appstream kit's rooms (Postgres LISTEN/NOTIFY, or Redis).
func TestChatReachesAnotherReplica(t *testing.T) {
	t.Parallel()
	for _, bus := range []string{"postgres", "redis"} {
		t.Run(bus, func(t *testing.T) {
			t.Parallel()
			cfg := server.Config{DatabaseURL: appdbtest.PostgresURL(t)}
			if bus == "redis" {
				cfg.RedisURL = redisURL(t)
			}
			a, b := serveWith(t, cfg), serveWith(t, cfg)
			const ana = "key-acme-ana-0000000"
			it := a.demoItem(ana, catalog.DemoLabels)
			var sess struct{ SessionID string }
			if code := a.do(ana, "POST", "/api/v1/items/"+it.ID+"/chat/sessions", nil, &sess); code != 201 {
				t.Fatalf("session: %d", code)
			}
			onA, onB := a.dial(ana, listforge.ChatWSPath), b.dial(ana, listforge.ChatWSPath)
			for _, c := range []*websocket.Conn{onA, onB} {
				send(t, c, "join_session", map[string]string{"sessionId": sess.SessionID})
				if f := read(t, c); f.Event != "joined" {
					t.Fatalf("join: %s %s", f.Event, f.Data)
				}
			}
			send(t, onA, "send_message", map[string]string{"sessionId": sess.SessionID, "content": "Set the price to $289"})
			userA, answerA, streamedA := readTurn(t, onA)
			userB, answerB, streamedB := readTurn(t, onB)
			if userB.Content != "Set the price to $289" || userB.ID != userA.ID {
				t.Fatalf("the user's message on replica b: %+v (a: %+v)", userB, userA)
			}
			if answerB.ID == "" || answerB.ID != answerA.ID || !strings.Contains(answerB.Content, "$289") || len(answerB.Actions) != 1 {
				t.Fatalf("the answer on replica b: %+v (a: %+v)", answerB, answerA)
			}
			if streamedB == "" || streamedB != streamedA || streamedB != answerB.Content {
				t.Fatalf("streamed on b %q, on a %q, answer %q", streamedB, streamedA, answerB.Content)
			}
			// An action applied from replica b is seen on replica a.
			send(t, onB, "apply_action", map[string]any{"messageId": answerB.ID, "actionIndex": 0})
			for _, c := range []*websocket.Conn{onB, onA} {
				f := read(t, c)
				var res listforge.ActionResult
				_ = json.Unmarshal(f.Data, &res)
				if f.Event != "action_applied" || !res.Success || res.Item == nil || *res.Item.DefaultPrice != 289 {
					t.Fatalf("action_applied: %s %s", f.Event, f.Data)
				}
			}
			// Another user of the organisation cannot follow the session on either replica.
			bob := b.dial("key-acme-bob-0000000", listforge.ChatWSPath)
			send(t, bob, "join_session", map[string]string{"sessionId": sess.SessionID})
			if f := read(t, bob); f.Event != "error" {
				t.Fatalf("another user joined: %s %s", f.Event, f.Data)
			}
		})
	}
}

// serveWith starts a replica with cfg (its database, its Redis) and the test's API keys.
func serveWith(t *testing.T, cfg server.Config) *env {
	t.Helper()
	cfg.Apps = []server.App{listforge.New(listforge.Options{})}
	cfg.DataDir = t.TempDir()
	cfg.Auth = server.AuthConfig{APIKeys: keys}
	s := servertest.Start(t, cfg)
	return &env{t: t, url: s.URL, s: s.Server}
}

// redisURL is the test Redis, or the test skips when it is unreachable.
func redisURL(t *testing.T) string {
	t.Helper()
	const addr = "127.0.0.1:6379"
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Skipf("Redis unreachable at %s: %v", addr, err)
	}
	c.Close()
	return "redis://" + addr + "/0"
}
