package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/trellis-go/trellis/internal/netguard"
	"github.com/trellis-go/trellis/server/internal/lcwire"

	"github.com/google/uuid"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/tool"
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

// threadSlot serialises the runs of one thread in this process.
type threadSlot struct {
	current string
	waiting []string
}

// runner creates, schedules, executes and cancels runs. It holds no *Server: what it uses of
// the server comes in its runnerDeps, given to newRunner.
type runner struct {
	runnerDeps
	q       Queue
	mu      sync.Mutex
	active  map[string]*activeRun
	threads map[string]*threadSlot
	closing bool
	bg      sync.WaitGroup // webhooks
	http    *http.Client
	// tenants counts the runs executing in this process per tenant.
	tenants map[string]int
	// instance names this process in run leases.
	instance string
	stopReap context.CancelFunc
	reaping  sync.WaitGroup
	// leases are the leases of the runs executing here, renewed together (lease.go); out writes
	// and publishes stream events (hub.go).
	leases leases
	out    *outbox
	// waiters counts, per run, the requests waiting for its output (wait, join): a finished
	// stateless run reads its final state for an output only if someone waits (see exec).
	waiters map[string]int
	// sweep deletes finished stateless runs' threads in batches (see dropTemporary).
	sweep sweeper
	// progress follows the runs executing here (progress.go); prio holds the priority of the
	// runs in this process's thread slots, for when they reach the queue.
	progress map[string]*progressTracker
	prio     map[string]Priority
}

// runnerDeps is what the runner uses of the server: the metadata database, the stream hub and
// bus, the log and metrics, the settings it reads, and narrow views of the rest.
type runnerDeps struct {
	meta    *metaDB
	hub     *hub
	bus     *bus // nil: this process is the only one (SQLite)
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

// assistantSource finds assistants for the runner (the server's registered and created ones).
type assistantSource interface {
	// assistant finds an assistant of any tenant by ID, with its graph.
	assistant(id string) (*Assistant, error)
	// assistantFor finds an assistant the tenant may run.
	assistantFor(ctx context.Context, tenant, id string) (*Assistant, error)
	// graphOf picks the graph whose state a thread holds, or nil.
	graphOf(t *Thread) graph.Runnable
}

// runObserver is the telemetry of runs (telemetry.go, convert.go).
type runObserver interface {
	// traceContextOf returns the trace context of the request creating a run.
	traceContextOf(ctx context.Context) map[string]string
	// observeRun starts a run's span and applies its budget; done ends them with its outcome.
	observeRun(ctx context.Context, run *Run, opts []graph.RunOption) (context.Context, []graph.RunOption, func(error) error)
	// streamMetadata is the metadata a run's message chunks and callback events carry.
	streamMetadata(run *Run) map[string]any
}

func newRunner(d runnerDeps, q Queue) *runner {
	r := &runner{runnerDeps: d, q: q, active: map[string]*activeRun{}, threads: map[string]*threadSlot{},
		http:    &http.Client{Timeout: d.cfg.WebhookTimeout, Transport: netguard.Policy{AllowPrivate: d.cfg.WebhookAllowPrivate}.Transport()},
		tenants: map[string]int{}, instance: uuid.NewString(), waiters: map[string]int{},
		progress: map[string]*progressTracker{}, prio: map[string]Priority{}}
	r.leases.held = map[string]heldLease{}
	r.out = newOutbox(d.meta, d.bus, d.log)
	r.renewLeases()
	r.startSweeper()
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
			r.hub.sweep()
			runs, err := r.meta.expiredLeases(ctx)
			if err != nil {
				if ctx.Err() == nil {
					r.log.Warn("cannot look for runs whose worker died", "err", err)
				}
				continue
			}
			for _, run := range runs {
				if r.scheduled(run.ThreadID, run.RunID) || r.executing(run.RunID) || r.holding(run.RunID) {
					// This process is alive and has it: its renewal was only late (a busy
					// database); the next one renews it.
					continue
				}
				r.log.Warn("run's worker stopped heartbeating; resuming it from its last checkpoint", "run_id", run.RunID, "thread_id", run.ThreadID)
				_ = r.meta.setRunLastError(ctx, run.RunID, "the run's worker stopped heartbeating (its process died or hung); resumed from its last checkpoint")
				if l := r.hub.get(run.RunID); l == nil {
					r.hub.open(run.RunID).resumable = run.Kwargs.Resumable
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
	slot := r.threads[threadID]
	return slot != nil && (slot.current == runID || slices.Contains(slot.waiting, runID))
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
			_ = r.meta.setRunStatus(ctx, run.RunID, RunError)
			continue
		}
		r.log.Info("resuming run left unfinished by a previous process", "run_id", run.RunID, "thread_id", run.ThreadID)
		if run.Status == RunRunning {
			_ = r.meta.setRunLastError(ctx, run.RunID, "the server stopped while the run executed; resumed from its last checkpoint")
		}
		l := r.hub.open(run.RunID)
		l.resumable = run.Kwargs.Resumable
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
	slot := r.threads[run.ThreadID]
	if slot == nil {
		slot = &threadSlot{}
		r.threads[run.ThreadID] = slot
	}
	r.prio[run.RunID] = runPriority(run)
	if slot.current != "" {
		slot.waiting = append(slot.waiting, run.RunID)
		return false
	}
	slot.current = run.RunID
	return true
}

// released frees the thread after its run ended, here and, with replicas, in whichever process
// holds the run in its thread's slot (a process that scheduled it and saw another execute it).
func (r *runner) released(threadID, runID string) {
	r.release(threadID, runID)
	if r.bus != nil {
		if err := r.bus.publish(context.Background(), busMsg{Kind: "done", RunID: runID, Thread: threadID}); err != nil {
			r.log.Warn("cannot tell the replicas a run ended", "run_id", runID, "err", err)
		}
	}
}

// release ends a thread's current run and starts the next waiting one.
func (r *runner) release(threadID, runID string) {
	r.mu.Lock()
	slot := r.threads[threadID]
	if slot == nil || slot.current != runID {
		r.mu.Unlock()
		return
	}
	delete(r.prio, runID)
	if len(slot.waiting) == 0 || r.closing {
		delete(r.threads, threadID)
		r.mu.Unlock()
		return
	}
	next := slot.waiting[0]
	slot.waiting = slot.waiting[1:]
	slot.current = next
	prio := r.prio[next]
	r.mu.Unlock()
	if err := r.enqueue(context.Background(), next, prio); err != nil {
		r.log.Warn("cannot start queued run", "run_id", next, "thread_id", threadID, "err", err)
	}
}

// create validates a run request, applies the multitask strategy and schedules the run.
func (r *runner) create(ctx context.Context, p Principal, threadID string, req *runCreate) (*Run, *runLog, error) {
	if req.AssistantID == "" {
		return nil, nil, badRequest("name one of the assistants from POST /assistants/search", "field \"assistant_id\" is required")
	}
	a, err := r.assistants.assistantFor(ctx, p.Tenant, req.AssistantID)
	if err != nil {
		return nil, nil, err
	}
	req.Config, req.Context = withAssistantConfig(a, req.Config, req.Context)
	modes, err := stringOrList("stream_mode", req.StreamMode)
	if err != nil {
		return nil, nil, err
	}
	if len(modes) == 0 {
		modes = []string{"values"}
	}
	if _, err := parseStreamModes(modes); err != nil {
		return nil, nil, err
	}
	before, err := stringOrList("interrupt_before", req.InterruptBefore)
	if err != nil {
		return nil, nil, err
	}
	after, err := stringOrList("interrupt_after", req.InterruptAfter)
	if err != nil {
		return nil, nil, err
	}
	for _, n := range append(slices.Clone(before), after...) {
		if n != "*" && !slices.Contains(a.graph.Nodes(), n) {
			return nil, nil, badRequest(fmt.Sprintf("the graph's nodes are %v", a.graph.Nodes()), "interrupt_before/interrupt_after names unknown node %q", n)
		}
	}
	strategy := req.MultitaskStrategy
	switch strategy {
	case "":
		strategy = "reject"
	case "reject", "interrupt", "rollback", "enqueue":
	default:
		return nil, nil, badRequest("use reject, interrupt, rollback or enqueue", "field \"multitask_strategy\" is %q", strategy)
	}
	prio, err := parsePriority(req.Priority)
	if err != nil {
		return nil, nil, err
	}
	var startAfter int64
	if a := req.AfterSeconds; a != nil {
		if math.IsNaN(*a) || *a < 0 || *a > maxAfterSeconds {
			return nil, nil, badRequest(fmt.Sprintf("give the seconds to wait before the run starts, from 0 to %d", maxAfterSeconds), "field \"after_seconds\" is %v", *a)
		}
		if *a > 0 {
			startAfter = ms(time.Now().Add(time.Duration(*a * float64(time.Second))))
		}
	}
	durability := req.Durability
	switch durability {
	case "":
		if req.CheckpointDuring != nil && !*req.CheckpointDuring {
			durability = string(graph.DurabilityExit)
		}
	case string(graph.DurabilitySync), string(graph.DurabilityAsync), string(graph.DurabilityExit):
	default:
		return nil, nil, badRequest("use sync, async or exit", "field \"durability\" is %q", req.Durability)
	}
	switch req.OnDisconnect {
	case "", "continue", "cancel":
	default:
		return nil, nil, badRequest("use cancel or continue", "field \"on_disconnect\" is %q", req.OnDisconnect)
	}
	switch req.OnCompletion {
	case "", "delete", "keep":
	default:
		return nil, nil, badRequest("use delete or keep", "field \"on_completion\" is %q", req.OnCompletion)
	}
	if err := checkGoto(req.Command, a.graph); err != nil { // api_conf.go
		return nil, nil, err
	}
	if req.Webhook != "" {
		if err := checkWebhook(req.Webhook); err != nil {
			return nil, nil, err
		}
	}
	if _, err := budgetWithin(req.Config, r.cfg.Budget); err != nil { // budget.go
		return nil, nil, err
	}
	if len(req.Input) > 0 && string(req.Input) != "null" && !bytes.HasPrefix(bytes.TrimSpace(req.Input), []byte("{")) {
		return nil, nil, badRequest("send the input as a JSON object of state keys, e.g. {\"messages\": [...]}", "field \"input\" must be an object")
	}
	r.mu.Lock()
	closing := r.closing
	r.mu.Unlock()
	if closing {
		return nil, nil, &APIError{Status: http.StatusServiceUnavailable, Message: "the server is shutting down and takes no new runs", Hint: "retry against another replica or after the restart", kind: ErrShuttingDown}
	}
	now := r.meta.stamp()
	temporary := false
	freshThread := false // created by this request: no other run can be on it
	if threadID == "" {
		freshThread = true
		threadID = uuid.NewString()
		temporary = req.OnCompletion != "keep"
		t := &Thread{ThreadID: threadID, Metadata: map[string]any{"graph_id": a.GraphID, "assistant_id": a.AssistantID}, Status: ThreadIdle, CreatedAt: now, tenant: p.Tenant, temporary: temporary}
		if _, err := r.meta.createThread(ctx, t); err != nil {
			return nil, nil, err
		}
	} else if t, err := r.meta.getThread(ctx, p.Tenant, threadID); err == nil {
		// A thread holds the state of the graph that first ran on it (LangGraph records the same).
		if _, ok := t.Metadata["graph_id"].(string); !ok {
			t.Metadata["graph_id"], t.Metadata["assistant_id"] = a.GraphID, a.AssistantID
			if err := r.meta.setThreadMetadata(ctx, p.Tenant, threadID, t.Metadata); err != nil {
				return nil, nil, err
			}
		}
	} else {
		if !errors.Is(err, ErrNotFound) || req.IfNotExists != "create" {
			return nil, nil, err
		}
		if taken, err := r.meta.threadTaken(ctx, threadID); err != nil || taken {
			if err == nil {
				err = notFound("thread", threadID)
			}
			return nil, nil, err
		}
		t := &Thread{ThreadID: threadID, Metadata: map[string]any{"graph_id": a.GraphID, "assistant_id": a.AssistantID}, Status: ThreadIdle, CreatedAt: now, tenant: p.Tenant}
		if _, err := r.meta.createThread(ctx, t); err != nil {
			return nil, nil, err
		}
	}
	cpID := req.CheckpointID
	if cpID == "" && req.Checkpoint != nil {
		cpID = req.Checkpoint.CheckpointID
	}
	md := req.Metadata
	if md == nil {
		md = map[string]any{}
	}
	run := &Run{RunID: uuid.Must(uuid.NewV7()).String(), ThreadID: threadID, AssistantID: a.AssistantID, CreatedAt: now, UpdatedAt: now,
		Status: RunPending, Metadata: md, MultitaskStrategy: strategy, tenant: p.Tenant, Priority: prio,
		Kwargs: &RunKwargs{Input: req.Input, Command: req.Command, Config: req.Config, Context: req.Context, StreamMode: modes,
			InterruptBefore: before, InterruptAfter: after, Webhook: req.Webhook, Subgraphs: req.StreamSubgraphs,
			Resumable: req.StreamResumable, Temporary: temporary, CheckpointID: cpID, OnDisconnect: req.OnDisconnect, Durability: durability, StartAfter: startAfter,
			User: p.User, Permissions: p.Permissions, PerUser: p.PerUser, TraceContext: r.observer.traceContextOf(ctx)}}
	if prio != PriorityNormal {
		run.Kwargs.Priority = string(prio)
	}
	if startAfter > 0 {
		at := fromMS(startAfter)
		run.NextAttemptAt = &at
	}

	// The multitask decision and the insert happen under the lock so two requests on one thread
	// cannot both see it idle. The run's ID and creation time are taken under it too, so that
	// this process's runs of a thread are created, and wait in its slot, in one order.
	r.mu.Lock()
	run.RunID = uuid.Must(uuid.NewV7()).String()
	run.CreatedAt = r.meta.stamp()
	run.UpdatedAt = run.CreatedAt
	slot := r.threads[threadID]
	var inflight []string
	if slot != nil {
		if slot.current != "" {
			inflight = append(inflight, slot.current)
		}
		inflight = append(inflight, slot.waiting...)
	}
	busy := &APIError{Status: http.StatusConflict, Message: fmt.Sprintf("thread %q is already running a run", threadID), Hint: "wait for it to finish, or set multitask_strategy to enqueue, interrupt or rollback", kind: ErrBusy}
	if r.bus != nil && !freshThread {
		// With replicas the database is the truth: another replica may be running one of the
		// thread's runs, and this one's slot may still name a run another replica finished.
		// The look and the insert are one step across replicas (see insertRunOnThread).
		active, err := r.meta.insertRunOnThread(ctx, run, strategy == "reject")
		if err != nil {
			r.mu.Unlock()
			return nil, nil, err
		}
		if len(active) > 0 && strategy == "reject" {
			r.mu.Unlock()
			return nil, nil, busy
		}
		inflight = active
	} else {
		if len(inflight) > 0 && strategy == "reject" {
			r.mu.Unlock()
			return nil, nil, busy
		}
		if err := r.meta.insertRun(ctx, run); err != nil {
			r.mu.Unlock()
			return nil, nil, err
		}
	}
	var l *runLog
	if r.bus != nil {
		// Any replica may execute the run: this process's readers (the creating request's
		// stream or wait, a WebSocket) follow it wherever it executes, and the mirror stops
		// if this process takes the run itself. The run is new: nothing of it is written yet.
		l = newMirror(r.hub, r.bus, r.meta, run, true)
	} else {
		l = r.hub.open(run.RunID)
		l.resumable = req.StreamResumable
	}
	if req.wait {
		r.waiters[run.RunID]++ // before the run can start; the request calls unwait
	}
	first := r.placeLocked(run)
	r.mu.Unlock()
	if strategy == "interrupt" || strategy == "rollback" {
		action := errCancelInterrupt
		if strategy == "rollback" {
			action = errCancelRollback
		}
		for _, id := range inflight {
			_ = r.cancel(ctx, p.Tenant, threadID, id, action, false)
		}
	}
	if !temporary {
		// Busy from the moment a run is pending, as LangGraph reports it.
		_ = r.meta.setThreadBusy(ctx, p.Tenant, threadID)
	}
	r.metrics.runsCreated.Inc()
	r.log.Info("run created", "run_id", run.RunID, "thread_id", threadID, "assistant_id", a.AssistantID, "tenant", p.Tenant, "multitask_strategy", strategy)
	if first {
		if err := r.enqueue(ctx, run.RunID, prio); err != nil {
			if req.wait {
				r.unwait(run.RunID)
			}
			return nil, nil, err
		}
	}
	return run, l, nil
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
		if slot := r.threads[run.ThreadID]; slot != nil {
			if i := slices.Index(slot.waiting, runID); i >= 0 {
				slot.waiting = slices.Delete(slot.waiting, i, i+1)
				delete(r.prio, runID)
				r.mu.Unlock()
				r.finishUnstarted(ctx, run, action)
				return nil
			}
			if slot.current == runID && run.Status == RunPending {
				// First in line but not started (scheduled with after_seconds, or its queue job
				// not yet taken): the thread goes on to its next run now, not when the job comes
				// due; the job then finds the run finished (or gone) and does nothing.
				r.mu.Unlock()
				r.finishUnstarted(ctx, run, action)
				r.release(run.ThreadID, runID)
				return nil
			}
		}
	}
	r.mu.Unlock()
	if act == nil && run.Status == RunRunning && r.bus != nil {
		// Executing in another replica: ask it, and wait for the status to change.
		name := "interrupt"
		if action == errCancelRollback {
			name = "rollback"
		}
		if err := r.bus.publish(ctx, busMsg{Kind: "cancel", RunID: runID, Action: name}); err != nil {
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
		_ = r.meta.deleteRun(ctx, run.tenant, run.RunID)
	} else {
		_ = r.meta.setRunStatus(ctx, run.RunID, RunInterrupted)
	}
	if l := r.hub.get(run.RunID); l != nil {
		l.close()
	}
	r.settleThread(ctx, run.tenant, run.ThreadID)
}

// exec executes one run; the queue calls it. It returns a *RetryError when the run should be
// delivered again later (another worker holds it, its tenant is at its limit, or it failed with
// a transient error), nil otherwise.
func (r *runner) exec(qctx context.Context, runID string) error {
	ctx := context.WithoutCancel(qctx)
	run, err := r.meta.runByID(ctx, runID)
	if err != nil {
		r.log.Warn("queued run vanished", "run_id", runID, "err", err)
		return nil
	}
	if run.Status != RunPending && run.Status != RunRunning {
		r.released(run.ThreadID, runID)
		return nil
	}
	if run.Kwargs != nil && run.Kwargs.StartAfter > 0 {
		// A run created with after_seconds waits, pending and unclaimed, until it is due.
		if wait := time.Until(fromMS(run.Kwargs.StartAfter)); wait > 0 {
			return &RetryError{After: wait, Reason: errScheduled}
		}
	}
	log := r.log.With("run_id", runID, "thread_id", run.ThreadID, "tenant", run.tenant)
	if lim := r.cfg.MaxRunsPerTenant; lim > 0 {
		r.mu.Lock()
		busy := r.tenants[run.tenant] >= lim
		if !busy {
			r.tenants[run.tenant]++
		}
		r.mu.Unlock()
		if busy {
			return &RetryError{After: 200 * time.Millisecond, Reason: errTenantBusy}
		}
		defer func() {
			r.mu.Lock()
			if r.tenants[run.tenant]--; r.tenants[run.tenant] <= 0 {
				delete(r.tenants, run.tenant)
			}
			r.mu.Unlock()
		}()
	}
	owner := r.instance + "/" + uuid.NewString()
	ttl := 3 * r.cfg.Heartbeat
	// The claim also keeps the thread's runs one at a time and in order, and the tenant under
	// its limit, across every process sharing the database (see claimRun).
	attempt, refused, err := r.meta.claimRun(ctx, run, owner, ttl, r.cfg.MaxRunsPerTenant)
	if err != nil {
		log.Warn("cannot claim run; retrying", "err", err)
		return &RetryError{After: time.Second, Reason: err}
	}
	if refused != nil {
		return refused
	}
	if attempt > r.cfg.MaxRunAttempts {
		log.Error("run gave up after too many attempts", "attempts", attempt-1)
		l := r.hub.open(runID)
		raw, _ := json.Marshal(map[string]any{"error": "TooManyAttempts", "message": fmt.Sprintf("server: run was attempted %d times (its worker died or it failed transiently each time); giving up", attempt-1)})
		r.persistAndAppend(ctx, l, run, "error", raw)
		r.persistAndAppend(ctx, l, run, "end", json.RawMessage("null"))
		_ = r.meta.setRunEnd(ctx, runID, runEnd{status: RunError, progress: run.Progress, lastError: fmt.Sprintf("run was attempted %d times (its worker died or it failed transiently each time); giving up", attempt-1)})
		_ = r.meta.setThreadStatus(ctx, run.tenant, run.ThreadID, ThreadError, nil, nil)
		_ = r.meta.releaseLease(ctx, runID, owner)
		r.release(run.ThreadID, runID)
		l.close()
		return nil
	}
	// Its progress is followed from here, and readable live in this process until its record
	// has the final one.
	pt := r.track(run, attempt)
	defer r.untrack(runID)
	runCtx, cancel := context.WithCancelCause(ctx)
	stopOnQueue := context.AfterFunc(qctx, func() { cancel(errShutdownCancel) })
	if t := r.cfg.RunTimeout; t > 0 {
		timer := time.AfterFunc(t, func() { cancel(&RunTimeoutError{Timeout: t}) })
		defer timer.Stop()
	}
	// The lease is renewed with every other run's each heartbeat (lease.go); losing it stops the
	// run.
	r.holdLease(runID, owner, func() { cancel(errLeaseLost) })
	act := &activeRun{cancel: cancel, done: make(chan struct{})}
	r.mu.Lock()
	r.active[runID] = act
	r.mu.Unlock()
	started := time.Now()
	r.metrics.runsActive.Inc()
	closeLog := func() {}
	keepSlot := false
	leaseGone := false    // the run's record goes with its temporary thread
	var dropThread func() // deletes that thread
	lazyOutput := false   // the output is read from the thread when asked for (see below)
	var l *runLog
	var retry error
	defer func() {
		stopOnQueue()
		cancel(nil)
		if !leaseGone {
			r.dropLease(runID)
		}
		r.metrics.runsActive.Dec()
		r.mu.Lock()
		delete(r.active, runID)
		r.mu.Unlock()
		close(act.done)
		if !leaseGone {
			_ = r.meta.releaseLease(ctx, runID, owner)
		}
		if !keepSlot {
			r.released(run.ThreadID, runID)
		}
		// The log closes last, so that whoever waits on it (wait, join, a stream's end) finds
		// the run's and the thread's statuses written and the thread free for the next run.
		closeLog()
		// A finished temporary thread is nobody's to wait for: it goes after. A waiter that came
		// after its final state was skipped (see below) gets it made before the thread goes.
		if dropThread != nil {
			if lazyOutput && r.waited(runID) {
				_ = l.result()
			}
			dropThread() // the sweeper drops the lease once the record is gone
		}
	}()

	l = r.hub.open(runID)
	l.resumable = run.Kwargs.Resumable || r.bus != nil
	if l.takeMirror() && attempt > 1 {
		// This process followed the run while another executed it; the database has every
		// event that was shown, and the numbering continues from there. (On a first attempt
		// no process executed it before: there is nothing to read.)
		if evs, err := r.meta.loadEvents(ctx, runID, 0); err == nil {
			l.pmu.Lock()
			l.mu.Lock()
			l.setEventsLocked(evs)
			l.first = 0
			l.durable = lastSeq(evs)
			l.mu.Unlock()
			l.pmu.Unlock()
		}
	} else if l.resumable && l.last() == 0 {
		// A restarted run continues the event numbering of the stream it had persisted.
		if evs, err := r.meta.loadEvents(ctx, runID, 0); err == nil && len(evs) > 0 {
			l.pmu.Lock()
			l.mu.Lock()
			l.setEventsLocked(evs)
			l.durable = lastSeq(evs)
			l.mu.Unlock()
			l.pmu.Unlock()
		}
	}
	emit := func(event string, data any) {
		if tok, ok := data.(encodedToken); ok { // a token, encoded by runGraph (tokens.go)
			if !l.resumable {
				r.metrics.events.Inc()
				l.appendTail(event, tok.head, tok.tail)
				return
			}
			r.persistAndAppend(ctx, l, run, event, tok.join())
			return
		}
		raw, err := json.Marshal(data)
		if err != nil {
			raw, _ = json.Marshal(map[string]any{"error": "EncodeError", "message": err.Error()})
			event = "error"
		}
		r.persistAndAppend(ctx, l, run, event, raw)
	}

	// The claim made the run's status running. A temporary thread (a stateless run's) is
	// nobody's to look at and goes when the run ends: it is not marked busy, and on the first
	// attempt it has no checkpoint yet.
	fresh := run.Kwargs.Temporary && attempt == 1
	if !run.Kwargs.Temporary {
		_ = r.meta.setThreadBusy(ctx, run.tenant, run.ThreadID)
	}
	log.Info("run started", "assistant_id", run.AssistantID)
	emit("metadata", map[string]any{"run_id": runID, "thread_id": run.ThreadID, "attempt": attempt})

	a, err := r.assistants.assistant(run.AssistantID)
	if err != nil { // a created assistant deleted while its run waited
		log.Warn("run's assistant is gone; failing the run", "assistant_id", run.AssistantID, "err", err)
		a = &Assistant{graph: goneGraph{err}}
	}
	g := a.graph
	var headBefore string
	if !fresh {
		if snap, err := g.StateOf(ctx, checkpoint.Ref{ThreadID: run.ThreadID}); err == nil {
			headBefore = snap.Ref.CheckpointID
		}
	}
	runErr := r.runGraph(runCtx, run, g, headBefore, pt, emit)
	// The graph is done: a lease lost from here on stops nothing (the record may even be gone,
	// with a temporary thread's), but the lease is still renewed until the record says the run
	// ended or is gone, so that no reaper takes the run for one whose worker died.
	r.holdLease(runID, owner, nil)

	cause := context.Cause(runCtx)
	if te := (*RunTimeoutError)(nil); errors.As(cause, &te) {
		runErr = te
	}
	status, threadStatus := RunSuccess, ThreadIdle
	var ie *graph.InterruptedError
	switch {
	case runErr == nil:
	case errors.As(runErr, &ie):
		threadStatus = ThreadInterrupted
	case errors.Is(cause, errShutdownCancel), errors.Is(cause, errLeaseLost):
		// Left pending: whoever takes it next continues from its last checkpoint.
		status = RunPending
		keepSlot = errors.Is(cause, errLeaseLost)
	case cause == nil && transient(runErr) && attempt < r.cfg.MaxRunAttempts:
		status = RunPending
		keepSlot = true
		backoff := min(time.Duration(1<<min(attempt-1, 6))*time.Second, time.Minute)
		retry = &RetryError{After: backoff, Reason: runErr}
		log.Warn("run failed with a transient error; retrying from its last checkpoint", "err", runErr, "attempt", attempt, "after", backoff.String())
	case errors.Is(cause, errCancelInterrupt), errors.Is(cause, errCancelRollback):
		status = RunInterrupted
	default:
		status, threadStatus = RunError, ThreadError
		emit("error", errorJSON(runErr))
	}
	if errors.Is(cause, errCancelRollback) {
		r.rollback(ctx, run, g, headBefore)
	}
	// The thread's record (values and interrupts, in JSON) is made only for the thread's row or
	// a webhook: a finished stateless run, whose thread goes, needs neither.
	var values, interrupts json.RawMessage
	var final *graph.StateSnapshot[any]
	record := func() {
		if final != nil && values == nil {
			values, interrupts = threadRecord(final)
		}
	}
	// A finished temporary thread goes with its runs: their statuses need no writing first,
	// unless other replicas may read them meanwhile.
	drop := run.Kwargs.Temporary && status != RunPending
	// Its final state is read only for a waiter of its output (counted in this process: with
	// a bus they may be anywhere) or a webhook: a streamed stateless run's is never read.
	// Otherwise a waiter that comes late reads it from the thread before the thread goes.
	if drop && status != RunError && run.Kwargs.Webhook == "" && r.bus == nil && !r.waited(runID) {
		lazyOutput = true
		l.setOutputFunc(func() any {
			snap, err := g.StateOf(context.WithoutCancel(ctx), checkpoint.Ref{ThreadID: run.ThreadID})
			if err != nil {
				return nil
			}
			return valuesWithInterrupts(snap)
		})
	} else if snap, err := g.StateOf(ctx, checkpoint.Ref{ThreadID: run.ThreadID}); err == nil {
		final = snap
		if status != RunError {
			l.setOutputFunc(func() any { return valuesWithInterrupts(snap) })
		}
	}
	if status == RunError {
		l.setOutput(map[string]any{"__error__": errorJSON(runErr)})
	}
	if status != RunPending {
		emit("end", nil)
	}
	closeLog = l.close
	end := runEnd{status: status, progress: pt.finish()}
	switch {
	case status == RunError:
		end.lastError = runErr.Error()
	case status == RunPending && retry != nil:
		var re *RetryError
		if errors.As(retry, &re) {
			end.lastError, end.nextAttempt = runErr.Error(), time.Now().Add(re.After)
		}
	case status == RunPending && cause != nil:
		end.lastError = context.Cause(runCtx).Error()
	}
	switch {
	case status == RunPending && errors.Is(cause, errLeaseLost):
		// Another worker executes it now, and writes its progress.
		_ = r.meta.setRunStatus(ctx, runID, RunPending)
	case status == RunPending:
		_ = r.meta.setRunEnd(ctx, runID, end)
	case drop && r.bus == nil:
		// Hidden in this process below, the only one serving the API. With replicas, the
		// others read the record until the sweeper deletes it: it must not say running.
	case errors.Is(cause, errCancelRollback):
		_ = r.meta.deleteRun(ctx, run.tenant, runID)
	default:
		_ = r.meta.setRunEnd(ctx, runID, end)
	}
	if drop {
		leaseGone = true
		// Gone for the API from here, before anyone is told the run ended.
		r.meta.hidden.Store(run.ThreadID, struct{}{})
		dropThread = func() { r.dropTemporary(run.tenant, run.ThreadID, runID) }
	} else if !run.Kwargs.Temporary && status != RunPending {
		if hasWaiting := r.hasWaiting(run.ThreadID); hasWaiting && threadStatus == ThreadIdle {
			threadStatus = ThreadBusy
		}
		record()
		_ = r.meta.setThreadStatus(ctx, run.tenant, run.ThreadID, threadStatus, values, interrupts)
	}
	elapsed := time.Since(started)
	r.metrics.runsFinished.WithLabelValues(status).Inc()
	r.metrics.runSeconds.Observe(elapsed.Seconds())
	log.Info("run finished", "status", status, "thread_status", threadStatus, "ms", elapsed.Milliseconds())
	if run.Kwargs.Webhook != "" && status != RunPending {
		record()
		r.webhook(run, status, started, values, runErr, ie != nil)
	}
	if status == RunPending {
		if errors.Is(cause, errLeaseLost) {
			// Another worker continues the run, numbering its events on from those written.
			r.out.discard(l)
		} else {
			r.out.sync(ctx, l)
		}
		// Not ended: let the queue deliver it again (at once after a shutdown, so another
		// replica may take it; at the next start otherwise).
		closeLog = func() {}
		if retry == nil {
			retry = &RetryError{After: 0, Reason: cause}
		}
		return retry
	}
	return nil
}

// persistAndAppend numbers an event and shows it to readers; for a resumable run (every run,
// with a bus) the outbox writes it to the database and publishes it to the replicas: a token at
// once for readers and within outboxInterval for the database, any other event after it is
// written (see outbox for why that keeps Last-Event-ID resumption gapless).
func (r *runner) persistAndAppend(ctx context.Context, l *runLog, run *Run, event string, raw json.RawMessage) {
	r.metrics.events.Inc()
	if !l.resumable {
		l.append(event, raw)
		return
	}
	if ev := (streamEvent{Event: event}); ev.token() {
		l.append(event, raw)
		r.out.add(l)
		return
	}
	r.out.writeNow(ctx, l, event, raw)
}

func lastSeq(evs []streamEvent) int64 {
	if len(evs) == 0 {
		return 0
	}
	return evs[len(evs)-1].Seq
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
	slot := r.threads[threadID]
	return slot != nil && len(slot.waiting) > 0
}

// runGraph builds the run options and streams the graph, emitting converted events.
func (r *runner) runGraph(ctx context.Context, run *Run, g graph.Runnable, headBefore string, pt *progressTracker, emit func(string, any)) error {
	kw := run.Kwargs
	gmodes, err := parseStreamModes(kw.StreamMode)
	if err != nil {
		return err
	}
	// The root graph's task events make the run's progress (progress.go); they reach the
	// stream only in the modes that ask for them.
	if !slices.Contains(gmodes, graph.ModeTasks) {
		gmodes = append(gmodes, graph.ModeTasks)
	}
	wantsProgress := slices.Contains(kw.StreamMode, progressMode)
	md := map[string]any{}
	for k, v := range run.Metadata {
		md[k] = v
	}
	md["run_id"], md["assistant_id"], md["user_id"] = run.RunID, run.AssistantID, kw.User
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
	opts := []graph.RunOption{graph.WithThread(run.ThreadID), graph.WithStreamModes(gmodes...), graph.WithMetadata(md), graph.WithConfig(cfg)}
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
	input := kw.Input
	// A run that a previous process started continues from its last checkpoint instead of
	// applying its input again.
	resumed := false
	if headBefore != "" {
		if snap, err := g.StateOf(ctx, checkpoint.Ref{ThreadID: run.ThreadID}); err == nil && snap.Metadata["run_id"] == run.RunID {
			if len(snap.Next) == 0 {
				return nil
			}
			opts = append(opts, graph.Continue())
			input, resumed = nil, true
		}
	}
	if c := kw.Command; c != nil && !resumed && !isNullJSON(c.Goto) {
		// command.goto: the update is applied and the nodes named run next (api_conf.go).
		if err := applyGoto(ctx, g, run.ThreadID, c); err != nil {
			return err
		}
		opts = append(opts, graph.Continue())
		input = nil
	} else if c != nil && !resumed {
		if len(c.Update) > 0 && string(c.Update) != "null" {
			if _, err := g.UpdateStateJSON(ctx, checkpoint.Ref{ThreadID: run.ThreadID}, c.Update, ""); err != nil {
				return fmt.Errorf("command.update: %w", err)
			}
		}
		switch {
		case len(c.Resume) > 0 && string(c.Resume) != "null":
			var v any
			if err := json.Unmarshal(c.Resume, &v); err != nil {
				return fmt.Errorf("command.resume: %w", err)
			}
			if m, ok := v.(map[string]any); ok && r.allInterruptIDs(ctx, g, run.ThreadID, m) {
				opts = append(opts, graph.ResumeMap(m))
			} else {
				opts = append(opts, graph.Resume(v))
			}
		default:
			opts = append(opts, graph.Continue())
		}
		input = nil
	}
	if kw.Command == nil && !resumed && isNullJSON(input) && headBefore != "" {
		// No input for a thread that waits (at a breakpoint, say) continues it, as LangGraph
		// does with input None; on a thread with nothing scheduled it starts from empty input.
		if snap, err := g.StateOf(ctx, checkpoint.Ref{ThreadID: run.ThreadID, CheckpointID: kw.CheckpointID}); err == nil && len(snap.Next) > 0 {
			opts = append(opts, graph.Continue())
			input = nil
		}
	}
	// The run's store is its tenant's (tenantstore.go): a graph compiled with Deps.Store finds
	// the tenant in ctx, a tool gets the tenant's view in its CallInfo.
	who := Principal{User: kw.User, Tenant: run.tenant, Permissions: kw.Permissions, PerUser: kw.PerUser}
	ctx = withRunPrincipal(ctx, who)
	info := tool.CallInfo{User: kw.User, Tenant: run.tenant, Permissions: kw.Permissions, ThreadID: run.ThreadID, RunID: run.RunID, Store: principalStore(r.store, who)}
	ctx = tool.WithCallInfo(ctx, info)
	conv := newConverter(kw.StreamMode, kw.Subgraphs, r.observer.streamMetadata(run))
	if kw.Subgraphs {
		opts = append(opts, graph.WithSubgraphs())
	}
	ctx, opts, observed := r.observer.observeRun(ctx, run, opts) // span and budgets (telemetry.go, budget.go)
	var runErr error
	var tokens *tokenEncoder
	if conv.tupleOnly() {
		tokens = &tokenEncoder{c: conv}
	}
	for ev, err := range g.StreamJSON(ctx, input, opts...) {
		if err != nil {
			runErr = err
			break
		}
		if ev.Mode == graph.ModeTasks && len(ev.NS) == 0 {
			if n, ok := pt.observe(ev); ok && wantsProgress {
				emit(progressMode, pt.progressEvent(n))
			}
		}
		if tokens != nil && ev.Mode == graph.ModeMessages && (len(ev.NS) == 0 || conv.subgraphs) {
			if chunk, ok := ev.Data.(graph.MessageChunk); ok {
				if data, ok := tokens.encode(ev, chunk); ok {
					emit(conv.name("messages", ev.NS), data)
					continue
				}
			}
		}
		for _, out := range conv.convert(ev) {
			emit(out.event, out.data)
		}
	}
	var ie *graph.InterruptedError
	if errors.As(runErr, &ie) && conv.wants("values") {
		emit("values", map[string]any{"__interrupt__": lcwire.Interrupts(ie.Interrupts)})
	}
	return observed(runErr)
}

// allInterruptIDs reports whether every key of m is the ID of an interrupt the thread waits on,
// in which case a resume map answers each by ID.
func (r *runner) allInterruptIDs(ctx context.Context, g graph.Runnable, threadID string, m map[string]any) bool {
	if len(m) == 0 {
		return false
	}
	snap, err := g.StateOf(ctx, checkpoint.Ref{ThreadID: threadID})
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
	if _, err := g.UpdateStateJSON(ctx, checkpoint.Ref{ThreadID: run.ThreadID, CheckpointID: headBefore}, nil, ""); err != nil {
		r.log.Warn("rollback could not restore the earlier state", "run_id", run.RunID, "thread_id", run.ThreadID, "err", err)
	}
}

// threadValues reads the thread's newest values and waiting interrupts for its record.
func (r *runner) threadValues(ctx context.Context, threadID string, g graph.Runnable) (json.RawMessage, json.RawMessage) {
	snap, err := g.StateOf(ctx, checkpoint.Ref{ThreadID: threadID})
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
	r.stopSweeper() // after the runs: it deletes the threads they left, then their leases go
	r.stopRenewing()
	r.out.close()
	done := make(chan struct{})
	go func() { r.bg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(r.cfg.WebhookTimeout):
	}
}

// waitOutput is what /runs/wait and join return: the thread's newest values, with the waiting
// interrupts under "__interrupt__", or {"__error__": ...} when the run failed.
func (r *runner) waitOutput(ctx context.Context, run *Run, l *runLog) any {
	if l != nil {
		if _, done, _ := l.since(0); done && l.result() != nil {
			return l.result()
		}
	}
	a, err := r.assistants.assistant(run.AssistantID)
	if err != nil {
		return nil
	}
	snap, err := a.graph.StateOf(ctx, checkpoint.Ref{ThreadID: run.ThreadID})
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

// busy reports whether the thread has a run executing or waiting in this process.
func (r *runner) busy(threadID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	slot := r.threads[threadID]
	return slot != nil && (slot.current != "" || len(slot.waiting) > 0)
}

// A finished stateless run's thread is deleted by the sweeper, with every other one that
// finished meanwhile, in one transaction (metaDB.deleteThreads): hidden from the API at once,
// its rows go within sweepInterval; its run's lease is renewed until then, so that no reaper
// takes the run for one whose worker died. Shutdown deletes what is left.
const (
	sweepInterval = 20 * time.Millisecond
	sweepBatch    = 64
)

type sweeper struct {
	mu      sync.Mutex
	pending []sweepItem
	wake    chan struct{} // one buffered signal: something is pending
	stop    chan struct{}
	done    chan struct{}
}

type sweepItem struct {
	key   threadKey
	runID string
}

func (r *runner) startSweeper() {
	r.sweep.wake = make(chan struct{}, 1)
	r.sweep.stop = make(chan struct{})
	r.sweep.done = make(chan struct{})
	go r.sweepLoop()
}

// stopSweeper deletes the threads still pending and stops the sweeper.
func (r *runner) stopSweeper() {
	close(r.sweep.stop)
	<-r.sweep.done
}

// dropTemporary hides a finished stateless run's thread from the API and hands it to the
// sweeper.
func (r *runner) dropTemporary(tenant, threadID, runID string) {
	r.meta.hidden.Store(threadID, struct{}{})
	r.sweep.mu.Lock()
	r.sweep.pending = append(r.sweep.pending, sweepItem{threadKey{tenant, threadID}, runID})
	r.sweep.mu.Unlock()
	r.wakeSweeper()
}

// sweeping counts the finished stateless runs' threads that are hidden and not deleted yet.
func (r *runner) sweeping() int {
	n := 0
	r.meta.hidden.Range(func(any, any) bool { n++; return true })
	return n
}

func (r *runner) wakeSweeper() {
	select {
	case r.sweep.wake <- struct{}{}:
	default:
	}
}

func (r *runner) sweepLoop() {
	defer close(r.sweep.done)
	for {
		select {
		case <-r.sweep.stop:
			r.sweepPending()
			return
		case <-r.sweep.wake:
		}
		// Let other runs finish meanwhile: one transaction takes them all.
		select {
		case <-r.sweep.stop:
			r.sweepPending()
			return
		case <-time.After(sweepInterval):
		}
		r.sweepPending()
	}
}

// sweepPending deletes the pending threads, sweepBatch at a time. What fails stays pending
// (and hidden) and is tried again a second later.
func (r *runner) sweepPending() {
	for {
		r.sweep.mu.Lock()
		batch := slices.Clone(r.sweep.pending[:min(len(r.sweep.pending), sweepBatch)])
		r.sweep.pending = r.sweep.pending[len(batch):]
		if len(r.sweep.pending) == 0 {
			r.sweep.pending = nil
		}
		r.sweep.mu.Unlock()
		if len(batch) == 0 {
			return
		}
		keys := make([]threadKey, len(batch))
		for i, it := range batch {
			keys[i] = it.key
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := r.meta.deleteThreads(ctx, keys)
		cancel()
		if err != nil {
			r.log.Warn("cannot delete finished stateless runs' threads; retrying", "threads", len(batch), "err", err)
			r.sweep.mu.Lock()
			r.sweep.pending = append(batch, r.sweep.pending...)
			r.sweep.mu.Unlock()
			time.AfterFunc(time.Second, r.wakeSweeper)
			return
		}
		for _, it := range batch {
			r.meta.hidden.Delete(it.key.id)
			r.dropLease(it.runID)
		}
	}
}

// isNullJSON reports whether a run's input is absent: no bytes, or JSON null.
func isNullJSON(b json.RawMessage) bool {
	t := strings.TrimSpace(string(b))
	return t == "" || t == "null"
}
