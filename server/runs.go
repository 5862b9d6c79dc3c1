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
	"github.com/trellis-go/trellis/server/internal/stream"

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
	// and publishes stream events (outbox.go; the logs are stream.Log).
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
			r.hub.Sweep()
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
		if err := r.bus.Publish(context.Background(), stream.Message{Kind: "done", RunID: runID, Thread: threadID}); err != nil {
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

// runSpec is a run request once checked: its assistant, and its options in the form the run's
// record keeps them.
type runSpec struct {
	a          *Assistant
	modes      []string // stream modes: values when the request names none
	before     []string // interrupt_before
	after      []string // interrupt_after
	strategy   string   // multitask strategy: reject when the request names none
	prio       Priority
	startAfter int64 // when the run is due, in ms since the epoch; 0: at once
	durability string
}

// create validates a run request, applies the multitask strategy and schedules the run. It
// returns the run and the log its events go to in this process.
func (r *runner) create(ctx context.Context, p Principal, threadID string, req *runCreate) (*Run, *stream.Log, error) {
	spec, err := r.checkRequest(ctx, p, req)
	if err != nil {
		return nil, nil, err
	}
	if err := r.refuseWhenClosing(); err != nil {
		return nil, nil, err
	}
	threadID, temporary, fresh, err := r.prepareThread(ctx, p.Tenant, threadID, spec.a, req)
	if err != nil {
		return nil, nil, err
	}
	run := r.newRun(ctx, p, threadID, temporary, spec, req)
	l, inflight, first, err := r.insert(ctx, run, fresh, req)
	if err != nil {
		return nil, nil, err
	}
	r.cancelInflight(ctx, run, inflight)
	r.created(ctx, run)
	if first {
		if err := r.enqueue(ctx, run.RunID, spec.prio); err != nil {
			if req.wait {
				r.unwait(run.RunID)
			}
			return nil, nil, err
		}
	}
	return run, l, nil
}

// checkRequest checks a run request, field by field in the order the errors are reported,
// after finding its assistant (whose config and context it merges under the request's).
func (r *runner) checkRequest(ctx context.Context, p Principal, req *runCreate) (*runSpec, error) {
	if req.AssistantID == "" {
		return nil, badRequest("name one of the assistants from POST /assistants/search", "field \"assistant_id\" is required")
	}
	a, err := r.assistants.assistantFor(ctx, p.Tenant, req.AssistantID)
	if err != nil {
		return nil, err
	}
	req.Config, req.Context = withAssistantConfig(a, req.Config, req.Context)
	spec := &runSpec{a: a}
	if err := spec.readStreamOptions(req); err != nil {
		return nil, err
	}
	if err := spec.readScheduling(req); err != nil {
		return nil, err
	}
	if err := checkRunBody(a, req, r.cfg.Budget); err != nil {
		return nil, err
	}
	return spec, nil
}

// readStreamOptions reads the stream modes and the nodes to interrupt at, which must be the
// graph's (or "*").
func (spec *runSpec) readStreamOptions(req *runCreate) error {
	modes, err := stringOrList("stream_mode", req.StreamMode)
	if err != nil {
		return err
	}
	if len(modes) == 0 {
		modes = []string{"values"}
	}
	if _, err := parseStreamModes(modes); err != nil {
		return err
	}
	before, err := stringOrList("interrupt_before", req.InterruptBefore)
	if err != nil {
		return err
	}
	after, err := stringOrList("interrupt_after", req.InterruptAfter)
	if err != nil {
		return err
	}
	nodes := spec.a.graph.Nodes()
	for _, n := range append(slices.Clone(before), after...) {
		if n != "*" && !slices.Contains(nodes, n) {
			return badRequest(fmt.Sprintf("the graph's nodes are %v", nodes), "interrupt_before/interrupt_after names unknown node %q", n)
		}
	}
	spec.modes, spec.before, spec.after = modes, before, after
	return nil
}

// readScheduling reads how the run is scheduled and kept: the multitask strategy, the priority,
// after_seconds, the durability, on_disconnect and on_completion.
func (spec *runSpec) readScheduling(req *runCreate) error {
	var err error
	if spec.strategy, err = parseStrategy(req.MultitaskStrategy); err != nil {
		return err
	}
	if spec.prio, err = parsePriority(req.Priority); err != nil {
		return err
	}
	if spec.startAfter, err = parseAfterSeconds(req.AfterSeconds); err != nil {
		return err
	}
	if spec.durability, err = parseDurability(req.Durability, req.CheckpointDuring); err != nil {
		return err
	}
	switch req.OnDisconnect {
	case "", "continue", "cancel":
	default:
		return badRequest("use cancel or continue", "field \"on_disconnect\" is %q", req.OnDisconnect)
	}
	switch req.OnCompletion {
	case "", "delete", "keep":
	default:
		return badRequest("use delete or keep", "field \"on_completion\" is %q", req.OnCompletion)
	}
	return nil
}

// parseStrategy reads multitask_strategy: what a run does to the thread's unfinished runs.
func parseStrategy(s string) (string, error) {
	switch s {
	case "":
		return "reject", nil
	case "reject", "interrupt", "rollback", "enqueue":
		return s, nil
	}
	return "", badRequest("use reject, interrupt, rollback or enqueue", "field \"multitask_strategy\" is %q", s)
}

// parseAfterSeconds reads after_seconds into the time the run is due (ms since the epoch), or 0
// for a run due at once.
func parseAfterSeconds(a *float64) (int64, error) {
	if a == nil {
		return 0, nil
	}
	if math.IsNaN(*a) || *a < 0 || *a > maxAfterSeconds {
		return 0, badRequest(fmt.Sprintf("give the seconds to wait before the run starts, from 0 to %d", maxAfterSeconds), "field \"after_seconds\" is %v", *a)
	}
	if *a == 0 {
		return 0, nil
	}
	return ms(time.Now().Add(time.Duration(*a * float64(time.Second)))), nil
}

// parseDurability reads durability, or its older form checkpoint_during (false means exit).
func parseDurability(d string, checkpointDuring *bool) (string, error) {
	switch d {
	case "":
		if checkpointDuring != nil && !*checkpointDuring {
			return string(graph.DurabilityExit), nil
		}
		return "", nil
	case string(graph.DurabilitySync), string(graph.DurabilityAsync), string(graph.DurabilityExit):
		return d, nil
	}
	return "", badRequest("use sync, async or exit", "field \"durability\" is %q", d)
}

// checkRunBody checks what the run carries: command.goto's nodes, the webhook's URL, the
// budget keys of its config (against the server's limits) and the shape of its input.
func checkRunBody(a *Assistant, req *runCreate, limits runBudget) error {
	if err := checkGoto(req.Command, a.graph); err != nil { // api_conf.go
		return err
	}
	if req.Webhook != "" {
		if err := checkWebhook(req.Webhook); err != nil {
			return err
		}
	}
	if _, err := budgetWithin(req.Config, limits); err != nil { // budget.go
		return err
	}
	if len(req.Input) > 0 && string(req.Input) != "null" && !bytes.HasPrefix(bytes.TrimSpace(req.Input), []byte("{")) {
		return badRequest("send the input as a JSON object of state keys, e.g. {\"messages\": [...]}", "field \"input\" must be an object")
	}
	return nil
}

// refuseWhenClosing answers 503 once the server is shutting down.
func (r *runner) refuseWhenClosing() error {
	r.mu.Lock()
	closing := r.closing
	r.mu.Unlock()
	if closing {
		return &APIError{Status: http.StatusServiceUnavailable, Message: "the server is shutting down and takes no new runs", Hint: "retry against another replica or after the restart", kind: ErrShuttingDown}
	}
	return nil
}

// prepareThread readies the thread the run goes on: a new one when the request names none (a
// stateless run's, temporary unless on_completion is keep), the one named (which records the
// run's graph if it has none yet), or a new one with that ID for if_not_exists=create. It returns
// the thread's ID, whether it is temporary, and whether this request created it without an ID
// (then no other run can be on it).
func (r *runner) prepareThread(ctx context.Context, tenant, threadID string, a *Assistant, req *runCreate) (id string, temporary, fresh bool, err error) {
	now := r.meta.stamp()
	if threadID == "" {
		threadID = uuid.NewString()
		temporary = req.OnCompletion != "keep"
		return threadID, temporary, true, r.createThread(ctx, tenant, threadID, a, now, temporary)
	}
	t, err := r.meta.getThread(ctx, tenant, threadID)
	if err == nil {
		return threadID, false, false, r.recordGraph(ctx, tenant, threadID, t, a)
	}
	if !errors.Is(err, ErrNotFound) || req.IfNotExists != "create" {
		return "", false, false, err
	}
	if taken, err := r.meta.threadTaken(ctx, threadID); err != nil || taken {
		if err == nil {
			err = notFound("thread", threadID)
		}
		return "", false, false, err
	}
	return threadID, false, false, r.createThread(ctx, tenant, threadID, a, now, false)
}

// createThread creates an idle thread for a run, recording the run's graph on it.
func (r *runner) createThread(ctx context.Context, tenant, threadID string, a *Assistant, now time.Time, temporary bool) error {
	t := &Thread{ThreadID: threadID, Metadata: map[string]any{"graph_id": a.GraphID, "assistant_id": a.AssistantID}, Status: ThreadIdle, CreatedAt: now, tenant: tenant, temporary: temporary}
	_, err := r.meta.createThread(ctx, t)
	return err
}

// recordGraph records the run's graph on a thread that names none: a thread holds the state of
// the graph that first ran on it (LangGraph records the same).
func (r *runner) recordGraph(ctx context.Context, tenant, threadID string, t *Thread, a *Assistant) error {
	if _, ok := t.Metadata["graph_id"].(string); ok {
		return nil
	}
	t.Metadata["graph_id"], t.Metadata["assistant_id"] = a.GraphID, a.AssistantID
	return r.meta.setThreadMetadata(ctx, tenant, threadID, t.Metadata)
}

// newRun makes the record of a pending run from its checked request. Its ID and creation time
// are set when it is inserted (see insert).
func (r *runner) newRun(ctx context.Context, p Principal, threadID string, temporary bool, spec *runSpec, req *runCreate) *Run {
	cpID := req.CheckpointID
	if cpID == "" && req.Checkpoint != nil {
		cpID = req.Checkpoint.CheckpointID
	}
	md := req.Metadata
	if md == nil {
		md = map[string]any{}
	}
	run := &Run{ThreadID: threadID, AssistantID: spec.a.AssistantID, Status: RunPending, Metadata: md, MultitaskStrategy: spec.strategy, tenant: p.Tenant, Priority: spec.prio,
		Kwargs: &RunKwargs{Input: req.Input, Command: req.Command, Config: req.Config, Context: req.Context, StreamMode: spec.modes,
			InterruptBefore: spec.before, InterruptAfter: spec.after, Webhook: req.Webhook, Subgraphs: req.StreamSubgraphs,
			Resumable: req.StreamResumable, Temporary: temporary, CheckpointID: cpID, OnDisconnect: req.OnDisconnect, Durability: spec.durability, StartAfter: spec.startAfter,
			User: p.User, Permissions: p.Permissions, PerUser: p.PerUser, TraceContext: r.observer.traceContextOf(ctx)}}
	if spec.prio != PriorityNormal {
		run.Kwargs.Priority = string(spec.prio)
	}
	if spec.startAfter > 0 {
		at := fromMS(spec.startAfter)
		run.NextAttemptAt = &at
	}
	return run
}

// insert applies the multitask strategy and inserts the run, under r.mu so that two requests on
// one thread cannot both see it idle. The run's ID and creation time are taken under it too, so
// that this process's runs of a thread are created, and wait in its slot, in one order. It opens
// the run's log, counts the request as a waiter if it waits for the output (before the run can
// start; the request calls unwait), and puts the run in its thread's slot. It returns the log,
// the thread's unfinished runs (for interrupt and rollback), and whether the run is its slot's
// current one, to be enqueued now.
func (r *runner) insert(ctx context.Context, run *Run, fresh bool, req *runCreate) (l *stream.Log, inflight []string, first bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	run.RunID = uuid.Must(uuid.NewV7()).String()
	run.CreatedAt = r.meta.stamp()
	run.UpdatedAt = run.CreatedAt
	if inflight, err = r.insertLocked(ctx, run, fresh); err != nil {
		return nil, nil, false, err
	}
	l = r.openCreated(run)
	if req.wait {
		r.waiters[run.RunID]++
	}
	return l, inflight, r.placeLocked(run), nil
}

// insertLocked inserts the run, with r.mu held, unless its strategy is reject and its thread has
// unfinished runs (409); it returns those runs. With replicas the database is the truth: another
// replica may be running one of the thread's runs, and this one's slot may still name a run
// another replica finished. The look and the insert are then one step across replicas (see
// insertRunOnThread). A thread this request created (fresh) has no other run to look for.
func (r *runner) insertLocked(ctx context.Context, run *Run, fresh bool) ([]string, error) {
	reject := run.MultitaskStrategy == "reject"
	if r.bus != nil && !fresh {
		active, err := r.meta.insertRunOnThread(ctx, run, reject)
		if err != nil {
			return nil, err
		}
		if len(active) > 0 && reject {
			return nil, threadBusy(run.ThreadID)
		}
		return active, nil
	}
	var inflight []string
	if slot := r.threads[run.ThreadID]; slot != nil {
		if slot.current != "" {
			inflight = append(inflight, slot.current)
		}
		inflight = append(inflight, slot.waiting...)
	}
	if len(inflight) > 0 && reject {
		return nil, threadBusy(run.ThreadID)
	}
	if err := r.meta.insertRun(ctx, run); err != nil {
		return nil, err
	}
	return inflight, nil
}

// threadBusy is the 409 of a run refused by the reject strategy.
func threadBusy(threadID string) error {
	return &APIError{Status: http.StatusConflict, Message: fmt.Sprintf("thread %q is already running a run", threadID), Hint: "wait for it to finish, or set multitask_strategy to enqueue, interrupt or rollback", kind: ErrBusy}
}

// openCreated opens the log of a run just created. With replicas any of them may execute the
// run: this process's readers (the creating request's stream or wait, a WebSocket) follow it
// wherever it executes, and the mirror stops if this process takes the run itself. The run is
// new: nothing of it is written yet.
func (r *runner) openCreated(run *Run) *stream.Log {
	if r.bus != nil {
		return newMirror(r.hub, r.bus, r.meta, run, true)
	}
	l := r.hub.Open(run.RunID)
	l.SetResumable(run.Kwargs.Resumable)
	return l
}

// cancelInflight applies the interrupt and rollback strategies: the thread's unfinished runs
// are cancelled (and, with rollback, deleted and their state undone).
func (r *runner) cancelInflight(ctx context.Context, run *Run, inflight []string) {
	var action error
	switch run.MultitaskStrategy {
	case "interrupt":
		action = errCancelInterrupt
	case "rollback":
		action = errCancelRollback
	default:
		return
	}
	for _, id := range inflight {
		_ = r.cancel(ctx, run.tenant, run.ThreadID, id, action, false)
	}
}

// created marks the new run's thread busy (from the moment a run is pending, as LangGraph
// reports it; a temporary thread is nobody's to look at), and counts and logs the run.
func (r *runner) created(ctx context.Context, run *Run) {
	if !run.Kwargs.Temporary {
		_ = r.meta.setThreadBusy(ctx, run.tenant, run.ThreadID)
	}
	r.metrics.runsCreated.Inc()
	r.log.Info("run created", "run_id", run.RunID, "thread_id", run.ThreadID, "assistant_id", run.AssistantID, "tenant", run.tenant, "multitask_strategy", run.MultitaskStrategy)
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
		_ = r.meta.deleteRun(ctx, run.tenant, run.RunID)
	} else {
		_ = r.meta.setRunStatus(ctx, run.RunID, RunInterrupted)
	}
	if l := r.hub.Get(run.RunID); l != nil {
		l.Close()
	}
	r.settleThread(ctx, run.tenant, run.ThreadID)
}

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
	_ = r.meta.setThreadStatus(ctx, run.tenant, run.ThreadID, ThreadError, nil, nil)
	_ = r.meta.releaseLease(ctx, run.RunID, owner)
	r.release(run.ThreadID, run.RunID)
	l.Close()
}

// start makes the run executing here: its progress is followed (and readable live in this
// process until its record has the final one); its context is cancelled by a cancel, by the
// queue stopping, by Config.RunTimeout, or by its lease going to another worker (the lease is
// renewed with every other run's each heartbeat, lease.go); it is counted active.
func (x *execution) start(qctx context.Context) {
	r := x.r
	x.pt = r.track(x.run, x.attempt)
	x.runCtx, x.cancel = context.WithCancelCause(x.ctx)
	x.stopOnQueue = context.AfterFunc(qctx, func() { x.cancel(errShutdownCancel) })
	if t := r.cfg.RunTimeout; t > 0 {
		x.timer = time.AfterFunc(t, func() { x.cancel(&RunTimeoutError{Timeout: t}) })
	}
	r.holdLease(x.run.RunID, x.owner, func() { x.cancel(errLeaseLost) })
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
		r.dropLease(runID)
	}
	r.metrics.runsActive.Dec()
	r.mu.Lock()
	delete(r.active, runID)
	r.mu.Unlock()
	close(x.act.done)
	if !x.leaseGone {
		_ = r.meta.releaseLease(x.ctx, runID, x.owner)
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
// cannot be), or is a token runGraph encoded (tokens.go).
func (x *execution) emit(event string, data any) {
	r, l := x.r, x.l
	if tok, ok := data.(encodedToken); ok {
		if !l.Resumable() {
			r.metrics.events.Inc()
			l.AppendTail(event, tok.head, tok.tail)
			return
		}
		r.persistAndAppend(x.ctx, l, x.run, event, tok.join())
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
		_ = x.r.meta.setThreadBusy(x.ctx, x.run.tenant, x.run.ThreadID)
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
	if snap, err := x.g.StateOf(x.ctx, checkpoint.Ref{ThreadID: x.run.ThreadID}); err == nil {
		x.headBefore = snap.Ref.CheckpointID
	}
}

// runGraph runs the graph, streaming its events, and returns its error. The graph done, a lease
// lost stops nothing (the record may even be gone, with a temporary thread's), but the lease is
// still renewed until the record says the run ended or is gone, so that no reaper takes the run
// for one whose worker died.
func (x *execution) runGraph() error {
	err := x.r.runGraph(x.runCtx, x.run, x.g, x.headBefore, x.pt, x.emit)
	x.r.holdLease(x.run.RunID, x.owner, nil)
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
			snap, err := g.StateOf(ctx, checkpoint.Ref{ThreadID: run.ThreadID})
			if err != nil {
				return nil
			}
			return valuesWithInterrupts(snap)
		})
	} else if snap, err := g.StateOf(x.ctx, checkpoint.Ref{ThreadID: run.ThreadID}); err == nil {
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
		_ = r.meta.setRunStatus(ctx, run.RunID, RunPending)
	case x.status == RunPending:
		_ = r.meta.setRunEnd(ctx, run.RunID, end)
	case x.drop && r.bus == nil:
		// Hidden in this process below, the only one serving the API. With replicas, the
		// others read the record until the sweeper deletes it: it must not say running.
	case errors.Is(x.cause, errCancelRollback):
		_ = r.meta.deleteRun(ctx, run.tenant, run.RunID)
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
		_ = r.meta.setThreadStatus(ctx, run.tenant, run.ThreadID, x.threadStatus, x.values, x.interrupts)
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
		x.r.out.discard(x.l)
	} else {
		x.r.out.sync(x.ctx, x.l)
	}
	x.closeLog = func() {}
	if x.retry == nil {
		x.retry = &RetryError{After: 0, Reason: x.cause}
	}
	return x.retry
}

// persistAndAppend numbers an event and shows it to readers; for a resumable run (every run,
// with a bus) the outbox writes it to the database and publishes it to the replicas: a token at
// once for readers and within outboxInterval for the database, any other event after it is
// written (see outbox for why that keeps Last-Event-ID resumption gapless).
func (r *runner) persistAndAppend(ctx context.Context, l *stream.Log, run *Run, event string, raw json.RawMessage) {
	r.metrics.events.Inc()
	if !l.Resumable() {
		l.Append(event, raw)
		return
	}
	if ev := (streamEvent{Event: event}); ev.Token() {
		l.Append(event, raw)
		r.out.add(l)
		return
	}
	r.out.writeNow(ctx, l, event, raw)
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
	conv := newConverter(kw.StreamMode, kw.Subgraphs, r.observer.streamMetadata(run))
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
		if snap, err := g.StateOf(ctx, checkpoint.Ref{ThreadID: run.ThreadID}); err == nil && snap.Metadata["run_id"] == run.RunID {
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
		if snap, err := g.StateOf(ctx, checkpoint.Ref{ThreadID: run.ThreadID, CheckpointID: kw.CheckpointID}); err == nil && len(snap.Next) > 0 {
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
		if _, err := g.UpdateStateJSON(ctx, checkpoint.Ref{ThreadID: run.ThreadID}, c.Update, ""); err != nil {
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
// wantsProgress); message tokens, in a stream of tuples only, are encoded once each (tokens.go);
// an interrupt ends a values stream with the interrupts the thread waits on.
func streamGraph(ctx context.Context, g graph.Runnable, input json.RawMessage, opts []graph.RunOption, conv *converter, pt *progressTracker, wantsProgress bool, emit func(string, any)) error {
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
	return runErr
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
