package server

import (
	"context"
	"encoding/base64"
	"errors"
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
