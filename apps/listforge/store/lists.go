package store

import (
	"context"

	"github.com/trellis-go/trellis/appdb"
)

// ListSessions returns the caller's chat sessions about an item, the most recently used first
// (another user's sessions are not listed). An item of another organisation is ErrNotFound.
func (s *Store) ListSessions(ctx context.Context, w Who, itemID string) ([]Session, error) {
	out := []Session{}
	err := s.tx(ctx, w, func(tx *appdb.Tx) error {
		if _, err := getItem(ctx, tx, w.Org, itemID); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT id, item_id, user_id, created_at, updated_at, last_message_at FROM chat_sessions
			WHERE tenant_id = ? AND item_id = ? AND user_id = ? ORDER BY updated_at DESC, id DESC LIMIT 100`, w.Org, itemID, w.User)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var ss Session
			var c, u, l appdb.Time
			if err := rows.Scan(&ss.ID, &ss.ItemID, &ss.UserID, &c, &u, &l); err != nil {
				return err
			}
			ss.OrgID, ss.CreatedAt, ss.UpdatedAt = w.Org, c.UTC(), u.UTC()
			if !l.IsZero() {
				t := l.UTC()
				ss.LastMessageAt = &t
			}
			out = append(out, ss)
		}
		return rows.Err()
	})
	return out, err
}

// ListRuns returns an item's research jobs, newest first, at most limit (1 to 100).
func (s *Store) ListRuns(ctx context.Context, w Who, itemID string, limit int) ([]ResearchRun, error) {
	_, limit = pageArgs(1, limit)
	out := []ResearchRun{}
	err := s.tx(ctx, w, func(tx *appdb.Tx) error {
		if _, err := getItem(ctx, tx, w.Org, itemID); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+runCols+` FROM item_research_runs WHERE tenant_id = ? AND item_id = ?
			ORDER BY created_at DESC, id DESC LIMIT ?`, w.Org, itemID, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r, err := scanRun(rows)
			if err != nil {
				return err
			}
			out = append(out, *r)
		}
		return rows.Err()
	})
	return out, err
}
