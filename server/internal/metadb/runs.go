package metadb

import (
	"context"
	"database/sql"
	"encoding/json"
	"strconv"
	"time"
)

// Run is a row of trellis_runs.
type Run struct {
	Tenant      string
	RunID       string
	ThreadID    string
	AssistantID string
	Status      string
	Metadata    map[string]any
	// Kwargs is what the run was created with, as JSON (the server's RunKwargs).
	Kwargs            json.RawMessage
	MultitaskStrategy string
	CreatedAt         time.Time
	UpdatedAt         time.Time
	// The columns below are read, not written by InsertRun: the run's execution sets them.
	//
	// Attempt counts the run's claims (ClaimRun).
	Attempt int
	// Progress is the run's progress as JSON (the server's RunProgress); nil before it starts.
	Progress json.RawMessage
	// LastError is the error of the run's last failed attempt.
	LastError string
	// NextAttemptAt is when a run waiting to be tried again is due; zero when none is.
	NextAttemptAt time.Time
}

// runInsertCols are the columns a new run's row is written with; runCols, those read.
const (
	runInsertCols = `tenant, run_id, thread_id, assistant_id, status, metadata, kwargs, multitask, created_at, updated_at`
	runCols       = runInsertCols + `, attempt, progress, last_error, next_attempt_at`
	runInsert     = `INSERT INTO trellis_runs (` + runInsertCols + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`
)

// insertArgs are the arguments of runInsert.
func (r *Run) insertArgs() []any {
	kw := string(r.Kwargs)
	if kw == "" {
		kw = "null"
	}
	return []any{r.Tenant, r.RunID, r.ThreadID, r.AssistantID, r.Status, mustJSON(r.Metadata), kw, r.MultitaskStrategy, ms(r.CreatedAt)}
}

func scanRun(row scanner) (*Run, error) {
	var r Run
	var md, kw string
	var created, updated, next int64
	var progress, lastErr sql.NullString
	if err := row.Scan(&r.Tenant, &r.RunID, &r.ThreadID, &r.AssistantID, &r.Status, &md, &kw, &r.MultitaskStrategy, &created, &updated,
		&r.Attempt, &progress, &lastErr, &next); err != nil {
		return nil, err
	}
	r.CreatedAt, r.UpdatedAt = fromMS(created), fromMS(updated)
	r.Metadata = jsonObject(md)
	r.Kwargs = json.RawMessage(kw)
	r.Progress = rawOrNil(progress)
	r.LastError = lastErr.String
	r.NextAttemptAt = fromMSOrZero(next)
	return &r, nil
}

// InsertRun inserts a new run, with its CreatedAt as its UpdatedAt.
func (m *DB) InsertRun(ctx context.Context, r *Run) error {
	_, err := m.Exec(ctx, runInsert, r.insertArgs()...)
	return err
}

// InsertRunWithThread inserts a new thread t and its first run r: in one statement on Postgres,
// one after the other on SQLite. A thread whose ID is taken is left as it is.
func (m *DB) InsertRunWithThread(ctx context.Context, t *Thread, r *Run) error {
	if !m.postgres {
		if _, err := m.CreateThread(ctx, t); err != nil {
			return err
		}
		return m.InsertRun(ctx, r)
	}
	if t.CreatedAt.IsZero() {
		t.CreatedAt = m.Stamp()
	}
	args := append(r.insertArgs(), t.Tenant, t.ThreadID, mustJSON(t.Metadata), t.Status, boolInt(t.Temporary), ms(t.CreatedAt), t.TTLMS)
	_, err := m.Exec(ctx, `WITH t AS (INSERT INTO trellis_threads (tenant, thread_id, metadata, status, temporary, created_at, updated_at, state_updated_at, ttl_ms)
VALUES ($10, $11, $12, $13, $14, $15, $15, $15, $16) ON CONFLICT (thread_id) DO NOTHING)
`+runInsert, args...)
	return err
}

// GetRun reads a tenant's run (of the thread, when threadID is set); ErrNotFound when it has
// none of that ID.
func (m *DB) GetRun(ctx context.Context, tenant, threadID, runID string) (*Run, error) {
	q := `SELECT ` + runCols + ` FROM trellis_runs WHERE tenant = $1 AND run_id = $2`
	args := []any{tenant, runID}
	if threadID != "" {
		q += ` AND thread_id = $3`
		args = append(args, threadID)
	}
	r, err := scanRun(m.queryRow(ctx, q, args...))
	return r, notFound(err)
}

// RunByID reads a run of any tenant (for the executor, which is handed only an ID).
func (m *DB) RunByID(ctx context.Context, runID string) (*Run, error) {
	r, err := scanRun(m.queryRow(ctx, `SELECT `+runCols+` FROM trellis_runs WHERE run_id = $1`, runID))
	return r, notFound(err)
}

// ListRuns lists a thread's runs (of one status, when status is set), newest first, a page of
// limit from offset. It answers an empty list rather than nil.
func (m *DB) ListRuns(ctx context.Context, tenant, threadID, status string, limit, offset int) ([]*Run, error) {
	q := `SELECT ` + runCols + ` FROM trellis_runs WHERE tenant = $1 AND thread_id = $2`
	args := []any{tenant, threadID}
	if status != "" {
		q += ` AND status = $3`
		args = append(args, status)
	}
	q += ` ORDER BY created_at DESC, run_id DESC LIMIT ` + strconv.Itoa(limit) + ` OFFSET ` + strconv.Itoa(offset)
	out, err := queryAll(ctx, m, scanRun, q, args...)
	if out == nil && err == nil {
		out = []*Run{}
	}
	return out, err
}

// ActiveRuns lists a thread's pending and running runs, oldest first.
func (m *DB) ActiveRuns(ctx context.Context, tenant, threadID string) ([]*Run, error) {
	return queryAll(ctx, m, scanRun, `SELECT `+runCols+` FROM trellis_runs WHERE tenant = $1 AND thread_id = $2 AND status IN ('pending', 'running') ORDER BY created_at, run_id`, tenant, threadID)
}

// TenantActiveRuns lists a tenant's pending and running runs (of one thread, when threadID is
// set), oldest first; stateless runs' included.
func (m *DB) TenantActiveRuns(ctx context.Context, tenant, threadID string) ([]*Run, error) {
	q := `SELECT ` + runCols + ` FROM trellis_runs WHERE tenant = $1 AND status IN ('pending', 'running')`
	args := []any{tenant}
	if threadID != "" {
		q += ` AND thread_id = $2`
		args = append(args, threadID)
	}
	return queryAll(ctx, m, scanRun, q+` ORDER BY created_at, run_id`, args...)
}

// UnfinishedRuns lists runs of every tenant left pending or running, oldest first.
func (m *DB) UnfinishedRuns(ctx context.Context) ([]*Run, error) {
	return queryAll(ctx, m, scanRun, `SELECT `+runCols+` FROM trellis_runs WHERE status IN ('pending', 'running') ORDER BY created_at, run_id`)
}

// RunsOfAssistant lists a tenant's runs on an assistant, oldest first.
func (m *DB) RunsOfAssistant(ctx context.Context, tenant, id string) ([]*Run, error) {
	return queryAll(ctx, m, scanRun, `SELECT `+runCols+` FROM trellis_runs WHERE tenant = $1 AND assistant_id = $2 ORDER BY created_at, run_id`, tenant, id)
}

// SetRunStatus sets a run's status.
func (m *DB) SetRunStatus(ctx context.Context, runID, status string) error {
	_, err := m.Exec(ctx, `UPDATE trellis_runs SET status = $1, updated_at = $2 WHERE run_id = $3`, status, ms(m.Stamp()), runID)
	return err
}

// DeleteRun deletes a tenant's run with its events.
func (m *DB) DeleteRun(ctx context.Context, tenant, runID string) error {
	if _, err := m.Exec(ctx, `DELETE FROM trellis_run_events WHERE run_id = $1`, runID); err != nil {
		return err
	}
	_, err := m.Exec(ctx, `DELETE FROM trellis_runs WHERE tenant = $1 AND run_id = $2`, tenant, runID)
	return err
}

// SetRunProgress records how far a run got (the server's RunProgress, as JSON).
func (m *DB) SetRunProgress(ctx context.Context, runID string, progress json.RawMessage) error {
	_, err := m.Exec(ctx, `UPDATE trellis_runs SET progress = $1 WHERE run_id = $2`, string(progress), runID)
	return err
}

// RunEnd is what a run's row gets when an attempt ends.
type RunEnd struct {
	Status      string
	Progress    json.RawMessage // nil keeps the row's
	LastError   string          // "" keeps the row's
	NextAttempt time.Time       // zero clears it
}

// SetRunEnd writes a run's status with its final progress, last error and next attempt's time,
// in one statement.
func (m *DB) SetRunEnd(ctx context.Context, runID string, e RunEnd) error {
	_, err := m.Exec(ctx, `UPDATE trellis_runs SET status = $1, updated_at = $2, progress = COALESCE($3, progress), last_error = COALESCE($4, last_error), next_attempt_at = $5 WHERE run_id = $6`,
		m.runEndArgs(runID, e)...)
	return err
}

// runEndArgs are SetRunEnd's arguments, in order.
func (m *DB) runEndArgs(runID string, e RunEnd) []any {
	var lastErr any
	if e.LastError != "" {
		lastErr = e.LastError
	}
	return []any{e.Status, ms(m.Stamp()), nullRaw(e.Progress), lastErr, msOrZero(e.NextAttempt), runID}
}

// SetRunEndEvents does what SetRunEnd and AppendEventsNotify do, in one statement, on Postgres
// only: a run's end event (and whatever it had not written yet) goes with its status, and the
// notifications go out when both commit. The commit follows the pool's synchronous_commit (the
// stricter of the two statements it replaces).
func (m *DB) SetRunEndEvents(ctx context.Context, runID string, e RunEnd, batches []EventBatch, channel string, payloads []string) error {
	ids, seqs, names, data := eventColumns(batches)
	args := append([]any{ids, seqs, names, data}, m.runEndArgs(runID, e)...)
	_, err := m.db.ExecContext(ctx, `WITH w AS (INSERT INTO trellis_run_events (run_id, seq, event, data)
			SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) ON CONFLICT (run_id, seq) DO NOTHING),
		u AS (UPDATE trellis_runs SET status = $5, updated_at = $6, progress = COALESCE($7, progress), last_error = COALESCE($8, last_error), next_attempt_at = $9 WHERE run_id = $10)
		SELECT pg_notify($11, p) FROM unnest($12::text[]) AS p`,
		append(args, channel, payloads)...)
	return err
}

// SetRunLastError records why a run is attempted again when nothing else did (its worker died).
func (m *DB) SetRunLastError(ctx context.Context, runID, msg string) error {
	_, err := m.Exec(ctx, `UPDATE trellis_runs SET last_error = $1 WHERE run_id = $2`, msg, runID)
	return err
}
