package server

import (
	"context"
	"errors"
)

// A run's lease says which worker executes it and until when that worker is known alive (see
// metadb.DB.ClaimRun). The worker renews it every heartbeat; a run whose lease expired while it
// was pending or running lost its worker, and any process may claim it and continue it from its
// last checkpoint.

// Why a claim was refused (the Reason of the claim's RetryError).
var (
	errThreadBusy        = errors.New("server: an earlier run of the thread is unfinished; runs of a thread execute one at a time, in order")
	errTenantBusyCluster = errors.New("server: the run's tenant has its maximum of runs executing across the replicas")
)

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
		if ok, err := r.meta.AdoptStranded(ctx, run.RunID, idle); err != nil || !ok {
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
