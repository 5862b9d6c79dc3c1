package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/trellis-go/trellis/appdb"
)

const convColumns = `id, started_at, last_message_at, ended_at, summary, message_count, summarized_count`

func scanConv(sc interface{ Scan(...any) error }) (*Conversation, error) {
	var c Conversation
	var started, last, ended appdb.Time
	if err := sc.Scan(&c.ID, &started, &last, &ended, &c.Summary, &c.MessageCount, &c.SummarizedCount); err != nil {
		return nil, err
	}
	c.StartedAt, c.LastMessageAt = started.Time, last.Time
	if !ended.IsZero() {
		t := ended.Time
		c.EndedAt = &t
	}
	return &c, nil
}

// Session is what OpenConversation found: the conversation to use, and the ones it ended
// because they were idle past the timeout (their summaries are still to be written).
type Session struct {
	Conversation *Conversation
	Ended        []Conversation
	Created      bool
}

// OpenConversation returns the conversation a new message belongs to: id when given (it must
// be the user's and not ended), otherwise the user's newest open one if its last message is
// within timeout, otherwise a new one. Open conversations idle past timeout are ended.
func (s *Store) OpenConversation(ctx context.Context, who Who, id string, timeout time.Duration) (*Session, error) {
	out := &Session{}
	err := s.tx(ctx, who, func(tx *appdb.Tx) error {
		now := s.now()
		if id != "" {
			c, err := scanConv(tx.QueryRow(ctx, `SELECT `+convColumns+` FROM conversations WHERE tenant_id = ? AND user_id = ? AND id = ?`,
				tx.Tenant(), tx.User(), id))
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("%w: no conversation %q for this user", ErrNotFound, id)
			}
			if err != nil {
				return err
			}
			if c.EndedAt == nil && timeout > 0 && now.Sub(c.LastMessageAt) <= timeout {
				out.Conversation = c
				return nil
			}
			if c.EndedAt == nil {
				if err := endConv(ctx, tx, now, c.ID); err != nil {
					return err
				}
				out.Ended = append(out.Ended, *c)
			}
			// An ended conversation goes on as a new session that knows the old summary.
		}
		rows, err := tx.Query(ctx, `SELECT `+convColumns+` FROM conversations WHERE tenant_id = ? AND user_id = ? AND ended_at IS NULL
			ORDER BY last_message_at DESC`, tx.Tenant(), tx.User())
		if err != nil {
			return err
		}
		var open []*Conversation
		for rows.Next() {
			c, err := scanConv(rows)
			if err != nil {
				rows.Close()
				return err
			}
			open = append(open, c)
		}
		rows.Close()
		for _, c := range open {
			if id == "" && out.Conversation == nil && (timeout <= 0 || now.Sub(c.LastMessageAt) <= timeout) {
				out.Conversation = c
				continue
			}
			if c.ID == out.conversationID() || (timeout > 0 && now.Sub(c.LastMessageAt) <= timeout) {
				continue
			}
			if err := endConv(ctx, tx, now, c.ID); err != nil {
				return err
			}
			out.Ended = append(out.Ended, *c)
		}
		if out.Conversation != nil {
			return nil
		}
		c := &Conversation{ID: NewID(), StartedAt: now, LastMessageAt: now}
		if _, err := tx.Exec(ctx, `INSERT INTO conversations (tenant_id, user_id, id, started_at, last_message_at) VALUES (?,?,?,?,?)`,
			tx.Tenant(), tx.User(), c.ID, now, now); err != nil {
			return err
		}
		out.Conversation, out.Created = c, true
		return nil
	})
	return out, err
}

func (s *Session) conversationID() string {
	if s.Conversation == nil {
		return ""
	}
	return s.Conversation.ID
}

func endConv(ctx context.Context, tx *appdb.Tx, now time.Time, id string) error {
	_, err := tx.Exec(ctx, `UPDATE conversations SET ended_at = ? WHERE tenant_id = ? AND user_id = ? AND id = ? AND ended_at IS NULL`,
		now, tx.Tenant(), tx.User(), id)
	return err
}

// EndConversation marks a conversation ended now.
func (s *Store) EndConversation(ctx context.Context, who Who, id string) error {
	return s.tx(ctx, who, func(tx *appdb.Tx) error { return endConv(ctx, tx, s.now(), id) })
}

// SetSummary stores a conversation's summary, written after its first `through` messages.
func (s *Store) SetSummary(ctx context.Context, who Who, id, summary string, through int) error {
	return s.tx(ctx, who, func(tx *appdb.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE conversations SET summary = ?, summarized_count = ? WHERE tenant_id = ? AND user_id = ? AND id = ?`,
			summary, through, tx.Tenant(), tx.User(), id)
		return err
	})
}

// Conversation returns one conversation.
func (s *Store) Conversation(ctx context.Context, who Who, id string) (*Conversation, error) {
	var out *Conversation
	err := s.tx(ctx, who, func(tx *appdb.Tx) error {
		c, err := scanConv(tx.QueryRow(ctx, `SELECT `+convColumns+` FROM conversations WHERE tenant_id = ? AND user_id = ? AND id = ?`,
			tx.Tenant(), tx.User(), id))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: no conversation %q for this user", ErrNotFound, id)
		}
		out = c
		return err
	})
	return out, err
}

// Conversations lists the user's conversations, newest first.
func (s *Store) Conversations(ctx context.Context, who Who, limit int) ([]Conversation, error) {
	if limit <= 0 || limit > 200 {
		limit = 20
	}
	var out []Conversation
	err := s.tx(ctx, who, func(tx *appdb.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+convColumns+` FROM conversations WHERE tenant_id = ? AND user_id = ?
			ORDER BY started_at DESC, id DESC LIMIT ?`, tx.Tenant(), tx.User(), limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			c, err := scanConv(rows)
			if err != nil {
				return err
			}
			out = append(out, *c)
		}
		return rows.Err()
	})
	return out, err
}

// AddMessage stores a message and counts it on its conversation; it returns the conversation's
// message count after it.
func (s *Store) AddMessage(ctx context.Context, who Who, m Message) (int, error) {
	var count int
	err := s.tx(ctx, who, func(tx *appdb.Tx) error {
		now := s.now()
		if m.ID == "" {
			m.ID = NewID()
		}
		var calls any
		if len(m.ToolCalls) > 0 {
			calls = appdb.JSONValue(m.ToolCalls)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO messages (tenant_id, user_id, id, conversation_id, role, content, tool_calls, created_at)
			VALUES (?,?,?,?,?,?,?,?)`, tx.Tenant(), tx.User(), m.ID, m.ConversationID, m.Role, m.Content, calls, now); err != nil {
			return err
		}
		res, err := tx.Exec(ctx, `UPDATE conversations SET message_count = message_count + 1, last_message_at = ?
			WHERE tenant_id = ? AND user_id = ? AND id = ?`, now, tx.Tenant(), tx.User(), m.ConversationID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%w: no conversation %q for this user", ErrNotFound, m.ConversationID)
		}
		return tx.QueryRow(ctx, `SELECT message_count FROM conversations WHERE tenant_id = ? AND user_id = ? AND id = ?`,
			tx.Tenant(), tx.User(), m.ConversationID).Scan(&count)
	})
	return count, err
}

// Messages lists a conversation's messages in order.
func (s *Store) Messages(ctx context.Context, who Who, conversationID string) ([]Message, error) {
	var out []Message
	err := s.tx(ctx, who, func(tx *appdb.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id, role, content, tool_calls, created_at FROM messages
			WHERE tenant_id = ? AND user_id = ? AND conversation_id = ? ORDER BY created_at, id`, tx.Tenant(), tx.User(), conversationID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			m := Message{ConversationID: conversationID}
			var created appdb.Time
			var calls []byte
			if err := rows.Scan(&m.ID, &m.Role, &m.Content, &calls, &created); err != nil {
				return err
			}
			if len(calls) > 0 {
				m.ToolCalls = json.RawMessage(calls)
			}
			m.CreatedAt = created.Time
			out = append(out, m)
		}
		return rows.Err()
	})
	return out, err
}

// Hydrated is the always-present context of a user, read in three queries: the profile, the
// portfolio (with each item's property and latest analysis summaries) and the summary of the
// last finished session.
type Hydrated struct {
	Profile     *Profile
	Portfolio   []PortfolioItem
	LastSummary string
}

// Hydrate reads a user's context.
func (s *Store) Hydrate(ctx context.Context, who Who) (*Hydrated, error) {
	h := &Hydrated{}
	err := s.tx(ctx, who, func(tx *appdb.Tx) error {
		var err error
		if h.Profile, err = readProfile(ctx, tx); err != nil {
			return err
		}
		if h.Portfolio, err = portfolio(ctx, tx, false); err != nil {
			return err
		}
		err = tx.QueryRow(ctx, `SELECT summary FROM conversations WHERE tenant_id = ? AND user_id = ? AND summary <> ''
			AND ended_at IS NOT NULL ORDER BY ended_at DESC LIMIT 1`, tx.Tenant(), tx.User()).Scan(&h.LastSummary)
		if errors.Is(err, sql.ErrNoRows) {
			err = nil
		}
		return err
	})
	return h, err
}

// Idle is an open conversation whose last message is older than a cutoff.
type Idle struct {
	Who Who
	ID  string
}

// IdleConversations lists, across tenants, the open conversations whose last message is before
// cutoff (for the sweeper that ends them).
func (s *Store) IdleConversations(ctx context.Context, cutoff time.Time, limit int) ([]Idle, error) {
	var out []Idle
	err := s.DB.System(ctx, func(tx *appdb.Tx) error {
		rows, err := tx.Query(ctx, `SELECT tenant_id, user_id, id FROM conversations WHERE ended_at IS NULL AND last_message_at < ?
			ORDER BY last_message_at LIMIT ?`, cutoff.UTC(), limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var i Idle
			if err := rows.Scan(&i.Who.Tenant, &i.Who.User, &i.ID); err != nil {
				return err
			}
			out = append(out, i)
		}
		return rows.Err()
	})
	return out, err
}
