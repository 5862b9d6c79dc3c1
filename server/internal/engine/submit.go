package engine

import (
	"context"
	"maps"
	"time"

	"github.com/google/uuid"

	"github.com/trellis-go/trellis/server/internal/metadb"
	"github.com/trellis-go/trellis/server/internal/stream"
)

// Submit inserts a new pending run and schedules it, applying its multitask strategy: reject
// refuses it (ErrThreadBusy) while its thread has unfinished runs, interrupt and rollback cancel
// them. fresh says its thread was created for it (no other run can be on it); wait counts the
// request as waiting for the run's output, from before the run can start (the request calls
// Unwait). Submit sets the run's ID and creation time, and returns the log its events go to in
// this process.
func (r *Runner) Submit(ctx context.Context, run *Run, fresh, wait bool) (*stream.Log, error) {
	if r.Closing() {
		return nil, ErrClosing
	}
	l, inflight, first, err := r.insert(ctx, run, fresh, wait)
	if err != nil {
		return nil, err
	}
	r.cancelInflight(ctx, run, inflight)
	r.created(ctx, run)
	if first {
		if err := r.q.Enqueue(ctx, run.RunID, run.Priority); err != nil {
			if wait {
				r.Unwait(run.RunID)
			}
			return nil, err
		}
	}
	return l, nil
}

// insert applies the multitask strategy and inserts the run, under r.mu so that two requests on
// one thread cannot both see it idle. The run's ID and creation time are taken under it too, so
// that this process's runs of a thread are created, and wait in its slot, in one order. It opens
// the run's log, counts the request as a waiter if it waits for the output, and puts the run in
// its thread's slot. It returns the log, the thread's unfinished runs (for interrupt and
// rollback), and whether the run is its slot's current one, to be enqueued now.
func (r *Runner) insert(ctx context.Context, run *Run, fresh, wait bool) (l *stream.Log, inflight []string, first bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	run.RunID = uuid.Must(uuid.NewV7()).String()
	run.CreatedAt = r.DB.Stamp()
	run.UpdatedAt = run.CreatedAt
	if inflight, err = r.insertLocked(ctx, run, fresh); err != nil {
		return nil, nil, false, err
	}
	r.remember(run)
	l = r.openCreated(run)
	if wait {
		r.waiters[run.RunID]++
	}
	return l, inflight, r.threads.Place(run.ThreadID, run.RunID, run.Priority), nil
}

// insertLocked inserts the run, with r.mu held, unless its strategy is reject and its thread has
// unfinished runs (ErrThreadBusy); it returns those runs. With replicas the database is the
// truth: another replica may be running one of the thread's runs, and this one's slot may still
// name a run another replica finished. The look and the insert are then one step across replicas
// (metadb.DB.InsertRunOnThread). A thread this request created (fresh) has no other run to look
// for; one made for the run (NewThread) is inserted with it.
func (r *Runner) insertLocked(ctx context.Context, run *Run, fresh bool) ([]string, error) {
	reject := run.MultitaskStrategy == "reject"
	if r.Bus != nil && !fresh {
		active, err := r.DB.InsertRunOnThread(ctx, run.Run, reject)
		if err != nil {
			return nil, err
		}
		if len(active) > 0 && reject {
			return nil, ErrThreadBusy
		}
		return active, nil
	}
	if run.NewThread != nil {
		return nil, r.DB.InsertRunWithThread(ctx, run.NewThread, run.Run)
	}
	inflight := r.threads.Unfinished(run.ThreadID)
	if len(inflight) > 0 && reject {
		return nil, ErrThreadBusy
	}
	if err := r.DB.InsertRun(ctx, run.Run); err != nil {
		return nil, err
	}
	return inflight, nil
}

// openCreated opens the log of a run just created. With replicas any of them may execute the
// run: this process's readers (the creating request's stream or wait, a WebSocket) follow it
// wherever it executes, and the mirror stops if this process takes the run itself. The run is
// new: nothing of it is written yet.
func (r *Runner) openCreated(run *Run) *stream.Log {
	if r.Bus != nil {
		return stream.Mirror(r.Hub, r.Bus, Events{r.DB}, run.RunID, true)
	}
	l := r.Hub.Open(run.RunID)
	l.SetResumable(run.Resumable)
	return l
}

// cancelInflight applies the interrupt and rollback strategies: the thread's unfinished runs
// that the new run's creator may see (Host.Visible) are cancelled (and, with rollback, deleted
// and their state undone).
func (r *Runner) cancelInflight(ctx context.Context, run *Run, inflight []string) {
	var action error
	switch run.MultitaskStrategy {
	case "interrupt":
		action = ErrInterrupt
	case "rollback":
		action = ErrRollback
	default:
		return
	}
	for _, id := range inflight {
		row, err := r.DB.GetRun(ctx, run.Tenant, run.ThreadID, id)
		if err != nil {
			continue
		}
		if other := RunOf(row); r.Host.Visible(ctx, other) {
			_ = r.Cancel(ctx, other, action, false)
		}
	}
}

// created marks the new run's thread busy (from the moment a run is pending, as LangGraph
// reports it; a temporary thread is nobody's to look at), and counts and logs the run.
func (r *Runner) created(ctx context.Context, run *Run) {
	if !run.Temporary {
		_ = r.DB.SetThreadBusy(ctx, run.Tenant, run.ThreadID)
	}
	r.Created.Inc()
	r.Log.Info("run created", "run_id", run.RunID, "thread_id", run.ThreadID, "assistant_id", run.AssistantID, "tenant", run.Tenant, "multitask_strategy", run.MultitaskStrategy)
}

// created is a run this process inserted, kept until its first delivery (see due).
type createdRun struct {
	row *metadb.Run
	at  time.Time
}

// forgetCreatedAfter is how long a run this process inserted is remembered for its first
// delivery; one delivered elsewhere (another replica, a River job fetched late) is forgotten
// then.
const forgetCreatedAfter = time.Minute

// remember keeps a copy of the row of a run just inserted, for its first delivery in this
// process: due takes it instead of reading the row it was just written as (a status changed
// meanwhile, by a cancel, is the claim's to see: it claims only a pending or running run).
func (r *Runner) remember(run *Run) {
	row := *run.Run
	row.Metadata = maps.Clone(run.Metadata)
	r.recent.Store(run.RunID, createdRun{row: &row, at: time.Now()})
}

// forgetCreated drops the runs remembered longer than forgetCreatedAfter.
func (r *Runner) forgetCreated() {
	old := time.Now().Add(-forgetCreatedAfter)
	r.recent.Range(func(k, v any) bool {
		if v.(createdRun).at.Before(old) {
			r.recent.Delete(k)
		}
		return true
	})
}
