package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
)

// tasks/get gives a task's history (its context's conversation, the last historyLength
// messages), and file parts reach the graph: an image as a content block of the user's
// message, a text file as its text; other files are refused as an unsupported content type.
func TestA2AHistoryAndFileParts(t *testing.T) {
	t.Parallel()
	const key = "a2a-more-key-0123456789abcdef"
	b, _ := a2aSetup(t, map[string]Principal{key: {User: "u", Tenant: "t"}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, _ := a2aClient(t, b, key, "chat")

	first := sendTask(t, ctx, c, textMessage("hello"))
	again := textMessage("again")
	again.Message.ContextID = first.ContextID
	second := sendTask(t, ctx, c, again)
	got, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: second.ID})
	if err != nil {
		t.Fatal(err)
	}
	var hist []string
	for _, m := range got.History {
		hist = append(hist, string(m.Role)+":"+m.Parts[0].(a2a.TextPart).Text)
		if m.ContextID != first.ContextID || m.TaskID != second.ID {
			t.Errorf("history message %+v: want the task's context and ID", m)
		}
	}
	if want := "user:hello agent:echo: hello user:again agent:echo: again"; strings.Join(hist, " ") != want {
		t.Errorf("history %q, want %q", strings.Join(hist, " "), want)
	}
	two := 2
	if got, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: second.ID, HistoryLength: &two}); err != nil || len(got.History) != 2 || got.History[0].Parts[0].(a2a.TextPart).Text != "again" {
		t.Errorf("historyLength 2: %+v, %v", got, err)
	}
	neg := -1
	if _, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: second.ID, HistoryLength: &neg}); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Errorf("historyLength -1: %v", err)
	}

	// An image and a text file with the text.
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nfake"))
	msg := a2a.NewMessage(a2a.MessageRoleUser,
		a2a.TextPart{Text: "look"},
		a2a.FilePart{File: a2a.FileBytes{FileMeta: a2a.FileMeta{MimeType: "image/png", Name: "p.png"}, Bytes: png}},
		a2a.FilePart{File: a2a.FileBytes{FileMeta: a2a.FileMeta{MimeType: "text/plain", Name: "notes.txt"}, Bytes: base64.StdEncoding.EncodeToString([]byte("milk"))}},
		a2a.FilePart{File: a2a.FileURI{FileMeta: a2a.FileMeta{MimeType: "image/jpeg"}, URI: "https://example.com/cat.jpg"}})
	task := sendTask(t, ctx, c, &a2a.MessageSendParams{Message: msg})
	if text := artifactText(t, task); text != "echo: look\nnotes.txt:\nmilk" {
		t.Errorf("the answer to text and files: %q", text)
	}
	var st ThreadState
	b.mustDo("GET", "/threads/"+task.ContextID+"/state", nil, &st, 200)
	values, _ := st.Values.(map[string]any)
	msgs, _ := values["messages"].([]any)
	user, _ := msgs[0].(map[string]any)
	blocks, _ := user["content"].([]any)
	var kinds []string
	for _, bl := range blocks {
		m := bl.(map[string]any)
		switch m["type"] {
		case "text":
			kinds = append(kinds, "text")
		default:
			kinds = append(kinds, "image")
		}
	}
	if strings.Join(kinds, ",") != "text,image,image" {
		t.Fatalf("the user's message in the state: %v", user["content"])
	}

	for _, f := range []a2a.FilePartContent{
		a2a.FileBytes{FileMeta: a2a.FileMeta{MimeType: "application/pdf"}, Bytes: base64.StdEncoding.EncodeToString([]byte("%PDF"))},
		a2a.FileURI{FileMeta: a2a.FileMeta{MimeType: "text/plain"}, URI: "https://example.com/a.txt"},
	} {
		if _, err := c.SendMessage(ctx, &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.FilePart{File: f})}); !errors.Is(err, a2a.ErrUnsupportedContentType) {
			t.Errorf("file %+v: %v, want an unsupported content type", f, err)
		}
	}
	bad := a2a.FilePart{File: a2a.FileBytes{FileMeta: a2a.FileMeta{MimeType: "image/png"}, Bytes: "not base64!"}}
	if _, err := c.SendMessage(ctx, &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, bad)}); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Errorf("bytes that are not base64: %v", err)
	}
}

// Push notifications: a config set on a task (or given with message/send) is kept, listed, read
// and deleted; when a run of the task ends, the task is POSTed to each config's URL with its
// token and credentials. A server that is not in dev mode refuses a loopback URL.
func TestA2APushNotifications(t *testing.T) {
	t.Parallel()
	const key = "a2a-push-key-0123456789abcdef"
	type note struct {
		task  a2a.Task
		token string
		auth  string
	}
	notes := make(chan note, 8)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n note
		if err := json.NewDecoder(r.Body).Decode(&n.task); err != nil {
			t.Errorf("the notification's body: %v", err)
		}
		n.token, n.auth = r.Header.Get("X-A2A-Notification-Token"), r.Header.Get("Authorization")
		notes <- n
	}))
	defer hook.Close()
	gate := &chatGate{started: make(chan struct{}, 4), release: make(chan struct{})}
	b := setup(t, setupOpts{cfg: Config{Auth: AuthConfig{APIKeys: map[string]Principal{key: {User: "u", Tenant: "t"}}}, WebhookAllowPrivate: true},
		extra: []GraphSpec{{ID: "chat", Build: buildChat(gate)}}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, card := a2aClient(t, b, key, "chat")
	if !card.Capabilities.PushNotifications {
		t.Error("the card does not offer push notifications")
	}

	// A task waiting for input gets a config; its answer ends it: one notification.
	asked := sendTask(t, ctx, c, textMessage("ask me"))
	cfg, err := c.SetTaskPushConfig(ctx, &a2a.TaskPushConfig{TaskID: asked.ID, Config: a2a.PushConfig{URL: hook.URL + "/a2a", Token: "tok-1",
		Auth: &a2a.PushAuthInfo{Schemes: []string{"Bearer"}, Credentials: "secret"}}})
	if err != nil || cfg.Config.ID != string(asked.ID) {
		t.Fatalf("set: %+v, %v (the config's ID defaults to the task's)", cfg, err)
	}
	if _, err := c.SetTaskPushConfig(ctx, &a2a.TaskPushConfig{TaskID: asked.ID, Config: a2a.PushConfig{ID: "second", URL: hook.URL + "/b"}}); err != nil {
		t.Fatal(err)
	}
	list, err := c.ListTaskPushConfig(ctx, &a2a.ListTaskPushConfigParams{TaskID: asked.ID})
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %+v, %v", list, err)
	}
	if got, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigParams{TaskID: asked.ID, ConfigID: "second"}); err != nil || got.Config.URL != hook.URL+"/b" {
		t.Fatalf("get: %+v, %v", got, err)
	}
	if err := c.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigParams{TaskID: asked.ID, ConfigID: "second"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigParams{TaskID: asked.ID, ConfigID: "second"}); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Errorf("get of a deleted config: %v", err)
	}
	answer := textMessage("blue")
	answer.Message.TaskID, answer.Message.ContextID = asked.ID, asked.ContextID
	sendTask(t, ctx, c, answer)
	n := <-notes
	if n.task.ID != asked.ID || n.task.Status.State != a2a.TaskStateCompleted || n.token != "tok-1" || n.auth != "Bearer secret" {
		t.Fatalf("the notification: %+v token %q auth %q", n.task, n.token, n.auth)
	}
	if p, _ := n.task.Artifacts[0].Parts[0].(a2a.TextPart); p.Text != "you chose blue" {
		t.Errorf("the notified task's artifact: %+v", n.task.Artifacts)
	}

	// A config given with a non-blocking message/send.
	send := textMessage("quick")
	send.Config = &a2a.MessageSendConfig{Blocking: new(false), PushConfig: &a2a.PushConfig{URL: hook.URL + "/c", Token: "tok-2"}}
	quick := sendTask(t, ctx, c, send)
	n = <-notes
	if n.task.ID != quick.ID || n.task.Status.State != a2a.TaskStateCompleted || n.token != "tok-2" {
		t.Fatalf("the notification of the quick task: %+v token %q", n.task, n.token)
	}
	select {
	case extra := <-notes:
		if extra.task.ID == quick.ID {
			// The run may end before or after the config was kept; it is told once either way
			// unless both happened, which the test cannot order: accept a second equal one.
			if extra.task.Status.State != a2a.TaskStateCompleted {
				t.Errorf("a second notification %+v", extra.task)
			}
		}
	default:
	}

	// Bad configs.
	if _, err := c.SetTaskPushConfig(ctx, &a2a.TaskPushConfig{TaskID: asked.ID, Config: a2a.PushConfig{URL: "ftp://x"}}); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Errorf("an ftp URL: %v", err)
	}
	if _, err := c.SetTaskPushConfig(ctx, &a2a.TaskPushConfig{TaskID: "no-such-task", Config: a2a.PushConfig{URL: hook.URL}}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("a config for no task: %v", err)
	}
	// Without dev mode (or WebhookAllowPrivate), loopback is refused.
	b2, _ := a2aSetup(t, map[string]Principal{key: {User: "u", Tenant: "t"}})
	c2, _ := a2aClient(t, b2, key, "chat")
	t2 := sendTask(t, ctx, c2, textMessage("hi"))
	if _, err := c2.SetTaskPushConfig(ctx, &a2a.TaskPushConfig{TaskID: t2.ID, Config: a2a.PushConfig{URL: hook.URL}}); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Errorf("a loopback URL on a server not in dev mode: %v", err)
	}
}
