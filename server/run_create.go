package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/server/internal/engine"
	"github.com/trellis-go/trellis/server/internal/metadb"
	"github.com/trellis-go/trellis/server/internal/stream"
)

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

// create validates a run request, readies its thread, and hands the run to the engine, which
// applies the multitask strategy and schedules it (engine.Runner.Submit). It returns the run
// and the log its events go to in this process.
func (r *runner) create(ctx context.Context, p Principal, threadID string, req *runCreate) (*Run, *stream.Log, error) {
	spec, err := r.checkRequest(ctx, p, req)
	if err != nil {
		return nil, nil, err
	}
	if err := r.refuseWhenClosing(); err != nil {
		return nil, nil, err
	}
	threadID, temporary, newThread, err := r.prepareThread(ctx, p.Tenant, threadID, spec.a, req)
	if err != nil {
		return nil, nil, err
	}
	fresh := newThread != nil
	if !fresh {
		if err := checkResume(ctx, spec.a.graph, threadID, req.Command); err != nil { // resume_check.go
			return nil, nil, err
		}
	}
	run := r.newRun(ctx, p, threadID, temporary, spec, req)
	row := runRow(run)
	erun := engine.RunOf(row)
	erun.NewThread = newThread
	l, err := r.Submit(ctx, erun, fresh, req.wait)
	switch {
	case errors.Is(err, engine.ErrClosing):
		return nil, nil, errClosing()
	case errors.Is(err, engine.ErrThreadBusy):
		return nil, nil, threadBusy(threadID)
	case err != nil:
		return nil, nil, err
	}
	run.RunID, run.CreatedAt, run.UpdatedAt = row.RunID, row.CreatedAt, row.UpdatedAt
	r.feed.notify(p.Tenant, threadID, nil)
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
	if err := checkContext(a.graph, "context", req.Context, false); err != nil { // runcontext.go
		return nil, err
	}
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
	if r.Closing() {
		return errClosing()
	}
	return nil
}

// errClosing is the 503 of a run refused while the server shuts down.
func errClosing() error {
	return &APIError{Status: http.StatusServiceUnavailable, Message: "the server is shutting down and takes no new runs", Hint: "retry against another replica or after the restart", kind: ErrShuttingDown}
}

// prepareThread readies the thread the run goes on: a new one when the request names none (a
// stateless run's, temporary unless on_completion is keep), the one named (which records the
// run's graph if it has none yet), or a new one with that ID for if_not_exists=create. It returns
// the thread's ID, whether it is temporary, and, when the request names no thread, the row of
// the new one, which the engine inserts with the run (then no other run can be on it).
func (r *runner) prepareThread(ctx context.Context, tenant, threadID string, a *Assistant, req *runCreate) (id string, temporary bool, fresh *metadb.Thread, err error) {
	now := r.meta.Stamp()
	if threadID == "" {
		threadID = uuid.NewString()
		temporary = req.OnCompletion != "keep"
		return threadID, temporary, r.meta.threadRow(ctx, newRunThread(tenant, threadID, a, now, temporary)), nil
	}
	t, err := r.meta.getThread(ctx, tenant, threadID)
	if err == nil {
		return threadID, false, nil, r.recordGraph(ctx, tenant, threadID, t, a)
	}
	if !errors.Is(err, ErrNotFound) || req.IfNotExists != "create" {
		return "", false, nil, err
	}
	if taken, err := r.meta.ThreadTaken(ctx, threadID); err != nil || taken {
		if err == nil {
			err = notFound("thread", threadID)
		}
		return "", false, nil, err
	}
	_, err = r.meta.createThread(ctx, newRunThread(tenant, threadID, a, now, false))
	return threadID, false, nil, err
}

// newRunThread is an idle thread for a run, recording the run's graph on it.
func newRunThread(tenant, threadID string, a *Assistant, now time.Time, temporary bool) *Thread {
	return &Thread{ThreadID: threadID, Metadata: map[string]any{"graph_id": a.GraphID, "assistant_id": a.AssistantID}, Status: ThreadIdle, CreatedAt: now, tenant: tenant, temporary: temporary}
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
// are set when the engine inserts it (engine.Runner.Submit).
func (r *runner) newRun(ctx context.Context, p Principal, threadID string, temporary bool, spec *runSpec, req *runCreate) *Run {
	cpID := req.CheckpointID
	if cpID == "" && req.Checkpoint != nil {
		cpID = req.Checkpoint.CheckpointID
	}
	md := authStamp(ctx, req.Metadata)
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

// threadBusy is the 409 of a run refused by the reject strategy.
func threadBusy(threadID string) error {
	return &APIError{Status: http.StatusConflict, Message: fmt.Sprintf("thread %q is already running a run", threadID), Hint: "wait for it to finish, or set multitask_strategy to enqueue, interrupt or rollback", kind: ErrBusy}
}
