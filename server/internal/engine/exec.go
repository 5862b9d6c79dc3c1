package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/server/internal/lcstream"
	"github.com/trellis-go/trellis/server/internal/lcwire"
	"github.com/trellis-go/trellis/server/internal/metadb"
	"github.com/trellis-go/trellis/server/internal/stream"
)

// exec executes one run; the queue calls it. It returns a *Retry when the run should be
// delivered again later (another worker holds it, its tenant is at its limit, or it failed with
// a transient error), nil otherwise.
func (r *Runner) exec(qctx context.Context, runID string) error {
	ctx := context.WithoutCancel(qctx)
	_, mine := r.recent.Load(runID) // inserted by this process (see due)
	run, err := r.due(ctx, runID)
	if run == nil {
		return err
	}
	leave, err := r.enterTenant(run.Tenant)
	if err != nil {
		return err
	}
	defer leave()
	x, err := r.claim(ctx, run)
	if x == nil {
		return err
	}
	x.mine = mine
	x.start(qctx)
	defer x.end()
	x.openLog()
	x.begin()
	x.prepareGraph()
	x.settle(x.runGraph())
	x.undoIfRolledBack()
	x.prepareOutput()
	x.writeStatus()
	x.report()
	return x.requeue()
}

// execution is one attempt at a run in this process: what the steps of exec share.
type execution struct {
	r   *Runner
	ctx context.Context // the queue's, without its cancellation: the run's writes use it
	run *Run
	log *slog.Logger
	// owner is the lease's owner (this process's instance and the attempt); attempt counts the
	// claims of the run, this one included.
	owner   string
	attempt int
	// mine says this process inserted the run (and so holds it in its thread's slot).
	mine bool

	// Set by start.
	at          Attempt         // the host's side
	runCtx      context.Context // the graph's; cancelled with a cause (see settle)
	cancel      context.CancelCauseFunc
	stopOnQueue func() bool
	timer       *time.Timer // Config.Timeout's
	act         *activeRun
	started     time.Time

	// The log (openLog), the graph and the thread's checkpoint before the run (prepareGraph).
	l          *stream.Log
	g          graph.Runnable
	headBefore string

	// The outcome (settle).
	runErr       error
	cause        error // why runCtx ended, if it did
	status       string
	threadStatus string
	interrupted  bool
	retry        error // the *Retry of a transient failure

	// The thread's record (prepareOutput, record).
	final              *graph.StateSnapshot[any]
	values, interrupts json.RawMessage

	// What end does. closeLog closes the log (nothing while the run is left pending); keepSlot
	// keeps the thread's slot (the run is delivered again); leaseGone says the run's record goes
	// with its temporary thread (drop), which dropThread deletes; lazyOutput says the output is
	// read from the thread when asked for (see prepareOutput).
	closeLog   func()
	keepSlot   bool
	drop       bool
	leaseGone  bool
	dropThread func()
	lazyOutput bool
}

// due loads a queued run (from memory on its first delivery in the process that inserted it) and
// returns it when it is to execute now. Otherwise it returns nil
// and what exec returns: nil for a run that vanished or already ended (its thread goes on to
// its next run), a *Retry for a run created with after_seconds that is not due yet (it
// waits pending and unclaimed).
func (r *Runner) due(ctx context.Context, runID string) (*Run, error) {
	var row *metadb.Run
	if v, ok := r.recent.LoadAndDelete(runID); ok {
		// This process inserted it: its row is as it was written (see remember).
		row = v.(createdRun).row
	} else {
		var err error
		if row, err = r.DB.RunByID(ctx, runID); err != nil {
			r.Log.Warn("queued run vanished", "run_id", runID, "err", err)
			return nil, nil
		}
	}
	run := RunOf(row)
	if run.Status != Pending && run.Status != Running {
		r.released(run.ThreadID, runID)
		return nil, nil
	}
	if run.StartAfter > 0 {
		if wait := time.Until(time.UnixMilli(run.StartAfter)); wait > 0 {
			return nil, &Retry{After: wait, Reason: errScheduled}
		}
	}
	return run, nil
}

// enterTenant counts a run among its tenant's executing in this process, and returns the func
// that uncounts it; a tenant at Config.MaxRunsPerTenant gets a *Retry instead.
func (r *Runner) enterTenant(tenant string) (leave func(), err error) {
	lim := r.MaxRunsPerTenant
	if lim <= 0 {
		return func() {}, nil
	}
	r.mu.Lock()
	busy := r.tenants[tenant] >= lim
	if !busy {
		r.tenants[tenant]++
	}
	r.mu.Unlock()
	if busy {
		return nil, &Retry{After: 200 * time.Millisecond, Reason: errTenantBusy}
	}
	return func() {
		r.mu.Lock()
		if r.tenants[tenant]--; r.tenants[tenant] <= 0 {
			delete(r.tenants, tenant)
		}
		r.mu.Unlock()
	}, nil
}

// claim takes the run's lease for a worker of this process. The claim also keeps the thread's
// runs one at a time and in order, and the tenant under its limit, across every process sharing
// the database (see metadb.DB.ClaimRun). It returns the execution, or nil and what exec returns: a
// *Retry when the claim was refused or failed, nil when the run has been attempted too
// often (failed by giveUp).
func (r *Runner) claim(ctx context.Context, run *Run) (*execution, error) {
	log := r.Log.With("run_id", run.RunID, "thread_id", run.ThreadID, "tenant", run.Tenant)
	owner := r.instance + "/" + uuid.NewString()
	attempt, refused, err := r.DB.ClaimRun(ctx, run.Run, owner, 3*r.Heartbeat, r.MaxRunsPerTenant, run.Temporary)
	if err != nil {
		log.Warn("cannot claim run; retrying", "err", err)
		return nil, &Retry{After: time.Second, Reason: err}
	}
	if refused != nil {
		reason := errLeaseHeld
		switch refused.Why {
		case metadb.ThreadBusy:
			reason = errThreadBusy
		case metadb.TenantBusy:
			reason = errTenantLimit
		}
		return nil, &Retry{After: refused.After, Reason: reason}
	}
	if attempt > r.MaxAttempts {
		r.giveUp(ctx, run, log, owner, attempt)
		return nil, nil
	}
	return &execution{r: r, ctx: ctx, run: run, log: log, owner: owner, attempt: attempt}, nil
}

// giveUp fails a run claimed more than Config.MaxAttempts times: its stream ends with an
// error, its thread's status is error, and its lease and thread slot are let go.
func (r *Runner) giveUp(ctx context.Context, run *Run, log *slog.Logger, owner string, attempt int) {
	log.Error("run gave up after too many attempts", "attempts", attempt-1)
	why := fmt.Sprintf("run was attempted %d times (its worker died or it failed transiently each time); giving up", attempt-1)
	l := r.Hub.Open(run.RunID)
	raw, _ := json.Marshal(map[string]any{"error": "TooManyAttempts", "message": "server: " + why})
	r.persistAndAppend(ctx, l, "error", raw)
	r.persistAndAppend(ctx, l, "end", json.RawMessage("null"))
	_ = r.DB.SetRunEnd(ctx, run.RunID, metadb.RunEnd{Status: Failed, LastError: why})
	_ = r.DB.SetThreadStatus(ctx, run.Tenant, run.ThreadID, ThreadError, nil, nil)
	_ = r.DB.ReleaseLease(ctx, run.RunID, owner)
	r.Release(run.ThreadID, run.RunID)
	l.Close()
}

// start makes the run executing here: its progress is followed (and readable live in this
// process until its record has the final one); its context is cancelled by a cancel, by the
// queue stopping, by Config.Timeout, or by its lease going to another worker (the lease is
// renewed with every other run's each heartbeat, Leases); it is counted active.
func (x *execution) start(qctx context.Context) {
	r := x.r
	x.at = r.Host.Attempt(x.run, x.attempt)
	x.runCtx, x.cancel = context.WithCancelCause(x.ctx)
	x.stopOnQueue = context.AfterFunc(qctx, func() { x.cancel(errShutdown) })
	if t := r.Timeout; t > 0 {
		x.timer = time.AfterFunc(t, func() { x.cancel(r.TimeoutCause) })
	}
	r.leases.Hold(x.run.RunID, x.owner, func() { x.cancel(errLeaseLost) })
	x.act = &activeRun{cancel: x.cancel, done: make(chan struct{})}
	r.mu.Lock()
	r.active[x.run.RunID] = x.act
	r.mu.Unlock()
	x.started = time.Now()
	r.Active.Inc()
	x.closeLog = func() {}
}

// end undoes start when exec returns, however the run went: the lease is let go (unless the
// record went with its thread), the thread's slot freed (unless the run is to be delivered
// again), the log closed, and a finished temporary thread handed to the sweeper.
func (x *execution) end() {
	r, runID := x.r, x.run.RunID
	x.stopOnQueue()
	x.cancel(nil)
	if !x.leaseGone {
		r.leases.Drop(runID)
	}
	r.Active.Dec()
	r.mu.Lock()
	delete(r.active, runID)
	r.mu.Unlock()
	close(x.act.done)
	if !x.leaseGone {
		_ = r.DB.ReleaseLease(x.ctx, runID, x.owner)
	}
	switch {
	case x.keepSlot:
	case x.mine && x.run.Temporary:
		// A stateless run's thread has this one run, which no other process scheduled: no
		// replica holds it in a slot, and none needs telling that it ended.
		r.Release(x.run.ThreadID, runID)
	default:
		r.released(x.run.ThreadID, runID)
	}
	// The log closes last, so that whoever waits on it (wait, join, a stream's end) finds the
	// run's and the thread's statuses written and the thread free for the next run.
	x.closeLog()
	// A finished temporary thread is nobody's to wait for: it goes after. A waiter that came
	// after its final state was skipped (see prepareOutput) gets it made before the thread goes.
	if x.dropThread != nil {
		if x.lazyOutput && r.Waited(runID) {
			_ = x.l.Result()
		}
		x.dropThread() // the sweeper drops the lease once the record is gone
	}
	if x.timer != nil {
		x.timer.Stop()
	}
	x.at.Close()
}

// openLog opens the run's log. Its events are numbered on from those an earlier attempt
// persisted: a resumable run's (every run's, with a bus) are in the database.
func (x *execution) openLog() {
	r, runID := x.r, x.run.RunID
	l := r.Hub.Open(runID)
	l.SetResumable(x.run.Resumable || r.Bus != nil)
	if l.TakeMirror() && x.attempt > 1 {
		// This process followed the run while another executed it; the database has every
		// event that was shown, and the numbering continues from there. (On a first attempt
		// no process executed it before: there is nothing to read.)
		if evs, err := (Events{r.DB}).Events(x.ctx, runID, 0); err == nil {
			l.Restore(evs, true)
		}
	} else if l.Resumable() && l.Last() == 0 && x.attempt > 1 {
		// A restarted run continues the event numbering of the stream it had persisted. Only an
		// attempt writes a run's events: a first one has none to read.
		if evs, err := (Events{r.DB}).Events(x.ctx, runID, 0); err == nil && len(evs) > 0 {
			l.Restore(evs, false)
		}
	}
	x.l = l
}

// emit adds an event to the run's stream: data is encoded to JSON (an "error" event if it
// cannot be), or is a token runGraph encoded (lcstream.EncodedToken).
func (x *execution) emit(event string, data any) {
	r, l := x.r, x.l
	if tok, ok := data.(lcstream.EncodedToken); ok {
		if !l.Resumable() {
			r.Events.Inc()
			l.AppendTail(event, tok.Head, tok.Tail)
			return
		}
		r.persistAndAppend(x.ctx, l, event, tok.Join())
		return
	}
	raw, err := json.Marshal(data)
	if err != nil {
		raw, _ = json.Marshal(map[string]any{"error": "EncodeError", "message": err.Error()})
		event = "error"
	}
	if h, ok := x.at.(HeldWrites); ok && h.Holding() {
		// The run's checkpoints held back go before the event, in its statement's round trip
		// when the outbox writes through Postgres.
		if l.Resumable() && !(stream.Event{Event: event}).Batched() {
			done, _ := r.out.WriteNowWith(x.ctx, l, event, raw, func(ctx context.Context, batches []stream.Batch, channel string, payloads []string) error {
				return h.WriteEventsWith(ctx, rows(batches), channel, payloads)
			})
			if done {
				r.Events.Inc()
				return
			}
		}
		h.FlushHeld(x.ctx)
	}
	r.persistAndAppend(x.ctx, l, event, raw)
}

// begin marks the run's thread busy and starts its stream with the metadata event. The claim
// made the run's status running. A temporary thread (a stateless run's) is nobody's to look at
// and goes when the run ends: it is not marked busy.
func (x *execution) begin() {
	if !x.run.Temporary {
		_ = x.r.DB.SetThreadBusy(x.ctx, x.run.Tenant, x.run.ThreadID)
	}
	x.log.Info("run started", "assistant_id", x.run.AssistantID)
	x.emit("metadata", map[string]any{"run_id": x.run.RunID, "thread_id": x.run.ThreadID, "attempt": x.attempt})
}

// prepareGraph finds the run's graph, and the thread's newest checkpoint before the run: a
// temporary thread has none on its first attempt.
func (x *execution) prepareGraph() {
	g, err := x.r.Host.Graph(x.run.AssistantID)
	if err != nil { // a created assistant deleted while its run waited
		x.log.Warn("run's assistant is gone; failing the run", "assistant_id", x.run.AssistantID, "err", err)
		g = goneGraph{err}
	}
	x.g = g
	if x.run.Temporary && x.attempt == 1 {
		return
	}
	if snap, err := x.g.State(x.ctx, checkpoint.Ref{ThreadID: x.run.ThreadID}); err == nil {
		x.headBefore = snap.Ref.CheckpointID
	}
}

// runGraph runs the graph, streaming its events, and returns its error. The graph done, a lease
// lost stops nothing (the record may even be gone, with a temporary thread's), but the lease is
// still renewed until the record says the run ended or is gone, so that no reaper takes the run
// for one whose worker died.
func (x *execution) runGraph() error {
	err := x.at.Execute(x.runCtx, x.g, x.headBefore, x.emit)
	x.r.leases.Hold(x.run.RunID, x.owner, nil)
	return err
}

// settle decides the run's outcome from the graph's error and the cause of its context's end:
// the statuses of the run and its thread, whether the run keeps its thread's slot, and the retry
// of a transient failure. A failed run's stream gets the error.
func (x *execution) settle(runErr error) {
	x.cause = context.Cause(x.runCtx)
	if x.cause != nil && x.cause == x.r.TimeoutCause {
		runErr = x.cause
	}
	x.runErr = runErr
	x.status, x.threadStatus = Success, ThreadIdle
	var ie *graph.InterruptedError
	switch cause := x.cause; {
	case runErr == nil:
	case errors.As(runErr, &ie):
		x.threadStatus, x.interrupted = ThreadInterrupted, true
	case errors.Is(cause, errShutdown), errors.Is(cause, errLeaseLost):
		// Left pending: whoever takes it next continues from its last checkpoint.
		x.status = Pending
		x.keepSlot = errors.Is(cause, errLeaseLost)
	case cause == nil && x.r.Host.Retryable(runErr) && x.attempt < x.r.MaxAttempts:
		x.status = Pending
		x.keepSlot = true
		backoff := min(time.Duration(1<<min(x.attempt-1, 6))*time.Second, time.Minute)
		x.retry = &Retry{After: backoff, Reason: runErr}
		x.log.Warn("run failed with a transient error; retrying from its last checkpoint", "err", runErr, "attempt", x.attempt, "after", backoff.String())
	case errors.Is(cause, ErrInterrupt), errors.Is(cause, ErrRollback):
		x.status = Interrupted
	default:
		x.status, x.threadStatus = Failed, ThreadError
		x.emit("error", x.r.Host.ErrorEvent(runErr))
	}
}

// undoIfRolledBack restores the thread's state from before a run cancelled with rollback.
func (x *execution) undoIfRolledBack() {
	if errors.Is(x.cause, ErrRollback) {
		x.r.rollback(x.ctx, x.run, x.g, x.headBefore)
	}
}

// prepareOutput gives the log the run's output (what wait and join answer) and has end close
// the log (writeStatus ends the stream of a run that ended). The thread is read through the attempt's
// StateContext: a stateless run's final state comes from what it wrote, not from the database. A finished temporary thread goes with its runs
// (drop); its final state is read only for a waiter of its output (counted in this process: with
// a bus they may be anywhere) or a webhook: a streamed stateless run's is never read. Otherwise a
// waiter that comes late reads it from the thread before the thread goes.
func (x *execution) prepareOutput() {
	r, l, g, run := x.r, x.l, x.g, x.run
	x.drop = run.Temporary && x.status != Pending
	sctx := x.at.StateContext(x.ctx)
	if x.drop && x.status != Failed && run.Webhook == "" && r.Bus == nil && !r.Waited(run.RunID) {
		x.lazyOutput = true
		ctx := context.WithoutCancel(sctx)
		l.SetOutputFunc(func() any {
			snap, err := g.State(ctx, checkpoint.Ref{ThreadID: run.ThreadID})
			if err != nil {
				return nil
			}
			return lcwire.Output(snap)
		})
	} else if snap, err := g.State(sctx, checkpoint.Ref{ThreadID: run.ThreadID}); err == nil {
		x.final = snap
		if x.status != Failed {
			l.SetOutputFunc(func() any { return lcwire.Output(snap) })
		}
	}
	if x.status == Failed {
		l.SetOutput(map[string]any{"__error__": x.r.Host.ErrorEvent(x.runErr)})
	}
	x.closeLog = l.Close
}

// record makes the thread's record (values and interrupts, in JSON) from its final state, once.
// It is made only for the thread's row or a webhook: a finished stateless run, whose thread
// goes, needs neither.
func (x *execution) record() {
	if x.final != nil && x.values == nil {
		x.values, x.interrupts = lcwire.ThreadRecord(x.final)
	}
}

// runEnd is what the run's record gets when the attempt ends: its status, its final progress,
// and the error of a failed run or of one left pending (with a retry's next attempt).
func (x *execution) runEnd() metadb.RunEnd {
	end := metadb.RunEnd{Status: x.status, Progress: x.at.Finish()}
	switch {
	case x.status == Failed:
		end.LastError = x.runErr.Error()
	case x.status == Pending && x.retry != nil:
		var re *Retry
		if errors.As(x.retry, &re) {
			end.LastError, end.NextAttempt = x.runErr.Error(), time.Now().Add(re.After)
		}
	case x.status == Pending && x.cause != nil:
		end.LastError = x.cause.Error()
	}
	return end
}

// endWithStatus ends the run's stream and writes the run's status: in one statement when the
// outbox writes through Postgres (stream.Outbox.WriteNowWith), else the end event first.
func (x *execution) endWithStatus(end metadb.RunEnd) {
	r, l, runID := x.r, x.l, x.run.RunID
	if l.Resumable() {
		done, err := r.out.WriteNowWith(x.ctx, l, "end", json.RawMessage("null"), func(ctx context.Context, batches []stream.Batch, channel string, payloads []string) error {
			return r.DB.SetRunEndEvents(ctx, runID, end, rows(batches), channel, payloads)
		})
		if done {
			r.Events.Inc()
			if err != nil { // the outbox writes the events again with its next batch
				_ = r.DB.SetRunEnd(x.ctx, runID, end)
			}
			return
		}
	}
	x.emit("end", nil)
	_ = r.DB.SetRunEnd(x.ctx, runID, end)
}

// writeStatus ends the stream of a run that ended and writes the statuses of the run and its
// thread. A finished temporary thread goes
// with its runs: their statuses need no writing first, unless other replicas may read them
// meanwhile; it is hidden from the API from here, before anyone is told the run ended, and
// handed to the sweeper when exec ends.
func (x *execution) writeStatus() {
	r, run, ctx := x.r, x.run, x.ctx
	end := x.runEnd()
	switch {
	case x.status == Pending && errors.Is(x.cause, errLeaseLost):
		// Another worker executes it now, and writes its progress.
		_ = r.DB.SetRunStatus(ctx, run.RunID, Pending)
	case x.status == Pending:
		_ = r.DB.SetRunEnd(ctx, run.RunID, end)
	case x.drop && r.Bus == nil:
		// Hidden in this process below, the only one serving the API. With replicas, the
		// others read the record until the sweeper deletes it: it must not say running.
		x.emit("end", nil)
	case errors.Is(x.cause, ErrRollback):
		x.emit("end", nil)
		_ = r.DB.DeleteRun(ctx, run.Tenant, run.RunID)
	default:
		x.endWithStatus(end)
	}
	if x.drop {
		x.leaseGone = true
		r.Hidden.Store(run.ThreadID, struct{}{})
		x.dropThread = func() { r.dropTemporary(run.Tenant, run.ThreadID, run.RunID) }
		return
	}
	if !run.Temporary && x.status != Pending {
		if r.hasWaiting(run.ThreadID) && x.threadStatus == ThreadIdle {
			x.threadStatus = ThreadBusy
		}
		x.record()
		_ = r.DB.SetThreadStatus(ctx, run.Tenant, run.ThreadID, x.threadStatus, x.values, x.interrupts)
		r.ended(run.ThreadID, run.RunID)
	}
}

// report counts and logs the attempt's end, and tells the host how it ended; the thread's
// values come with a run that ended and has a webhook to send them to.
func (x *execution) report() {
	r, run := x.r, x.run
	elapsed := time.Since(x.started)
	r.Finished.WithLabelValues(x.status).Inc()
	r.Seconds.Observe(elapsed.Seconds())
	x.log.Info("run finished", "status", x.status, "thread_status", x.threadStatus, "ms", elapsed.Milliseconds())
	if run.Webhook != "" && x.status != Pending {
		x.record()
	}
	x.at.Report(Outcome{Status: x.status, Err: x.runErr, Interrupted: x.interrupted, Started: x.started, Values: x.values})
}

// requeue returns what exec returns: nil for a run that ended; for one left pending, a
// *Retry, after writing its unwritten events (or giving them up when another worker took
// its lease: that one numbers its events on from those written). The log stays open: the queue
// delivers the run again (at once after a shutdown, so that another replica may take it; at the
// next start otherwise).
func (x *execution) requeue() error {
	if x.status != Pending {
		return nil
	}
	if errors.Is(x.cause, errLeaseLost) {
		x.r.out.Discard(x.l)
	} else {
		x.r.out.Sync(x.ctx, x.l)
	}
	x.closeLog = func() {}
	if x.retry == nil {
		x.retry = &Retry{After: 0, Reason: x.cause}
	}
	return x.retry
}
