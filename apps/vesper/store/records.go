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

	"github.com/trellis-go/trellis/apps/vesper/warehouse"
)

// ErrNoSession is returned for a session_id that does not exist for the caller.
var ErrNoSession = errors.New("chat: no such session for this user; leave session_id out to start a new one")

// Records keeps chat_sessions, chat_messages and chat_session_summaries
// in the warehouse's database (beside chat_agent_tools and menu_items).
type Records struct {
	db                          *sql.DB
	sessions, messages, summary string
	pg                          bool
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

// NewRecords creates the three tables if they are missing.
func NewRecords(ctx context.Context, w *warehouse.Warehouse) (*Records, error) {
	r := &Records{db: w.DB(), sessions: w.Table("chat_sessions"), messages: w.Table("chat_messages"),
		summary: w.Table("chat_session_summaries"), pg: w.Dialect() == warehouse.Postgres}
	id, ts := "INTEGER PRIMARY KEY AUTOINCREMENT", "TEXT"
	if r.pg {
		id, ts = "BIGSERIAL PRIMARY KEY", "TIMESTAMPTZ"
	}
	stmts := []string{
		`CREATE TABLE IF NOT EXISTS ` + r.sessions + ` (session_id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, user_id TEXT NOT NULL,
			title TEXT, is_active INTEGER NOT NULL DEFAULT 1, created_at ` + ts + ` NOT NULL, updated_at ` + ts + ` NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS ` + r.messages + ` (message_id ` + id + `, session_id TEXT NOT NULL REFERENCES ` + r.sessions + `(session_id),
			tenant_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL, intent TEXT, agents_used TEXT, tool_calls TEXT,
			pbi_deep_links TEXT, token_count INTEGER, latency_ms INTEGER, created_at ` + ts + ` NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS ` + r.summary + ` (summary_id ` + id + `, session_id TEXT NOT NULL REFERENCES ` + r.sessions + `(session_id),
			summary_text TEXT NOT NULL, covers_through BIGINT NOT NULL, created_at ` + ts + ` NOT NULL)`,
	}
	for _, s := range stmts {
		if _, err := r.db.ExecContext(ctx, s); err != nil {
			return nil, fmt.Errorf("chat: creating the chat tables: %w", err)
		}
	}
	return r, nil
}

func now() any { return time.Now().UTC().Format(time.RFC3339Nano) }

func (r *Records) ts() any {
	if r.pg {
		return time.Now().UTC()
	}
	return now()
}

// Session loads a session of the tenant and user, or creates one when id
// is empty. A session of another tenant or user is not found.
func (r *Records) Session(ctx context.Context, id, tenant, user string) (string, error) {
	if id != "" {
		var n int
		err := r.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+r.sessions+` WHERE session_id = $1 AND tenant_id = $2 AND user_id = $3`, id, tenant, user).Scan(&n)
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
	_, err := r.db.ExecContext(ctx, `INSERT INTO `+r.sessions+` (session_id, tenant_id, user_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)`, id, tenant, user, r.ts())
	if err != nil {
		return "", fmt.Errorf("chat: creating session: %w", err)
	}
	return id, nil
}

// SetTitleOnce sets the session's title unless it has one.
func (r *Records) SetTitleOnce(ctx context.Context, id, title string) error {
	_, err := r.db.ExecContext(ctx, `UPDATE `+r.sessions+` SET title = $1, updated_at = $2 WHERE session_id = $3 AND title IS NULL`, title, r.ts(), id)
	return err
}

// Title returns the session's title.
func (r *Records) Title(ctx context.Context, id string) (string, error) {
	var t sql.NullString
	err := r.db.QueryRowContext(ctx, `SELECT title FROM `+r.sessions+` WHERE session_id = $1`, id).Scan(&t)
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
	err := r.db.QueryRowContext(ctx, `INSERT INTO `+r.messages+` (session_id, tenant_id, role, content, intent, agents_used, tool_calls,
		pbi_deep_links, token_count, latency_ms, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING message_id`,
		m.SessionID, m.Tenant, m.Role, m.Content, m.Intent, strings.Join(m.AgentsUsed, ","), nz(m.ToolCalls), nz(m.DeepLinks),
		m.TokenCount, m.LatencyMS, r.ts()).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("chat: saving message: %w", err)
	}
	return id, nil
}

// Messages returns a session's messages after message id `after`, oldest first.
func (r *Records) Messages(ctx context.Context, session string, after int64) ([]Message, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT message_id, session_id, tenant_id, role, content, COALESCE(intent, ''), COALESCE(agents_used, ''),
		COALESCE(tool_calls, ''), COALESCE(pbi_deep_links, ''), COALESCE(token_count, 0), COALESCE(latency_ms, 0)
		FROM `+r.messages+` WHERE session_id = $1 AND message_id > $2 ORDER BY message_id`, session, after)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Message
	for rows.Next() {
		var m Message
		var agents, calls, links string
		if err := rows.Scan(&m.ID, &m.SessionID, &m.Tenant, &m.Role, &m.Content, &m.Intent, &agents, &calls, &links, &m.TokenCount, &m.LatencyMS); err != nil {
			return nil, err
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
	return out, rows.Err()
}

// Summary returns the latest summary of a session and the last message it covers.
func (r *Records) Summary(ctx context.Context, session string) (string, int64, error) {
	var text string
	var through int64
	err := r.db.QueryRowContext(ctx, `SELECT summary_text, covers_through FROM `+r.summary+` WHERE session_id = $1 ORDER BY summary_id DESC LIMIT 1`, session).Scan(&text, &through)
	if err == sql.ErrNoRows {
		return "", 0, nil
	}
	return text, through, err
}

// AddSummary records a summary covering messages up to `through`.
func (r *Records) AddSummary(ctx context.Context, session, text string, through int64) error {
	_, err := r.db.ExecContext(ctx, `INSERT INTO `+r.summary+` (session_id, summary_text, covers_through, created_at) VALUES ($1, $2, $3, $4)`, session, text, through, r.ts())
	return err
}
