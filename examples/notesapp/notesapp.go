// Package notesapp is the example application of docs/apps.md: a small notes app that uses
// each piece the framework gives an application. Its user saves notes through a REST route and
// asks questions about them over a WebSocket, where an agent answers with the user's notes in
// front of it.
//
//   - the contract: App returns a server.App whose Build returns the graph, the routes and Close;
//   - the run API: each question is a run of the user's thread through AppDeps.Runs (queue,
//     limits, budgets, recovery), streamed to the socket;
//   - run progress: the run streams "progress" events, sent on as they come;
//   - the stream kit: the WebSocket is an appstream.Kit's (credentials, Origin, the tenant's
//     limits, acks, heartbeats, write deadlines);
//   - identity: every route, socket and run acts for one server.Principal;
//   - the tenant's store: a note is also a memory item in AppDeps.Store, which the /store routes
//     show to its tenant and no other;
//   - app tables: the notes table is an appdb migration, scoped to tenant and user;
//   - agent building blocks: a ReAct agent whose per-call Context hook puts the user's latest
//     notes before the conversation, without storing them in the thread.
package notesapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/appdb"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/appkit"
	"github.com/trellis-go/trellis/server/appstream"
	"github.com/trellis-go/trellis/store"
)

// Name is the app's name: its routes are under /apps/notes/, its assistant is "notes".
const Name = "notes"

// App is the notes application.
func App() server.App {
	return server.App{Name: Name, Description: "Keeps a user's notes and answers questions about them.", Build: build}
}

// migrations create the app's one table; it holds a tenant's rows, each of one user.
var migrations = []appdb.Migration{{
	Name: "notes",
	SQL: `CREATE TABLE notes (
		id TEXT NOT NULL, tenant_id TEXT NOT NULL, user_id TEXT NOT NULL,
		body TEXT NOT NULL, created_at TIMESTAMP NOT NULL,
		PRIMARY KEY (tenant_id, id));
	CREATE INDEX notes_user ON notes (tenant_id, user_id, created_at)`,
	Scoped: []appdb.Scope{{Table: "notes", ByUser: true}},
}}

type notes struct {
	d  server.AppDeps
	db *appdb.DB
}

func build(ctx context.Context, d server.AppDeps) (*server.AppParts, error) {
	db, err := appdb.Open(ctx, Name, &appdb.Options{DataDir: d.DataDir, DatabaseURL: d.DatabaseURL})
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx, migrations); err != nil {
		db.Close()
		return nil, err
	}
	n := &notes{d: d, db: db}
	g, err := react.New(d.Models.For(model.RoleFast), &react.Options{
		Name:    Name,
		Prompt:  "You answer questions about the user's notes.",
		Context: n.latestNotes, // rebuilt for every model call, never stored
		Compile: d.Compile,
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	kit := appstream.New(d, nil)
	mux := http.NewServeMux()
	mux.Handle("POST /api/notes", d.Guard(http.HandlerFunc(n.add)))
	mux.Handle("GET /api/notes", d.Guard(http.HandlerFunc(n.list)))
	mux.Handle("GET /ws", kit.WebSocket(appstream.Handler{OnMessage: n.ask}))
	return &server.AppParts{
		Graphs:  []server.AppGraph{{ID: Name, Graph: g.Runnable(), Description: "Answers questions about the user's notes."}},
		Handler: mux,
		Close:   db.Close,
	}, nil
}

// Note is one note.
type Note struct {
	ID        string    `json:"id"`
	Text      string    `json:"text"`
	CreatedAt time.Time `json:"created_at"`
}

// add saves {"text": "..."} for the caller: a row of the notes table, and a memory item in the
// tenant's store under ("notes", user).
func (n *notes) add(w http.ResponseWriter, r *http.Request) {
	p, _ := server.PrincipalFrom(r.Context()) // the Guard put it there
	var in struct {
		Text string `json:"text"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 16<<10)).Decode(&in); err != nil || strings.TrimSpace(in.Text) == "" {
		appkit.JSON(w, http.StatusBadRequest, map[string]string{"error": `notes: field "text" is required: send {"text": "..."}`})
		return
	}
	note := Note{ID: uuid.NewString(), Text: strings.TrimSpace(in.Text), CreatedAt: time.Now().UTC()}
	err := n.db.Tx(r.Context(), appdb.Who{Tenant: p.Tenant, User: p.User}, func(tx *appdb.Tx) error {
		_, err := tx.Exec(r.Context(), `INSERT INTO notes (id, tenant_id, user_id, body, created_at) VALUES (?, ?, ?, ?, ?)`,
			note.ID, tx.Tenant(), tx.User(), note.Text, note.CreatedAt)
		return err
	})
	if err == nil {
		// The store acts for the request's principal: the item is the tenant's.
		err = n.d.Store.Put(r.Context(), store.PutRequest{Namespace: []string{Name, p.User}, Key: note.ID,
			Value: map[string]any{"text": note.Text}})
	}
	if err != nil {
		appkit.JSON(w, http.StatusInternalServerError, map[string]string{"error": "notes: " + err.Error()})
		return
	}
	appkit.JSON(w, http.StatusCreated, note)
}

// list answers the caller's notes, newest first.
func (n *notes) list(w http.ResponseWriter, r *http.Request) {
	p, _ := server.PrincipalFrom(r.Context())
	out, err := n.recent(r.Context(), p, 100)
	if err != nil {
		appkit.JSON(w, http.StatusInternalServerError, map[string]string{"error": "notes: " + err.Error()})
		return
	}
	appkit.JSON(w, http.StatusOK, out)
}

// recent reads p's latest notes in a transaction scoped to p's tenant and user (on Postgres,
// row-level security keeps other users' rows out even if the WHERE clause forgot them).
func (n *notes) recent(ctx context.Context, p server.Principal, limit int) ([]Note, error) {
	out := []Note{}
	err := n.db.Tx(ctx, appdb.Who{Tenant: p.Tenant, User: p.User}, func(tx *appdb.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id, body, created_at FROM notes WHERE tenant_id = ? AND user_id = ?
			ORDER BY created_at DESC LIMIT ?`, tx.Tenant(), tx.User(), limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var nt Note
			var at appdb.Time
			if err := rows.Scan(&nt.ID, &nt.Text, &at); err != nil {
				return err
			}
			nt.CreatedAt = at.Time
			out = append(out, nt)
		}
		return rows.Err()
	})
	return out, err
}

// latestNotes is the agent's per-call context: the run's user's five latest notes, read afresh
// before every model call (the run acts for the principal that started it).
func (n *notes) latestNotes(ctx context.Context, _ react.PromptInput) ([]message.Message, error) {
	p, ok := server.PrincipalFrom(ctx)
	if !ok {
		return nil, nil
	}
	list, err := n.recent(ctx, p, 5)
	if err != nil || len(list) == 0 {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("The user's latest notes:\n")
	for _, nt := range list {
		fmt.Fprintf(&b, "- %s\n", nt.Text)
	}
	return []message.Message{message.System(b.String())}, nil
}

// ask handles {"type": "ask", "data": {"text": "..."}} on the WebSocket: a run of the user's
// thread, its tokens sent as "token" frames and its progress as "progress" frames, then an
// "answer" frame; the kit acknowledges the message once ask returns.
func (n *notes) ask(c *appstream.Conn, m appstream.Message) error {
	if m.Type != "ask" {
		return &appstream.Error{Code: "unknown_type", Message: fmt.Sprintf(`notes: send {"type": "ask", "data": {"text": "..."}}, not %q`, m.Type)}
	}
	var in struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Data, &in) != nil || strings.TrimSpace(in.Text) == "" {
		return &appstream.Error{Code: "bad_message", Message: `notes: data.text is required: the question`}
	}
	ctx, p := c.Context(), c.Principal()
	run, events, err := n.d.Runs.Stream(ctx, p, server.RunRequest{
		AssistantID: Name,
		ThreadID:    server.ThreadIDFor(Name, p.Tenant+"/"+p.User), // one conversation per user
		Input:       map[string]any{"messages": []message.Message{message.User(in.Text)}},
		StreamMode:  []string{"messages-tuple", "progress"},
		// A second question while the first runs waits for it.
		MultitaskStrategy: "enqueue",
	})
	if err != nil {
		return &appstream.Error{Code: "run_refused", Message: err.Error()}
	}
	for ev, err := range events {
		if err != nil {
			return err
		}
		switch {
		case ev.ChunkText() != "":
			err = c.Send("token", ev.ChunkText())
		case ev.Event == "progress":
			err = c.Send("progress", ev.Data)
		case ev.Event == "error":
			return &appstream.Error{Code: "run_failed", Message: string(ev.Data)}
		}
		if err != nil {
			return err
		}
	}
	out, err := n.d.Runs.Wait(ctx, p, run.ThreadID, run.RunID)
	if err != nil {
		return err
	}
	var final struct {
		Messages []struct {
			Content any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(out, &final); err != nil || len(final.Messages) == 0 {
		return errors.New("notes: the run ended without an answer")
	}
	answer, _ := final.Messages[len(final.Messages)-1].Content.(string)
	return c.Send("answer", map[string]string{"thread_id": run.ThreadID, "run_id": run.RunID, "text": answer})
}
