package metadb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Thread is a row of trellis_threads.
type Thread struct {
	Tenant   string
	ThreadID string
	Metadata map[string]any
	Status   string
	// Values and Interrupts are the state's newest values and waiting interrupts, as JSON; nil
	// when the thread has none recorded.
	Values, Interrupts json.RawMessage
	// Temporary marks a stateless run's thread: searches leave it out, and the server deletes
	// it when the run ends.
	Temporary bool
	// TTLMS is how long, in milliseconds, the thread may go without an update before the
	// server deletes it; 0 is forever. It is written at creation (and by SetThreadTTL), and not
	// read back.
	TTLMS                                int64
	CreatedAt, UpdatedAt, StateUpdatedAt time.Time
}

const threadCols = `tenant, thread_id, metadata, status, vals, interrupts, temporary, created_at, updated_at, state_updated_at`

func scanThread(row scanner) (*Thread, error) {
	var t Thread
	var md string
	var vals, ints sql.NullString
	var temp int
	var created, updated, stateUpdated int64
	if err := row.Scan(&t.Tenant, &t.ThreadID, &md, &t.Status, &vals, &ints, &temp, &created, &updated, &stateUpdated); err != nil {
		return nil, err
	}
	t.Temporary = temp != 0
	t.CreatedAt, t.UpdatedAt, t.StateUpdatedAt = fromMS(created), fromMS(updated), fromMS(stateUpdated)
	t.Metadata = jsonObject(md)
	t.Values, t.Interrupts = rawOrNil(vals), rawOrNil(ints)
	return &t, nil
}

// CreateThread inserts t, with its CreatedAt as its every stamp (a zero CreatedAt is stamped
// now, and set on t). It reports false, and writes nothing, when the ID is taken (by any
// tenant).
func (m *DB) CreateThread(ctx context.Context, t *Thread) (bool, error) {
	if t.CreatedAt.IsZero() {
		t.CreatedAt = m.Stamp()
	}
	res, err := m.Exec(ctx, `INSERT INTO trellis_threads (tenant, thread_id, metadata, status, temporary, created_at, updated_at, state_updated_at, ttl_ms)
VALUES ($1, $2, $3, $4, $5, $6, $6, $6, $7) ON CONFLICT (thread_id) DO NOTHING`,
		t.Tenant, t.ThreadID, mustJSON(t.Metadata), t.Status, boolInt(t.Temporary), ms(t.CreatedAt), t.TTLMS)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ThreadTaken reports whether the ID is taken by any tenant (so that IDs never collide across
// tenants, and another tenant's ID still answers 404 rather than 409).
func (m *DB) ThreadTaken(ctx context.Context, id string) (bool, error) {
	var n int
	err := m.queryRow(ctx, `SELECT count(*) FROM trellis_threads WHERE thread_id = $1`, id).Scan(&n)
	return n > 0, err
}

// GetThread reads a tenant's thread; ErrNotFound when it has none of that ID.
func (m *DB) GetThread(ctx context.Context, tenant, id string) (*Thread, error) {
	t, err := scanThread(m.queryRow(ctx, `SELECT `+threadCols+` FROM trellis_threads WHERE tenant = $1 AND thread_id = $2`, tenant, id))
	return t, notFound(err)
}

// ThreadFilter narrows a thread search (EachThread).
type ThreadFilter struct {
	Status string   // "" is any
	IDs    []string // empty is any
	// Metadata and Values hold keys the thread's metadata and values must have, with these
	// values (compared as JSON).
	Metadata, Values map[string]any
	SortBy           string // one of ThreadSortKeys; anything else is created_at
	Asc              bool
}

// ThreadSortKeys are the columns a thread search may sort by.
var ThreadSortKeys = []string{"thread_id", "status", "created_at", "updated_at", "state_updated_at"}

// EachThread calls fn with a tenant's threads (temporary ones left out) in the filter's order
// until fn returns false. The query narrows them by status, IDs, and the metadata and values
// keys it can compare in SQL (every key on Postgres; on SQLite, keys whose wanted value is a
// scalar); fn must still check the filter on each thread, as the query may let through some that
// do not match.
func (m *DB) EachThread(ctx context.Context, tenant string, f ThreadFilter, fn func(*Thread) bool) error {
	args := []any{tenant}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	var where strings.Builder
	where.WriteString(`tenant = $1 AND temporary = 0`)
	if f.Status != "" {
		where.WriteString(` AND status = ` + arg(f.Status))
	}
	if len(f.IDs) > 0 {
		where.WriteString(` AND thread_id IN (`)
		for i, id := range f.IDs {
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
	}{{"metadata", f.Metadata}, {"vals", f.Values}} {
		for k, v := range c.want {
			if cond := m.jsonKeyEquals(c.col, k, v, arg); cond != "" {
				where.WriteString(` AND ` + cond)
			}
		}
	}
	col := f.SortBy
	if !slices.Contains(ThreadSortKeys, col) {
		col = "created_at"
	}
	dir := " DESC"
	if f.Asc {
		dir = " ASC"
	}
	order := col + dir
	if col != "thread_id" {
		order += ", thread_id" + dir
	}
	rows, err := m.db.QueryContext(ctx, m.Q(`SELECT `+threadCols+` FROM trellis_threads WHERE `+where.String()+` ORDER BY `+order), args...)
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
func (m *DB) jsonKeyEquals(col, key string, v any, arg func(any) string) string {
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

// SetThreadMetadata replaces a thread's metadata.
func (m *DB) SetThreadMetadata(ctx context.Context, tenant, id string, md map[string]any) error {
	_, err := m.Exec(ctx, `UPDATE trellis_threads SET metadata = $1, updated_at = $2 WHERE tenant = $3 AND thread_id = $4`, mustJSON(md), ms(m.Stamp()), tenant, id)
	return err
}

// SetThreadStatus sets a thread's status with its state's values and interrupts. With both nil
// only the status changes (a run that failed before it had a state to record): the values stay.
func (m *DB) SetThreadStatus(ctx context.Context, tenant, id, status string, values, interrupts json.RawMessage) error {
	if values == nil && interrupts == nil {
		_, err := m.Exec(ctx, `UPDATE trellis_threads SET status = $1, updated_at = $2 WHERE tenant = $3 AND thread_id = $4`, status, ms(m.Stamp()), tenant, id)
		return err
	}
	now := ms(m.Stamp())
	_, err := m.Exec(ctx, `UPDATE trellis_threads SET status = $1, vals = $2, interrupts = $3, updated_at = $4, state_updated_at = $4 WHERE tenant = $5 AND thread_id = $6`,
		status, nullRaw(values), nullRaw(interrupts), now, tenant, id)
	return err
}

// SetThreadBusy sets a thread's status to busy.
func (m *DB) SetThreadBusy(ctx context.Context, tenant, id string) error {
	return m.SetThreadStatus(ctx, tenant, id, threadBusy, nil, nil)
}

// SetThreadTTL sets how long, in milliseconds, a thread may go without an update (0: forever).
func (m *DB) SetThreadTTL(ctx context.Context, tenant, id string, ttlMS int64) error {
	_, err := m.Exec(ctx, `UPDATE trellis_threads SET ttl_ms = $1 WHERE tenant = $2 AND thread_id = $3`, ttlMS, tenant, id)
	return err
}

// ExpiredThreads returns up to limit threads, of every tenant, whose ttl has passed since their
// last update, and that have no run under way or waiting.
func (m *DB) ExpiredThreads(ctx context.Context, now time.Time, limit int) ([]*Thread, error) {
	return queryAll(ctx, m, scanThread, `SELECT `+threadCols+` FROM trellis_threads t
WHERE ttl_ms > 0 AND updated_at + ttl_ms < $1 AND status <> $2 AND temporary = 0
AND NOT EXISTS (SELECT 1 FROM trellis_runs r WHERE r.tenant = t.tenant AND r.thread_id = t.thread_id AND r.status IN ($3, $4))
LIMIT $5`, ms(now), threadBusy, runPending, runRunning, limit)
}

// DeleteThread deletes a thread with its runs and their events: in one statement on Postgres
// (committed without waiting for the disk: a thread a crash brought back is deleted again by
// its next DELETE), in one transaction on SQLite.
func (m *DB) DeleteThread(ctx context.Context, tenant, id string) error {
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

// ThreadKey names a tenant's thread.
type ThreadKey struct{ Tenant, ID string }

// deleteThreadsPg deletes the threads ($1 tenants, $2 IDs) with their runs and events, without
// waiting for the disk.
const deleteThreadsPg = `WITH c AS (SELECT set_config('synchronous_commit', 'off', true)),
	k AS (SELECT * FROM unnest($1::text[], $2::text[]) AS k (tenant, thread_id)),
	r AS (DELETE FROM trellis_runs WHERE (tenant, thread_id) IN (SELECT tenant, thread_id FROM k) AND EXISTS (SELECT 1 FROM c) RETURNING run_id),
	e AS (DELETE FROM trellis_run_events WHERE run_id IN (SELECT run_id FROM r))
	DELETE FROM trellis_threads WHERE (tenant, thread_id) IN (SELECT tenant, thread_id FROM k) AND EXISTS (SELECT 1 FROM c)`

// QueueDeleteThreads queues on b (Postgres) what DeleteThreads does, to go in one round trip
// with b's other statements (the threads' checkpoints, deleted first).
func QueueDeleteThreads(b *pgx.Batch, keys []ThreadKey) {
	if len(keys) == 0 {
		return
	}
	tenants, ids := make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		tenants[i], ids[i] = k.Tenant, k.ID
	}
	b.Queue(deleteThreadsPg, tenants, ids)
}

// DeleteThreads deletes the records of threads with their runs and their runs' events, whatever
// their number: in one statement on Postgres, in one transaction of three on SQLite. Their checkpoints are the saver's:
// the server deletes them first, through its checkpoint.Saver.
func (m *DB) DeleteThreads(ctx context.Context, keys []ThreadKey) error {
	if len(keys) == 0 {
		return nil
	}
	tenants, ids := make([]string, len(keys)), make([]string, len(keys))
	pairs := make([][2]string, len(keys))
	for i, k := range keys {
		tenants[i], ids[i], pairs[i] = k.Tenant, k.ID, [2]string{k.Tenant, k.ID}
	}
	if m.postgres {
		// One statement, like DeleteThread: nothing is lost if a crash undoes it (the runs are
		// finished).
		_, err := m.db.ExecContext(ctx, deleteThreadsPg, tenants, ids)
		return err
	}
	tx, err := m.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
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
