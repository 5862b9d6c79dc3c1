package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/trellis-go/trellis/internal/netguard"
	"github.com/trellis-go/trellis/server/internal/engine"
	"github.com/trellis-go/trellis/server/internal/lcwire"
	"github.com/trellis-go/trellis/server/internal/stream"

	"github.com/google/uuid"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/store"
)

// Why a run's context was cancelled.
var (
	errCancelInterrupt = errors.New("server: run cancelled (interrupt)")
	errCancelRollback  = errors.New("server: run cancelled (rollback)")
	errShutdownCancel  = errors.New("server: run stopped by shutdown; it resumes from its last checkpoint at the next start")
	errLeaseLost       = errors.New("server: run's lease was taken by another worker (this one missed its heartbeats)")
	errLeaseHeld       = errors.New("server: another worker holds the run's lease")
	errTenantBusy      = errors.New("server: the run's tenant is at its concurrency limit in this process")
	errScheduled       = errors.New("server: the run is due later (after_seconds)")
)

// maxAfterSeconds bounds after_seconds: a run may be scheduled up to a year ahead.
const maxAfterSeconds = 366 * 24 * 3600

// RunTimeoutError ends a run that exceeded Config.RunTimeout.
type RunTimeoutError struct{ Timeout time.Duration }

func (e *RunTimeoutError) Error() string {
	return fmt.Sprintf("server: run exceeded its timeout of %s (raise Config.RunTimeout / --run-timeout, or split the work)", e.Timeout)
}

// runCreate is the body of every run-creating route.
type runCreate struct {
	AssistantID     string          `json:"assistant_id"`
	Input           json.RawMessage `json:"input"`
	Command         *RunCommand     `json:"command"`
	Config          map[string]any  `json:"config"`
	Context         map[string]any  `json:"context"`
	Metadata        map[string]any  `json:"metadata"`
	StreamMode      json.RawMessage `json:"stream_mode"`
	StreamSubgraphs bool            `json:"stream_subgraphs"`
	StreamResumable bool            `json:"stream_resumable"`
	InterruptBefore json.RawMessage `json:"interrupt_before"`
	InterruptAfter  json.RawMessage `json:"interrupt_after"`
	CheckpointID    string          `json:"checkpoint_id"`
	Checkpoint      *struct {
		CheckpointID string `json:"checkpoint_id"`
	} `json:"checkpoint"`
	Webhook           string   `json:"webhook"`
	MultitaskStrategy string   `json:"multitask_strategy"`
	OnCompletion      string   `json:"on_completion"`
	OnDisconnect      string   `json:"on_disconnect"`
	IfNotExists       string   `json:"if_not_exists"`
	AfterSeconds      *float64 `json:"after_seconds"`
	Durability        string   `json:"durability"`
	// Priority is low, normal (the default) or high: see Priority.
	Priority string `json:"priority"`
	// CheckpointDuring is the older form of durability: false means exit.
	CheckpointDuring *bool `json:"checkpoint_during"`
	// wait: the request waits for the run's output (POST /runs/wait), counted as a waiter
	// from before the run can start (see runner.waitFor).
	wait bool
}

// stringOrList reads a field that may be a string or a list of strings.
func stringOrList(field string, raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, badRequest("send a string or a list of strings", "field %q must be a string or a list of strings", field)
	}
	return many, nil
}

type activeRun struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// runner creates, schedules, executes and cancels runs. It holds no *Server: what it uses of
// the server comes in its runnerDeps, given to newRunner.
type runner struct {
	runnerDeps
	q      Queue
	mu     sync.Mutex
	active map[string]*activeRun
	// threads keeps each thread's runs in this process one at a time, in order (guarded by mu).
	threads *engine.Slots[Priority]
	closing bool
	bg      sync.WaitGroup // webhooks
	http    *http.Client
	// tenants counts the runs executing in this process per tenant.
	tenants map[string]int
	// instance names this process in run leases.
	instance string
	stopReap context.CancelFunc
	reaping  sync.WaitGroup
	// leases are the leases of the runs executing here, renewed together every heartbeat
	// (engine.Leases); out writes and publishes stream events (stream.Outbox; the logs are
	// stream.Log).
	leases *engine.Leases
	out    *stream.Outbox
	// waiters counts, per run, the requests waiting for its output (wait, join): a finished
	// stateless run reads its final state for an output only if someone waits (see exec).
	waiters map[string]int
	// sweep deletes finished stateless runs' threads in batches (see dropTemporary).
	sweep *engine.Batcher[sweepItem]
	// progress follows the runs executing here (progress.go).
	progress map[string]*progressTracker
}

// runnerDeps is what the runner uses of the server: the metadata database, the stream hub and
// bus, the log and metrics, the settings it reads, and narrow views of the rest.
type runnerDeps struct {
	meta *metaStore
	// saver is the server's checkpoint saver: the sweeper deletes finished stateless runs'
	// threads through it.
	saver   checkpoint.Saver
	hub     *stream.Hub
	bus     *stream.Bus // nil: this process is the only one (SQLite)
	log     *slog.Logger
	metrics *metrics
	// store is the server's shared store; a run gets its tenant's view of it.
	store store.Store
	cfg   runnerConfig
	// assistants finds a run's assistant and a thread's graph.
	assistants assistantSource
	// observer gives runs their trace context, span, budgets and stream metadata.
	observer runObserver
}

// runnerConfig holds the settings of Config the runner reads.
type runnerConfig struct {
	Heartbeat           time.Duration
	RunTimeout          time.Duration
	WebhookTimeout      time.Duration
	WebhookAllowPrivate bool
	MaxRunsPerTenant    int
	MaxRunAttempts      int
	// Budget is the server's limits of a run's steps and tokens (zero: none).
	Budget runBudget
}

// runnerConfigOf picks the runner's settings out of the server's.
func runnerConfigOf(c Config) runnerConfig {
	return runnerConfig{Heartbeat: c.Heartbeat, RunTimeout: c.RunTimeout, WebhookTimeout: c.WebhookTimeout,
		WebhookAllowPrivate: c.WebhookAllowPrivate, MaxRunsPerTenant: c.MaxRunsPerTenant, MaxRunAttempts: c.MaxRunAttempts,
		Budget: runBudget{steps: c.MaxRunSteps, tokens: c.MaxRunTokens}}
}

// assistantSource finds assistants for the runner: the server's registered and created ones
// (Server implements it with assistant, assistantFor and graphOf).
type assistantSource interface {
	// assistant finds an assistant of any tenant by ID, with its graph.
	assistant(id string) (*Assistant, error)
	// assistantFor finds an assistant the tenant may run.
	assistantFor(ctx context.Context, tenant, id string) (*Assistant, error)
	// graphOf picks the graph whose state a thread holds, or nil.
	graphOf(t *Thread) graph.Runnable
}

// runObserver is the telemetry of runs: runTelemetry (telemetry.go).
type runObserver interface {
	// traceContextOf returns the trace context of the request creating a run.
	traceContextOf(ctx context.Context) map[string]string
	// observeRun starts a run's span and applies its budget; done ends them with its outcome.
	observeRun(ctx context.Context, run *Run, opts []graph.RunOption) (context.Context, []graph.RunOption, func(error) error)
	// streamMetadata is the metadata a run's message chunks and callback events carry.
	streamMetadata(run *Run) (md map[string]any, tags []string)
}

func newRunner(d runnerDeps, q Queue) *runner {
	r := &runner{runnerDeps: d, q: q, active: map[string]*activeRun{}, threads: engine.NewSlots[Priority](),
		http:    &http.Client{Timeout: d.cfg.WebhookTimeout, Transport: netguard.Policy{AllowPrivate: d.cfg.WebhookAllowPrivate}.Transport()},
		tenants: map[string]int{}, instance: uuid.NewString(), waiters: map[string]int{},
		progress: map[string]*progressTracker{}}
	r.out = stream.NewOutbox(d.meta, d.bus, d.bus != nil && d.bus.Kind() == "postgres" && d.meta.Postgres(), d.log)
	r.leases = engine.NewLeases(d.cfg.Heartbeat, func(ctx context.Context, ids []string) (map[string]bool, error) {
		return d.meta.RenewLeases(ctx, ids, r.instance, 3*d.cfg.Heartbeat)
	}, d.log)
	r.sweep = engine.NewBatcher(sweepInterval, sweepBatch, "finished stateless runs' threads", r.sweepThreads, d.log)
	q.Start(r.exec)
	return r
}

// reap re-schedules, every heartbeat, the runs whose worker stopped renewing its lease (a
// process that died, on this machine or another sharing the database).
func (r *runner) reap() {
	ctx, cancel := context.WithCancel(context.Background())
	r.stopReap = cancel
	r.reaping.Add(1)
	go func() {
		defer r.reaping.Done()
		t := time.NewTicker(r.cfg.Heartbeat)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			r.hub.Sweep()
			runs, err := r.meta.expiredLeases(ctx)
			if err != nil {
				if ctx.Err() == nil {
					r.log.Warn("cannot look for runs whose worker died", "err", err)
				}
				continue
			}
			for _, run := range runs {
				if r.scheduled(run.ThreadID, run.RunID) || r.executing(run.RunID) || r.leases.Holding(run.RunID) {
					// This process is alive and has it: its renewal was only late (a busy
					// database); the next one renews it.
					continue
				}
				r.log.Warn("run's worker stopped heartbeating; resuming it from its last checkpoint", "run_id", run.RunID, "thread_id", run.ThreadID)
				_ = r.meta.SetRunLastError(ctx, run.RunID, "the run's worker stopped heartbeating (its process died or hung); resumed from its last checkpoint")
				if l := r.hub.Get(run.RunID); l == nil {
					r.hub.Open(run.RunID).SetResumable(run.Kwargs.Resumable)
				}
				// Straight to the queue, not behind this process's runs of the thread: it is
				// older than they are, and they wait for it (see claimRun).
				if err := r.enqueue(ctx, run.RunID, runPriority(run)); err != nil && ctx.Err() == nil {
					r.log.Warn("cannot resume run", "run_id", run.RunID, "err", err)
				}
			}
			r.adoptStranded(ctx)
		}
	}()
}

// executing reports whether the run executes in this process.
func (r *runner) executing(runID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.active[runID] != nil
}

// scheduled reports whether this process already holds the run in its thread's slot.
func (r *runner) scheduled(threadID, runID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.threads.Scheduled(threadID, runID)
}

// recover re-schedules runs a previous process left pending or running.
func (r *runner) recover(ctx context.Context) error {
	runs, err := r.meta.unfinishedRuns(ctx)
	if err != nil {
		return fmt.Errorf("server: recover runs: %w", err)
	}
	for _, run := range runs {
		if _, err := r.assistants.assistant(run.AssistantID); err != nil {
			r.log.Warn("run left unfinished by a previous process has an unknown assistant; marking it failed", "run_id", run.RunID, "assistant_id", run.AssistantID)
			_ = r.meta.SetRunStatus(ctx, run.RunID, RunError)
			continue
		}
		r.log.Info("resuming run left unfinished by a previous process", "run_id", run.RunID, "thread_id", run.ThreadID)
		if run.Status == RunRunning {
			_ = r.meta.SetRunLastError(ctx, run.RunID, "the server stopped while the run executed; resumed from its last checkpoint")
		}
		l := r.hub.Open(run.RunID)
		l.SetResumable(run.Kwargs.Resumable)
		if err := r.schedule(ctx, run); err != nil {
			return err
		}
	}
	return nil
}

func (r *runner) schedule(ctx context.Context, run *Run) error {
	r.mu.Lock()
	first := r.placeLocked(run)
	r.mu.Unlock()
	if !first {
		return nil
	}
	return r.enqueue(ctx, run.RunID, runPriority(run))
}

// placeLocked puts the run in its thread's slot, and reports whether it is the slot's current
// run (to be enqueued now) rather than waiting behind another. A slot's runs must be in the
// order of their creation (created_at, run_id), the order claimRun enforces: a run placed
// behind a newer one would wait for it while the newer one waits for it.
func (r *runner) placeLocked(run *Run) bool {
	return r.threads.Place(run.ThreadID, run.RunID, runPriority(run))
}

// released frees the thread after its run ended, here and, with replicas, in whichever process
// holds the run in its thread's slot (a process that scheduled it and saw another execute it).
func (r *runner) released(threadID, runID string) {
	r.release(threadID, runID)
	if r.bus != nil {
		if err := r.bus.Publish(context.Background(), stream.Message{Kind: "done", RunID: runID, Thread: threadID}); err != nil {
			r.log.Warn("cannot tell the replicas a run ended", "run_id", runID, "err", err)
		}
	}
}

// ended marks a thread's current run as ended once its statuses are written (engine.Slots.End):
// a client told it finished may start the next run at once.
func (r *runner) ended(threadID, runID string) {
	r.mu.Lock()
	r.threads.End(threadID, runID)
	r.mu.Unlock()
}

// release ends a thread's current run and starts the next waiting one.
func (r *runner) release(threadID, runID string) {
	r.mu.Lock()
	next, prio, ok := r.threads.Release(threadID, runID, r.closing)
	r.mu.Unlock()
	if !ok {
		return
	}
	if err := r.enqueue(context.Background(), next, prio); err != nil {
		r.log.Warn("cannot start queued run", "run_id", next, "thread_id", threadID, "err", err)
	}
}

// cancel stops a run: an executing one through its context, a waiting one by taking it out of
// the thread's queue. With rollback the run is deleted and the thread's state restored.
func (r *runner) cancel(ctx context.Context, tenant, threadID, runID string, action error, wait bool) error {
	run, err := r.meta.getRun(ctx, tenant, threadID, runID)
	if err != nil {
		return err
	}
	if run.Status != RunPending && run.Status != RunRunning {
		return nil
	}
	r.mu.Lock()
	act := r.active[runID]
	if act == nil {
		if r.threads.Unwait(run.ThreadID, runID) {
			r.mu.Unlock()
			r.finishUnstarted(ctx, run, action)
			return nil
		}
		if r.threads.Current(run.ThreadID, runID) && run.Status == RunPending {
			// First in line but not started (scheduled with after_seconds, or its queue job
			// not yet taken): the thread goes on to its next run now, not when the job comes
			// due; the job then finds the run finished (or gone) and does nothing.
			r.mu.Unlock()
			r.finishUnstarted(ctx, run, action)
			r.release(run.ThreadID, runID)
			return nil
		}
	}
	r.mu.Unlock()
	if act == nil && run.Status == RunRunning && r.bus != nil {
		// Executing in another replica: ask it, and wait for the status to change.
		name := "interrupt"
		if action == errCancelRollback {
			name = "rollback"
		}
		if err := r.bus.Publish(ctx, stream.Message{Kind: "cancel", RunID: runID, Action: name}); err != nil {
			return fmt.Errorf("server: cannot reach the replica running %s: %w", runID, err)
		}
		for wait {
			cur, err := r.meta.runByID(ctx, runID)
			if err != nil || (cur.Status != RunPending && cur.Status != RunRunning) {
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

func (r *runner) finishUnstarted(ctx context.Context, run *Run, action error) {
	if action == errCancelRollback {
		_ = r.meta.DeleteRun(ctx, run.tenant, run.RunID)
	} else {
		_ = r.meta.SetRunStatus(ctx, run.RunID, RunInterrupted)
	}
	if l := r.hub.Get(run.RunID); l != nil {
		l.Close()
	}
	r.settleThread(ctx, run.tenant, run.ThreadID)
}

// persistAndAppend numbers an event and shows it to readers; for a resumable run (every run,
// with a bus) the outbox writes it to the database and publishes it to the replicas: a token at
// once for readers and within stream.FlushInterval for the database, any other event after it is
// written (see outbox for why that keeps Last-Event-ID resumption gapless).
func (r *runner) persistAndAppend(ctx context.Context, l *stream.Log, run *Run, event string, raw json.RawMessage) {
	r.metrics.events.Inc()
	if !l.Resumable() {
		l.Append(event, raw)
		return
	}
	if ev := (streamEvent{Event: event}); ev.Token() {
		l.Append(event, raw)
		r.out.Add(l)
		return
	}
	r.out.WriteNow(ctx, l, event, raw)
}

// remoteCancel cancels a run executing in this process at the request of another replica.
func (r *runner) remoteCancel(runID, action string) {
	r.mu.Lock()
	act := r.active[runID]
	r.mu.Unlock()
	if act == nil {
		return
	}
	cause := errCancelInterrupt
	if action == "rollback" {
		cause = errCancelRollback
	}
	act.cancel(cause)
}

// transient reports whether a run's error is worth retrying: a provider's rate limit or server
// error, a failure that was no HTTP answer, or an error that says it is temporary.
func transient(err error) bool {
	if err == nil {
		return false
	}
	var pe *model.ProviderError
	if errors.As(err, &pe) {
		return pe.StatusCode == 0 || pe.StatusCode == http.StatusTooManyRequests || pe.StatusCode >= 500
	}
	var tmp interface{ Temporary() bool }
	if errors.As(err, &tmp) {
		return tmp.Temporary()
	}
	return errors.Is(err, ErrTransient)
}

// waitFor counts a request waiting for runID's output until it calls unwait.
func (r *runner) waitFor(runID string) {
	r.mu.Lock()
	r.waiters[runID]++
	r.mu.Unlock()
}

func (r *runner) unwait(runID string) {
	r.mu.Lock()
	if r.waiters[runID]--; r.waiters[runID] <= 0 {
		delete(r.waiters, runID)
	}
	r.mu.Unlock()
}

// waited reports whether a request in this process waits for runID's output.
func (r *runner) waited(runID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.waiters[runID] > 0
}

func (r *runner) hasWaiting(threadID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.threads.HasWaiting(threadID)
}

// allInterruptIDs reports whether every key of m is the ID of an interrupt the thread waits on,
// in which case a resume map answers each by ID.
func (r *runner) allInterruptIDs(ctx context.Context, g graph.Runnable, threadID string, m map[string]any) bool {
	if len(m) == 0 {
		return false
	}
	snap, err := g.State(ctx, checkpoint.Ref{ThreadID: threadID})
	if err != nil {
		return false
	}
	ids := map[string]bool{}
	for _, t := range snap.Tasks {
		for _, in := range t.Interrupts {
			ids[in.ID] = true
		}
	}
	for k := range m {
		if !ids[k] {
			return false
		}
	}
	return true
}

// rollback restores the thread's state from before the run: its checkpoint from then becomes
// the newest again (as a fork), or the thread's checkpoints go if it had none.
func (r *runner) rollback(ctx context.Context, run *Run, g graph.Runnable, headBefore string) {
	if headBefore == "" {
		_ = g.DeleteThread(ctx, run.ThreadID)
		return
	}
	if _, err := g.UpdateState(ctx, checkpoint.Ref{ThreadID: run.ThreadID, CheckpointID: headBefore}, nil, ""); err != nil {
		r.log.Warn("rollback could not restore the earlier state", "run_id", run.RunID, "thread_id", run.ThreadID, "err", err)
	}
}

// threadValues reads the thread's newest values and waiting interrupts for its record.
func (r *runner) threadValues(ctx context.Context, threadID string, g graph.Runnable) (json.RawMessage, json.RawMessage) {
	snap, err := g.State(ctx, checkpoint.Ref{ThreadID: threadID})
	if err != nil {
		return nil, nil
	}
	return threadRecord(snap)
}

// threadRecord returns the thread's newest values and waiting interrupts for its record.
func threadRecord(snap *graph.StateSnapshot[any]) (json.RawMessage, json.RawMessage) {
	values, _ := json.Marshal(snap.Values)
	ints := map[string]any{}
	for _, t := range snap.Tasks {
		if len(t.Interrupts) > 0 {
			ints[t.ID] = lcwire.Interrupts(t.Interrupts)
		}
	}
	interrupts, _ := json.Marshal(ints)
	return values, interrupts
}

func (r *runner) shutdown(ctx context.Context) {
	r.mu.Lock()
	if r.closing {
		r.mu.Unlock()
		return
	}
	r.closing = true
	r.mu.Unlock()
	if r.stopReap != nil {
		r.stopReap()
		r.reaping.Wait()
	}
	_ = r.q.Close(ctx)
	r.sweep.Stop() // after the runs: it deletes the threads they left, then their leases go
	r.leases.Stop()
	r.out.Close()
	done := make(chan struct{})
	go func() { r.bg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(r.cfg.WebhookTimeout):
	}
}

// waitOutput is what /runs/wait and join return: the thread's newest values, with the waiting
// interrupts under "__interrupt__", or {"__error__": ...} when the run failed.
func (r *runner) waitOutput(ctx context.Context, run *Run, l *stream.Log) any {
	if l != nil {
		if _, done, _ := l.Since(0); done && l.Result() != nil {
			return l.Result()
		}
	}
	a, err := r.assistants.assistant(run.AssistantID)
	if err != nil {
		return nil
	}
	snap, err := a.graph.State(ctx, checkpoint.Ref{ThreadID: run.ThreadID})
	if err != nil {
		return nil
	}
	return valuesWithInterrupts(snap)
}

func valuesWithInterrupts(snap *graph.StateSnapshot[any]) any {
	raw, err := json.Marshal(snap.Values)
	if err != nil {
		return snap.Values
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return snap.Values
	}
	if ins := snap.Interrupts(); len(ins) > 0 {
		m["__interrupt__"] = lcwire.Interrupts(ins)
	}
	return m
}

// busy reports whether the thread has a run executing (and not yet ended) or waiting in this
// process.
func (r *runner) busy(threadID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.threads.Busy(threadID)
}

// A finished stateless run's thread is deleted by the sweeper, with every other one that
// finished meanwhile, in one batch (removeThreads): hidden from the API at once,
// its rows go within sweepInterval; its run's lease is renewed until then, so that no reaper
// takes the run for one whose worker died. Shutdown deletes what is left.
const (
	sweepInterval = 20 * time.Millisecond
	sweepBatch    = 64
)

type sweepItem struct {
	key   threadKey
	runID string
}

// sweepThreads deletes a batch of finished stateless runs' threads (checkpoints, then records),
// unhides them and stops renewing their runs' leases.
func (r *runner) sweepThreads(ctx context.Context, batch []sweepItem) error {
	keys := make([]threadKey, len(batch))
	for i, it := range batch {
		keys[i] = it.key
	}
	if err := removeThreads(ctx, r.saver, r.meta, keys); err != nil {
		return err
	}
	for _, it := range batch {
		r.meta.hidden.Delete(it.key.id)
		r.leases.Drop(it.runID)
	}
	return nil
}

// dropTemporary hides a finished stateless run's thread from the API and hands it to the
// sweeper.
func (r *runner) dropTemporary(tenant, threadID, runID string) {
	r.meta.hidden.Store(threadID, struct{}{})
	r.sweep.Add(sweepItem{threadKey{tenant, threadID}, runID})
}

// sweeping counts the finished stateless runs' threads that are hidden and not deleted yet.
func (r *runner) sweeping() int {
	n := 0
	r.meta.hidden.Range(func(any, any) bool { n++; return true })
	return n
}

// isNullJSON reports whether a run's input is absent: no bytes, or JSON null.
func isNullJSON(b json.RawMessage) bool {
	t := strings.TrimSpace(string(b))
	return t == "" || t == "null"
}
