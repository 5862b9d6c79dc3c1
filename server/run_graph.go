package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/server/internal/lcstream"
	"github.com/trellis-go/trellis/server/internal/lcwire"
	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/tool"
)

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
	if len(kw.Context) > 0 {
		opts = append(opts, graph.WithContext(kw.Context)) // decoded into the graph's context type
	}
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
			if !waiting(snap) {
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
		if snap, err := g.State(ctx, checkpoint.Ref{ThreadID: run.ThreadID, CheckpointID: kw.CheckpointID}); err == nil && waiting(snap) {
			return nil, append(opts, graph.Continue()), false, nil
		}
	}
	return kw.Input, opts, false, nil
}

// waiting reports whether the thread has work left at snap: nodes due, or a task that waits on
// an interrupt (after a node's second interrupt LangGraph lists no next node, the first one's
// resume value counting as its write, while the task still waits).
func waiting(snap *graph.StateSnapshot[any]) bool {
	return len(snap.Next) > 0 || len(snap.Interrupts()) > 0
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
		// A checkpoint held back (newThreadSaver) went with the event that followed it, or
		// goes now, before the graph goes on, when it is due.
		if err := sendDue(ctx); err != nil {
			runErr = err
			break
		}
	}
	var ie *graph.InterruptedError
	if errors.As(runErr, &ie) && conv.Wants("values") {
		emit("values", map[string]any{"__interrupt__": lcwire.Interrupts(ie.Interrupts)})
	}
	return runErr
}
