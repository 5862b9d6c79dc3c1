package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"time"

	"github.com/trellis-go/trellis/checkpoint"
)

// StateSnapshot is a thread's state at one checkpoint.
type StateSnapshot[S any] struct {
	Values S
	// Next lists the nodes that run when the thread continues; empty when it has finished.
	Next []string
	// Tasks describes those runs, with the interrupts that wait for a value.
	Tasks     []TaskState
	Ref       checkpoint.Ref
	Parent    *checkpoint.Ref
	Step      int
	Metadata  map[string]any
	CreatedAt time.Time
}

// TaskState is a scheduled task of a snapshot.
type TaskState struct {
	ID         string         `json:"id"`
	Name       string         `json:"name"`
	Interrupts []Interruption `json:"interrupts,omitempty"`
	Error      string         `json:"error,omitempty"`
	Done       bool           `json:"done,omitempty"`
	// Checkpoint is set when the task's node is a subgraph ([AddSubgraph]): the thread and
	// namespace the subgraph checkpoints in (no checkpoint ID: its newest), which
	// [Compiled.State] accepts as a ref. LangGraph's get_state gives the same as the task's
	// state config.
	Checkpoint *checkpoint.Ref `json:"checkpoint,omitempty"`
	// State is the subgraph's own snapshot at Checkpoint, with its own subgraphs' states, when
	// the snapshot was read with [Compiled.StateWithSubgraphs] (LangGraph's
	// get_state(subgraphs=True)); nil otherwise. A subgraph task that has not checkpointed yet
	// has an empty snapshot: no values, nothing next.
	State *StateSnapshot[any] `json:"state,omitempty"`
}

// Interrupts returns every interrupt waiting in the snapshot.
func (s *StateSnapshot[S]) Interrupts() []Interruption {
	var out []Interruption
	for _, t := range s.Tasks {
		out = append(out, t.Interrupts...)
	}
	return out
}

// blankLoop returns a loop that only holds state, for reading and updating threads.
func (c *Compiled[S]) blankLoop(ctx context.Context, threadID, ns string) (*loop[S], error) {
	return c.blankLoopOn(ctx, c.opts.Saver, threadID, ns)
}

// blankLoopOn is blankLoop on saver: a subgraph without a saver of its own reads its
// parent's.
func (c *Compiled[S]) blankLoopOn(ctx context.Context, saver checkpoint.Saver, threadID, ns string) (*loop[S], error) {
	if saver == nil {
		return nil, fmt.Errorf("%s: threads need a checkpoint saver (set CompileOptions.Saver)", c.label)
	}
	if threadID == "" {
		return nil, fmt.Errorf("%s: no thread ID given", c.label)
	}
	r := &run{ctx: ctx, cancel: func() {}, sc: c.g.schema, saver: saver, threadID: threadID, ns: ns, yield: func(Event) bool { return true }}
	return &loop[S]{
		run: r, c: c, durability: DurabilitySync,
		state:    reflect.New(c.g.schema.typ).Elem(),
		versions: map[string]string{}, saved: map[string]string{}, barriers: map[string][]string{},
		tracks: make([]track, len(c.g.schema.channels)),
	}, nil
}

// snapshotOf reads a checkpoint as a snapshot. With applyPending, the writes of tasks that
// finished in the checkpoint's superstep before it stopped (at an interrupt or an error) are
// applied to the values, and those tasks leave Next, as LangGraph's getState does for a
// thread's newest state.
func (l *loop[S]) snapshotOf(tuple *checkpoint.Tuple, applyPending bool) (*StateSnapshot[S], error) {
	if err := l.restore(tuple); err != nil {
		return nil, err
	}
	cp := tuple.Checkpoint
	snap := &StateSnapshot[S]{
		Ref:       tuple.Ref,
		Step:      cp.Step,
		Metadata:  cp.Metadata,
		CreatedAt: cp.CreatedAt,
	}
	if cp.ParentID != "" {
		snap.Parent = &checkpoint.Ref{ThreadID: tuple.Ref.ThreadID, NS: tuple.Ref.NS, CheckpointID: cp.ParentID}
	}
	if len(tuple.Pending) > 0 {
		if err := l.loadPending(tuple, runOptions{}); err != nil {
			return nil, err
		}
	}
	snap.Next = l.nextNames()
	if applyPending {
		var done []*task
		next := []string{}
		for _, t := range l.due() {
			switch {
			case t.finished:
				done = append(done, t)
			case len(t.resume) > 0:
				// A task that was resumed and paused again has its resume values recorded as
				// pending writes; LangGraph counts those as the task's writes and leaves the task
				// out of next (it is still listed in Tasks, with the interrupt it waits at).
			default:
				next = append(next, t.node.name)
			}
		}
		if len(done) > 0 {
			if err := l.apply(done); err != nil {
				// The writes of the superstep's finished tasks do not apply (two writes to a
				// key without a reducer, say): as LangGraph's getState, refuse rather than show
				// a state without them.
				return nil, fmt.Errorf("%s: state of thread %q: the pending writes of checkpoint %s do not apply: %w", l.c.label, l.threadID, cp.ID, err)
			}
		}
		snap.Next = next
	}
	snap.Values = l.output()
	waiting := map[string][]Interruption{}
	errs := map[string]string{}
	for _, pw := range tuple.Pending {
		switch pw.Channel {
		case pendingInterrupt:
			var ins []Interruption
			if jsonUnmarshal(pw.Value, &ins) == nil {
				waiting[pw.TaskID] = append(waiting[pw.TaskID], ins...)
			}
		case pendingError:
			var msg string
			if jsonUnmarshal(pw.Value, &msg) == nil {
				errs[pw.TaskID] = msg
			}
		}
	}
	for _, t := range l.due() {
		ins := waiting[t.id]
		if applyPending && t.finished {
			// Answered: the newest state shows only the interrupts still waiting, while a named
			// checkpoint (history) shows every interrupt its superstep paused at.
			ins = nil
		}
		ts := TaskState{ID: t.id, Name: t.node.name, Interrupts: ins, Error: errs[t.id], Done: t.finished}
		if t.node.sub != nil {
			ts.Checkpoint = &checkpoint.Ref{ThreadID: l.threadID, NS: childNS(l.ns, t)}
		}
		snap.Tasks = append(snap.Tasks, ts)
	}
	return snap, nil
}

// childNS is the checkpoint namespace of the subgraph task t runs, under the namespace ns of
// its graph: the node's name and the task's ID, below ns (as the running subgraph names it).
func childNS(ns string, t *task) string {
	seg := t.node.name + ":" + t.id
	if ns == "" {
		return seg
	}
	return ns + "|" + seg
}

// withSubgraphs fills the State of snap's subgraph tasks from saver, recursively.
func (c *Compiled[S]) withSubgraphs(ctx context.Context, saver checkpoint.Saver, snap *StateSnapshot[S]) error {
	for i := range snap.Tasks {
		ts := &snap.Tasks[i]
		if ts.Checkpoint == nil {
			continue
		}
		n := c.g.nodes[ts.Name]
		if n == nil || n.sub == nil {
			continue
		}
		sub, err := n.sub.subState(ctx, saver, *ts.Checkpoint)
		if err != nil {
			return fmt.Errorf("%s: state of subgraph %q (namespace %q): %w", c.label, ts.Name, ts.Checkpoint.NS, err)
		}
		ts.State = sub
	}
	return nil
}

// State returns the thread's state at ref's checkpoint (the newest when ref.CheckpointID is
// empty). The newest state includes the writes of tasks that finished in a superstep that
// stopped at an interrupt or an error (they no longer show in Next), as LangGraph's getState
// gives it; a named checkpoint, like History, shows the checkpoint as it was saved.
func (c *Compiled[S]) State(ctx context.Context, ref checkpoint.Ref) (*StateSnapshot[S], error) {
	return c.state(ctx, ref, ref.CheckpointID == "")
}

// StateWithSubgraphs is [Compiled.State] with the states of its subgraphs, as LangGraph's
// get_state(subgraphs=True) gives them: every task of the snapshot whose node is a subgraph
// carries in State the subgraph's own snapshot (its newest, in the task's namespace: the
// values, next nodes and interrupts of a subgraph that paused or is still running), with the
// subgraph's subgraphs in turn.
func (c *Compiled[S]) StateWithSubgraphs(ctx context.Context, ref checkpoint.Ref) (*StateSnapshot[S], error) {
	snap, err := c.state(ctx, ref, ref.CheckpointID == "")
	if err != nil {
		return nil, err
	}
	if err := c.withSubgraphs(ctx, c.opts.Saver, snap); err != nil {
		return nil, err
	}
	return snap, nil
}

func (c *Compiled[S]) state(ctx context.Context, ref checkpoint.Ref, applyPending bool) (*StateSnapshot[S], error) {
	return c.stateOn(ctx, c.opts.Saver, ref, applyPending)
}

func (c *Compiled[S]) stateOn(ctx context.Context, saver checkpoint.Saver, ref checkpoint.Ref, applyPending bool) (*StateSnapshot[S], error) {
	l, err := c.blankLoopOn(ctx, saver, ref.ThreadID, ref.NS)
	if err != nil {
		return nil, err
	}
	tuple, err := saver.Get(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("%s: state of thread %q: %w", c.label, ref.ThreadID, err)
	}
	return l.snapshotOf(tuple, applyPending)
}

// subgraphState reads the newest snapshot of the subgraph c in ref's namespace, with its own
// subgraphs', from c's saver or else saver (its parent's). A namespace with no checkpoint yet
// (a task that has not started) gives an empty snapshot, as LangGraph's does.
func (c *Compiled[S]) subgraphState(ctx context.Context, saver checkpoint.Saver, ref checkpoint.Ref) (*StateSnapshot[S], error) {
	if c.opts.Saver != nil {
		saver = c.opts.Saver
	}
	snap, err := c.stateOn(ctx, saver, ref, true)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return &StateSnapshot[S]{Ref: ref, Next: []string{}}, nil
	}
	if err != nil {
		return nil, err
	}
	if err := c.withSubgraphs(ctx, saver, snap); err != nil {
		return nil, err
	}
	return snap, nil
}

// HistoryOptions selects part of a thread's history.
type HistoryOptions struct {
	// Before lists only checkpoints older than this checkpoint ID.
	Before string
	// Limit caps how many snapshots are returned; zero means all.
	Limit int
	// Metadata keeps checkpoints whose metadata has these key/value pairs.
	Metadata map[string]any
}

// History returns the thread's snapshots, newest first.
func (c *Compiled[S]) History(ctx context.Context, threadID string, opts HistoryOptions) iter.Seq2[*StateSnapshot[S], error] {
	return func(yield func(*StateSnapshot[S], error) bool) {
		if c.opts.Saver == nil {
			yield(nil, fmt.Errorf("%s: history needs a checkpoint saver", c.label))
			return
		}
		list := c.opts.Saver.List(ctx, checkpoint.ListOptions{ThreadID: threadID, Before: opts.Before, Limit: opts.Limit, Metadata: opts.Metadata})
		for item, err := range list {
			if err != nil {
				yield(nil, err)
				return
			}
			snap, err := c.state(ctx, item.Ref, false)
			if !yield(snap, err) || err != nil {
				return
			}
		}
	}
}

// UpdateState writes values into the thread as if node asNode had returned them, through the
// reducers, and records a new checkpoint (the thread's newest, even when ref names an older one:
// that forks the history). The nodes after asNode are scheduled next; with asNode empty, what
// was scheduled stays scheduled. It returns the new checkpoint.
func (c *Compiled[S]) UpdateState(ctx context.Context, ref checkpoint.Ref, values S, asNode string) (checkpoint.Ref, error) {
	return c.updateState(ctx, ref, values, asNode, nil)
}

// updateState is UpdateState; gotos, when set, are the nodes scheduled next, in place of those
// asNode's edges (or, with no asNode, the thread's schedule) would give (see Goto).
func (c *Compiled[S]) updateState(ctx context.Context, ref checkpoint.Ref, values S, asNode string, gotos []Target) (checkpoint.Ref, error) {
	l, err := c.blankLoop(ctx, ref.ThreadID, ref.NS)
	if err != nil {
		return checkpoint.Ref{}, err
	}
	var node *nodeSpec
	if asNode == START {
		// As LangGraph: the values stand for input, and the nodes after START are scheduled.
		node = startNode
	} else if asNode != "" {
		if node = c.g.nodes[asNode]; node == nil {
			return checkpoint.Ref{}, fmt.Errorf("%s: update as unknown node %q%s", c.label, asNode, suggest(asNode, c.g.order))
		}
	}
	tuple, err := c.opts.Saver.Get(ctx, ref)
	switch {
	case errors.Is(err, checkpoint.ErrNotFound) && ref.CheckpointID == "":
		l.step = -1
	case err != nil:
		return checkpoint.Ref{}, fmt.Errorf("%s: update of thread %q: %w", c.label, ref.ThreadID, err)
	default:
		if err := l.restore(tuple); err != nil {
			return checkpoint.Ref{}, err
		}
		l.head = tuple.Checkpoint.ID
		if ref.CheckpointID != "" {
			latest, err := c.opts.Saver.Get(ctx, checkpoint.Ref{ThreadID: ref.ThreadID, NS: ref.NS})
			if err != nil {
				return checkpoint.Ref{}, err
			}
			l.head = latest.Checkpoint.ID
		}
	}
	if node == nil {
		node = &nodeSpec{name: "__update__"}
	}
	t := &task{id: newTaskID(), node: node, finished: true}
	t.writes = l.sc.writesOf(reflect.ValueOf(&values).Elem(), nil)
	if err := l.apply([]*task{t}); err != nil {
		return checkpoint.Ref{}, err
	}
	if gotos != nil {
		t.targets = gotos
		if err := l.plan([]*task{t}, nil); err != nil {
			return checkpoint.Ref{}, err
		}
	} else if asNode != "" {
		if t.targets, err = l.route(ctx, asNode, l.sc.snapshot(l.state)); err != nil {
			return checkpoint.Ref{}, err
		}
		if err := l.plan([]*task{t}, nil); err != nil {
			return checkpoint.Ref{}, err
		}
	} else {
		for _, nt := range l.next {
			if !nt.send {
				nt.input = l.sc.snapshot(l.state)
			}
		}
	}
	if err := l.save(checkpoint.SourceUpdate); err != nil {
		return checkpoint.Ref{}, err
	}
	out := checkpoint.Ref{ThreadID: ref.ThreadID, NS: ref.NS, CheckpointID: l.cpID}
	if asNode == "" && gotos == nil && tuple != nil {
		// The scheduled tasks stay scheduled with what they recorded: the interrupts they wait
		// on, their resume values, the outcomes of those that finished. Otherwise an edit made
		// while a run waits at an interrupt would drop the interrupt, and the answer with it.
		byTask := map[string][]checkpoint.PendingWrite{}
		for _, pw := range tuple.Pending {
			byTask[pw.TaskID] = append(byTask[pw.TaskID], pw)
		}
		for _, nt := range l.next {
			if ws := byTask[nt.id]; len(ws) > 0 {
				req := checkpoint.WritesRequest{Ref: out, TaskID: nt.id, Writes: ws}
				if err := c.opts.Saver.PutWrites(ctx, req); err != nil {
					return checkpoint.Ref{}, fmt.Errorf("%s: update of thread %q: keeping the pending writes of %q: %w", c.label, ref.ThreadID, nt.node.name, err)
				}
			}
		}
	}
	return out, nil
}

// DeleteThread removes a thread and all its checkpoints.
func (c *Compiled[S]) DeleteThread(ctx context.Context, threadID string) error {
	if c.opts.Saver == nil {
		return fmt.Errorf("%s: threads need a checkpoint saver", c.label)
	}
	return c.opts.Saver.DeleteThreads(ctx, []string{threadID})
}

// CopyThread copies thread from's whole history, in every namespace, to thread to, which must
// have no checkpoint yet (see [checkpoint.CopyThread]).
func (c *Compiled[S]) CopyThread(ctx context.Context, from, to string) error {
	if c.opts.Saver == nil {
		return fmt.Errorf("%s: threads need a checkpoint saver", c.label)
	}
	return checkpoint.CopyThread(ctx, c.opts.Saver, from, to)
}

// PruneThread keeps only the newest keep checkpoints of the thread.
func (c *Compiled[S]) PruneThread(ctx context.Context, threadID string, keep int) error {
	if c.opts.Saver == nil {
		return fmt.Errorf("%s: threads need a checkpoint saver", c.label)
	}
	return c.opts.Saver.Prune(ctx, checkpoint.PruneRequest{ThreadID: threadID, Keep: keep})
}

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
