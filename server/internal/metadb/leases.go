package metadb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"
)

// A run's lease says which worker executes it and until when that worker is known alive. The
// worker renews it every heartbeat; a run whose lease expired while it was pending or running
// lost its worker, and any process may claim it and continue it from its last checkpoint.

// Advisory-lock namespaces (the first key of pg_advisory_xact_lock(int, int)) under which
// claims of one thread, and of one tenant, are made one at a time across processes.
const (
	lockThreadClaims = 7265003
	lockTenantClaims = 7265004
)

// Delays before a refused claim is looked at again.
const (
	threadBusyRetry = 100 * time.Millisecond
	tenantBusyRetry = 200 * time.Millisecond
)

// Why a claim was refused.
type Why int

const (
	// LeaseHeld: another worker holds the run's lease, or the run is gone or finished.
	LeaseHeld Why = iota
	// ThreadBusy: an earlier run of the thread is unfinished.
	ThreadBusy
	// TenantBusy: the run's tenant has its maximum of runs executing.
	TenantBusy
)

// Refusal says why ClaimRun did not claim a run, and when to look again.
type Refusal struct {
	After time.Duration
	Why   Why
}

// claimRun takes a run's lease when nothing is ahead of it on its thread and its tenant is under
// its limit ($8, 0 for none).
const claimRun = `UPDATE trellis_runs SET lease_owner = $1, lease_until = $2, attempt = attempt + 1, status = 'running', updated_at = $4
	WHERE run_id = $3 AND status IN ('pending', 'running') AND (lease_owner IS NULL OR lease_until < $4)
	AND NOT EXISTS (SELECT 1 FROM trellis_runs WHERE tenant = $5 AND thread_id = $6 AND run_id <> $3
		AND status IN ('pending', 'running')
		AND (created_at < $7 OR (created_at = $7 AND run_id < $3) OR (lease_owner IS NOT NULL AND lease_until >= $4)))
	AND ($8 <= 0 OR (SELECT count(*) FROM trellis_runs WHERE tenant = $5 AND run_id <> $3
		AND status IN ('pending', 'running') AND lease_owner IS NOT NULL AND lease_until >= $4) < $8)
	RETURNING attempt`

// ClaimRun takes the lease of a pending or running run for owner until ttl from now, and
// counts the attempt; it reads the run's RunID, Tenant, ThreadID and CreatedAt. It succeeds
// only when
//   - nobody holds a live lease on the run,
//   - the run is the thread's oldest unfinished run and no other run of the thread holds a live
//     lease (runs of one thread execute one at a time, in the order they were created, whichever
//     process executes them), and
//   - with tenantLimit > 0, fewer than tenantLimit runs of the tenant hold a live lease.
//
// On Postgres the check and the update happen in a transaction holding advisory locks on the
// thread (and the tenant), so replicas claiming at the same instant take turns; on SQLite the
// one statement is atomic. alone says the run is the only one its thread will have (a
// stateless run's temporary thread): with no tenant limit to count under a lock, the one
// statement decides on Postgres too. A claimed run's status becomes running. It reports the
// attempt number (from 1), or a Refusal saying why not and when to look again.
func (m *DB) ClaimRun(ctx context.Context, run *Run, owner string, ttl time.Duration, tenantLimit int, alone bool) (int, *Refusal, error) {
	now := time.Now()
	var attempt int
	claim := func(tx *sql.Tx) (bool, error) {
		args := []any{owner, ms(now.Add(ttl)), run.RunID, ms(now), run.Tenant, run.ThreadID, ms(run.CreatedAt), tenantLimit}
		var row *sql.Row
		if tx != nil {
			row = tx.QueryRowContext(ctx, claimRun, args...) // Postgres: pgx caches the statement
		} else {
			row = m.queryRow(ctx, claimRun, args...)
		}
		err := row.Scan(&attempt)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		return err == nil, err
	}
	var took bool
	if m.postgres && (tenantLimit > 0 || !alone) {
		tx, err := m.db.BeginTx(ctx, nil)
		if err != nil {
			return 0, nil, err
		}
		defer tx.Rollback()
		if tenantLimit > 0 {
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, lockTenantClaims, run.Tenant); err != nil {
				return 0, nil, err
			}
		}
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, lockThreadClaims, run.ThreadID); err != nil {
			return 0, nil, err
		}
		if took, err = claim(tx); err != nil {
			return 0, nil, err
		}
		if err := tx.Commit(); err != nil {
			return 0, nil, err
		}
	} else {
		var err error
		if took, err = claim(nil); err != nil {
			return 0, nil, err
		}
	}
	if took {
		return attempt, nil, nil
	}
	return 0, m.whyNotClaimed(ctx, run, now, tenantLimit), nil
}

// whyNotClaimed says why ClaimRun refused a run, and when to look again.
func (m *DB) whyNotClaimed(ctx context.Context, run *Run, now time.Time, tenantLimit int) *Refusal {
	var status string
	var owner sql.NullString
	var until int64
	err := m.queryRow(ctx, `SELECT status, lease_owner, lease_until FROM trellis_runs WHERE run_id = $1`, run.RunID).Scan(&status, &owner, &until)
	if err != nil || (status != runPending && status != runRunning) {
		// Gone or finished meanwhile: the next delivery sees it and lets it go.
		return &Refusal{After: 0, Why: LeaseHeld}
	}
	if owner.Valid && until >= ms(now) {
		// Another worker executes it, or did until recently: look again once its lease ends.
		return &Refusal{After: max(time.Until(fromMS(until)), 0) + 50*time.Millisecond, Why: LeaseHeld}
	}
	// The run is in a queue that will look again: say so, so that no process takes it for
	// stranded (see StrandedRuns).
	_, _ = m.Exec(ctx, `UPDATE trellis_runs SET updated_at = $1 WHERE run_id = $2`, ms(now), run.RunID)
	var blocking int
	if err := m.queryRow(ctx, `SELECT count(*) FROM trellis_runs WHERE tenant = $1 AND thread_id = $2 AND run_id <> $3
		AND status IN ('pending', 'running') AND (created_at < $4 OR (created_at = $4 AND run_id < $3) OR (lease_owner IS NOT NULL AND lease_until >= $5))`,
		run.Tenant, run.ThreadID, run.RunID, ms(run.CreatedAt), ms(now)).Scan(&blocking); err == nil && blocking > 0 {
		return &Refusal{After: threadBusyRetry, Why: ThreadBusy}
	}
	if tenantLimit > 0 {
		return &Refusal{After: tenantBusyRetry, Why: TenantBusy}
	}
	return &Refusal{After: threadBusyRetry, Why: ThreadBusy}
}

// RenewLeases extends, in one statement, the leases of the runs named that this process's
// workers own (owners beginning with prefix followed by "/"), to ttl from now, and returns the
// runs whose lease it extended: a run missing from them lost its lease to another worker.
func (m *DB) RenewLeases(ctx context.Context, runIDs []string, prefix string, ttl time.Duration) (map[string]bool, error) {
	if len(runIDs) == 0 {
		return nil, nil
	}
	// Owners are prefix followed by more; '0' is the character after '/'.
	lo, hi := prefix+"/", prefix+"0"
	var rows *sql.Rows
	var err error
	until := ms(time.Now().Add(ttl))
	if m.postgres {
		rows, err = m.db.QueryContext(ctx, `UPDATE trellis_runs SET lease_until = $1 WHERE run_id = ANY($2::text[]) AND lease_owner >= $3 AND lease_owner < $4 RETURNING run_id`,
			until, runIDs, lo, hi)
	} else {
		ids, _ := json.Marshal(runIDs)
		rows, err = m.db.QueryContext(ctx, `UPDATE trellis_runs SET lease_until = ?1 WHERE run_id IN (SELECT value FROM json_each(?2)) AND lease_owner >= ?3 AND lease_owner < ?4 RETURNING run_id`,
			until, string(ids), lo, hi)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	kept := make(map[string]bool, len(runIDs))
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		kept[id] = true
	}
	return kept, rows.Err()
}

// ReleaseLease gives the lease up, so that the run (if still unfinished) may be claimed at once.
func (m *DB) ReleaseLease(ctx context.Context, runID, owner string) error {
	_, err := m.Exec(ctx, `UPDATE trellis_runs SET lease_owner = NULL, lease_until = 0 WHERE run_id = $1 AND lease_owner = $2`, runID, owner)
	return err
}

// ExpiredLeases lists unfinished runs whose worker stopped renewing its lease.
func (m *DB) ExpiredLeases(ctx context.Context) ([]*Run, error) {
	return queryAll(ctx, m, scanRun, `SELECT `+runCols+` FROM trellis_runs WHERE status IN ('pending', 'running') AND lease_owner IS NOT NULL AND lease_until < $1 ORDER BY created_at, run_id`, ms(time.Now()))
}

// StrandedRuns lists pending runs that nobody will start: never leased or given back, the
// oldest unfinished run of a thread on which no run holds a live lease, and untouched for
// longer than idle. They were waiting behind another run of their thread in a process that
// died (a process keeps such runs in memory until their turn), and they block the thread's
// newer runs. A run a queue holds is touched at every refused claim (see ClaimRun), so it is
// not listed; runs that are only slow to be picked up (all workers busy) may be listed too;
// scheduling them again is harmless, since the lease decides who executes a run.
func (m *DB) StrandedRuns(ctx context.Context, idle time.Duration) ([]*Run, error) {
	now := time.Now()
	return queryAll(ctx, m, scanRun, `SELECT `+runCols+` FROM trellis_runs r WHERE status = 'pending' AND lease_owner IS NULL AND updated_at < $1
		AND NOT EXISTS (SELECT 1 FROM trellis_runs o WHERE o.tenant = r.tenant AND o.thread_id = r.thread_id AND o.run_id <> r.run_id
			AND o.status IN ('pending', 'running')
			AND (o.created_at < r.created_at OR (o.created_at = r.created_at AND o.run_id < r.run_id) OR (o.lease_owner IS NOT NULL AND o.lease_until >= $2)))
		ORDER BY created_at, run_id`, ms(now.Add(-idle)), ms(now))
}

// AdoptStranded marks a stranded run as taken care of (touching it) and reports whether this
// call did, so that of the processes finding it at once one schedules it.
func (m *DB) AdoptStranded(ctx context.Context, runID string, idle time.Duration) (bool, error) {
	now := time.Now()
	res, err := m.Exec(ctx, `UPDATE trellis_runs SET updated_at = $1 WHERE run_id = $2 AND status = 'pending' AND lease_owner IS NULL AND updated_at < $3`,
		ms(now), runID, ms(now.Add(-idle)))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// InsertRunOnThread inserts a run unless reject is set and the thread has unfinished runs, and
// returns the IDs of those runs (which the caller cancels for interrupt and rollback). On
// Postgres the look and the insert hold the thread's advisory lock, so two replicas accepting
// runs for one thread at the same instant see each other: with reject, one of them answers 409.
// The run's CreatedAt (and UpdatedAt) may move later, to come after the thread's other runs.
func (m *DB) InsertRunOnThread(ctx context.Context, run *Run, reject bool) ([]string, error) {
	if !m.postgres {
		active, err := m.ActiveRuns(ctx, run.Tenant, run.ThreadID)
		if err != nil {
			return nil, err
		}
		var ids []string
		for _, o := range active {
			ids = append(ids, o.RunID)
		}
		if len(ids) > 0 && reject {
			return ids, nil
		}
		return ids, m.InsertRun(ctx, run)
	}
	tx, err := m.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, lockThreadClaims, run.ThreadID); err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT run_id FROM trellis_runs WHERE tenant = $1 AND thread_id = $2 AND status IN ('pending', 'running') ORDER BY created_at, run_id`, run.Tenant, run.ThreadID)
	if err != nil {
		return nil, err
	}
	ids, err := scanAll(rows, func(row scanner) (id string, err error) { return id, row.Scan(&id) })
	if err != nil {
		return nil, err
	}
	if len(ids) > 0 && reject {
		return ids, nil
	}
	// The run is stamped after every run of the thread inserted before it, under the lock: two
	// replicas creating runs at the same instant stamp them before they take the lock, so the
	// later insert could carry the earlier stamp, and a run already claimed would then come
	// after one created "before" it. Creation order is insertion order.
	var last sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT max(created_at) FROM trellis_runs WHERE tenant = $1 AND thread_id = $2`, run.Tenant, run.ThreadID).Scan(&last); err != nil {
		return nil, err
	}
	if last.Valid && ms(run.CreatedAt) <= last.Int64 {
		run.CreatedAt = fromMS(last.Int64 + 1)
		run.UpdatedAt = run.CreatedAt
	}
	if _, err := tx.ExecContext(ctx, runInsert, run.insertArgs()...); err != nil {
		return nil, err
	}
	return ids, tx.Commit()
}
