package server

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"sync"
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

// Why a claim was refused (the Reason of the claim's RetryError).
var (
	errThreadBusy        = errors.New("server: an earlier run of the thread is unfinished; runs of a thread execute one at a time, in order")
	errTenantBusyCluster = errors.New("server: the run's tenant has its maximum of runs executing across the replicas")
)

// Delays before a refused claim is looked at again.
const (
	threadBusyRetry = 100 * time.Millisecond
	tenantBusyRetry = 200 * time.Millisecond
)

// claimRun takes the lease of a pending or running run for owner, and counts the attempt. It
// succeeds only when
//   - nobody holds a live lease on the run,
//   - the run is the thread's oldest unfinished run and no other run of the thread holds a live
//     lease (runs of one thread execute one at a time, in the order they were created, whichever
//     process executes them), and
//   - with tenantLimit > 0, fewer than tenantLimit runs of the tenant hold a live lease.
//
// On Postgres the check and the update happen in a transaction holding advisory locks on the
// thread (and the tenant), so replicas claiming at the same instant take turns; on SQLite the
// one statement is atomic. A claimed run's status becomes running. It reports the attempt
// number (from 1), or a *RetryError saying why not and when to look again.
func (m *metaDB) claimRun(ctx context.Context, run *Run, owner string, ttl time.Duration, tenantLimit int) (int, *RetryError, error) {
	now := time.Now()
	var attempt int
	claim := func(ex interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}) (bool, error) {
		err := ex.QueryRowContext(ctx, m.q(`UPDATE trellis_runs SET lease_owner = $1, lease_until = $2, attempt = attempt + 1, status = 'running', updated_at = $4
			WHERE run_id = $3 AND status IN ('pending', 'running') AND (lease_owner IS NULL OR lease_until < $4)
			AND NOT EXISTS (SELECT 1 FROM trellis_runs WHERE tenant = $5 AND thread_id = $6 AND run_id <> $3
				AND status IN ('pending', 'running')
				AND (created_at < $7 OR (created_at = $7 AND run_id < $3) OR (lease_owner IS NOT NULL AND lease_until >= $4)))
			AND ($8 <= 0 OR (SELECT count(*) FROM trellis_runs WHERE tenant = $5 AND run_id <> $3
				AND status IN ('pending', 'running') AND lease_owner IS NOT NULL AND lease_until >= $4) < $8)
			RETURNING attempt`),
			owner, ms(now.Add(ttl)), run.RunID, ms(now), run.tenant, run.ThreadID, ms(run.CreatedAt), tenantLimit).Scan(&attempt)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		return err == nil, err
	}
	var took bool
	// A temporary thread (a stateless run's) has this one run: with no tenant limit to count
	// under a lock, the one statement decides.
	if m.postgres && (tenantLimit > 0 || !run.Kwargs.Temporary) {
		tx, err := m.db.BeginTx(ctx, nil)
		if err != nil {
			return 0, nil, err
		}
		defer tx.Rollback()
		if tenantLimit > 0 {
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, lockTenantClaims, run.tenant); err != nil {
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
		if took, err = claim(m.db); err != nil {
			return 0, nil, err
		}
	}
	if took {
		return attempt, nil, nil
	}
	return 0, m.whyNotClaimed(ctx, run, now, tenantLimit), nil
}

// whyNotClaimed says why claimRun refused a run, and when to look again.
func (m *metaDB) whyNotClaimed(ctx context.Context, run *Run, now time.Time, tenantLimit int) *RetryError {
	var status string
	var owner sql.NullString
	var until int64
	err := m.db.QueryRowContext(ctx, m.q(`SELECT status, lease_owner, lease_until FROM trellis_runs WHERE run_id = $1`), run.RunID).Scan(&status, &owner, &until)
	if err != nil || (status != RunPending && status != RunRunning) {
		// Gone or finished meanwhile: the next delivery sees it and lets it go.
		return &RetryError{After: 0, Reason: errLeaseHeld}
	}
	if owner.Valid && until >= ms(now) {
		// Another worker executes it, or did until recently: look again once its lease ends.
		return &RetryError{After: max(time.Until(fromMS(until)), 0) + 50*time.Millisecond, Reason: errLeaseHeld}
	}
	// The run is in a queue that will look again: say so, so that no process takes it for
	// stranded (see strandedRuns).
	_, _ = m.exec(ctx, `UPDATE trellis_runs SET updated_at = $1 WHERE run_id = $2`, ms(now), run.RunID)
	var blocking int
	if err := m.db.QueryRowContext(ctx, m.q(`SELECT count(*) FROM trellis_runs WHERE tenant = $1 AND thread_id = $2 AND run_id <> $3
		AND status IN ('pending', 'running') AND (created_at < $4 OR (created_at = $4 AND run_id < $3) OR (lease_owner IS NOT NULL AND lease_until >= $5))`),
		run.tenant, run.ThreadID, run.RunID, ms(run.CreatedAt), ms(now)).Scan(&blocking); err == nil && blocking > 0 {
		return &RetryError{After: threadBusyRetry, Reason: errThreadBusy}
	}
	if tenantLimit > 0 {
		return &RetryError{After: tenantBusyRetry, Reason: errTenantBusyCluster}
	}
	return &RetryError{After: threadBusyRetry, Reason: errThreadBusy}
}

// renewLeases extends, in one statement, the leases of the runs named that this process's
// workers own (owners beginning with prefix, see runner.instance), and returns the runs whose
// lease it extended: a run missing from them lost its lease to another worker.
func (m *metaDB) renewLeases(ctx context.Context, runIDs []string, prefix string, ttl time.Duration) (map[string]bool, error) {
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

// releaseLease gives the lease up, so that the run (if still unfinished) may be claimed at once.
func (m *metaDB) releaseLease(ctx context.Context, runID, owner string) error {
	_, err := m.exec(ctx, `UPDATE trellis_runs SET lease_owner = NULL, lease_until = 0 WHERE run_id = $1 AND lease_owner = $2`, runID, owner)
	return err
}

// leases are the run leases this process's workers hold, renewed together every heartbeat.
type leases struct {
	mu   sync.Mutex
	held map[string]heldLease
	stop context.CancelFunc
	done sync.WaitGroup
}

type heldLease struct {
	owner string
	lost  func() // stops the run, whose lease another worker took; nil once the run is done
}

// hold registers a lease a worker of this process claimed; drop it before releasing the lease.
func (r *runner) holdLease(runID, owner string, lost func()) {
	r.leases.mu.Lock()
	r.leases.held[runID] = heldLease{owner: owner, lost: lost}
	r.leases.mu.Unlock()
}

// holding reports whether this process holds the run's lease (it executes the run, or
// finishes writing it).
func (r *runner) holding(runID string) bool {
	r.leases.mu.Lock()
	defer r.leases.mu.Unlock()
	_, ok := r.leases.held[runID]
	return ok
}

func (r *runner) dropLease(runID string) {
	r.leases.mu.Lock()
	delete(r.leases.held, runID)
	r.leases.mu.Unlock()
}

// renewLeases starts the goroutine that renews every held lease each heartbeat, in one
// statement for all of them, and stops the runs whose lease was lost.
func (r *runner) renewLeases() {
	ctx, cancel := context.WithCancel(context.Background())
	r.leases.stop = cancel
	r.leases.done.Add(1)
	go func() {
		defer r.leases.done.Done()
		t := time.NewTicker(r.cfg.Heartbeat)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			r.leases.mu.Lock()
			ids := make([]string, 0, len(r.leases.held))
			owners := make(map[string]string, len(r.leases.held))
			for id, h := range r.leases.held {
				ids = append(ids, id)
				owners[id] = h.owner
			}
			r.leases.mu.Unlock()
			kept, err := r.meta.renewLeases(ctx, ids, r.instance, 3*r.cfg.Heartbeat)
			if err != nil {
				if ctx.Err() == nil {
					r.log.Warn("cannot renew run leases", "runs", len(ids), "err", err)
				}
				continue
			}
			for _, id := range ids {
				if kept[id] {
					continue
				}
				r.leases.mu.Lock()
				h, ok := r.leases.held[id]
				if ok && h.owner == owners[id] {
					delete(r.leases.held, id)
				} else {
					ok = false
				}
				r.leases.mu.Unlock()
				if ok && h.lost != nil {
					r.log.Error("run lease lost; stopping the run here", "run_id", id)
					h.lost()
				}
			}
		}
	}()
}

// stopRenewing stops the renewals, once this process's runs have stopped.
func (r *runner) stopRenewing() {
	if r.leases.stop != nil {
		r.leases.stop()
		r.leases.done.Wait()
	}
}

// expiredLeases lists unfinished runs whose worker stopped renewing its lease.
func (m *metaDB) expiredLeases(ctx context.Context) ([]*Run, error) {
	rows, err := m.db.QueryContext(ctx, m.q(`SELECT `+runCols+` FROM trellis_runs WHERE status IN ('pending', 'running') AND lease_owner IS NOT NULL AND lease_until < $1 ORDER BY created_at, run_id`), ms(time.Now()))
	if err != nil {
		return nil, err
	}
	return scanAll(rows, scanRun)
}

// strandedRuns lists pending runs that nobody will start: never leased or given back, the
// oldest unfinished run of a thread on which no run holds a live lease, and untouched for
// longer than idle. They were waiting behind another run of their thread in a process that
// died (a process keeps such runs in memory until their turn), and they block the thread's
// newer runs. A run a queue holds is touched at every refused claim (whyNotClaimed), so it is
// not listed; runs that are only slow to be picked up (all workers busy) may be listed too;
// scheduling them again is harmless, since the lease decides who executes a run.
func (m *metaDB) strandedRuns(ctx context.Context, idle time.Duration) ([]*Run, error) {
	now := time.Now()
	rows, err := m.db.QueryContext(ctx, m.q(`SELECT `+runCols+` FROM trellis_runs r WHERE status = 'pending' AND lease_owner IS NULL AND updated_at < $1
		AND NOT EXISTS (SELECT 1 FROM trellis_runs o WHERE o.tenant = r.tenant AND o.thread_id = r.thread_id AND o.run_id <> r.run_id
			AND o.status IN ('pending', 'running')
			AND (o.created_at < r.created_at OR (o.created_at = r.created_at AND o.run_id < r.run_id) OR (o.lease_owner IS NOT NULL AND o.lease_until >= $2)))
		ORDER BY created_at, run_id`), ms(now.Add(-idle)), ms(now))
	if err != nil {
		return nil, err
	}
	return scanAll(rows, scanRun)
}

// adoptStranded marks a stranded run as taken care of (touching it) and reports whether this
// call did, so that of the processes finding it at once one schedules it.
func (m *metaDB) adoptStranded(ctx context.Context, runID string, idle time.Duration) (bool, error) {
	now := time.Now()
	res, err := m.exec(ctx, `UPDATE trellis_runs SET updated_at = $1 WHERE run_id = $2 AND status = 'pending' AND lease_owner IS NULL AND updated_at < $3`,
		ms(now), runID, ms(now.Add(-idle)))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// adoptStranded schedules the runs that were waiting, in a process that died, behind another
// run of their thread (see strandedRuns); the reaper calls it every heartbeat.
func (r *runner) adoptStranded(ctx context.Context) {
	idle := 3 * r.cfg.Heartbeat
	runs, err := r.meta.strandedRuns(ctx, idle)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("cannot look for stranded runs", "err", err)
		}
		return
	}
	for _, run := range runs {
		if r.scheduled(run.ThreadID, run.RunID) {
			continue
		}
		if ok, err := r.meta.adoptStranded(ctx, run.RunID, idle); err != nil || !ok {
			continue
		}
		r.log.Warn("run was waiting for its turn in a process that is gone; scheduling it", "run_id", run.RunID, "thread_id", run.ThreadID)
		if l := r.hub.Get(run.RunID); l == nil {
			r.hub.Open(run.RunID).SetResumable(run.Kwargs.Resumable)
		}
		// Straight to the queue: in this process's slot it could wait behind a newer run of
		// its thread, which waits for it.
		if err := r.q.Enqueue(ctx, run.RunID); err != nil && ctx.Err() == nil {
			r.log.Warn("cannot schedule stranded run", "run_id", run.RunID, "err", err)
		}
	}
}

// insertRunOnThread inserts a run unless reject is set and the thread has unfinished runs, and
// returns the IDs of those runs (which the caller cancels for interrupt and rollback). On
// Postgres the look and the insert hold the thread's advisory lock, so two replicas accepting
// runs for one thread at the same instant see each other: with reject, one of them answers 409.
func (m *metaDB) insertRunOnThread(ctx context.Context, run *Run, reject bool) ([]string, error) {
	if !m.postgres {
		active, err := m.activeRuns(ctx, run.tenant, run.ThreadID)
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
		return ids, m.insertRun(ctx, run)
	}
	tx, err := m.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, lockThreadClaims, run.ThreadID); err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT run_id FROM trellis_runs WHERE tenant = $1 AND thread_id = $2 AND status IN ('pending', 'running') ORDER BY created_at, run_id`, run.tenant, run.ThreadID)
	if err != nil {
		return nil, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
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
	if err := tx.QueryRowContext(ctx, `SELECT max(created_at) FROM trellis_runs WHERE tenant = $1 AND thread_id = $2`, run.tenant, run.ThreadID).Scan(&last); err != nil {
		return nil, err
	}
	if last.Valid && ms(run.CreatedAt) <= last.Int64 {
		run.CreatedAt = fromMS(last.Int64 + 1)
		run.UpdatedAt = run.CreatedAt
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO trellis_runs (`+runInsertCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
		run.tenant, run.RunID, run.ThreadID, run.AssistantID, run.Status, mustJSON(run.Metadata), mustJSON(run.Kwargs), run.MultitaskStrategy, ms(run.CreatedAt)); err != nil {
		return nil, err
	}
	return ids, tx.Commit()
}
