package server

import (
	"context"
	"time"
)

// A run's lease says which worker executes it and until when that worker is known alive. The
// worker renews it every heartbeat; a run whose lease expired while it was pending or running
// lost its worker, and any process may claim it and continue it from its last checkpoint.

// claimRun takes the lease of a pending or running run for owner when nobody holds a live one,
// and counts the attempt. It reports the attempt number (from 1), or 0 and the time the current
// lease ends when another worker holds it.
func (m *metaDB) claimRun(ctx context.Context, runID, owner string, ttl time.Duration) (attempt int, heldUntil time.Time, err error) {
	now := time.Now()
	res, err := m.exec(ctx, `UPDATE trellis_runs SET lease_owner = $1, lease_until = $2, attempt = attempt + 1
		WHERE run_id = $3 AND status IN ('pending', 'running') AND (lease_owner IS NULL OR lease_until < $4)`,
		owner, ms(now.Add(ttl)), runID, ms(now))
	if err != nil {
		return 0, time.Time{}, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, time.Time{}, err
	}
	var until int64
	if err := m.db.QueryRowContext(ctx, m.q(`SELECT attempt, lease_until FROM trellis_runs WHERE run_id = $1`), runID).Scan(&attempt, &until); err != nil {
		return 0, time.Time{}, err
	}
	if n == 0 {
		return 0, fromMS(until), nil
	}
	return attempt, time.Time{}, nil
}

// renewLease extends owner's lease; false means the lease is no longer owner's.
func (m *metaDB) renewLease(ctx context.Context, runID, owner string, ttl time.Duration) (bool, error) {
	res, err := m.exec(ctx, `UPDATE trellis_runs SET lease_until = $1 WHERE run_id = $2 AND lease_owner = $3`, ms(time.Now().Add(ttl)), runID, owner)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// releaseLease gives the lease up, so that the run (if still unfinished) may be claimed at once.
func (m *metaDB) releaseLease(ctx context.Context, runID, owner string) error {
	_, err := m.exec(ctx, `UPDATE trellis_runs SET lease_owner = NULL, lease_until = 0 WHERE run_id = $1 AND lease_owner = $2`, runID, owner)
	return err
}

// expiredLeases lists unfinished runs whose worker stopped renewing its lease.
func (m *metaDB) expiredLeases(ctx context.Context) ([]*Run, error) {
	rows, err := m.db.QueryContext(ctx, m.q(`SELECT `+runCols+` FROM trellis_runs WHERE status IN ('pending', 'running') AND lease_owner IS NOT NULL AND lease_until < $1 ORDER BY created_at, run_id`), ms(time.Now()))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
