package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/trellis-go/trellis/appdb"
)

// Run types and priorities a research job may have.
var (
	RunTypes   = []string{"initial_intake", "pricing_refresh", "manual_request"}
	Priorities = []string{"low", "normal", "high"}
)

// CreateRun records a new research job, pending.
func (s *Store) CreateRun(ctx context.Context, w Who, r ResearchRun) (*ResearchRun, error) {
	if r.Type == "" {
		r.Type = "manual_request"
	}
	if !slices.Contains(RunTypes, r.Type) {
		return nil, &FieldError{"type", "one of initial_intake, pricing_refresh, manual_request"}
	}
	if r.Priority == "" {
		r.Priority = "normal"
	}
	if !slices.Contains(Priorities, r.Priority) {
		return nil, &FieldError{"priority", "one of low, normal, high"}
	}
	if r.ID == "" {
		r.ID = NewID()
	}
	r.Status, r.CreatedBy, r.CreatedAt = RunPending, w.User, s.now()
	r.StepHistory = []Step{}
	err := s.tx(ctx, w, func(tx *appdb.Tx) error {
		if err := lockItem(ctx, tx, w.Org, r.ItemID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO item_research_runs (tenant_id, id, item_id, run_type, priority, status, thread_id, run_id,
			checkpoint, current_node, step_count, step_history, last_seq, attempts, error, message, created_by, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, '', 0, ?, 0, 0, '', '', ?, ?)`,
			w.Org, r.ID, r.ItemID, r.Type, r.Priority, r.Status, r.ThreadID, r.RunID, appdb.JSONValue(r.StepHistory), r.CreatedBy, r.CreatedAt)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &r, nil
}

const runCols = `id, item_id, run_type, priority, status, thread_id, run_id, checkpoint, current_node, step_count, step_history, last_seq,
	attempts, error, message, created_by, created_at, started_at, completed_at`

func scanRun(sc interface{ Scan(...any) error }) (*ResearchRun, error) {
	var r ResearchRun
	var created, started, completed appdb.Time
	if err := sc.Scan(&r.ID, &r.ItemID, &r.Type, &r.Priority, &r.Status, &r.ThreadID, &r.RunID, appdb.JSON(&r.Checkpoint), &r.CurrentNode,
		&r.StepCount, appdb.JSON(&r.StepHistory), &r.LastSeq, &r.Attempts, &r.Error, &r.Message, &r.CreatedBy, &created, &started, &completed); err != nil {
		return nil, err
	}
	r.CreatedAt = created.UTC()
	if !started.IsZero() {
		t := started.UTC()
		r.StartedAt = &t
	}
	if !completed.IsZero() {
		t := completed.UTC()
		r.CompletedAt = &t
	}
	return &r, nil
}

func getRun(ctx context.Context, tx *appdb.Tx, org, id string) (*ResearchRun, error) {
	r, err := scanRun(tx.QueryRow(ctx, `SELECT `+runCols+` FROM item_research_runs WHERE tenant_id = ? AND id = ?`, org, id))
	if appdb.IsNotFound(err) {
		return nil, fmt.Errorf("research job %s: %w", id, ErrNotFound)
	}
	return r, err
}

// GetRun returns a research job.
func (s *Store) GetRun(ctx context.Context, w Who, id string) (r *ResearchRun, err error) {
	err = s.tx(ctx, w, func(tx *appdb.Tx) error {
		r, err = getRun(ctx, tx, w.Org, id)
		return err
	})
	return r, err
}

// UpdateRun reads a job, lets fn change it, and writes it back, in one transaction. fn
// returning false writes nothing.
func (s *Store) UpdateRun(ctx context.Context, w Who, id string, fn func(r *ResearchRun) bool) (r *ResearchRun, err error) {
	err = s.tx(ctx, w, func(tx *appdb.Tx) error {
		q := `SELECT ` + runCols + ` FROM item_research_runs WHERE tenant_id = ? AND id = ?`
		if tx.Dialect() == appdb.Postgres {
			q += ` FOR UPDATE`
		}
		r, err = scanRun(tx.QueryRow(ctx, q, w.Org, id))
		if appdb.IsNotFound(err) {
			return fmt.Errorf("research job %s: %w", id, ErrNotFound)
		}
		if err != nil || !fn(r) {
			return err
		}
		var cp any
		if r.Checkpoint != nil {
			cp = appdb.JSONValue(r.Checkpoint)
		}
		_, err = tx.Exec(ctx, `UPDATE item_research_runs SET status = ?, thread_id = ?, run_id = ?, checkpoint = ?, current_node = ?,
			step_count = ?, step_history = ?, last_seq = ?, attempts = ?, error = ?, message = ?, started_at = ?, completed_at = ?
			WHERE tenant_id = ? AND id = ?`, r.Status, r.ThreadID, r.RunID, cp, r.CurrentNode, r.StepCount, appdb.JSONValue(r.StepHistory),
			r.LastSeq, r.Attempts, r.Error, r.Message, nullTime(r.StartedAt), nullTime(r.CompletedAt), w.Org, id)
		return err
	})
	return r, err
}

func nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return *t
}

// UnfinishedRuns returns every organisation's jobs not yet ended, for a process that starts to
// follow them again.
func (s *Store) UnfinishedRuns(ctx context.Context) (map[string][]string, error) {
	out := map[string][]string{}
	err := s.db.System(ctx, func(tx *appdb.Tx) error {
		rows, err := tx.Query(ctx, `SELECT tenant_id, id FROM item_research_runs WHERE status IN ('pending', 'running')`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var org, id string
			if err := rows.Scan(&org, &id); err != nil {
				return err
			}
			out[org] = append(out[org], id)
		}
		return rows.Err()
	})
	return out, err
}

// SaveResearch stores a research conclusion as the item's current one; the previous current
// row becomes history, in the same transaction.
func (s *Store) SaveResearch(ctx context.Context, w Who, itemID, runID string, data ResearchData) (*Research, error) {
	var r *Research
	err := s.tx(ctx, w, func(tx *appdb.Tx) (err error) {
		r, err = s.saveResearch(ctx, tx, w, itemID, runID, data)
		return err
	})
	return r, err
}

func (s *Store) saveResearch(ctx context.Context, tx *appdb.Tx, w Who, itemID, runID string, data ResearchData) (*Research, error) {
	if data.Version == "" {
		data.Version = SchemaVersion
	}
	r := &Research{ID: NewID(), ItemID: itemID, ResearchRunID: runID, Data: data, SchemaVersion: data.Version, IsCurrent: true, CreatedAt: s.now()}
	if _, err := tx.Exec(ctx, `UPDATE item_research SET is_current = ? WHERE tenant_id = ? AND item_id = ? AND is_current`, false, w.Org, itemID); err != nil {
		return nil, err
	}
	_, err := tx.Exec(ctx, `INSERT INTO item_research (tenant_id, id, item_id, research_run_id, data, schema_version, created_at, is_current)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, w.Org, r.ID, itemID, runID, appdb.JSONValue(data), r.SchemaVersion, r.CreatedAt, true)
	return r, err
}

// SaveResults stores a research conclusion and its evidence together, in one transaction.
func (s *Store) SaveResults(ctx context.Context, w Who, itemID, runID string, data ResearchData, records []Evidence) (r *Research, b *Bundle, err error) {
	err = s.tx(ctx, w, func(tx *appdb.Tx) error {
		// The item must still exist: a job whose item was deleted writes nothing.
		if err := lockItem(ctx, tx, w.Org, itemID); err != nil {
			return err
		}
		if r, err = s.saveResearch(ctx, tx, w, itemID, runID, data); err != nil {
			return err
		}
		b, err = s.saveEvidence(ctx, tx, w, itemID, runID, records)
		return err
	})
	return r, b, err
}

const researchCols = `id, item_id, research_run_id, data, schema_version, created_at, is_current`

func scanResearch(sc interface{ Scan(...any) error }) (*Research, error) {
	var r Research
	var at appdb.Time
	if err := sc.Scan(&r.ID, &r.ItemID, &r.ResearchRunID, appdb.JSON(&r.Data), &r.SchemaVersion, &at, &r.IsCurrent); err != nil {
		return nil, err
	}
	r.CreatedAt = at.UTC()
	return &r, nil
}

// LatestResearch returns the item's current research, or nil when it has none.
func (s *Store) LatestResearch(ctx context.Context, w Who, itemID string) (r *Research, err error) {
	err = s.tx(ctx, w, func(tx *appdb.Tx) error {
		r, err = scanResearch(tx.QueryRow(ctx, `SELECT `+researchCols+` FROM item_research WHERE tenant_id = ? AND item_id = ? AND is_current`, w.Org, itemID))
		if appdb.IsNotFound(err) {
			r, err = nil, nil
		}
		return err
	})
	return r, err
}

// ResearchHistory returns an item's research, newest first.
func (s *Store) ResearchHistory(ctx context.Context, w Who, itemID string, page, limit int) (*Page[Research], error) {
	page, limit = pageArgs(page, limit)
	out := &Page[Research]{Items: []Research{}, Page: page, Limit: limit}
	err := s.tx(ctx, w, func(tx *appdb.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM item_research WHERE tenant_id = ? AND item_id = ?`, w.Org, itemID).Scan(&out.Total); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+researchCols+` FROM item_research WHERE tenant_id = ? AND item_id = ? ORDER BY id DESC LIMIT ? OFFSET ?`,
			w.Org, itemID, limit, (page-1)*limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r, err := scanResearch(rows)
			if err != nil {
				return err
			}
			out.Items = append(out.Items, *r)
		}
		return rows.Err()
	})
	return out, err
}

// SaveEvidence records a bundle of evidence for a research run.
func (s *Store) SaveEvidence(ctx context.Context, w Who, itemID, runID string, records []Evidence) (*Bundle, error) {
	var b *Bundle
	err := s.tx(ctx, w, func(tx *appdb.Tx) (err error) {
		b, err = s.saveEvidence(ctx, tx, w, itemID, runID, records)
		return err
	})
	return b, err
}

func (s *Store) saveEvidence(ctx context.Context, tx *appdb.Tx, w Who, itemID, runID string, records []Evidence) (*Bundle, error) {
	b := &Bundle{ID: NewID(), ItemID: itemID, ResearchRunID: runID, Count: len(records), CreatedAt: s.now()}
	err := func() error {
		if _, err := tx.Exec(ctx, `INSERT INTO evidence_bundles (tenant_id, id, item_id, research_run_id, record_count, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			w.Org, b.ID, itemID, runID, b.Count, b.CreatedAt); err != nil {
			return err
		}
		for i, r := range records {
			if r.ID == "" {
				r.ID = NewID()
			}
			if _, err := tx.Exec(ctx, `INSERT INTO evidence_records (tenant_id, id, bundle_id, item_id, position, record) VALUES (?, ?, ?, ?, ?, ?)`,
				w.Org, NewID(), b.ID, itemID, i, appdb.JSONValue(r)); err != nil {
				return err
			}
		}
		return nil
	}()
	if err != nil {
		return nil, err
	}
	return b, nil
}

// LatestEvidence returns the item's newest evidence bundle with its records (at most limit,
// most relevant first as stored), or nil.
func (s *Store) LatestEvidence(ctx context.Context, w Who, itemID string, limit int) (b *Bundle, err error) {
	if limit <= 0 {
		limit = 200
	}
	err = s.tx(ctx, w, func(tx *appdb.Tx) error {
		var x Bundle
		var at appdb.Time
		err := tx.QueryRow(ctx, `SELECT id, item_id, research_run_id, record_count, created_at FROM evidence_bundles
			WHERE tenant_id = ? AND item_id = ? ORDER BY id DESC LIMIT 1`, w.Org, itemID).Scan(&x.ID, &x.ItemID, &x.ResearchRunID, &x.Count, &at)
		if appdb.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		x.CreatedAt = at.UTC()
		rows, err := tx.Query(ctx, `SELECT record FROM evidence_records WHERE tenant_id = ? AND bundle_id = ? ORDER BY position LIMIT ?`, w.Org, x.ID, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e Evidence
			if err := rows.Scan(appdb.JSON(&e)); err != nil {
				return err
			}
			x.Records = append(x.Records, e)
		}
		b = &x
		return rows.Err()
	})
	return b, err
}
