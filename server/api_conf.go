package server

// Routes and shapes the LangGraph API has and the SDK calls, beyond the core ones of api.go and
// api_runs.go: PATCH /threads/{id}/state, GET /threads/{id}/stream, POST /threads/prune,
// POST /runs/batch, POST /runs/cancel; and the names of run errors as LangGraph gives them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
)

// errorName is the name a run's error event gives its error: LangGraph's exception names where
// trellis has the same failure (GraphRecursionError, TimeoutError, CancelledError), trellis's
// own otherwise (BudgetExceeded, NodeError(<node>), Error).
func errorName(err error) string {
	var te *RunTimeoutError
	var ne *graph.NodeError
	if _, ok := err.(*BudgetError); ok { // a step budget ends a run through its recursion limit
		return "BudgetExceeded"
	}
	switch {
	case errors.Is(err, graph.ErrRecursionLimit):
		return "GraphRecursionError"
	case errors.As(err, &te), errors.Is(err, context.DeadlineExceeded):
		return "TimeoutError"
	case errors.Is(err, context.Canceled):
		return "CancelledError"
	}
	if errors.As(err, &ne) {
		return fmt.Sprintf("NodeError(%s)", ne.Node)
	}
	return "Error"
}

// gotoNodes reads command.goto: a node's name or a list of them (LangGraph's Send objects are
// not taken).
func gotoNodes(raw json.RawMessage) ([]string, error) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil || len(many) == 0 {
		return nil, badRequest("give command.goto as a node's name or a list of names (Send objects are not supported)", "field \"command.goto\" is %s", raw)
	}
	return many, nil
}

// gotoer is a graph that can be steered by a goto from outside its nodes (a graph.Compiled's
// Runnable view).
type gotoer interface {
	Goto(ctx context.Context, ref checkpoint.Ref, values json.RawMessage, nodes []string) (checkpoint.Ref, error)
}

func gotoGraph(g graph.Runnable) (gotoer, bool) {
	if w, ok := g.(*apiGraph); ok {
		g = w.Runnable
	}
	gt, ok := g.(gotoer)
	return gt, ok
}

// checkGoto checks a run's command.goto against its graph when the run is created.
func checkGoto(c *RunCommand, g graph.Runnable) error {
	if c == nil || isNullJSON(c.Goto) {
		return nil
	}
	nodes, err := gotoNodes(c.Goto)
	if err != nil {
		return err
	}
	if !isNullJSON(c.Resume) {
		return badRequest("resume the interrupt first, then steer the thread with another run's command.goto", "command.goto and command.resume are both set")
	}
	if _, ok := gotoGraph(g); !ok {
		return badRequest("use command.update, or input", "this assistant's graph cannot take command.goto")
	}
	for _, n := range nodes {
		if !slices.Contains(g.Nodes(), n) {
			return badRequest(fmt.Sprintf("the graph's nodes are %v", g.Nodes()), "command.goto names unknown node %q", n)
		}
	}
	return nil
}

// applyGoto applies a run's command.update and schedules command.goto's nodes next, before the
// run continues the thread.
func applyGoto(ctx context.Context, g graph.Runnable, threadID string, c *RunCommand) error {
	nodes, err := gotoNodes(c.Goto)
	if err != nil {
		return err
	}
	gt, ok := gotoGraph(g)
	if !ok {
		return errors.New("command.goto: the graph cannot be steered from outside its nodes")
	}
	update := c.Update
	if isNullJSON(update) {
		update = nil
	}
	if _, err := gt.Goto(ctx, checkpoint.Ref{ThreadID: threadID}, update, nodes); err != nil {
		return fmt.Errorf("command.goto: %w", err)
	}
	return nil
}

// runFieldNames are the fields of a run record select may keep (GET /threads/{id}/runs).
var runFieldNames = []string{"run_id", "thread_id", "assistant_id", "created_at", "updated_at", "status", "metadata", "kwargs", "multitask_strategy",
	"priority", "attempt", "progress", "last_error", "next_attempt_at"}

// runSelect reads the select query parameter of a run list: repeated, comma-separated or a
// JSON list (as the JS SDK sends it).
func runSelect(r *http.Request) ([]string, error) {
	sel := parseModesParam(r.URL.Query()["select"])
	for _, f := range sel {
		if !slices.Contains(runFieldNames, f) {
			return nil, badRequest("select among "+strings.Join(runFieldNames, ", "), "query parameter \"select\" names unknown field %q", f)
		}
	}
	return sel, nil
}

// handleStatePatch answers PATCH /threads/{id}/state (the SDK's patchState): the metadata given
// is merged, key by key, into the metadata of the thread's newest checkpoint.
func (s *Server) handleStatePatch(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Metadata map[string]any `json:"metadata"`
	}
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.Metadata == nil {
		writeError(w, badRequest("send {\"metadata\": {...}} with the keys to set on the newest checkpoint", "field \"metadata\" is required"))
		return
	}
	t, g, err := s.threadGraph(r)
	if err != nil {
		writeError(w, err)
		return
	}
	snap, err := g.State(r.Context(), checkpoint.Ref{ThreadID: t.ThreadID})
	if errors.Is(err, checkpoint.ErrNotFound) {
		e := notFound("checkpoint of thread", t.ThreadID)
		e.Hint = "the thread has no state yet: run it or update its state first"
		writeError(w, e)
		return
	}
	if err != nil {
		writeError(w, err)
		return
	}
	md := map[string]any{}
	for k, v := range snap.Metadata {
		md[k] = v
	}
	for k, v := range req.Metadata {
		md[k] = v
	}
	if err := s.saver.SetMetadata(r.Context(), snap.Ref, md); err != nil {
		if errors.Is(err, checkpoint.ErrNotFound) { // the thread was deleted meanwhile
			err = notFound("checkpoint of thread", t.ThreadID)
		}
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleThreadPrune answers POST /threads/prune (the SDK's threads.prune): with strategy
// "delete" (the default) the threads go with their runs and checkpoints, their active runs
// cancelled first; with "keep_latest" each keeps only its newest checkpoint. Unknown IDs are
// skipped; the answer counts the threads pruned.
func (s *Server) handleThreadPrune(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ThreadIDs []string `json:"thread_ids"`
		Strategy  string   `json:"strategy"`
	}
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	switch req.Strategy {
	case "", "delete", "keep_latest":
	default:
		writeError(w, badRequest("use delete or keep_latest", "field \"strategy\" is %q", req.Strategy))
		return
	}
	if len(req.ThreadIDs) == 0 {
		writeError(w, badRequest("list the threads to prune in thread_ids", "field \"thread_ids\" is empty"))
		return
	}
	ctx := r.Context()
	tenant := principal(r).Tenant
	n := 0
	for _, id := range req.ThreadIDs {
		t, err := s.meta.getThread(ctx, tenant, id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			writeError(w, err)
			return
		}
		if req.Strategy == "keep_latest" {
			if g := s.graphOf(t); g != nil {
				if err := g.PruneThread(ctx, t.ThreadID, 1); err != nil {
					writeError(w, err)
					return
				}
			}
			n++
			continue
		}
		active, _ := s.meta.activeRuns(ctx, t.tenant, t.ThreadID)
		for _, run := range active {
			_ = s.runs.cancel(ctx, t.tenant, t.ThreadID, run.RunID, errCancelInterrupt, true)
		}
		if err := s.removeThread(ctx, t); err != nil {
			writeError(w, err)
			return
		}
		n++
	}
	writeJSON(w, 200, map[string]any{"pruned_count": n})
}

// handleRunsBatch answers POST /runs/batch (the SDK's runs.createBatch): a list of stateless run
// requests, each created as POST /runs would; the answer lists the runs in order. The requests
// are all checked before any run is created; an error names the request by its index.
func (s *Server) handleRunsBatch(w http.ResponseWriter, r *http.Request) {
	var reqs []runCreate
	if err := decode(r, &reqs); err != nil {
		writeError(w, err)
		return
	}
	if len(reqs) == 0 {
		writeError(w, badRequest("send a JSON list of run requests, each as POST /runs takes", "the batch is empty"))
		return
	}
	if len(reqs) > 100 {
		writeError(w, badRequest("send at most 100 runs per batch", "the batch has %d runs", len(reqs)))
		return
	}
	p := principal(r)
	for i := range reqs {
		if err := s.checkRunInputFor(r.Context(), p.Tenant, &reqs[i]); err != nil {
			writeError(w, batchError(i, err))
			return
		}
		if reqs[i].AssistantID == "" {
			writeError(w, batchError(i, badRequest("name one of the assistants from POST /assistants/search", "field \"assistant_id\" is required")))
			return
		}
		if _, err := s.assistantFor(r.Context(), p.Tenant, reqs[i].AssistantID); err != nil {
			writeError(w, batchError(i, err))
			return
		}
	}
	out := make([]*Run, 0, len(reqs))
	for i := range reqs {
		run, _, err := s.runs.create(r.Context(), p, "", &reqs[i])
		if err != nil {
			writeError(w, batchError(i, err))
			return
		}
		out = append(out, run)
	}
	writeJSON(w, 200, out)
}

// batchError prefixes an error with the index of the batch's request it is about.
func batchError(i int, err error) error {
	var ae *APIError
	if errors.As(err, &ae) {
		cp := *ae
		cp.Message = fmt.Sprintf("run [%d]: %s", i, ae.Message)
		return &cp
	}
	return fmt.Errorf("run [%d]: %w", i, err)
}

// handleRunsCancelMany answers POST /runs/cancel (the SDK's runs.cancelMany): the runs named by
// run_ids (of thread_id, when given), or every active run of thread_id, or every run of the
// caller's with status pending, running or all (both); ?action=interrupt|rollback as for one run.
// Named runs are all looked up before any is cancelled: an unknown one is 404.
func (s *Server) handleRunsCancelMany(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ThreadID string   `json:"thread_id"`
		RunIDs   []string `json:"run_ids"`
		Status   string   `json:"status"`
	}
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	action := errCancelInterrupt
	switch a := r.URL.Query().Get("action"); a {
	case "", "interrupt":
	case "rollback":
		action = errCancelRollback
	default:
		writeError(w, badRequest("use interrupt or rollback", "query parameter \"action\" is %q", a))
		return
	}
	ctx := r.Context()
	tenant := principal(r).Tenant
	var runs []*Run
	switch {
	case len(req.RunIDs) > 0:
		if req.Status != "" {
			writeError(w, badRequest("name runs by run_ids, or give a status, not both", "fields \"run_ids\" and \"status\" are both set"))
			return
		}
		if req.ThreadID != "" {
			if _, err := s.meta.getThread(ctx, tenant, req.ThreadID); err != nil {
				writeError(w, err)
				return
			}
		}
		for _, id := range req.RunIDs {
			run, err := s.meta.getRun(ctx, tenant, req.ThreadID, id)
			if err != nil {
				writeError(w, err)
				return
			}
			runs = append(runs, run)
		}
	case req.Status != "":
		statuses := map[string][]string{"pending": {RunPending}, "running": {RunRunning}, "all": {RunPending, RunRunning}}[req.Status]
		if statuses == nil {
			writeError(w, badRequest("use pending, running or all", "field \"status\" is %q", req.Status))
			return
		}
		var err error
		if runs, err = s.meta.tenantActiveRuns(ctx, tenant, req.ThreadID); err != nil {
			writeError(w, err)
			return
		}
		runs = slices.DeleteFunc(runs, func(run *Run) bool { return !slices.Contains(statuses, run.Status) || !ownerSeesRun(ctx, run) })
	case req.ThreadID != "":
		if _, err := s.meta.getThread(ctx, tenant, req.ThreadID); err != nil {
			writeError(w, err)
			return
		}
		var err error
		if runs, err = s.meta.activeRuns(ctx, tenant, req.ThreadID); err != nil {
			writeError(w, err)
			return
		}
	default:
		writeError(w, badRequest("give run_ids (with thread_id, optionally), a thread_id, or a status (pending, running or all)", "the request names no runs to cancel"))
		return
	}
	// Newest first: a run cancelled before the ones ahead of it never starts when they end.
	slices.Reverse(runs)
	for _, run := range runs {
		if err := s.runs.cancel(ctx, tenant, run.ThreadID, run.RunID, action, false); err != nil && !errors.Is(err, ErrNotFound) {
			writeError(w, err)
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}
