package server

import (
	"context"
	"errors"
	"sync"
	"time"
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
			kept, err := r.meta.RenewLeases(ctx, ids, r.instance, 3*r.cfg.Heartbeat)
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
