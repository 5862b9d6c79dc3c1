package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/trellis-go/trellis/appdb"
)

// Tables are the analyst's tables in its database: every query the app makes is a method here.
// They are safe for concurrent use.
type Tables struct {
	db *appdb.DB
}

// New returns the tables of db, on which Migrations have run.
func New(db *appdb.DB) *Tables { return &Tables{db: db} }

// Close closes the database.
func (t *Tables) Close() error { return t.db.Close() }

// Document is a knowledge-base document.
type Document struct {
	ID, Title, Content string
	Metadata           map[string]any
}

// CountDocuments is the number of tenant's documents whose ID starts with prefix ("corpus:").
func (t *Tables) CountDocuments(ctx context.Context, tenant, prefix string) (int, error) {
	var n int
	err := t.db.System(ctx, func(tx *appdb.Tx) error {
		return tx.QueryRow(ctx, `SELECT COUNT(*) FROM documents WHERE tenant_id = ? AND id LIKE ?`, tenant, prefix+"%").Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("analyst store: counting documents: %w", err)
	}
	return n, nil
}

// AddDocuments adds docs to tenant's knowledge base in one transaction, created at at; a
// document the tenant already has by that ID is kept as it is.
func (t *Tables) AddDocuments(ctx context.Context, tenant string, docs []Document, at time.Time) error {
	return t.db.System(ctx, func(tx *appdb.Tx) error {
		for _, d := range docs {
			if _, err := tx.Exec(ctx, `INSERT INTO documents (id, tenant_id, title, content, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?)
				ON CONFLICT (tenant_id, id) DO NOTHING`, d.ID, tenant, d.Title, d.Content, appdb.JSONValue(d.Metadata), at); err != nil {
				return fmt.Errorf("analyst store: adding document %s: %w", d.ID, err)
			}
		}
		return nil
	})
}

// Report is a saved report.
type Report struct {
	ID          string         `json:"id"`
	UserID      string         `json:"user_id"`
	SessionID   string         `json:"session_id"`
	Title       string         `json:"title"`
	Content     string         `json:"content"`
	Format      string         `json:"format"`
	TopicTags   []string       `json:"topic_tags"`
	ProjectName string         `json:"project_name"`
	Structured  map[string]any `json:"structured,omitempty"`
	CreatedAt   time.Time      `json:"created_at"`
	Chunks      int            `json:"chunks,omitempty"`
}

// Chunk is a passage of a saved report, with its metadata.
type Chunk struct {
	Content  string
	Metadata map[string]any
}

// SaveReport saves r for tenant (as its user's) with its chunks, in one transaction. A chunk's
// ID is derived from the report's and the chunk's position.
func (t *Tables) SaveReport(ctx context.Context, tenant string, r Report, chunks []Chunk) error {
	if r.Structured == nil {
		r.Structured = map[string]any{}
	}
	err := t.db.Tx(ctx, appdb.Who{Tenant: tenant, User: r.UserID}, func(tx *appdb.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO reports (id, tenant_id, user_id, session_id, title, content, format, topic_tags, project_name, structured, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, r.ID, tenant, r.UserID, r.SessionID, r.Title, r.Content, r.Format,
			appdb.JSONValue(r.TopicTags), r.ProjectName, appdb.JSONValue(r.Structured), r.CreatedAt); err != nil {
			return err
		}
		for i, c := range chunks {
			if _, err := tx.Exec(ctx, `INSERT INTO report_chunks (id, tenant_id, report_id, author_id, content, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
				uuid.NewSHA1(uuid.NameSpaceURL, fmt.Appendf(nil, "analyst:report/%s/%d", r.ID, i)).String(), tenant, r.ID, r.UserID, c.Content, appdb.JSONValue(c.Metadata), r.CreatedAt); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("analyst store: saving report %s: %w", r.ID, err)
	}
	return nil
}

// Reports lists user's reports, newest first, without their content and structure.
func (t *Tables) Reports(ctx context.Context, tenant, user string) ([]Report, error) {
	out := []Report{}
	err := t.db.Tx(ctx, appdb.Who{Tenant: tenant, User: user}, func(tx *appdb.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id, user_id, session_id, title, format, topic_tags, project_name, created_at FROM reports
			WHERE tenant_id = ? AND user_id = ? ORDER BY created_at DESC`, tenant, user)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r Report
			var at appdb.Time
			if err := rows.Scan(&r.ID, &r.UserID, &r.SessionID, &r.Title, &r.Format, appdb.JSON(&r.TopicTags), &r.ProjectName, &at); err != nil {
				return err
			}
			r.CreatedAt = at.Time
			out = append(out, r)
		}
		return rows.Err()
	})
	return out, err
}

// Report returns one of user's reports with its number of chunks; found is false when the user
// has none by that ID.
func (t *Tables) Report(ctx context.Context, tenant, user, id string) (r Report, found bool, err error) {
	err = t.db.Tx(ctx, appdb.Who{Tenant: tenant, User: user}, func(tx *appdb.Tx) error {
		var at appdb.Time
		err := tx.QueryRow(ctx, `SELECT id, user_id, session_id, title, content, format, topic_tags, project_name, structured, created_at FROM reports
			WHERE tenant_id = ? AND user_id = ? AND id = ?`, tenant, user, id).Scan(&r.ID, &r.UserID, &r.SessionID, &r.Title, &r.Content, &r.Format,
			appdb.JSON(&r.TopicTags), &r.ProjectName, appdb.JSON(&r.Structured), &at)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		r.CreatedAt, found = at.Time, true
		return tx.QueryRow(ctx, `SELECT COUNT(*) FROM report_chunks WHERE tenant_id = ? AND report_id = ?`, tenant, id).Scan(&r.Chunks)
	})
	return r, found, err
}
