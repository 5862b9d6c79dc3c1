package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/server/internal/lcwire"
	"github.com/trellis-go/trellis/server/internal/metadb"
	"github.com/trellis-go/trellis/server/internal/periodic"
	"github.com/trellis-go/trellis/server/internal/stream"
)

// Runner schedules, executes and cancels runs: each thread's runs one at a time and in order
// (Slots), each run under a lease renewed every heartbeat (Leases), a run whose worker died
// resumed from its last checkpoint (reap), and a finished stateless run's thread deleted in a
// batch with others (Batcher). What a run executes is the Host's.
type Runner struct {
	Deps
	q      Queue
	mu     sync.Mutex
	active map[string]*activeRun
	// threads keeps each thread's runs in this process one at a time, in order (guarded by mu).
	threads *Slots[string]
	closing bool
	// tenants counts the runs executing in this process per tenant.
	tenants map[string]int
	// instance names this process in run leases.
	instance string
	stopReap func() // stops Reap's loop
	// leases are the leases of the runs executing here, renewed together every heartbeat; out
	// writes and publishes stream events (the logs are stream.Log).
	leases *Leases
	out    *stream.Outbox
	// waiters counts, per run, the requests waiting for its output (wait, join): a finished
	// stateless run reads its final state for an output only if someone waits (see exec).
	waiters map[string]int
	// sweep deletes finished stateless runs' threads in batches (see dropTemporary).
	sweep *Batcher[sweepItem]
	// recent holds the rows of runs this process inserted, until their first delivery
	// (remember, due): run ID to createdRun.
	recent sync.Map
}

type activeRun struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// New returns a runner that executes the runs q delivers, once started (Start).
func New(d Deps, q Queue) *Runner {
	r := &Runner{Deps: d, q: q, active: map[string]*activeRun{}, threads: NewSlots[string](),
		tenants: map[string]int{}, instance: uuid.NewString(), waiters: map[string]int{}}
	r.out = stream.NewOutbox(Events{d.DB}, d.Bus, d.Bus != nil && d.Bus.Kind() == "postgres" && d.DB.Postgres(), d.Log)
	r.leases = NewLeases(d.Heartbeat, func(ctx context.Context, ids []string) (map[string]bool, error) {
		return d.DB.RenewLeases(ctx, ids, r.instance, 3*d.Heartbeat)
	}, d.Log)
	r.sweep = NewBatcher(sweepInterval, sweepBatch, "finished stateless runs' threads", r.sweepThreads, d.Log)
	return r
}

// Start has the queue deliver runs to the runner.
func (r *Runner) Start() { r.q.Start(r.exec) }

// Reap re-schedules, every heartbeat, the runs whose worker stopped renewing its lease (a
// process that died, on this machine or another sharing the database), and the runs that waited
// in such a process for their turn.
func (r *Runner) Reap() {
	r.stopReap = periodic.Every(r.Heartbeat, func(ctx context.Context) {
		r.Hub.Sweep()
		r.forgetCreated()
		r.reapExpired(ctx)
		r.adoptStranded(ctx)
	})
}

// reapExpired re-schedules the runs whose lease expired.
func (r *Runner) reapExpired(ctx context.Context) {
	rows, err := r.DB.ExpiredLeases(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.Log.Warn("cannot look for runs whose worker died", "err", err)
		}
		return
	}
	for _, row := range rows {
		run := RunOf(row)
		if r.scheduled(run.ThreadID, run.RunID) || r.Executing(run.RunID) || r.leases.Holding(run.RunID) {
			// This process is alive and has it: its renewal was only late (a busy
			// database); the next one renews it.
			continue
		}
		r.Log.Warn("run's worker stopped heartbeating; resuming it from its last checkpoint", "run_id", run.RunID, "thread_id", run.ThreadID)
		_ = r.DB.SetRunLastError(ctx, run.RunID, "the run's worker stopped heartbeating (its process died or hung); resumed from its last checkpoint")
		r.openIfNone(run)
		// Straight to the queue, not behind this process's runs of the thread: it is older
		// than they are, and they wait for it (see metadb.DB.ClaimRun).
		if err := r.q.Enqueue(ctx, run.RunID, run.Priority); err != nil && ctx.Err() == nil {
			r.Log.Warn("cannot resume run", "run_id", run.RunID, "err", err)
		}
	}
}

// adoptStranded schedules the runs that were waiting, in a process that died, behind another
// run of their thread (see metadb.DB.StrandedRuns).
func (r *Runner) adoptStranded(ctx context.Context) {
	idle := 3 * r.Heartbeat
	rows, err := r.DB.StrandedRuns(ctx, idle)
	if err != nil {
		if ctx.Err() == nil {
			r.Log.Warn("cannot look for stranded runs", "err", err)
		}
		return
	}
	for _, row := range rows {
		run := RunOf(row)
		if r.scheduled(run.ThreadID, run.RunID) {
			continue
		}
		if ok, err := r.DB.AdoptStranded(ctx, run.RunID, idle); err != nil || !ok {
			continue
		}
		r.Log.Warn("run was waiting for its turn in a process that is gone; scheduling it", "run_id", run.RunID, "thread_id", run.ThreadID)
		r.openIfNone(run)
		// Straight to the queue: in this process's slot it could wait behind a newer run of
		// its thread, which waits for it.
		if err := r.q.Enqueue(ctx, run.RunID, run.Priority); err != nil && ctx.Err() == nil {
			r.Log.Warn("cannot schedule stranded run", "run_id", run.RunID, "err", err)
		}
	}
}

// openIfNone opens the log of a run this process takes over, unless it has one.
func (r *Runner) openIfNone(run *Run) {
	if l := r.Hub.Get(run.RunID); l == nil {
		r.Hub.Open(run.RunID).SetResumable(run.Resumable)
	}
}

// Executing reports whether the run executes in this process.
func (r *Runner) Executing(runID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.active[runID] != nil
}

// scheduled reports whether this process already holds the run in its thread's slot.
func (r *Runner) scheduled(threadID, runID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.threads.Scheduled(threadID, runID)
}

// Recover re-schedules runs a previous process left pending or running.
func (r *Runner) Recover(ctx context.Context) error {
	rows, err := r.DB.UnfinishedRuns(ctx)
	if err != nil {
		return fmt.Errorf("server: recover runs: %w", err)
	}
	for _, row := range rows {
		run := RunOf(row)
		if _, err := r.Host.Graph(run.AssistantID); err != nil {
			r.Log.Warn("run left unfinished by a previous process has an unknown assistant; marking it failed", "run_id", run.RunID, "assistant_id", run.AssistantID)
			_ = r.DB.SetRunStatus(ctx, run.RunID, Failed)
			continue
		}
		r.Log.Info("resuming run left unfinished by a previous process", "run_id", run.RunID, "thread_id", run.ThreadID)
		if run.Status == Running {
			_ = r.DB.SetRunLastError(ctx, run.RunID, "the server stopped while the run executed; resumed from its last checkpoint")
		}
		r.Hub.Open(run.RunID).SetResumable(run.Resumable)
		r.mu.Lock()
		first := r.threads.Place(run.ThreadID, run.RunID, run.Priority)
		r.mu.Unlock()
		if !first {
			continue
		}
		if err := r.q.Enqueue(ctx, run.RunID, run.Priority); err != nil {
			return err
		}
	}
	return nil
}

// released frees the thread after its run ended, here and, with replicas, in whichever process
// holds the run in its thread's slot (a process that scheduled it and saw another execute it).
func (r *Runner) released(threadID, runID string) {
	r.Release(threadID, runID)
	if r.Bus != nil {
		if err := r.Bus.Publish(context.Background(), stream.Message{Kind: "done", RunID: runID, Thread: threadID}); err != nil {
			r.Log.Warn("cannot tell the replicas a run ended", "run_id", runID, "err", err)
		}
	}
}

// ended marks a thread's current run as ended once its statuses are written (Slots.End): a
// client told it finished may start the next run at once.
func (r *Runner) ended(threadID, runID string) {
	r.mu.Lock()
	r.threads.End(threadID, runID)
	r.mu.Unlock()
}

// Release ends a thread's current run and starts the next waiting one. A replica that saw the
// run end elsewhere calls it too.
func (r *Runner) Release(threadID, runID string) {
	r.mu.Lock()
	next, prio, ok := r.threads.Release(threadID, runID, r.closing)
	r.mu.Unlock()
	if !ok {
		return
	}
	if err := r.q.Enqueue(context.Background(), next, prio); err != nil {
		r.Log.Warn("cannot start queued run", "run_id", next, "thread_id", threadID, "err", err)
	}
}

// Cancel stops a run with action (ErrInterrupt or ErrRollback): an executing one through its context
// (in this process, or another replica asked over the bus), a waiting one by taking it out of
// its thread's line. With ErrRollback the run is deleted and the thread's state restored. With
// wait, Cancel returns once the run stopped.
func (r *Runner) Cancel(ctx context.Context, run *Run, action error, wait bool) error {
	if run.Status != Pending && run.Status != Running {
		return nil
	}
	runID := run.RunID
	r.mu.Lock()
	act := r.active[runID]
	if act == nil {
		if r.threads.Unwait(run.ThreadID, runID) {
			r.mu.Unlock()
			r.finishUnstarted(ctx, run, action)
			return nil
		}
		if r.threads.Current(run.ThreadID, runID) && run.Status == Pending {
			// First in line but not started (scheduled with after_seconds, or its queue job
			// not yet taken): the thread goes on to its next run now, not when the job comes
			// due; the job then finds the run finished (or gone) and does nothing.
			r.mu.Unlock()
			r.finishUnstarted(ctx, run, action)
			r.Release(run.ThreadID, runID)
			return nil
		}
	}
	r.mu.Unlock()
	if act == nil && run.Status == Running && r.Bus != nil {
		return r.cancelRemote(ctx, runID, action, wait)
	}
	if act == nil {
		// Scheduled but not started yet: exec sees the status and skips it.
		r.finishUnstarted(ctx, run, action)
		return nil
	}
	act.cancel(action)
	if wait {
		select {
		case <-act.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// cancelRemote asks the replica executing a run to cancel it and, with wait, waits for its
// status to change.
func (r *Runner) cancelRemote(ctx context.Context, runID string, action error, wait bool) error {
	name := "interrupt"
	if action == ErrRollback {
		name = "rollback"
	}
	if err := r.Bus.Publish(ctx, stream.Message{Kind: "cancel", RunID: runID, Action: name}); err != nil {
		return fmt.Errorf("server: cannot reach the replica running %s: %w", runID, err)
	}
	for wait {
		cur, err := r.DB.RunByID(ctx, runID)
		if err != nil || (cur.Status != Pending && cur.Status != Running) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

func (r *Runner) finishUnstarted(ctx context.Context, run *Run, action error) {
	if action == ErrRollback {
		_ = r.DB.DeleteRun(ctx, run.Tenant, run.RunID)
	} else {
		_ = r.DB.SetRunStatus(ctx, run.RunID, Interrupted)
	}
	if l := r.Hub.Get(run.RunID); l != nil {
		l.Close()
	}
	r.settleThread(ctx, run.Tenant, run.ThreadID)
}

// settleThread gives a thread whose runs were all cancelled before they started the status its
// state says (idle, or interrupted when it waits at an interrupt): a pending run made it busy.
func (r *Runner) settleThread(ctx context.Context, tenant, threadID string) {
	active, err := r.DB.ActiveRuns(ctx, tenant, threadID)
	if err != nil || len(active) > 0 {
		return
	}
	t, err := r.DB.GetThread(ctx, tenant, threadID)
	if err != nil || t.Temporary || t.Status != ThreadBusy {
		return
	}
	status := ThreadIdle
	var values, interrupts json.RawMessage
	if g := r.Host.ThreadGraph(t.Metadata); g != nil {
		if snap, err := g.State(ctx, checkpoint.Ref{ThreadID: threadID}); err == nil {
			values, interrupts = lcwire.ThreadRecord(snap)
			if len(snap.Interrupts()) > 0 {
				status = ThreadInterrupted
			}
		}
	}
	_ = r.DB.SetThreadStatus(ctx, tenant, threadID, status, values, interrupts)
}

// persistAndAppend numbers an event and shows it to readers; for a resumable run (every run,
// with a bus) the outbox writes it to the database and publishes it to the replicas: a token or
// the metadata event at once for readers and within stream.FlushInterval for the database (with
// the next other event, when one comes sooner: a run's first values follow its metadata at
// once), any other event after it is written (see stream.Outbox for why that keeps Last-Event-ID
// resumption gapless).
func (r *Runner) persistAndAppend(ctx context.Context, l *stream.Log, event string, raw json.RawMessage) {
	r.Events.Inc()
	if !l.Resumable() {
		l.Append(event, raw)
		return
	}
	if ev := (stream.Event{Event: event}); ev.Batched() {
		l.Append(event, raw)
		r.out.Add(l)
		return
	}
	r.out.WriteNow(ctx, l, event, raw)
}

// RemoteCancel cancels a run executing in this process at the request of another replica.
func (r *Runner) RemoteCancel(runID, action string) {
	r.mu.Lock()
	act := r.active[runID]
	r.mu.Unlock()
	if act == nil {
		return
	}
	cause := ErrInterrupt
	if action == "rollback" {
		cause = ErrRollback
	}
	act.cancel(cause)
}

// WaitFor counts a request waiting for runID's output until it calls Unwait.
func (r *Runner) WaitFor(runID string) {
	r.mu.Lock()
	r.waiters[runID]++
	r.mu.Unlock()
}

// Unwait uncounts a request WaitFor counted.
func (r *Runner) Unwait(runID string) {
	r.mu.Lock()
	if r.waiters[runID]--; r.waiters[runID] <= 0 {
		delete(r.waiters, runID)
	}
	r.mu.Unlock()
}

// Waited reports whether a request in this process waits for runID's output.
func (r *Runner) Waited(runID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.waiters[runID] > 0
}

func (r *Runner) hasWaiting(threadID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.threads.HasWaiting(threadID)
}

// Busy reports whether the thread has a run executing (and not yet ended) or waiting in this
// process.
func (r *Runner) Busy(threadID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.threads.Busy(threadID)
}

// Closing reports whether the runner is shutting down.
func (r *Runner) Closing() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closing
}

// rollback restores the thread's state from before the run: its checkpoint from then becomes
// the newest again (as a fork), or the thread's checkpoints go if it had none.
func (r *Runner) rollback(ctx context.Context, run *Run, g graph.Runnable, headBefore string) {
	if headBefore == "" {
		_ = g.DeleteThread(ctx, run.ThreadID)
		return
	}
	if _, err := g.UpdateState(ctx, checkpoint.Ref{ThreadID: run.ThreadID, CheckpointID: headBefore}, nil, ""); err != nil {
		r.Log.Warn("rollback could not restore the earlier state", "run_id", run.RunID, "thread_id", run.ThreadID, "err", err)
	}
}

// Shutdown stops taking runs, stops the queue (which waits for the runs executing, until ctx
// ends), deletes the finished stateless runs' threads left, and writes the events left.
func (r *Runner) Shutdown(ctx context.Context) {
	r.mu.Lock()
	if r.closing {
		r.mu.Unlock()
		return
	}
	r.closing = true
	r.mu.Unlock()
	if r.stopReap != nil {
		r.stopReap()
	}
	_ = r.q.Close(ctx)
	r.sweep.Stop() // after the runs: it deletes the threads they left, then their leases go
	r.leases.Stop()
	r.out.Close()
}

// A finished stateless run's thread is deleted by the sweeper, with every other one that
// finished meanwhile, in one batch (Host.DeleteThreads): hidden from the API at once, its rows
// go within sweepInterval; its run's lease is renewed until then, so that no reaper takes the
// run for one whose worker died. Shutdown deletes what is left.
const (
	sweepInterval = 20 * time.Millisecond
	sweepBatch    = 64
)

type sweepItem struct {
	key   metadb.ThreadKey
	runID string
}

// sweepThreads deletes a batch of finished stateless runs' threads (checkpoints, then records),
// unhides them and stops renewing their runs' leases.
func (r *Runner) sweepThreads(ctx context.Context, batch []sweepItem) error {
	keys := make([]metadb.ThreadKey, len(batch))
	for i, it := range batch {
		keys[i] = it.key
	}
	if err := r.Host.DeleteThreads(ctx, keys); err != nil {
		return err
	}
	for _, it := range batch {
		r.Hidden.Delete(it.key.ID)
		r.leases.Drop(it.runID)
	}
	return nil
}

// dropTemporary hides a finished stateless run's thread from the API and hands it to the
// sweeper.
func (r *Runner) dropTemporary(tenant, threadID, runID string) {
	r.Hidden.Store(threadID, struct{}{})
	r.sweep.Add(sweepItem{metadb.ThreadKey{Tenant: tenant, ID: threadID}, runID})
}

// Sweeping counts the finished stateless runs' threads that are hidden and not deleted yet.
func (r *Runner) Sweeping() int {
	n := 0
	r.Hidden.Range(func(any, any) bool { n++; return true })
	return n
}
