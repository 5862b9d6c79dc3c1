package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/trellis-go/trellis/appdb"
)

// ErrNotYours is returned for a chat session of another user.
var ErrNotYours = errors.New("listforge: session not found")

// CreateSession opens a chat session about an item for the caller.
func (s *Store) CreateSession(ctx context.Context, w Who, itemID string) (*Session, error) {
	ss := &Session{ID: NewID(), ItemID: itemID, UserID: w.User, OrgID: w.Org, CreatedAt: s.now()}
	ss.UpdatedAt = ss.CreatedAt
	err := s.tx(ctx, w, func(tx *appdb.Tx) error {
		if _, err := getItem(ctx, tx, w.Org, itemID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO chat_sessions (tenant_id, id, item_id, user_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
			w.Org, ss.ID, itemID, w.User, ss.CreatedAt, ss.UpdatedAt)
		return err
	})
	if err != nil {
		return nil, err
	}
	return ss, nil
}

func getSession(ctx context.Context, tx *appdb.Tx, w Who, id string) (*Session, error) {
	var ss Session
	var c, u, l appdb.Time
	err := tx.QueryRow(ctx, `SELECT id, item_id, user_id, created_at, updated_at, last_message_at FROM chat_sessions WHERE tenant_id = ? AND id = ?`,
		w.Org, id).Scan(&ss.ID, &ss.ItemID, &ss.UserID, &c, &u, &l)
	if appdb.IsNotFound(err) || (err == nil && ss.UserID != w.User) {
		return nil, fmt.Errorf("session %s: %w", id, ErrNotYours)
	}
	if err != nil {
		return nil, err
	}
	ss.OrgID, ss.CreatedAt, ss.UpdatedAt = w.Org, c.UTC(), u.UTC()
	if !l.IsZero() {
		t := l.UTC()
		ss.LastMessageAt = &t
	}
	return &ss, nil
}

// GetSession returns the caller's session: another user's, or another organisation's, is
// ErrNotYours.
func (s *Store) GetSession(ctx context.Context, w Who, id string) (ss *Session, err error) {
	err = s.tx(ctx, w, func(tx *appdb.Tx) error {
		ss, err = getSession(ctx, tx, w, id)
		return err
	})
	return ss, err
}

// AddMessage appends a message to a session of the caller. An empty ID and CreatedAt are
// filled in.
func (s *Store) AddMessage(ctx context.Context, w Who, m Message) (*Message, error) {
	if m.ID == "" {
		m.ID = NewID()
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = s.now()
	}
	err := s.tx(ctx, w, func(tx *appdb.Tx) error {
		if _, err := getSession(ctx, tx, w, m.SessionID); err != nil {
			return err
		}
		var actions, calls any
		if len(m.Actions) > 0 {
			actions = appdb.JSONValue(m.Actions)
		}
		if len(m.ToolCalls) > 0 {
			calls = appdb.JSONValue(m.ToolCalls)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO chat_messages (tenant_id, id, session_id, role, content, actions, tool_calls, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, w.Org, m.ID, m.SessionID, m.Role, m.Content, actions, calls, m.CreatedAt); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE chat_sessions SET updated_at = ?, last_message_at = ? WHERE tenant_id = ? AND id = ?`, m.CreatedAt, m.CreatedAt, w.Org, m.SessionID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &m, nil
}

func scanMessage(sc interface{ Scan(...any) error }) (*Message, error) {
	var m Message
	var at appdb.Time
	if err := sc.Scan(&m.ID, &m.SessionID, &m.Role, &m.Content, appdb.JSON(&m.Actions), appdb.JSON(&m.ToolCalls), &at); err != nil {
		return nil, err
	}
	m.CreatedAt = at.UTC()
	return &m, nil
}

const msgCols = `id, session_id, role, content, actions, tool_calls, created_at`

// Messages returns a page of a session's messages, oldest first.
func (s *Store) Messages(ctx context.Context, w Who, sessionID string, page, limit int) (*Page[Message], error) {
	page, limit = pageArgs(page, limit)
	out := &Page[Message]{Items: []Message{}, Page: page, Limit: limit}
	err := s.tx(ctx, w, func(tx *appdb.Tx) error {
		if _, err := getSession(ctx, tx, w, sessionID); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM chat_messages WHERE tenant_id = ? AND session_id = ?`, w.Org, sessionID).Scan(&out.Total); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+msgCols+` FROM chat_messages WHERE tenant_id = ? AND session_id = ? ORDER BY id LIMIT ? OFFSET ?`,
			w.Org, sessionID, limit, (page-1)*limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			m, err := scanMessage(rows)
			if err != nil {
				return err
			}
			out.Items = append(out.Items, *m)
		}
		return rows.Err()
	})
	return out, err
}

// RecentMessages returns a session's last n messages, oldest first.
func (s *Store) RecentMessages(ctx context.Context, w Who, sessionID string, n int) ([]Message, error) {
	var out []Message
	err := s.tx(ctx, w, func(tx *appdb.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+msgCols+` FROM chat_messages WHERE tenant_id = ? AND session_id = ? ORDER BY id DESC LIMIT ?`, w.Org, sessionID, n)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			m, err := scanMessage(rows)
			if err != nil {
				return err
			}
			out = append(out, *m)
		}
		return rows.Err()
	})
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, err
}

// GetMessage returns a message of one of the caller's sessions.
func (s *Store) GetMessage(ctx context.Context, w Who, id string) (m *Message, err error) {
	err = s.tx(ctx, w, func(tx *appdb.Tx) error {
		m, err = getMessage(ctx, tx, w, id)
		return err
	})
	return m, err
}

func getMessage(ctx context.Context, tx *appdb.Tx, w Who, id string) (*Message, error) {
	m, err := scanMessage(tx.QueryRow(ctx, `SELECT `+msgCols+` FROM chat_messages WHERE tenant_id = ? AND id = ?`, w.Org, id))
	if appdb.IsNotFound(err) {
		return nil, fmt.Errorf("message %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	if _, err := getSession(ctx, tx, w, m.SessionID); err != nil {
		return nil, fmt.Errorf("message %s: %w", id, ErrNotFound)
	}
	return m, nil
}

// ApplyAction applies a message's proposed action once: the first call applies it (through
// apply, in the same transaction) and marks it applied; any later call, from any replica,
// gets ErrAlreadyApplied, since the application is recorded under a unique key.
func (s *Store) ApplyAction(ctx context.Context, w Who, messageID string, index int, apply func(tx *appdb.Tx, a Action) (any, error)) (m *Message, result any, err error) {
	err = s.tx(ctx, w, func(tx *appdb.Tx) error {
		m, err = getMessage(ctx, tx, w, messageID)
		if err != nil {
			return err
		}
		if index < 0 || index >= len(m.Actions) {
			return &FieldError{"actionIndex", fmt.Sprintf("the index of one of the message's %d actions", len(m.Actions))}
		}
		if m.Actions[index].Applied {
			return ErrAlreadyApplied
		}
		res, err := tx.Exec(ctx, `INSERT INTO applied_actions (tenant_id, message_id, action_index, user_id, applied_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT DO NOTHING`, w.Org, messageID, index, w.User, s.now())
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrAlreadyApplied
		}
		if result, err = apply(tx, m.Actions[index]); err != nil {
			return err
		}
		m.Actions[index].Applied = true
		_, err = tx.Exec(ctx, `UPDATE chat_messages SET actions = ? WHERE tenant_id = ? AND id = ?`, appdb.JSONValue(m.Actions), w.Org, messageID)
		return err
	})
	return m, result, err
}

// UpdateFieldTx is UpdateField inside a transaction ApplyAction opened.
func (s *Store) UpdateFieldTx(ctx context.Context, tx *appdb.Tx, w Who, id, field string, value any, reason string) (*Item, error) {
	return s.updateField(ctx, tx, w, id, field, value, reason)
}
