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

	"github.com/jackc/pgx/v5"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/server/internal/engine"
	"github.com/trellis-go/trellis/server/internal/lcwire"
	"github.com/trellis-go/trellis/server/internal/metadb"
	"github.com/trellis-go/trellis/server/internal/stream"
	"github.com/trellis-go/trellis/store"
)

// The actions of a cancel.
var (
	errCancelInterrupt = engine.ErrInterrupt
	errCancelRollback  = engine.ErrRollback
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
	// from before the run can start (see engine.Runner.WaitFor).
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

// runner is the server's side of the run engine (server/internal/engine), which schedules,
// executes and cancels runs: the runner checks run requests (run_create.go), runs a run's graph
// under its request (run_graph.go), follows its progress (progress.go) and sends its webhook.
// It implements engine.Host.
type runner struct {
	*engine.Runner
	runnerDeps
	// progress follows the runs executing here (progress.go).
	progress progressBook
	hooks    *webhooks
	stopping sync.Once
}

// runnerDeps is what the runner uses of the server: the metadata database, the saver, the log
// and metrics, the settings it reads, and narrow views of the rest.
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
	// feed hears of the runs created, for the thread streams open here (threadstream.go).
	feed *threadFeed
	// ended, when set, hears of every attempt that ends (A2A push notifications).
	ended func(*Run, engine.Outcome)
	// observer gives runs their trace context, span, budgets and stream metadata.
	observer runObserver
}

// runnerConfig holds the settings of Config the runner reads.
type runnerConfig struct {
	Heartbeat           time.Duration
	RunTimeout          time.Duration
	WebhookTimeout      time.Duration
	WebhookAllowPrivate bool
	// WebhookAllowLoopback lets webhooks reach loopback addresses (dev mode, where the server
	// itself listens only on loopback).
	WebhookAllowLoopback bool
	MaxRunsPerTenant     int
	MaxRunAttempts       int
	// Budget is the server's limits of a run's steps and tokens (zero: none).
	Budget runBudget
}

// runnerConfigOf picks the runner's settings out of the server's.
func runnerConfigOf(c Config) runnerConfig {
	return runnerConfig{Heartbeat: c.Heartbeat, RunTimeout: c.RunTimeout, WebhookTimeout: c.WebhookTimeout,
		WebhookAllowPrivate: c.WebhookAllowPrivate, WebhookAllowLoopback: c.Dev, MaxRunsPerTenant: c.MaxRunsPerTenant, MaxRunAttempts: c.MaxRunAttempts,
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
	r := &runner{runnerDeps: d, progress: progressBook{runs: map[string]*progressTracker{}},
		hooks: newWebhooks(d.cfg.WebhookTimeout, d.cfg.WebhookAllowPrivate, d.cfg.WebhookAllowLoopback, d.log)}
	m := d.metrics
	r.Runner = engine.New(engine.Deps{DB: d.meta.DB, Hub: d.hub, Bus: d.bus, Log: d.log,
		Metrics: engine.Metrics{Created: m.runsCreated, Active: m.runsActive, Finished: m.runsFinished, Seconds: m.runSeconds, Events: m.events},
		Host:    r, Hidden: &d.meta.hidden,
		Config: engine.Config{Heartbeat: d.cfg.Heartbeat, Timeout: d.cfg.RunTimeout, TimeoutCause: &RunTimeoutError{Timeout: d.cfg.RunTimeout},
			MaxRunsPerTenant: d.cfg.MaxRunsPerTenant, MaxAttempts: d.cfg.MaxRunAttempts}}, engineQueue{q})
	r.Start()
	return r
}

// cancel stops a run of the tenant (and thread, when threadID is set) that ctx's principal may
// see, with action (errCancelInterrupt or errCancelRollback); see engine.Runner.Cancel.
func (r *runner) cancel(ctx context.Context, tenant, threadID, runID string, action error, wait bool) error {
	row, _, err := r.meta.visibleRun(ctx, tenant, threadID, runID)
	if err != nil {
		return err
	}
	return r.Cancel(ctx, engine.RunOf(row), action, wait)
}

// Shutdown stops the engine (engine.Runner.Shutdown), then waits for the webhooks being sent,
// up to Config.WebhookTimeout; a second call does nothing.
func (r *runner) Shutdown(ctx context.Context) {
	r.stopping.Do(func() {
		r.Runner.Shutdown(ctx)
		r.hooks.wait(r.cfg.WebhookTimeout)
	})
}

// ---- engine.Host ----

// Graph implements engine.Host.
func (r *runner) Graph(assistantID string) (graph.Runnable, error) {
	a, err := r.assistants.assistant(assistantID)
	if err != nil {
		return nil, err
	}
	return a.graph, nil
}

// ThreadGraph implements engine.Host.
func (r *runner) ThreadGraph(md map[string]any) graph.Runnable {
	return r.assistants.graphOf(&Thread{Metadata: md})
}

// DeleteThreads implements engine.Host: a finished stateless run's thread goes with its
// checkpoints.
func (r *runner) DeleteThreads(ctx context.Context, keys []metadb.ThreadKey) error {
	if ns, ok := r.saver.(newThreadSaver); ok && ns.batcher != nil && r.meta.Postgres() {
		return ns.deleteWithRecords(ctx, keys)
	}
	tk := make([]threadKey, len(keys))
	for i, k := range keys {
		tk[i] = threadKey{k.Tenant, k.ID}
	}
	return removeThreads(ctx, r.saver, r.meta, tk)
}

// Retryable implements engine.Host with transient.
func (r *runner) Retryable(err error) bool { return transient(err) }

// ErrorEvent implements engine.Host: the error event names the error as LangGraph would.
func (r *runner) ErrorEvent(err error) any { return errorJSON(err) }

// Visible implements engine.Host: ctx's principal sees the run as GET would show it.
func (r *runner) Visible(ctx context.Context, run *engine.Run) bool {
	if _, gone := r.meta.hidden.Load(run.ThreadID); gone {
		return false
	}
	return ownerSeesRun(ctx, runFromRow(run.Run))
}

// Attempt implements engine.Host: the attempt follows the run's progress, runs its graph
// (runGraph) and sends the webhook of a run that ended.
func (r *runner) Attempt(er *engine.Run, attempt int) engine.Attempt {
	run := runFromRow(er.Run)
	return &runAttempt{r: r, run: run, pt: r.track(run, attempt), attempt: attempt}
}

// runAttempt is one attempt at a run, on the server's side.
type runAttempt struct {
	r       *runner
	run     *Run
	pt      *progressTracker
	attempt int
	// runCtx is Execute's context with the mark of the thread made for the run, if it was
	// (newThreadSaver), and unwatch ends the watch.
	runCtx  context.Context
	unwatch func()
}

func (a *runAttempt) Execute(ctx context.Context, g graph.Runnable, headBefore string, emit func(string, any)) error {
	if ns, ok := a.r.saver.(newThreadSaver); ok && a.run.Kwargs.Temporary && a.attempt == 1 && headBefore == "" {
		// A stateless run's thread, made for it: on the first attempt it has no checkpoint,
		// the graph need not look for one, and its final state is read from memory
		// (newThreadSaver).
		ctx, a.unwatch = ns.watch(ctx, a.run.ThreadID, a.holdRule())
		a.runCtx = ctx
	}
	err := a.r.runGraph(ctx, a.run, g, headBefore, a.pt, emit)
	if herr := sendHeld(ctx); err == nil {
		err = herr
	}
	return err
}

// holdRule says when the checkpoints a saver without batches holds back are due: before the
// next event once a node finished (sync durability, the default, or the graph's own), before
// every event (a resumable stream), or at the graph's end (async durability).
func (a *runAttempt) holdRule() holdRule {
	switch {
	case a.run.Kwargs.Resumable || a.r.bus != nil:
		return holdUntilEvent
	case a.run.Kwargs.Durability == string(graph.DurabilityAsync):
		return holdUntilEnd
	}
	return holdUntilNode
}

// held returns the thread made for the run, when it holds puts back (newThreadSaver).
func (a *runAttempt) held() *newThread {
	if a.runCtx == nil {
		return nil
	}
	n, _ := a.runCtx.Value(newThreadKey{}).(*newThread)
	if n == nil || !n.holds() {
		return nil
	}
	return n
}

// Holding implements engine.HeldWrites.
func (a *runAttempt) Holding() bool {
	n := a.held()
	return n != nil && n.holding()
}

// WriteEventsWith implements engine.HeldWrites: the held checkpoints and the events go in one
// batch, whose commit follows the pool's synchronous_commit.
func (a *runAttempt) WriteEventsWith(ctx context.Context, batches []metadb.EventBatch, channel string, payloads []string) error {
	n := a.held()
	if n == nil || n.batcher == nil {
		return errors.New("server: no held writes to send with the run's events")
	}
	return n.flush(ctx, func(b *pgx.Batch) { metadb.QueueEventsNotify(b, batches, channel, payloads) })
}

// FlushHeld implements engine.HeldWrites; an error is the run's (its next write returns it).
func (a *runAttempt) FlushHeld(ctx context.Context) {
	if n := a.held(); n != nil {
		_ = n.flush(ctx, nil)
	}
}

// StateContext implements engine.Attempt: reads through the returned context of the thread
// made for the run are answered from what the run wrote (newThreadSaver).
func (a *runAttempt) StateContext(ctx context.Context) context.Context {
	if a.runCtx == nil {
		return ctx
	}
	return withThreadOf(ctx, a.runCtx)
}

func (a *runAttempt) Finish() json.RawMessage { return rawJSON(a.pt.finish()) }

func (a *runAttempt) Report(o engine.Outcome) {
	if a.run.Kwargs.Webhook != "" && o.Status != RunPending {
		a.r.hooks.send(a.run, o)
	}
	if a.r.ended != nil {
		a.r.ended(a.run, o)
	}
}

func (a *runAttempt) Close() {
	if a.unwatch != nil {
		a.unwatch()
	}
	a.r.untrack(a.run.RunID)
}

// engineQueue is a Queue as the engine drives it: with priorities when the queue has them, and
// a run to deliver again as a *RetryError.
type engineQueue struct{ q Queue }

func (e engineQueue) Start(exec func(ctx context.Context, runID string) error) {
	e.q.Start(func(ctx context.Context, runID string) error {
		err := exec(ctx, runID)
		if re, ok := err.(*engine.Retry); ok {
			return &RetryError{After: re.After, Reason: re.Reason}
		}
		return err
	})
}

func (e engineQueue) Enqueue(ctx context.Context, runID, prio string) error {
	if pq, ok := e.q.(PriorityQueue); ok {
		p, _ := parsePriority(prio)
		return pq.EnqueuePriority(ctx, runID, p)
	}
	return e.q.Enqueue(ctx, runID)
}

func (e engineQueue) Close(ctx context.Context) error { return e.q.Close(ctx) }

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

// threadValues reads the thread's newest values and waiting interrupts for its record.
func threadValues(ctx context.Context, threadID string, g graph.Runnable) (json.RawMessage, json.RawMessage) {
	snap, err := g.State(ctx, checkpoint.Ref{ThreadID: threadID})
	if err != nil {
		return nil, nil
	}
	return lcwire.ThreadRecord(snap)
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
	return lcwire.Output(snap)
}

// isNullJSON reports whether a run's input is absent: no bytes, or JSON null.
func isNullJSON(b json.RawMessage) bool {
	t := strings.TrimSpace(string(b))
	return t == "" || t == "null"
}
