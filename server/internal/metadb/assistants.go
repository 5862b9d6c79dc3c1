package metadb

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Assistants created through the API: trellis_assistants holds each one's current version,
// trellis_assistant_versions every version it had (the current one included). The assistants
// the server registers from its graphs are not stored: they are the same for every tenant and
// every start.

// ErrNoVersion is returned by SetLatestAssistant when the assistant has no such version.
var ErrNoVersion = errors.New("metadb: no such assistant version")

// Assistant is a row of trellis_assistants, an assistant's current version, or of
// trellis_assistant_versions (AssistantVersions).
type Assistant struct {
	AssistantID string
	GraphID     string
	Name        string
	Description *string
	Config      map[string]any
	Context     map[string]any
	Metadata    map[string]any
	Version     int
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

const assistantCols = `assistant_id, graph_id, name, description, config, context, metadata, version, created_at, updated_at`

func scanAssistant(row scanner) (*Assistant, error) {
	var a Assistant
	var desc sql.NullString
	var cfg, cx, md string
	var created, updated int64
	if err := row.Scan(&a.AssistantID, &a.GraphID, &a.Name, &desc, &cfg, &cx, &md, &a.Version, &created, &updated); err != nil {
		return nil, err
	}
	a.Description = stringPtr(desc)
	a.Config, a.Context, a.Metadata = jsonObject(cfg), jsonObject(cx), jsonObject(md)
	a.CreatedAt, a.UpdatedAt = fromMS(created), fromMS(updated)
	return &a, nil
}

// CreateAssistant inserts a as its tenant's, with its first version. It reports false, and
// writes nothing, when the ID is taken (by any tenant).
func (m *DB) CreateAssistant(ctx context.Context, tenant string, a *Assistant) (bool, error) {
	tx, err := m.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, m.Q(`INSERT INTO trellis_assistants (tenant, `+assistantCols+`)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) ON CONFLICT (assistant_id) DO NOTHING`),
		tenant, a.AssistantID, a.GraphID, a.Name, nullString(a.Description), mustJSON(a.Config), mustJSON(a.Context), mustJSON(a.Metadata), a.Version, ms(a.CreatedAt))
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return false, err
	}
	if err := m.insertAssistantVersion(ctx, tx, a); err != nil {
		return false, err
	}
	return true, tx.Commit()
}

func (m *DB) insertAssistantVersion(ctx context.Context, tx *sql.Tx, a *Assistant) error {
	_, err := tx.ExecContext(ctx, m.Q(`INSERT INTO trellis_assistant_versions (assistant_id, version, graph_id, name, description, config, context, metadata, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`),
		a.AssistantID, a.Version, a.GraphID, a.Name, nullString(a.Description), mustJSON(a.Config), mustJSON(a.Context), mustJSON(a.Metadata), ms(a.UpdatedAt))
	return err
}

// GetAssistant reads a created assistant of the tenant; an empty tenant means any tenant (for
// the runner, which holds only a run's assistant ID). ErrNotFound when there is none.
func (m *DB) GetAssistant(ctx context.Context, tenant, id string) (*Assistant, error) {
	q, args := `SELECT `+assistantCols+` FROM trellis_assistants WHERE assistant_id = $1`, []any{id}
	if tenant != "" {
		q += ` AND tenant = $2`
		args = append(args, tenant)
	}
	a, err := scanAssistant(m.queryRow(ctx, q, args...))
	return a, notFound(err)
}

// ListAssistants lists a tenant's created assistants, newest first.
func (m *DB) ListAssistants(ctx context.Context, tenant string) ([]*Assistant, error) {
	return queryAll(ctx, m, scanAssistant, `SELECT `+assistantCols+` FROM trellis_assistants WHERE tenant = $1 ORDER BY created_at DESC, assistant_id`, tenant)
}

// UpdateAssistant reads the tenant's assistant, lets change rewrite it (change returns an error
// to abort: UpdateAssistant returns that error as it is), and stores the result as a new version
// that becomes the current one. ErrNotFound when the tenant has no such assistant.
func (m *DB) UpdateAssistant(ctx context.Context, tenant, id string, change func(*Assistant) error) (*Assistant, error) {
	tx, err := m.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	lock := ""
	if m.postgres {
		lock = ` FOR UPDATE` // two patches at once must not both take the next version number
	}
	a, err := scanAssistant(tx.QueryRowContext(ctx, m.Q(`SELECT `+assistantCols+` FROM trellis_assistants WHERE assistant_id = $1 AND tenant = $2`+lock), id, tenant))
	if err != nil {
		return nil, notFound(err)
	}
	if err := change(a); err != nil {
		return nil, err
	}
	if err := tx.QueryRowContext(ctx, m.Q(`SELECT COALESCE(MAX(version), 0) + 1 FROM trellis_assistant_versions WHERE assistant_id = $1`), id).Scan(&a.Version); err != nil {
		return nil, err
	}
	a.UpdatedAt = m.Stamp()
	if err := m.insertAssistantVersion(ctx, tx, a); err != nil {
		return nil, err
	}
	if err := m.storeAssistant(ctx, tx, tenant, a); err != nil {
		return nil, err
	}
	return a, tx.Commit()
}

func (m *DB) storeAssistant(ctx context.Context, tx *sql.Tx, tenant string, a *Assistant) error {
	_, err := tx.ExecContext(ctx, m.Q(`UPDATE trellis_assistants SET graph_id = $1, name = $2, description = $3, config = $4, context = $5, metadata = $6, version = $7, updated_at = $8
WHERE assistant_id = $9 AND tenant = $10`),
		a.GraphID, a.Name, nullString(a.Description), mustJSON(a.Config), mustJSON(a.Context), mustJSON(a.Metadata), a.Version, ms(a.UpdatedAt), a.AssistantID, tenant)
	return err
}

// SetLatestAssistant makes one of the assistant's versions its current one again. ErrNotFound
// when the tenant has no such assistant, ErrNoVersion when it has no such version.
func (m *DB) SetLatestAssistant(ctx context.Context, tenant, id string, version int) (*Assistant, error) {
	tx, err := m.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	a, err := scanAssistant(tx.QueryRowContext(ctx, m.Q(`SELECT `+assistantCols+` FROM trellis_assistants WHERE assistant_id = $1 AND tenant = $2`), id, tenant))
	if err != nil {
		return nil, notFound(err)
	}
	var desc sql.NullString
	var cfg, cx, md string
	err = tx.QueryRowContext(ctx, m.Q(`SELECT graph_id, name, description, config, context, metadata FROM trellis_assistant_versions WHERE assistant_id = $1 AND version = $2`), id, version).
		Scan(&a.GraphID, &a.Name, &desc, &cfg, &cx, &md)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNoVersion
	}
	if err != nil {
		return nil, err
	}
	a.Description = stringPtr(desc)
	a.Config, a.Context, a.Metadata = jsonObject(cfg), jsonObject(cx), jsonObject(md)
	a.Version, a.UpdatedAt = version, m.Stamp()
	if err := m.storeAssistant(ctx, tx, tenant, a); err != nil {
		return nil, err
	}
	return a, tx.Commit()
}

// AssistantVersions lists a created assistant's versions, newest first, each as the assistant
// was then: its Version, and its CreatedAt and UpdatedAt when that version was made.
func (m *DB) AssistantVersions(ctx context.Context, id string) ([]*Assistant, error) {
	return queryAll(ctx, m, func(row scanner) (*Assistant, error) {
		var v Assistant
		var desc sql.NullString
		var cfg, cx, md string
		var created int64
		if err := row.Scan(&v.AssistantID, &v.Version, &v.GraphID, &v.Name, &desc, &cfg, &cx, &md, &created); err != nil {
			return nil, err
		}
		v.Description = stringPtr(desc)
		v.Config, v.Context, v.Metadata = jsonObject(cfg), jsonObject(cx), jsonObject(md)
		v.CreatedAt = fromMS(created)
		v.UpdatedAt = v.CreatedAt
		return &v, nil
	}, `SELECT assistant_id, version, graph_id, name, description, config, context, metadata, created_at
FROM trellis_assistant_versions WHERE assistant_id = $1 ORDER BY version DESC`, id)
}

// DeleteAssistant deletes the tenant's assistant with its versions, and reports whether there
// was one.
func (m *DB) DeleteAssistant(ctx context.Context, tenant, id string) (bool, error) {
	tx, err := m.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, m.Q(`DELETE FROM trellis_assistants WHERE assistant_id = $1 AND tenant = $2`), id, tenant)
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, m.Q(`DELETE FROM trellis_assistant_versions WHERE assistant_id = $1`), id); err != nil {
		return false, err
	}
	return true, tx.Commit()
}
