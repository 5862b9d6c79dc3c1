// Package store keeps Vesper's chat records in the app's own database (package appdb: the
// SQLite file apps/vesper.db in the server's data directory, or the app_vesper schema of its
// Postgres database), created by appdb migrations: chat_sessions (title from the first
// message), chat_messages (intent, agents used, tool calls, deep links, token count, latency)
// and chat_session_summaries (the conversation folded into a summary once it grows long).
package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/trellis-go/trellis/appdb"
)

// ErrNoSession is returned for a session_id that does not exist for the caller.
var ErrNoSession = errors.New("chat: no such session for this user; leave session_id out to start a new one")

// Migrations create the chat tables. The rows carry their tenant and are read by the session
// they belong to, which the WebSocket checks against its caller before anything else.
var Migrations = []appdb.Migration{{
	Name: "vesper_chat_1",
	SQLite: `CREATE TABLE chat_sessions (session_id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, user_id TEXT NOT NULL,
			title TEXT, is_active INTEGER NOT NULL DEFAULT 1, created_at TIMESTAMP NOT NULL, updated_at TIMESTAMP NOT NULL);
		CREATE TABLE chat_messages (message_id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES chat_sessions(session_id),
			tenant_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL, intent TEXT, agents_used TEXT, tool_calls TEXT,
			pbi_deep_links TEXT, token_count INTEGER, latency_ms INTEGER, created_at TIMESTAMP NOT NULL);
		CREATE TABLE chat_session_summaries (summary_id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES chat_sessions(session_id),
			summary_text TEXT NOT NULL, covers_through BIGINT NOT NULL, created_at TIMESTAMP NOT NULL)`,
	Postgres: `CREATE TABLE chat_sessions (session_id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, user_id TEXT NOT NULL,
			title TEXT, is_active INTEGER NOT NULL DEFAULT 1, created_at TIMESTAMP NOT NULL, updated_at TIMESTAMP NOT NULL);
		CREATE TABLE chat_messages (message_id BIGSERIAL PRIMARY KEY, session_id TEXT NOT NULL REFERENCES chat_sessions(session_id),
			tenant_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL, intent TEXT, agents_used TEXT, tool_calls TEXT,
			pbi_deep_links TEXT, token_count INTEGER, latency_ms INTEGER, created_at TIMESTAMP NOT NULL);
		CREATE TABLE chat_session_summaries (summary_id BIGSERIAL PRIMARY KEY, session_id TEXT NOT NULL REFERENCES chat_sessions(session_id),
			summary_text TEXT NOT NULL, covers_through BIGINT NOT NULL, created_at TIMESTAMP NOT NULL)`,
}}

// Records keeps chat_sessions, chat_messages and chat_session_summaries.
type Records struct {
	db *appdb.DB
}

// Message is one row of chat_messages.
type Message struct {
	ID         int64
	SessionID  string
	Tenant     string
	Role       string // "user" or "assistant"
	Content    string
	Intent     string
	AgentsUsed []string
	ToolCalls  json.RawMessage
	DeepLinks  json.RawMessage
	TokenCount int
	LatencyMS  int
}

// NewRecords applies [Migrations] to db (those not applied yet) and keeps the records there.
func NewRecords(ctx context.Context, db *appdb.DB) (*Records, error) {
	if db == nil {
		return nil, errors.New("store: NewRecords needs the app's database; open it with appdb.Open")
	}
	if err := db.Migrate(ctx, Migrations); err != nil {
		return nil, fmt.Errorf("chat: creating the chat tables: %w", err)
	}
	return &Records{db: db}, nil
}

func now() time.Time { return time.Now().UTC() }

// exec runs one statement.
func (r *Records) exec(ctx context.Context, q string, args ...any) error {
	return r.db.System(ctx, func(tx *appdb.Tx) error { _, err := tx.Exec(ctx, q, args...); return err })
}

// row scans the one row of a query.
func (r *Records) row(ctx context.Context, q string, args []any, dst ...any) error {
	return r.db.System(ctx, func(tx *appdb.Tx) error { return tx.QueryRow(ctx, q, args...).Scan(dst...) })
}

// Session loads a session of the tenant and user, or creates one when id
// is empty. A session of another tenant or user is not found.
func (r *Records) Session(ctx context.Context, id, tenant, user string) (string, error) {
	if id != "" {
		var n int
		err := r.row(ctx, `SELECT COUNT(*) FROM chat_sessions WHERE session_id = ? AND tenant_id = ? AND user_id = ?`, []any{id, tenant, user}, &n)
		if err != nil {
			return "", fmt.Errorf("chat: loading session: %w", err)
		}
		if n == 0 {
			return "", ErrNoSession
		}
		return id, nil
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	id = hex.EncodeToString(b)
	t := now()
	err := r.exec(ctx, `INSERT INTO chat_sessions (session_id, tenant_id, user_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`, id, tenant, user, t, t)
	if err != nil {
		return "", fmt.Errorf("chat: creating session: %w", err)
	}
	return id, nil
}

// SetTitleOnce sets the session's title unless it has one.
func (r *Records) SetTitleOnce(ctx context.Context, id, title string) error {
	return r.exec(ctx, `UPDATE chat_sessions SET title = ?, updated_at = ? WHERE session_id = ? AND title IS NULL`, title, now(), id)
}

// Title returns the session's title.
func (r *Records) Title(ctx context.Context, id string) (string, error) {
	var t sql.NullString
	err := r.row(ctx, `SELECT title FROM chat_sessions WHERE session_id = ?`, []any{id}, &t)
	return t.String, err
}

// Add appends a message and returns its id.
func (r *Records) Add(ctx context.Context, m Message) (int64, error) {
	nz := func(b json.RawMessage) any {
		if len(b) == 0 {
			return nil
		}
		return string(b)
	}
	var id int64
	err := r.row(ctx, `INSERT INTO chat_messages (session_id, tenant_id, role, content, intent, agents_used, tool_calls,
		pbi_deep_links, token_count, latency_ms, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING message_id`,
		[]any{m.SessionID, m.Tenant, m.Role, m.Content, m.Intent, strings.Join(m.AgentsUsed, ","), nz(m.ToolCalls), nz(m.DeepLinks),
			m.TokenCount, m.LatencyMS, now()}, &id)
	if err != nil {
		return 0, fmt.Errorf("chat: saving message: %w", err)
	}
	return id, nil
}

// Messages returns a session's messages after message id `after`, oldest first.
func (r *Records) Messages(ctx context.Context, session string, after int64) ([]Message, error) {
	var out []Message
	err := r.db.System(ctx, func(tx *appdb.Tx) error {
		rows, err := tx.Query(ctx, `SELECT message_id, session_id, tenant_id, role, content, COALESCE(intent, ''), COALESCE(agents_used, ''),
			COALESCE(tool_calls, ''), COALESCE(pbi_deep_links, ''), COALESCE(token_count, 0), COALESCE(latency_ms, 0)
			FROM chat_messages WHERE session_id = ? AND message_id > ? ORDER BY message_id`, session, after)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var m Message
			var agents, calls, links string
			if err := rows.Scan(&m.ID, &m.SessionID, &m.Tenant, &m.Role, &m.Content, &m.Intent, &agents, &calls, &links, &m.TokenCount, &m.LatencyMS); err != nil {
				return err
			}
			if agents != "" {
				m.AgentsUsed = strings.Split(agents, ",")
			}
			if calls != "" {
				m.ToolCalls = json.RawMessage(calls)
			}
			if links != "" {
				m.DeepLinks = json.RawMessage(links)
			}
			out = append(out, m)
		}
		return rows.Err()
	})
	return out, err
}

// Summary returns the latest summary of a session and the last message it covers.
func (r *Records) Summary(ctx context.Context, session string) (string, int64, error) {
	var text string
	var through int64
	err := r.row(ctx, `SELECT summary_text, covers_through FROM chat_session_summaries WHERE session_id = ? ORDER BY summary_id DESC LIMIT 1`, []any{session}, &text, &through)
	if err == sql.ErrNoRows {
		return "", 0, nil
	}
	return text, through, err
}

// AddSummary records a summary covering messages up to `through`.
func (r *Records) AddSummary(ctx context.Context, session, text string, through int64) error {
	return r.exec(ctx, `INSERT INTO chat_session_summaries (session_id, summary_text, covers_through, created_at) VALUES (?, ?, ?, ?)`, session, text, through, now())
}
