package server

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// metaDB holds the server's own records (threads, runs, resumable event logs) in SQLite or
// Postgres through database/sql. Queries are written with $N placeholders and rewritten for
// SQLite. Every query names the tenant: records of another tenant are invisible.
type metaDB struct {
	db       *sql.DB
	postgres bool
	// hidden holds the IDs of finished stateless runs' threads waiting for the sweeper
	// (runner.sweep): their thread and runs answer 404 although their rows are still there.
	hidden sync.Map
	// now is the server's clock (Config.Now) for records' stamps; nil is time.Now.
	now  func() time.Time
	last atomic.Int64 // the last stamp by now
}

// migrations are applied in order, once each. Never edit one that has shipped: add another.
var serverMigrations = []struct {
	version int
	sql     string
}{
	{1, `
CREATE TABLE IF NOT EXISTS trellis_threads (
	tenant     TEXT NOT NULL,
	thread_id  TEXT NOT NULL PRIMARY KEY,
	metadata   TEXT NOT NULL,
	status     TEXT NOT NULL,
	vals       TEXT,
	interrupts TEXT,
	temporary  INTEGER NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS trellis_threads_by_tenant ON trellis_threads (tenant, created_at);
CREATE TABLE IF NOT EXISTS trellis_runs (
	tenant       TEXT NOT NULL,
	run_id       TEXT NOT NULL PRIMARY KEY,
	thread_id    TEXT NOT NULL,
	assistant_id TEXT NOT NULL,
	status       TEXT NOT NULL,
	metadata     TEXT NOT NULL,
	kwargs       TEXT NOT NULL,
	multitask    TEXT NOT NULL,
	created_at   BIGINT NOT NULL,
	updated_at   BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS trellis_runs_by_thread ON trellis_runs (tenant, thread_id, created_at);
CREATE INDEX IF NOT EXISTS trellis_runs_by_status ON trellis_runs (status);
CREATE TABLE IF NOT EXISTS trellis_run_events (
	run_id TEXT NOT NULL,
	seq    BIGINT NOT NULL,
	event  TEXT NOT NULL,
	data   TEXT NOT NULL,
	PRIMARY KEY (run_id, seq)
);
`},
	{2, `
ALTER TABLE trellis_runs ADD COLUMN lease_owner TEXT;
ALTER TABLE trellis_runs ADD COLUMN lease_until BIGINT NOT NULL DEFAULT 0;
ALTER TABLE trellis_runs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
`},
	{3, `
CREATE TABLE IF NOT EXISTS trellis_assistants (
	tenant       TEXT NOT NULL,
	assistant_id TEXT NOT NULL PRIMARY KEY,
	graph_id     TEXT NOT NULL,
	name         TEXT NOT NULL,
	description  TEXT,
	config       TEXT NOT NULL,
	context      TEXT NOT NULL,
	metadata     TEXT NOT NULL,
	version      INTEGER NOT NULL,
	created_at   BIGINT NOT NULL,
	updated_at   BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS trellis_assistants_by_tenant ON trellis_assistants (tenant, created_at);
CREATE TABLE IF NOT EXISTS trellis_assistant_versions (
	assistant_id TEXT NOT NULL,
	version      INTEGER NOT NULL,
	graph_id     TEXT NOT NULL,
	name         TEXT NOT NULL,
	description  TEXT,
	config       TEXT NOT NULL,
	context      TEXT NOT NULL,
	metadata     TEXT NOT NULL,
	created_at   BIGINT NOT NULL,
	PRIMARY KEY (assistant_id, version)
);
CREATE INDEX IF NOT EXISTS trellis_runs_by_assistant ON trellis_runs (assistant_id);
`},
	{4, `
CREATE INDEX IF NOT EXISTS trellis_threads_by_update ON trellis_threads (tenant, updated_at);
`},
	{5, `
ALTER TABLE trellis_threads ADD COLUMN ttl_ms BIGINT NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS trellis_threads_by_ttl ON trellis_threads (ttl_ms) WHERE ttl_ms > 0;
`},
	{6, `
ALTER TABLE trellis_runs ADD COLUMN progress TEXT;
ALTER TABLE trellis_runs ADD COLUMN last_error TEXT;
ALTER TABLE trellis_runs ADD COLUMN next_attempt_at BIGINT NOT NULL DEFAULT 0;
`},
	{7, `
CREATE TABLE IF NOT EXISTS trellis_crons (
	tenant           TEXT NOT NULL,
	cron_id          TEXT NOT NULL PRIMARY KEY,
	assistant_id     TEXT NOT NULL,
	thread_id        TEXT,
	user_id          TEXT,
	principal        TEXT NOT NULL,
	schedule         TEXT NOT NULL,
	payload          TEXT NOT NULL,
	metadata         TEXT NOT NULL,
	on_run_completed TEXT,
	end_time         BIGINT NOT NULL DEFAULT 0,
	next_run_date    BIGINT NOT NULL DEFAULT 0,
	enabled          INTEGER NOT NULL DEFAULT 1,
	created_at       BIGINT NOT NULL,
	updated_at       BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS trellis_crons_by_tenant ON trellis_crons (tenant, created_at);
CREATE INDEX IF NOT EXISTS trellis_crons_due ON trellis_crons (next_run_date) WHERE enabled = 1;
`},
	{8, `
ALTER TABLE trellis_threads ADD COLUMN state_updated_at BIGINT NOT NULL DEFAULT 0;
UPDATE trellis_threads SET state_updated_at = updated_at;
CREATE INDEX IF NOT EXISTS trellis_threads_by_state_update ON trellis_threads (tenant, state_updated_at);
`},
}

var placeholder = regexp.MustCompile(`\$(\d+)`)

func (m *metaDB) q(query string) string {
	if m.postgres {
		return query
	}
	return placeholder.ReplaceAllString(query, "?$1")
}

func (m *metaDB) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return m.db.ExecContext(ctx, m.q(query), args...)
}

func (m *metaDB) migrate(ctx context.Context) error {
	if _, err := m.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS trellis_server_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("server: migrate: %w", err)
	}
	for _, mg := range serverMigrations {
		var n int
		if err := m.db.QueryRowContext(ctx, m.q(`SELECT count(*) FROM trellis_server_migrations WHERE version = $1`), mg.version).Scan(&n); err != nil {
			return fmt.Errorf("server: migrate: %w", err)
		}
		if n > 0 {
			continue
		}
		tx, err := m.db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("server: migrate: %w", err)
		}
		if m.postgres {
			// Serialise concurrent replicas migrating the same database.
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7265001)`); err != nil {
				tx.Rollback()
				return fmt.Errorf("server: migrate: %w", err)
			}
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM trellis_server_migrations WHERE version = $1`, mg.version).Scan(&n); err != nil || n > 0 {
				tx.Rollback()
				if err != nil {
					return fmt.Errorf("server: migrate: %w", err)
				}
				continue
			}
		}
		if _, err := tx.ExecContext(ctx, mg.sql); err != nil {
			tx.Rollback()
			return fmt.Errorf("server: migration %d: %w", mg.version, err)
		}
		if _, err := tx.ExecContext(ctx, m.q(`INSERT INTO trellis_server_migrations (version, applied_at) VALUES ($1, $2)`), mg.version, time.Now().UnixMilli()); err != nil {
			tx.Rollback()
			return fmt.Errorf("server: migration %d: %w", mg.version, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("server: migration %d: %w", mg.version, err)
		}
	}
	return nil
}

// Thread is a conversation's record: its metadata and status; its state lives in checkpoints.
type Thread struct {
	ThreadID  string    `json:"thread_id"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// StateUpdatedAt is when the thread's state (values, interrupts) last changed: a run ended,
	// update-state, creation. Sorting by it lists the threads most recently worked on first.
	StateUpdatedAt time.Time      `json:"state_updated_at"`
	Metadata       map[string]any `json:"metadata"`
	Status         string         `json:"status"`
	// Values and Interrupts are the state's newest values and waiting interrupts by task ID;
	// {} on a thread with no state yet, as LangGraph answers.
	Values     json.RawMessage `json:"values"`
	Interrupts json.RawMessage `json:"interrupts"`
	Config     map[string]any  `json:"config"`
	tenant     string
	temporary  bool
	ttlMS      int64 // set at creation: see ttl.go
}

// Thread statuses.
const (
	ThreadIdle        = "idle"
	ThreadBusy        = "busy"
	ThreadInterrupted = "interrupted"
	ThreadError       = "error"
)

// Run statuses.
const (
	RunPending     = "pending"
	RunRunning     = "running"
	RunSuccess     = "success"
	RunError       = "error"
	RunInterrupted = "interrupted"
	RunTimeout     = "timeout"
)

// Run is one execution of an assistant on a thread.
type Run struct {
	RunID             string         `json:"run_id"`
	ThreadID          string         `json:"thread_id"`
	AssistantID       string         `json:"assistant_id"`
	CreatedAt         time.Time      `json:"created_at"`
	UpdatedAt         time.Time      `json:"updated_at"`
	Status            string         `json:"status"`
	Metadata          map[string]any `json:"metadata"`
	Kwargs            *RunKwargs     `json:"kwargs"`
	MultitaskStrategy string         `json:"multitask_strategy"`
	// The fields below are trellis's own (the LangGraph SDK ignores them); see progress.go.
	//
	// Priority orders the run among those waiting for a slot (low, normal or high).
	Priority Priority `json:"priority"`
	// Attempt counts the run's starts: 0 before the first, more than 1 after its worker died
	// or a transient error.
	Attempt int `json:"attempt"`
	// Progress is how far the run got: the node running, the supersteps, each node's history.
	// Nil before the run starts.
	Progress *RunProgress `json:"progress,omitempty"`
	// LastError is the error of the run's last failed attempt (the final one, or one it is
	// retried after).
	LastError string `json:"last_error,omitempty"`
	// NextAttemptAt is when a run waiting to be tried again (after a transient error) or
	// scheduled (after_seconds) is due.
	NextAttemptAt *time.Time `json:"next_attempt_at,omitempty"`
	tenant        string
}

// RunKwargs is what a run was created with.
type RunKwargs struct {
	Input           json.RawMessage `json:"input,omitempty"`
	Command         *RunCommand     `json:"command,omitempty"`
	Config          map[string]any  `json:"config,omitempty"`
	Context         map[string]any  `json:"context,omitempty"`
	StreamMode      []string        `json:"stream_mode"`
	InterruptBefore []string        `json:"interrupt_before,omitempty"`
	InterruptAfter  []string        `json:"interrupt_after,omitempty"`
	Webhook         string          `json:"webhook,omitempty"`
	Subgraphs       bool            `json:"subgraphs,omitempty"`
	Resumable       bool            `json:"resumable,omitempty"`
	Temporary       bool            `json:"temporary,omitempty"`
	CheckpointID    string          `json:"checkpoint_id,omitempty"`
	OnDisconnect    string          `json:"on_disconnect,omitempty"`
	// Priority is the run's priority; empty means normal.
	Priority string `json:"priority,omitempty"`
	// Durability is the run's checkpoint durability (sync, async, exit); empty means the
	// graph's own (sync unless its CompileOptions say otherwise).
	Durability string `json:"durability,omitempty"`
	// StartAfter, when set, is when the run may start (Unix milliseconds; after_seconds).
	StartAfter int64 `json:"start_after,omitempty"`
	// Principal is who created the run, handed to tools as tool.CallInfo.
	User        string   `json:"user,omitempty"`
	Permissions []string `json:"permissions,omitempty"`
	// PerUser: the principal is scoped to its user; the run's store is the user's (see
	// tenantstore.go).
	PerUser bool `json:"per_user,omitempty"`
	// TraceContext is the W3C trace context of the request that created the run (telemetry.go).
	TraceContext map[string]string `json:"trace_context,omitempty"`
}

// RunCommand resumes or steers a paused thread.
type RunCommand struct {
	Resume json.RawMessage `json:"resume,omitempty"`
	Update json.RawMessage `json:"update,omitempty"`
	Goto   json.RawMessage `json:"goto,omitempty"`
}

func ms(t time.Time) int64 { return t.UnixMilli() }

// lastStamp is the last millisecond stamp gave by time.Now.
var lastStamp atomic.Int64

// stamp is the time a record is created or updated at: now by the server's clock (Config.Now),
// or a millisecond after the last stamp, whichever is later. Records are stored to the
// millisecond, so without it two threads created in the same millisecond would tie, and sort by
// their random IDs instead of the order they were made in. A server with a clock of its own
// counts its stamps apart from the process's, so that they follow its clock exactly.
func (m *metaDB) stamp() time.Time {
	if m.now != nil {
		return stampAt(&m.last, m.now)
	}
	return stampAt(&lastStamp, time.Now)
}

func stampAt(lastStamp *atomic.Int64, clock func() time.Time) time.Time {
	for {
		last := lastStamp.Load()
		now := clock().UnixMilli()
		if now <= last {
			now = last + 1
		}
		if lastStamp.CompareAndSwap(last, now) {
			return time.UnixMilli(now).UTC()
		}
	}
}

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "null"
	}
	return string(b)
}

func (m *metaDB) createThread(ctx context.Context, t *Thread) (bool, error) {
	t.Metadata = stampOwner(ctx, t.Metadata) // owner.go
	if t.CreatedAt.IsZero() {
		t.CreatedAt = m.stamp()
	}
	res, err := m.exec(ctx, `INSERT INTO trellis_threads (tenant, thread_id, metadata, status, temporary, created_at, updated_at, state_updated_at, ttl_ms)
VALUES ($1, $2, $3, $4, $5, $6, $6, $6, $7) ON CONFLICT (thread_id) DO NOTHING`,
		t.tenant, t.ThreadID, mustJSON(t.Metadata), t.Status, boolInt(t.temporary), ms(t.CreatedAt), t.ttlMS)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// threadExists reports whether the ID is taken by any tenant (so that IDs never collide across
// tenants, and another tenant's ID still answers 404 rather than 409).
func (m *metaDB) threadTaken(ctx context.Context, id string) (bool, error) {
	var n int
	err := m.db.QueryRowContext(ctx, m.q(`SELECT count(*) FROM trellis_threads WHERE thread_id = $1`), id).Scan(&n)
	return n > 0, err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

const threadCols = `tenant, thread_id, metadata, status, vals, interrupts, temporary, created_at, updated_at, state_updated_at`

// scanAll reads every row with scan and closes rows.
func scanAll[T any](rows *sql.Rows, scan func(interface{ Scan(...any) error }) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func scanThread(row interface{ Scan(...any) error }) (*Thread, error) {
	var t Thread
	var md string
	var vals, ints sql.NullString
	var temp int
	var created, updated, stateUpdated int64
	if err := row.Scan(&t.tenant, &t.ThreadID, &md, &t.Status, &vals, &ints, &temp, &created, &updated, &stateUpdated); err != nil {
		return nil, err
	}
	t.temporary = temp != 0
	t.CreatedAt, t.UpdatedAt, t.StateUpdatedAt = fromMS(created), fromMS(updated), fromMS(stateUpdated)
	if err := json.Unmarshal([]byte(md), &t.Metadata); err != nil || t.Metadata == nil {
		t.Metadata = map[string]any{}
	}
	if vals.Valid && vals.String != "" {
		t.Values = json.RawMessage(vals.String)
	}
	if ints.Valid && ints.String != "" {
		t.Interrupts = json.RawMessage(ints.String)
	}
	if len(t.Values) == 0 || string(t.Values) == "null" {
		t.Values = json.RawMessage("{}")
	}
	if len(t.Interrupts) == 0 || string(t.Interrupts) == "null" {
		t.Interrupts = json.RawMessage("{}")
	}
	t.Config = map[string]any{"configurable": map[string]any{"thread_id": t.ThreadID}}
	return &t, nil
}

func (m *metaDB) getThread(ctx context.Context, tenant, id string) (*Thread, error) {
	if _, gone := m.hidden.Load(id); gone {
		return nil, notFound("thread", id)
	}
	t, err := scanThread(m.db.QueryRowContext(ctx, m.q(`SELECT `+threadCols+` FROM trellis_threads WHERE tenant = $1 AND thread_id = $2`), tenant, id))
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !ownerSees(ctx, t.Metadata)) {
		return nil, notFound("thread", id)
	}
	return t, err
}

// threadFilter is a thread search (POST /threads/search and /threads/count).
type threadFilter struct {
	status           string
	ids              []string
	metadata, values map[string]any
	sortBy           string // one of threadSortKeys; "" is created_at
	asc              bool
}

var threadSortKeys = []string{"thread_id", "status", "created_at", "updated_at", "state_updated_at"}

// eachThread calls fn with a tenant's threads in the filter's order until fn returns false.
// The query narrows them by status, IDs, and the metadata and values keys it can compare in SQL
// (every key on Postgres; on SQLite, keys whose wanted value is a scalar); fn must still check
// the filter on each thread, as the query may let through some that do not match.
func (m *metaDB) eachThread(ctx context.Context, tenant string, f threadFilter, fn func(*Thread) bool) error {
	args := []any{tenant}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	var where strings.Builder
	where.WriteString(`tenant = $1 AND temporary = 0`)
	if u := scopedUser(ctx); u != "" {
		where.WriteString(` AND ` + m.jsonKeyEquals("metadata", OwnerKey, u, arg))
	}
	if f.status != "" {
		where.WriteString(` AND status = ` + arg(f.status))
	}
	if len(f.ids) > 0 {
		where.WriteString(` AND thread_id IN (`)
		for i, id := range f.ids {
			if i > 0 {
				where.WriteString(`, `)
			}
			where.WriteString(arg(id))
		}
		where.WriteString(`)`)
	}
	for _, c := range []struct {
		col  string
		want map[string]any
	}{{"metadata", f.metadata}, {"vals", f.values}} {
		for k, v := range c.want {
			if cond := m.jsonKeyEquals(c.col, k, v, arg); cond != "" {
				where.WriteString(` AND ` + cond)
			}
		}
	}
	col := f.sortBy
	if !slices.Contains(threadSortKeys, col) {
		col = "created_at"
	}
	dir := " DESC"
	if f.asc {
		dir = " ASC"
	}
	order := col + dir
	if col != "thread_id" {
		order += ", thread_id" + dir
	}
	rows, err := m.db.QueryContext(ctx, m.q(`SELECT `+threadCols+` FROM trellis_threads WHERE `+where.String()+` ORDER BY `+order), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		t, err := scanThread(rows)
		if err != nil {
			return err
		}
		if !fn(t) {
			return nil
		}
	}
	return rows.Err()
}

// jsonKeyEquals returns a condition that holds for every row whose JSON column col has key
// equal to v, or "" when it cannot say in SQL. On SQLite it may hold for a few rows more (a
// number 1 for true, say): callers check again.
func (m *metaDB) jsonKeyEquals(col, key string, v any, arg func(any) string) string {
	if m.postgres {
		return fmt.Sprintf(`(%s::jsonb -> %s::text) = %s::jsonb`, col, arg(key), arg(mustJSON(v)))
	}
	if strings.ContainsAny(key, `"\`) {
		return ""
	}
	path := arg(`$."` + key + `"`)
	switch x := v.(type) {
	case string:
		return fmt.Sprintf(`json_extract(%s, %s) = %s`, col, path, arg(x))
	case float64:
		return fmt.Sprintf(`json_extract(%s, %s) = %s`, col, path, arg(x))
	case bool:
		return fmt.Sprintf(`json_type(%s, %s) = '%t'`, col, path, x)
	case nil:
		return fmt.Sprintf(`json_type(%s, %s) = 'null'`, col, path)
	}
	return ""
}

func (m *metaDB) setThreadMetadata(ctx context.Context, tenant, id string, md map[string]any) error {
	md = stampOwner(ctx, md) // a per-user principal cannot give its thread away
	_, err := m.exec(ctx, `UPDATE trellis_threads SET metadata = $1, updated_at = $2 WHERE tenant = $3 AND thread_id = $4`, mustJSON(md), ms(m.stamp()), tenant, id)
	return err
}

func (m *metaDB) setThreadStatus(ctx context.Context, tenant, id, status string, values, interrupts json.RawMessage) error {
	var v, i any
	if values != nil {
		v = string(values)
	}
	if interrupts != nil {
		i = string(interrupts)
	}
	if values == nil && interrupts == nil {
		// Only the status changes (a run that failed before it had a state to record): the
		// values stay.
		_, err := m.exec(ctx, `UPDATE trellis_threads SET status = $1, updated_at = $2 WHERE tenant = $3 AND thread_id = $4`, status, ms(m.stamp()), tenant, id)
		return err
	}
	now := ms(m.stamp())
	_, err := m.exec(ctx, `UPDATE trellis_threads SET status = $1, vals = $2, interrupts = $3, updated_at = $4, state_updated_at = $4 WHERE tenant = $5 AND thread_id = $6`, status, v, i, now, tenant, id)
	return err
}

func (m *metaDB) setThreadBusy(ctx context.Context, tenant, id string) error {
	_, err := m.exec(ctx, `UPDATE trellis_threads SET status = $1, updated_at = $2 WHERE tenant = $3 AND thread_id = $4`, ThreadBusy, ms(m.stamp()), tenant, id)
	return err
}

// deleteThread deletes a thread with its runs and their events: in one statement on Postgres
// (committed without waiting for the disk: a thread a crash brought back is deleted again by
// its next DELETE), in one transaction on SQLite.
func (m *metaDB) deleteThread(ctx context.Context, tenant, id string) error {
	if m.postgres {
		_, err := m.db.ExecContext(ctx, `WITH c AS (SELECT set_config('synchronous_commit', 'off', true)),
			r AS (DELETE FROM trellis_runs WHERE tenant = $1 AND thread_id = $2 AND EXISTS (SELECT 1 FROM c) RETURNING run_id),
			e AS (DELETE FROM trellis_run_events WHERE run_id IN (SELECT run_id FROM r))
			DELETE FROM trellis_threads WHERE tenant = $1 AND thread_id = $2 AND EXISTS (SELECT 1 FROM c)`, tenant, id)
		return err
	}
	tx, err := m.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, q := range []string{
		`DELETE FROM trellis_run_events WHERE run_id IN (SELECT run_id FROM trellis_runs WHERE tenant = ?1 AND thread_id = ?2)`,
		`DELETE FROM trellis_runs WHERE tenant = ?1 AND thread_id = ?2`,
		`DELETE FROM trellis_threads WHERE tenant = ?1 AND thread_id = ?2`,
	} {
		if _, err := tx.ExecContext(ctx, q, tenant, id); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// threadKey names a tenant's thread.
type threadKey struct{ tenant, id string }

// deleteThreads deletes the records of threads with their runs and their runs' events, in one
// transaction of a few statements whatever their number. Their checkpoints are the saver's:
// Server.removeThreads deletes them first.
func (m *metaDB) deleteThreads(ctx context.Context, keys []threadKey) error {
	if len(keys) == 0 {
		return nil
	}
	tenants, ids := make([]string, len(keys)), make([]string, len(keys))
	pairs := make([][2]string, len(keys))
	for i, k := range keys {
		tenants[i], ids[i], pairs[i] = k.tenant, k.id, [2]string{k.tenant, k.id}
	}
	tx, err := m.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if m.postgres {
		// Like deleteThread: nothing is lost if a crash undoes it (the runs are finished).
		if _, err := tx.ExecContext(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `WITH k AS (SELECT * FROM unnest($1::text[], $2::text[]) AS k (tenant, thread_id)),
			r AS (DELETE FROM trellis_runs WHERE (tenant, thread_id) IN (SELECT tenant, thread_id FROM k) RETURNING run_id),
			e AS (DELETE FROM trellis_run_events WHERE run_id IN (SELECT run_id FROM r))
			DELETE FROM trellis_threads WHERE (tenant, thread_id) IN (SELECT tenant, thread_id FROM k)`, tenants, ids); err != nil {
			return err
		}
		return tx.Commit()
	}
	const k = `(SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?1))`
	for _, q := range []string{
		`DELETE FROM trellis_run_events WHERE run_id IN (SELECT run_id FROM trellis_runs WHERE (tenant, thread_id) IN ` + k + `)`,
		`DELETE FROM trellis_runs WHERE (tenant, thread_id) IN ` + k,
		`DELETE FROM trellis_threads WHERE (tenant, thread_id) IN ` + k,
	} {
		if _, err := tx.ExecContext(ctx, q, mustJSON(pairs)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// runInsertCols are the columns a new run's row is written with; runCols, those read.
const (
	runInsertCols = `tenant, run_id, thread_id, assistant_id, status, metadata, kwargs, multitask, created_at, updated_at`
	runCols       = runInsertCols + `, attempt, progress, last_error, next_attempt_at`
)

func scanRun(row interface{ Scan(...any) error }) (*Run, error) {
	var r Run
	var md, kw string
	var created, updated, next int64
	var progress, lastErr sql.NullString
	if err := row.Scan(&r.tenant, &r.RunID, &r.ThreadID, &r.AssistantID, &r.Status, &md, &kw, &r.MultitaskStrategy, &created, &updated,
		&r.Attempt, &progress, &lastErr, &next); err != nil {
		return nil, err
	}
	r.CreatedAt, r.UpdatedAt = fromMS(created), fromMS(updated)
	if err := json.Unmarshal([]byte(md), &r.Metadata); err != nil || r.Metadata == nil {
		r.Metadata = map[string]any{}
	}
	r.Kwargs = &RunKwargs{}
	_ = json.Unmarshal([]byte(kw), r.Kwargs)
	r.Priority = runPriority(&r)
	if progress.Valid && progress.String != "" {
		var p RunProgress
		if json.Unmarshal([]byte(progress.String), &p) == nil {
			r.Progress = &p
		}
	}
	r.LastError = lastErr.String
	if next > 0 {
		t := fromMS(next)
		r.NextAttemptAt = &t
	}
	return &r, nil
}

func (m *metaDB) insertRun(ctx context.Context, r *Run) error {
	_, err := m.exec(ctx, `INSERT INTO trellis_runs (`+runInsertCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
		r.tenant, r.RunID, r.ThreadID, r.AssistantID, r.Status, mustJSON(r.Metadata), mustJSON(r.Kwargs), r.MultitaskStrategy, ms(r.CreatedAt))
	return err
}

func (m *metaDB) getRun(ctx context.Context, tenant, threadID, runID string) (*Run, error) {
	q := `SELECT ` + runCols + ` FROM trellis_runs WHERE tenant = $1 AND run_id = $2`
	args := []any{tenant, runID}
	if threadID != "" {
		q += ` AND thread_id = $3`
		args = append(args, threadID)
	}
	r, err := scanRun(m.db.QueryRowContext(ctx, m.q(q), args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("run", runID)
	}
	if err == nil {
		if _, gone := m.hidden.Load(r.ThreadID); gone || !ownerSeesRun(ctx, r) {
			return nil, notFound("run", runID)
		}
	}
	return r, err
}

// runByID reads a run of any tenant (for the executor, which is handed only an ID).
func (m *metaDB) runByID(ctx context.Context, runID string) (*Run, error) {
	r, err := scanRun(m.db.QueryRowContext(ctx, m.q(`SELECT `+runCols+` FROM trellis_runs WHERE run_id = $1`), runID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("run", runID)
	}
	return r, err
}

func (m *metaDB) listRuns(ctx context.Context, tenant, threadID, status string, limit, offset int) ([]*Run, error) {
	q := `SELECT ` + runCols + ` FROM trellis_runs WHERE tenant = $1 AND thread_id = $2`
	args := []any{tenant, threadID}
	if status != "" {
		q += ` AND status = $3`
		args = append(args, status)
	}
	q += ` ORDER BY created_at DESC, run_id DESC LIMIT ` + strconv.Itoa(limit) + ` OFFSET ` + strconv.Itoa(offset)
	rows, err := m.db.QueryContext(ctx, m.q(q), args...)
	if err != nil {
		return nil, err
	}
	out, err := scanAll(rows, scanRun)
	if out == nil && err == nil {
		out = []*Run{} // the API answers [] rather than null
	}
	return out, err
}

// activeRuns lists a thread's pending and running runs, oldest first.
func (m *metaDB) activeRuns(ctx context.Context, tenant, threadID string) ([]*Run, error) {
	rows, err := m.db.QueryContext(ctx, m.q(`SELECT `+runCols+` FROM trellis_runs WHERE tenant = $1 AND thread_id = $2 AND status IN ('pending', 'running') ORDER BY created_at, run_id`), tenant, threadID)
	if err != nil {
		return nil, err
	}
	return scanAll(rows, scanRun)
}

// unfinishedRuns lists runs of every tenant left pending or running, oldest first.
func (m *metaDB) unfinishedRuns(ctx context.Context) ([]*Run, error) {
	rows, err := m.db.QueryContext(ctx, `SELECT `+runCols+` FROM trellis_runs WHERE status IN ('pending', 'running') ORDER BY created_at, run_id`)
	if err != nil {
		return nil, err
	}
	return scanAll(rows, scanRun)
}

func (m *metaDB) setRunStatus(ctx context.Context, runID, status string) error {
	_, err := m.exec(ctx, `UPDATE trellis_runs SET status = $1, updated_at = $2 WHERE run_id = $3`, status, ms(m.stamp()), runID)
	return err
}

func (m *metaDB) deleteRun(ctx context.Context, tenant, runID string) error {
	if _, err := m.exec(ctx, `DELETE FROM trellis_run_events WHERE run_id = $1`, runID); err != nil {
		return err
	}
	_, err := m.exec(ctx, `DELETE FROM trellis_runs WHERE tenant = $1 AND run_id = $2`, tenant, runID)
	return err
}

// eventBatch is some of a run's stream events, in order.
type eventBatch struct {
	runID  string
	events []streamEvent
}

// appendEventRows writes the events of any number of runs in as few statements as it can: one
// on Postgres (the rows travel as four arrays), one per outboxChunk rows on SQLite. An event
// already written (the same run and number) is left as it is. On Postgres the commit does not
// wait for the disk (synchronous_commit off): the rows are visible at once and survive the
// server's process dying; only a crash of Postgres itself may lose the last fraction of a
// second of them, as it may lose a replica's in-flight NOTIFYs.
func (m *metaDB) appendEventRows(ctx context.Context, batches []eventBatch) error {
	n := 0
	for _, b := range batches {
		n += len(b.events)
	}
	if n == 0 {
		return nil
	}
	if m.postgres {
		ids, seqs, names, data := eventColumns(batches)
		_, err := m.db.ExecContext(ctx, `WITH c AS (SELECT set_config('synchronous_commit', 'off', true))
			INSERT INTO trellis_run_events (run_id, seq, event, data)
			SELECT u.run_id, u.seq, u.event, u.data FROM c, unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) AS u(run_id, seq, event, data)
			ON CONFLICT (run_id, seq) DO NOTHING`, ids, seqs, names, data)
		return err
	}
	return m.appendEventRowsSQLite(ctx, batches, n)
}

// eventColumns returns the events of batches as the columns of trellis_run_events.
func eventColumns(batches []eventBatch) (ids []string, seqs []int64, names, data []string) {
	for _, b := range batches {
		for _, ev := range b.events {
			ids, seqs, names, data = append(ids, b.runID), append(seqs, ev.Seq), append(names, ev.Event), append(data, string(ev.Data))
		}
	}
	return ids, seqs, names, data
}

// appendEventRowsNotify writes events as appendEventRows does on Postgres and sends payloads
// with NOTIFY on channel, in one statement: the notifications go out when the rows commit.
func (m *metaDB) appendEventRowsNotify(ctx context.Context, batches []eventBatch, channel string, payloads []string) error {
	ids, seqs, names, data := eventColumns(batches)
	if len(ids) == 0 {
		return nil
	}
	_, err := m.db.ExecContext(ctx, `WITH c AS (SELECT set_config('synchronous_commit', 'off', true)),
		w AS (INSERT INTO trellis_run_events (run_id, seq, event, data)
			SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) ON CONFLICT (run_id, seq) DO NOTHING)
		SELECT pg_notify($5, p) FROM c, unnest($6::text[]) AS p`, ids, seqs, names, data, channel, payloads)
	return err
}

func (m *metaDB) appendEventRowsSQLite(ctx context.Context, batches []eventBatch, n int) error {
	var q strings.Builder
	args := make([]any, 0, 4*min(n, outboxChunk))
	write := func() error {
		if len(args) == 0 {
			return nil
		}
		_, err := m.db.ExecContext(ctx, q.String()+` ON CONFLICT (run_id, seq) DO NOTHING`, args...)
		q.Reset()
		args = args[:0]
		return err
	}
	for _, b := range batches {
		for _, ev := range b.events {
			if len(args) == 0 {
				q.WriteString(`INSERT INTO trellis_run_events (run_id, seq, event, data) VALUES (?, ?, ?, ?)`)
			} else {
				q.WriteString(`, (?, ?, ?, ?)`)
			}
			args = append(args, b.runID, ev.Seq, ev.Event, string(ev.Data))
			if len(args) >= 4*outboxChunk {
				if err := write(); err != nil {
					return err
				}
			}
		}
	}
	return write()
}

func (m *metaDB) loadEvents(ctx context.Context, runID string, after int64) ([]streamEvent, error) {
	rows, err := m.db.QueryContext(ctx, m.q(`SELECT seq, event, data FROM trellis_run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq`), runID, after)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []streamEvent
	for rows.Next() {
		var ev streamEvent
		var data string
		if err := rows.Scan(&ev.Seq, &ev.Event, &data); err != nil {
			return nil, err
		}
		ev.Data = json.RawMessage(data)
		out = append(out, ev)
	}
	return out, rows.Err()
}

func (m *metaDB) ping(ctx context.Context) error { return m.db.PingContext(ctx) }

// ---- assistants created through the API ----
//
// trellis_assistants holds each created assistant's current version, trellis_assistant_versions
// every version it had (the current one included). The assistants the server registers from its
// graphs are not stored: they are the same for every tenant and every start (server.go).

// AssistantVersion is one version of a created assistant, as POST /assistants/{id}/versions
// lists them.
type AssistantVersion struct {
	AssistantID string         `json:"assistant_id"`
	GraphID     string         `json:"graph_id"`
	Name        string         `json:"name"`
	Description *string        `json:"description"`
	Config      map[string]any `json:"config"`
	Context     map[string]any `json:"context"`
	Metadata    map[string]any `json:"metadata"`
	Version     int            `json:"version"`
	CreatedAt   time.Time      `json:"created_at"`
}

const assistantCols = `assistant_id, graph_id, name, description, config, context, metadata, version, created_at, updated_at`

func jsonObject(s string) map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
		m = map[string]any{}
	}
	return m
}

func nullString(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

func scanAssistant(row interface{ Scan(...any) error }) (*Assistant, error) {
	var a Assistant
	var desc sql.NullString
	var cfg, cx, md string
	var created, updated int64
	if err := row.Scan(&a.AssistantID, &a.GraphID, &a.Name, &desc, &cfg, &cx, &md, &a.Version, &created, &updated); err != nil {
		return nil, err
	}
	if desc.Valid {
		a.Description = &desc.String
	}
	a.Config, a.Context, a.Metadata = jsonObject(cfg), jsonObject(cx), jsonObject(md)
	a.CreatedAt, a.UpdatedAt = fromMS(created), fromMS(updated)
	return &a, nil
}

// createAssistant inserts a as its tenant's, with its first version. It reports false, and
// writes nothing, when the ID is taken (by any tenant).
func (m *metaDB) createAssistant(ctx context.Context, tenant string, a *Assistant) (bool, error) {
	tx, err := m.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, m.q(`INSERT INTO trellis_assistants (tenant, `+assistantCols+`)
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

func (m *metaDB) insertAssistantVersion(ctx context.Context, tx *sql.Tx, a *Assistant) error {
	_, err := tx.ExecContext(ctx, m.q(`INSERT INTO trellis_assistant_versions (assistant_id, version, graph_id, name, description, config, context, metadata, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`),
		a.AssistantID, a.Version, a.GraphID, a.Name, nullString(a.Description), mustJSON(a.Config), mustJSON(a.Context), mustJSON(a.Metadata), ms(a.UpdatedAt))
	return err
}

// getAssistant reads a created assistant of the tenant; an empty tenant means any tenant (for
// the runner, which holds only a run's assistant ID).
func (m *metaDB) getAssistant(ctx context.Context, tenant, id string) (*Assistant, error) {
	q, args := `SELECT `+assistantCols+` FROM trellis_assistants WHERE assistant_id = $1`, []any{id}
	if tenant != "" {
		q += ` AND tenant = $2`
		args = append(args, tenant)
	}
	a, err := scanAssistant(m.db.QueryRowContext(ctx, m.q(q), args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("assistant", id)
	}
	return a, err
}

// listAssistants lists a tenant's created assistants, newest first.
func (m *metaDB) listAssistants(ctx context.Context, tenant string) ([]*Assistant, error) {
	rows, err := m.db.QueryContext(ctx, m.q(`SELECT `+assistantCols+` FROM trellis_assistants WHERE tenant = $1 ORDER BY created_at DESC, assistant_id`), tenant)
	if err != nil {
		return nil, err
	}
	return scanAll(rows, scanAssistant)
}

// updateAssistant reads the tenant's assistant, lets change rewrite it (change returns an error
// to abort), and stores the result as a new version that becomes the current one.
func (m *metaDB) updateAssistant(ctx context.Context, tenant, id string, change func(*Assistant) error) (*Assistant, error) {
	tx, err := m.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	lock := ""
	if m.postgres {
		lock = ` FOR UPDATE` // two patches at once must not both take the next version number
	}
	a, err := scanAssistant(tx.QueryRowContext(ctx, m.q(`SELECT `+assistantCols+` FROM trellis_assistants WHERE assistant_id = $1 AND tenant = $2`+lock), id, tenant))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("assistant", id)
	}
	if err != nil {
		return nil, err
	}
	if err := change(a); err != nil {
		return nil, err
	}
	if err := tx.QueryRowContext(ctx, m.q(`SELECT COALESCE(MAX(version), 0) + 1 FROM trellis_assistant_versions WHERE assistant_id = $1`), id).Scan(&a.Version); err != nil {
		return nil, err
	}
	a.UpdatedAt = m.stamp()
	if err := m.insertAssistantVersion(ctx, tx, a); err != nil {
		return nil, err
	}
	if err := m.storeAssistant(ctx, tx, tenant, a); err != nil {
		return nil, err
	}
	return a, tx.Commit()
}

func (m *metaDB) storeAssistant(ctx context.Context, tx *sql.Tx, tenant string, a *Assistant) error {
	_, err := tx.ExecContext(ctx, m.q(`UPDATE trellis_assistants SET graph_id = $1, name = $2, description = $3, config = $4, context = $5, metadata = $6, version = $7, updated_at = $8
WHERE assistant_id = $9 AND tenant = $10`),
		a.GraphID, a.Name, nullString(a.Description), mustJSON(a.Config), mustJSON(a.Context), mustJSON(a.Metadata), a.Version, ms(a.UpdatedAt), a.AssistantID, tenant)
	return err
}

// setLatestAssistant makes one of the assistant's versions its current one again.
func (m *metaDB) setLatestAssistant(ctx context.Context, tenant, id string, version int) (*Assistant, error) {
	tx, err := m.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	a, err := scanAssistant(tx.QueryRowContext(ctx, m.q(`SELECT `+assistantCols+` FROM trellis_assistants WHERE assistant_id = $1 AND tenant = $2`), id, tenant))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("assistant", id)
	}
	if err != nil {
		return nil, err
	}
	var desc sql.NullString
	var cfg, cx, md string
	err = tx.QueryRowContext(ctx, m.q(`SELECT graph_id, name, description, config, context, metadata FROM trellis_assistant_versions WHERE assistant_id = $1 AND version = $2`), id, version).
		Scan(&a.GraphID, &a.Name, &desc, &cfg, &cx, &md)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &APIError{Status: 404, Message: fmt.Sprintf("assistant %q has no version %d", id, version), Hint: "list its versions with POST /assistants/{id}/versions", kind: ErrNotFound}
	}
	if err != nil {
		return nil, err
	}
	a.Description = nil
	if desc.Valid {
		a.Description = &desc.String
	}
	a.Config, a.Context, a.Metadata = jsonObject(cfg), jsonObject(cx), jsonObject(md)
	a.Version, a.UpdatedAt = version, m.stamp()
	if err := m.storeAssistant(ctx, tx, tenant, a); err != nil {
		return nil, err
	}
	return a, tx.Commit()
}

// assistantVersions lists a created assistant's versions, newest first.
func (m *metaDB) assistantVersions(ctx context.Context, id string) ([]*AssistantVersion, error) {
	rows, err := m.db.QueryContext(ctx, m.q(`SELECT assistant_id, version, graph_id, name, description, config, context, metadata, created_at
FROM trellis_assistant_versions WHERE assistant_id = $1 ORDER BY version DESC`), id)
	if err != nil {
		return nil, err
	}
	return scanAll(rows, func(row interface{ Scan(...any) error }) (*AssistantVersion, error) {
		var v AssistantVersion
		var desc sql.NullString
		var cfg, cx, md string
		var created int64
		if err := row.Scan(&v.AssistantID, &v.Version, &v.GraphID, &v.Name, &desc, &cfg, &cx, &md, &created); err != nil {
			return nil, err
		}
		if desc.Valid {
			v.Description = &desc.String
		}
		v.Config, v.Context, v.Metadata = jsonObject(cfg), jsonObject(cx), jsonObject(md)
		v.CreatedAt = fromMS(created)
		return &v, nil
	})
}

// deleteAssistant deletes the tenant's assistant with its versions, and reports whether there
// was one.
func (m *metaDB) deleteAssistant(ctx context.Context, tenant, id string) (bool, error) {
	tx, err := m.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, m.q(`DELETE FROM trellis_assistants WHERE assistant_id = $1 AND tenant = $2`), id, tenant)
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, m.q(`DELETE FROM trellis_assistant_versions WHERE assistant_id = $1`), id); err != nil {
		return false, err
	}
	return true, tx.Commit()
}

// runsOfAssistant lists the IDs and threads of a tenant's runs on an assistant.
func (m *metaDB) runsOfAssistant(ctx context.Context, tenant, id string) ([]*Run, error) {
	rows, err := m.db.QueryContext(ctx, m.q(`SELECT `+runCols+` FROM trellis_runs WHERE tenant = $1 AND assistant_id = $2 ORDER BY created_at, run_id`), tenant, id)
	if err != nil {
		return nil, err
	}
	return scanAll(rows, scanRun)
}
