package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/server/internal/lcstream"
	"github.com/trellis-go/trellis/server/internal/lcwire"
	"github.com/trellis-go/trellis/server/internal/stream"
	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/tool"
)

// exec executes one run; the queue calls it. It returns a *RetryError when the run should be
// delivered again later (another worker holds it, its tenant is at its limit, or it failed with
// a transient error), nil otherwise.
func (r *runner) exec(qctx context.Context, runID string) error {
	ctx := context.WithoutCancel(qctx)
	run, err := r.due(ctx, runID)
	if run == nil {
		return err
	}
	leave, err := r.enterTenant(run.tenant)
	if err != nil {
		return err
	}
	defer leave()
	x, err := r.claim(ctx, run)
	if x == nil {
		return err
	}
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
	r   *runner
	ctx context.Context // the queue's, without its cancellation: the run's writes use it
	run *Run
	log *slog.Logger
	// owner is the lease's owner (this process's instance and the attempt); attempt counts the
	// claims of the run, this one included.
	owner   string
	attempt int

	// Set by start.
	pt          *progressTracker
	runCtx      context.Context // the graph's; cancelled with a cause (see settle)
	cancel      context.CancelCauseFunc
	stopOnQueue func() bool
	timer       *time.Timer // Config.RunTimeout's
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
	retry        error // the *RetryError of a transient failure

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

// due loads a queued run and returns it when it is to execute now. Otherwise it returns nil
// and what exec returns: nil for a run that vanished or already ended (its thread goes on to
// its next run), a *RetryError for a run created with after_seconds that is not due yet (it
// waits pending and unclaimed).
func (r *runner) due(ctx context.Context, runID string) (*Run, error) {
	run, err := r.meta.runByID(ctx, runID)
	if err != nil {
		r.log.Warn("queued run vanished", "run_id", runID, "err", err)
		return nil, nil
	}
	if run.Status != RunPending && run.Status != RunRunning {
		r.released(run.ThreadID, runID)
		return nil, nil
	}
	if run.Kwargs != nil && run.Kwargs.StartAfter > 0 {
		if wait := time.Until(fromMS(run.Kwargs.StartAfter)); wait > 0 {
			return nil, &RetryError{After: wait, Reason: errScheduled}
		}
	}
	return run, nil
}

// enterTenant counts a run among its tenant's executing in this process, and returns the func
// that uncounts it; a tenant at Config.MaxRunsPerTenant gets a *RetryError instead.
func (r *runner) enterTenant(tenant string) (leave func(), err error) {
	lim := r.cfg.MaxRunsPerTenant
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
		return nil, &RetryError{After: 200 * time.Millisecond, Reason: errTenantBusy}
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
// the database (see claimRun). It returns the execution, or nil and what exec returns: a
// *RetryError when the claim was refused or failed, nil when the run has been attempted too
// often (failed by giveUp).
func (r *runner) claim(ctx context.Context, run *Run) (*execution, error) {
	log := r.log.With("run_id", run.RunID, "thread_id", run.ThreadID, "tenant", run.tenant)
	owner := r.instance + "/" + uuid.NewString()
	attempt, refused, err := r.meta.claimRun(ctx, run, owner, 3*r.cfg.Heartbeat, r.cfg.MaxRunsPerTenant)
	if err != nil {
		log.Warn("cannot claim run; retrying", "err", err)
		return nil, &RetryError{After: time.Second, Reason: err}
	}
	if refused != nil {
		return nil, refused
	}
	if attempt > r.cfg.MaxRunAttempts {
		r.giveUp(ctx, run, log, owner, attempt)
		return nil, nil
	}
	return &execution{r: r, ctx: ctx, run: run, log: log, owner: owner, attempt: attempt}, nil
}

// giveUp fails a run claimed more than Config.MaxRunAttempts times: its stream ends with an
// error, its thread's status is error, and its lease and thread slot are let go.
func (r *runner) giveUp(ctx context.Context, run *Run, log *slog.Logger, owner string, attempt int) {
	log.Error("run gave up after too many attempts", "attempts", attempt-1)
	why := fmt.Sprintf("run was attempted %d times (its worker died or it failed transiently each time); giving up", attempt-1)
	l := r.hub.Open(run.RunID)
	raw, _ := json.Marshal(map[string]any{"error": "TooManyAttempts", "message": "server: " + why})
	r.persistAndAppend(ctx, l, run, "error", raw)
	r.persistAndAppend(ctx, l, run, "end", json.RawMessage("null"))
	_ = r.meta.setRunEnd(ctx, run.RunID, runEnd{status: RunError, progress: run.Progress, lastError: why})
	_ = r.meta.SetThreadStatus(ctx, run.tenant, run.ThreadID, ThreadError, nil, nil)
	_ = r.meta.ReleaseLease(ctx, run.RunID, owner)
	r.release(run.ThreadID, run.RunID)
	l.Close()
}

// start makes the run executing here: its progress is followed (and readable live in this
// process until its record has the final one); its context is cancelled by a cancel, by the
// queue stopping, by Config.RunTimeout, or by its lease going to another worker (the lease is
// renewed with every other run's each heartbeat, engine.Leases); it is counted active.
func (x *execution) start(qctx context.Context) {
	r := x.r
	x.pt = r.track(x.run, x.attempt)
	x.runCtx, x.cancel = context.WithCancelCause(x.ctx)
	x.stopOnQueue = context.AfterFunc(qctx, func() { x.cancel(errShutdownCancel) })
	if t := r.cfg.RunTimeout; t > 0 {
		x.timer = time.AfterFunc(t, func() { x.cancel(&RunTimeoutError{Timeout: t}) })
	}
	r.leases.Hold(x.run.RunID, x.owner, func() { x.cancel(errLeaseLost) })
	x.act = &activeRun{cancel: x.cancel, done: make(chan struct{})}
	r.mu.Lock()
	r.active[x.run.RunID] = x.act
	r.mu.Unlock()
	x.started = time.Now()
	r.metrics.runsActive.Inc()
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
	r.metrics.runsActive.Dec()
	r.mu.Lock()
	delete(r.active, runID)
	r.mu.Unlock()
	close(x.act.done)
	if !x.leaseGone {
		_ = r.meta.ReleaseLease(x.ctx, runID, x.owner)
	}
	if !x.keepSlot {
		r.released(x.run.ThreadID, runID)
	}
	// The log closes last, so that whoever waits on it (wait, join, a stream's end) finds the
	// run's and the thread's statuses written and the thread free for the next run.
	x.closeLog()
	// A finished temporary thread is nobody's to wait for: it goes after. A waiter that came
	// after its final state was skipped (see prepareOutput) gets it made before the thread goes.
	if x.dropThread != nil {
		if x.lazyOutput && r.waited(runID) {
			_ = x.l.Result()
		}
		x.dropThread() // the sweeper drops the lease once the record is gone
	}
	if x.timer != nil {
		x.timer.Stop()
	}
	r.untrack(runID)
}

// openLog opens the run's log. Its events are numbered on from those an earlier attempt
// persisted: a resumable run's (every run's, with a bus) are in the database.
func (x *execution) openLog() {
	r, runID := x.r, x.run.RunID
	l := r.hub.Open(runID)
	l.SetResumable(x.run.Kwargs.Resumable || r.bus != nil)
	if l.TakeMirror() && x.attempt > 1 {
		// This process followed the run while another executed it; the database has every
		// event that was shown, and the numbering continues from there. (On a first attempt
		// no process executed it before: there is nothing to read.)
		if evs, err := r.meta.loadEvents(x.ctx, runID, 0); err == nil {
			l.Restore(evs, true)
		}
	} else if l.Resumable() && l.Last() == 0 {
		// A restarted run continues the event numbering of the stream it had persisted.
		if evs, err := r.meta.loadEvents(x.ctx, runID, 0); err == nil && len(evs) > 0 {
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
			r.metrics.events.Inc()
			l.AppendTail(event, tok.Head, tok.Tail)
			return
		}
		r.persistAndAppend(x.ctx, l, x.run, event, tok.Join())
		return
	}
	raw, err := json.Marshal(data)
	if err != nil {
		raw, _ = json.Marshal(map[string]any{"error": "EncodeError", "message": err.Error()})
		event = "error"
	}
	r.persistAndAppend(x.ctx, l, x.run, event, raw)
}

// begin marks the run's thread busy and starts its stream with the metadata event. The claim
// made the run's status running. A temporary thread (a stateless run's) is nobody's to look at
// and goes when the run ends: it is not marked busy.
func (x *execution) begin() {
	if !x.run.Kwargs.Temporary {
		_ = x.r.meta.SetThreadBusy(x.ctx, x.run.tenant, x.run.ThreadID)
	}
	x.log.Info("run started", "assistant_id", x.run.AssistantID)
	x.emit("metadata", map[string]any{"run_id": x.run.RunID, "thread_id": x.run.ThreadID, "attempt": x.attempt})
}

// prepareGraph finds the run's graph, and the thread's newest checkpoint before the run: a
// temporary thread has none on its first attempt.
func (x *execution) prepareGraph() {
	a, err := x.r.assistants.assistant(x.run.AssistantID)
	if err != nil { // a created assistant deleted while its run waited
		x.log.Warn("run's assistant is gone; failing the run", "assistant_id", x.run.AssistantID, "err", err)
		a = &Assistant{graph: goneGraph{err}}
	}
	x.g = a.graph
	if x.run.Kwargs.Temporary && x.attempt == 1 {
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
	err := x.r.runGraph(x.runCtx, x.run, x.g, x.headBefore, x.pt, x.emit)
	x.r.leases.Hold(x.run.RunID, x.owner, nil)
	return err
}

// settle decides the run's outcome from the graph's error and the cause of its context's end:
// the statuses of the run and its thread, whether the run keeps its thread's slot, and the retry
// of a transient failure. A failed run's stream gets the error.
func (x *execution) settle(runErr error) {
	x.cause = context.Cause(x.runCtx)
	if te := (*RunTimeoutError)(nil); errors.As(x.cause, &te) {
		runErr = te
	}
	x.runErr = runErr
	x.status, x.threadStatus = RunSuccess, ThreadIdle
	var ie *graph.InterruptedError
	switch cause := x.cause; {
	case runErr == nil:
	case errors.As(runErr, &ie):
		x.threadStatus, x.interrupted = ThreadInterrupted, true
	case errors.Is(cause, errShutdownCancel), errors.Is(cause, errLeaseLost):
		// Left pending: whoever takes it next continues from its last checkpoint.
		x.status = RunPending
		x.keepSlot = errors.Is(cause, errLeaseLost)
	case cause == nil && transient(runErr) && x.attempt < x.r.cfg.MaxRunAttempts:
		x.status = RunPending
		x.keepSlot = true
		backoff := min(time.Duration(1<<min(x.attempt-1, 6))*time.Second, time.Minute)
		x.retry = &RetryError{After: backoff, Reason: runErr}
		x.log.Warn("run failed with a transient error; retrying from its last checkpoint", "err", runErr, "attempt", x.attempt, "after", backoff.String())
	case errors.Is(cause, errCancelInterrupt), errors.Is(cause, errCancelRollback):
		x.status = RunInterrupted
	default:
		x.status, x.threadStatus = RunError, ThreadError
		x.emit("error", errorJSON(runErr))
	}
}

// undoIfRolledBack restores the thread's state from before a run cancelled with rollback.
func (x *execution) undoIfRolledBack() {
	if errors.Is(x.cause, errCancelRollback) {
		x.r.rollback(x.ctx, x.run, x.g, x.headBefore)
	}
}

// prepareOutput gives the log the run's output (what wait and join answer), ends the stream of a
// run that ended, and has end close the log. A finished temporary thread goes with its runs
// (drop); its final state is read only for a waiter of its output (counted in this process: with
// a bus they may be anywhere) or a webhook: a streamed stateless run's is never read. Otherwise a
// waiter that comes late reads it from the thread before the thread goes.
func (x *execution) prepareOutput() {
	r, l, g, run := x.r, x.l, x.g, x.run
	x.drop = run.Kwargs.Temporary && x.status != RunPending
	if x.drop && x.status != RunError && run.Kwargs.Webhook == "" && r.bus == nil && !r.waited(run.RunID) {
		x.lazyOutput = true
		ctx := context.WithoutCancel(x.ctx)
		l.SetOutputFunc(func() any {
			snap, err := g.State(ctx, checkpoint.Ref{ThreadID: run.ThreadID})
			if err != nil {
				return nil
			}
			return valuesWithInterrupts(snap)
		})
	} else if snap, err := g.State(x.ctx, checkpoint.Ref{ThreadID: run.ThreadID}); err == nil {
		x.final = snap
		if x.status != RunError {
			l.SetOutputFunc(func() any { return valuesWithInterrupts(snap) })
		}
	}
	if x.status == RunError {
		l.SetOutput(map[string]any{"__error__": errorJSON(x.runErr)})
	}
	if x.status != RunPending {
		x.emit("end", nil)
	}
	x.closeLog = l.Close
}

// record makes the thread's record (values and interrupts, in JSON) from its final state, once.
// It is made only for the thread's row or a webhook: a finished stateless run, whose thread
// goes, needs neither.
func (x *execution) record() {
	if x.final != nil && x.values == nil {
		x.values, x.interrupts = threadRecord(x.final)
	}
}

// runEnd is what the run's record gets when the attempt ends: its status, its final progress,
// and the error of a failed run or of one left pending (with a retry's next attempt).
func (x *execution) runEnd() runEnd {
	end := runEnd{status: x.status, progress: x.pt.finish()}
	switch {
	case x.status == RunError:
		end.lastError = x.runErr.Error()
	case x.status == RunPending && x.retry != nil:
		var re *RetryError
		if errors.As(x.retry, &re) {
			end.lastError, end.nextAttempt = x.runErr.Error(), time.Now().Add(re.After)
		}
	case x.status == RunPending && x.cause != nil:
		end.lastError = x.cause.Error()
	}
	return end
}

// writeStatus writes the statuses of the run and its thread. A finished temporary thread goes
// with its runs: their statuses need no writing first, unless other replicas may read them
// meanwhile; it is hidden from the API from here, before anyone is told the run ended, and
// handed to the sweeper when exec ends.
func (x *execution) writeStatus() {
	r, run, ctx := x.r, x.run, x.ctx
	end := x.runEnd()
	switch {
	case x.status == RunPending && errors.Is(x.cause, errLeaseLost):
		// Another worker executes it now, and writes its progress.
		_ = r.meta.SetRunStatus(ctx, run.RunID, RunPending)
	case x.status == RunPending:
		_ = r.meta.setRunEnd(ctx, run.RunID, end)
	case x.drop && r.bus == nil:
		// Hidden in this process below, the only one serving the API. With replicas, the
		// others read the record until the sweeper deletes it: it must not say running.
	case errors.Is(x.cause, errCancelRollback):
		_ = r.meta.DeleteRun(ctx, run.tenant, run.RunID)
	default:
		_ = r.meta.setRunEnd(ctx, run.RunID, end)
	}
	if x.drop {
		x.leaseGone = true
		r.meta.hidden.Store(run.ThreadID, struct{}{})
		x.dropThread = func() { r.dropTemporary(run.tenant, run.ThreadID, run.RunID) }
		return
	}
	if !run.Kwargs.Temporary && x.status != RunPending {
		if r.hasWaiting(run.ThreadID) && x.threadStatus == ThreadIdle {
			x.threadStatus = ThreadBusy
		}
		x.record()
		_ = r.meta.SetThreadStatus(ctx, run.tenant, run.ThreadID, x.threadStatus, x.values, x.interrupts)
		r.ended(run.ThreadID, run.RunID)
	}
}

// report counts and logs the attempt's end, and sends a run that ended to its webhook.
func (x *execution) report() {
	r, run := x.r, x.run
	elapsed := time.Since(x.started)
	r.metrics.runsFinished.WithLabelValues(x.status).Inc()
	r.metrics.runSeconds.Observe(elapsed.Seconds())
	x.log.Info("run finished", "status", x.status, "thread_status", x.threadStatus, "ms", elapsed.Milliseconds())
	if run.Kwargs.Webhook != "" && x.status != RunPending {
		x.record()
		r.webhook(run, x.status, x.started, x.values, x.runErr, x.interrupted)
	}
}

// requeue returns what exec returns: nil for a run that ended; for one left pending, a
// *RetryError, after writing its unwritten events (or giving them up when another worker took
// its lease: that one numbers its events on from those written). The log stays open: the queue
// delivers the run again (at once after a shutdown, so that another replica may take it; at the
// next start otherwise).
func (x *execution) requeue() error {
	if x.status != RunPending {
		return nil
	}
	if errors.Is(x.cause, errLeaseLost) {
		x.r.out.Discard(x.l)
	} else {
		x.r.out.Sync(x.ctx, x.l)
	}
	x.closeLog = func() {}
	if x.retry == nil {
		x.retry = &RetryError{After: 0, Reason: x.cause}
	}
	return x.retry
}

// runGraph streams the run's graph from where the run starts, under the run's identity, span
// and budgets, emitting the converted events; it returns the graph's error.
func (r *runner) runGraph(ctx context.Context, run *Run, g graph.Runnable, headBefore string, pt *progressTracker, emit func(string, any)) error {
	kw := run.Kwargs
	opts, err := runOptions(run, g)
	if err != nil {
		return err
	}
	input, opts, finished, err := r.startFrom(ctx, run, g, headBefore, opts)
	if err != nil || finished {
		return err
	}
	ctx = withRunIdentity(ctx, run, r.store)
	runMeta, tags := r.observer.streamMetadata(run)
	conv := lcstream.New(kw.StreamMode, kw.Subgraphs, runMeta, tags)
	if kw.Subgraphs {
		opts = append(opts, graph.WithSubgraphs())
	}
	ctx, opts, observed := r.observer.observeRun(ctx, run, opts) // span and budgets (telemetry.go, budget.go)
	wantsProgress := slices.Contains(kw.StreamMode, progressMode)
	return observed(streamGraph(ctx, g, input, opts, conv, pt, wantsProgress, emit))
}

// runOptions are a run's graph options: its thread, its stream modes, its metadata and config
// (runMetadata, runConfigurable), its recursion limit, breakpoints ("*": every node), checkpoint
// and durability. The root graph's task events make the run's progress (progress.go): they are
// always streamed, and reach the stream only in the modes that ask for them.
func runOptions(run *Run, g graph.Runnable) ([]graph.RunOption, error) {
	kw := run.Kwargs
	gmodes, err := parseStreamModes(kw.StreamMode)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(gmodes, graph.ModeTasks) {
		gmodes = append(gmodes, graph.ModeTasks)
	}
	opts := []graph.RunOption{graph.WithThread(run.ThreadID), graph.WithStreamModes(gmodes...), graph.WithMetadata(runMetadata(run)), graph.WithConfig(runConfigurable(run))}
	if n, ok := kw.Config["recursion_limit"].(float64); ok && n > 0 {
		opts = append(opts, graph.WithRecursionLimit(int(n)))
	}
	expand := func(nodes []string) []string {
		if slices.Contains(nodes, "*") {
			return g.Nodes()
		}
		return nodes
	}
	if len(kw.InterruptBefore) > 0 {
		opts = append(opts, graph.InterruptBefore(expand(kw.InterruptBefore)...))
	}
	if len(kw.InterruptAfter) > 0 {
		opts = append(opts, graph.InterruptAfter(expand(kw.InterruptAfter)...))
	}
	if kw.CheckpointID != "" {
		opts = append(opts, graph.FromCheckpoint(kw.CheckpointID))
	}
	if kw.Durability != "" {
		opts = append(opts, graph.WithDurability(graph.Durability(kw.Durability)))
	}
	return opts, nil
}

// runMetadata is the metadata a run's checkpoints carry: the request's, with the run's, its
// assistant's and its user's IDs.
func runMetadata(run *Run) map[string]any {
	md := map[string]any{}
	for k, v := range run.Metadata {
		md[k] = v
	}
	md["run_id"], md["assistant_id"], md["user_id"] = run.RunID, run.AssistantID, run.Kwargs.User
	return md
}

// runConfigurable is the config a run's nodes see: the request's config.configurable and
// context, with the IDs of the thread, the run, the user and the tenant.
func runConfigurable(run *Run) map[string]any {
	kw := run.Kwargs
	cfg := map[string]any{}
	if c, ok := kw.Config["configurable"].(map[string]any); ok {
		for k, v := range c {
			cfg[k] = v
		}
	}
	for k, v := range kw.Context {
		cfg[k] = v
	}
	cfg["thread_id"], cfg["run_id"], cfg["user_id"], cfg["tenant"] = run.ThreadID, run.RunID, kw.User, run.tenant
	return cfg
}

// startFrom decides where the run starts, and returns its input and options. A run a previous
// process started continues from its last checkpoint instead of applying its input again
// (finished: that checkpoint has nothing left to run). Otherwise the run's command applies
// (applyCommand); without one, no input for a thread that waits (at a breakpoint, say) continues
// it, as LangGraph does with input None, and on a thread with nothing scheduled it starts from
// empty input.
func (r *runner) startFrom(ctx context.Context, run *Run, g graph.Runnable, headBefore string, opts []graph.RunOption) (input json.RawMessage, _ []graph.RunOption, finished bool, err error) {
	kw := run.Kwargs
	if headBefore != "" {
		if snap, err := g.State(ctx, checkpoint.Ref{ThreadID: run.ThreadID}); err == nil && snap.Metadata["run_id"] == run.RunID {
			if len(snap.Next) == 0 {
				return nil, opts, true, nil
			}
			return nil, append(opts, graph.Continue()), false, nil
		}
	}
	if kw.Command != nil {
		opts, err := r.applyCommand(ctx, run, g, kw.Command, opts)
		return nil, opts, false, err
	}
	if isNullJSON(kw.Input) && headBefore != "" {
		if snap, err := g.State(ctx, checkpoint.Ref{ThreadID: run.ThreadID, CheckpointID: kw.CheckpointID}); err == nil && len(snap.Next) > 0 {
			return nil, append(opts, graph.Continue()), false, nil
		}
	}
	return kw.Input, opts, false, nil
}

// applyCommand applies a run's command and returns the options that continue the thread:
// command.goto applies the update and runs the nodes named next (api_conf.go); otherwise the
// update is applied, and the resume value (a map of interrupt IDs answers each interrupt by ID)
// or nothing continues the thread.
func (r *runner) applyCommand(ctx context.Context, run *Run, g graph.Runnable, c *RunCommand, opts []graph.RunOption) ([]graph.RunOption, error) {
	if !isNullJSON(c.Goto) {
		if err := applyGoto(ctx, g, run.ThreadID, c); err != nil {
			return nil, err
		}
		return append(opts, graph.Continue()), nil
	}
	if len(c.Update) > 0 && string(c.Update) != "null" {
		if _, err := g.UpdateState(ctx, checkpoint.Ref{ThreadID: run.ThreadID}, c.Update, ""); err != nil {
			return nil, fmt.Errorf("command.update: %w", err)
		}
	}
	if len(c.Resume) == 0 || string(c.Resume) == "null" {
		return append(opts, graph.Continue()), nil
	}
	var v any
	if err := json.Unmarshal(c.Resume, &v); err != nil {
		return nil, fmt.Errorf("command.resume: %w", err)
	}
	if m, ok := v.(map[string]any); ok && r.allInterruptIDs(ctx, g, run.ThreadID, m) {
		return append(opts, graph.ResumeMap(m)), nil
	}
	return append(opts, graph.Resume(v)), nil
}

// withRunIdentity gives ctx the run's principal and its tools' call info. The run's store is
// its tenant's (tenantstore.go): a graph compiled with Deps.Store finds the tenant in ctx, a
// tool gets the tenant's view of st in its CallInfo.
func withRunIdentity(ctx context.Context, run *Run, st store.Store) context.Context {
	kw := run.Kwargs
	who := Principal{User: kw.User, Tenant: run.tenant, Permissions: kw.Permissions, PerUser: kw.PerUser}
	ctx = withRunPrincipal(ctx, who)
	info := tool.CallInfo{User: kw.User, Tenant: run.tenant, Permissions: kw.Permissions, ThreadID: run.ThreadID, RunID: run.RunID, Store: principalStore(st, who)}
	return tool.WithCallInfo(ctx, info)
}

// streamGraph streams the graph and emits its events as conv converts them, and returns the
// graph's error. The root graph's task events update the run's progress (and emit it when
// wantsProgress); message tokens, in a stream of tuples only, are encoded once each
// (conv.Token);
// an interrupt ends a values stream with the interrupts the thread waits on.
func streamGraph(ctx context.Context, g graph.Runnable, input json.RawMessage, opts []graph.RunOption, conv *lcstream.Converter, pt *progressTracker, wantsProgress bool, emit func(string, any)) error {
	var runErr error
	for ev, err := range g.Stream(ctx, input, opts...) {
		if err != nil {
			runErr = err
			break
		}
		if ev.Mode == graph.ModeTasks && len(ev.NS) == 0 {
			if n, ok := pt.observe(ev); ok && wantsProgress {
				emit(progressMode, pt.progressEvent(n))
			}
		}
		if data, ok := conv.Token(ev); ok {
			emit(conv.Name("messages", ev.NS), data)
			continue
		}
		for _, f := range conv.Convert(ev) {
			emit(f.Event, f.Data)
		}
	}
	var ie *graph.InterruptedError
	if errors.As(runErr, &ie) && conv.Wants("values") {
		emit("values", map[string]any{"__interrupt__": lcwire.Interrupts(ie.Interrupts)})
	}
	return runErr
}
