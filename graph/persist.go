package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/trellis-go/trellis/checkpoint"
)

// minDeltaBudget is how many bytes of deltas a channel may stack on a small full value before
// the runtime stores the full value again. Above it, deltas may add up to the size of the last
// full value: the bytes stored stay within twice what the values hold, and a long list is
// rewritten only after it has doubled.
const minDeltaBudget = 4096

// maxTrackedUpdates caps the updates a channel remembers between two saved checkpoints (many
// supersteps apart under exit durability): past it, the full value is cheaper to store.
const maxTrackedUpdates = 32

// wire forms of a task's outcome, kept as a pending write.
type wireWrite struct {
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	Overwrite bool            `json:"overwrite,omitempty"`
}

type wireTarget struct {
	Node string          `json:"node"`
	Arg  json.RawMessage `json:"arg,omitempty"`
	Send bool            `json:"send,omitempty"`
}

type wireOutcome struct {
	Writes []wireWrite  `json:"writes,omitempty"`
	Goto   []wireTarget `json:"goto,omitempty"`
}

// checkpoint records the state after the input or a superstep, unless the durability is exit
// and this is not the end of the run.
func (l *loop[S]) checkpoint(source checkpoint.Source, final bool) error {
	if l.saver == nil {
		return nil
	}
	if l.durability == DurabilityExit && !final {
		l.unsaved, l.unsavedSource = true, source
		return nil
	}
	return l.save(source)
}

// finalCheckpoint writes the checkpoint a run with exit durability has held back.
func (l *loop[S]) finalCheckpoint() error {
	if l.saver == nil || !l.unsaved {
		return nil
	}
	return l.save(l.unsavedSource)
}

func (l *loop[S]) save(source checkpoint.Source) error {
	enc := &blobEncoder{reuse: true}
	blobs, err := l.blobs(enc)
	if err != nil {
		enc.release()
		return err
	}
	next, err := l.encodeNext()
	if err != nil {
		enc.release()
		return err
	}
	md := make(map[string]any, len(l.metadata)+3)
	maps.Copy(md, l.metadata)
	md["source"] = string(source)
	md["step"] = l.step
	if l.ns != "" {
		md["ns"] = l.ns
	}
	cp := checkpoint.Checkpoint{
		ID:        checkpoint.NewID(),
		ParentID:  l.cpID,
		Step:      l.step,
		Source:    source,
		Versions:  maps.Clone(l.versions),
		Next:      next,
		Metadata:  md,
		CreatedAt: time.Now().UTC(),
	}
	if len(l.barriers) > 0 {
		cp.Barriers = make(map[string][]string, len(l.barriers))
		for k, v := range l.barriers {
			cp.Barriers[k] = slices.Clone(v)
		}
	}
	req := checkpoint.PutRequest{ThreadID: l.threadID, NS: l.ns, Checkpoint: cp, Blobs: blobs, Head: l.head}
	// The saver does not keep the blobs' bytes once Put returns (checkpoint.Saver): the buffers
	// they were encoded into go back for the next checkpoint.
	if l.writer != nil {
		l.writer.do(func(ctx context.Context, s checkpoint.Saver) error {
			defer enc.release()
			return s.Put(ctx, req)
		})
	} else {
		err := l.saver.Put(context.WithoutCancel(l.ctx), req)
		enc.release()
		if err != nil {
			return fmt.Errorf("%s: saving checkpoint of thread %q: %w", l.c.label, l.threadID, err)
		}
	}
	l.cpParent, l.cpMeta = l.cpID, md
	l.head, l.cpID, l.unsaved = cp.ID, cp.ID, false
	l.emitCheckpoint(false)
	return nil
}

// emitCheckpoint sends the checkpoint the loop stands on to the checkpoints and debug streams,
// with the tasks it leaves to run and the interrupts they wait at. It is sent when it is
// written, and again, as LangGraph does, when a superstep from it stops at interrupts (stopped):
// then the tasks that finished in it carry their writes as result, and the values are the
// checkpoint's as saved, without the untracked keys (LangGraph sends it again from the restored
// checkpoint, as the resumed run starts).
func (l *loop[S]) emitCheckpoint(stopped bool) {
	if !l.modes.has(ModeCheckpoints) && !l.modes.has(ModeDebug) {
		return
	}
	due := l.due()
	values := l.output()
	if stopped {
		values = l.sc.withoutUntracked(reflect.ValueOf(values)).Interface().(S)
	}
	ev := CheckpointEvent[S]{
		Ref:      checkpoint.Ref{ThreadID: l.threadID, NS: l.ns, CheckpointID: l.cpID},
		Values:   values,
		Next:     l.nextNames(),
		Metadata: l.cpMeta,
		Tasks:    make([]CheckpointTask, len(due)),
	}
	for i, t := range due {
		ins := t.interrupts
		if ins == nil {
			ins = []Interruption{}
		}
		ev.Tasks[i] = CheckpointTask{ID: t.id, Name: t.node.name, Interrupts: ins}
		if t.err != nil {
			ev.Tasks[i].Error = t.err.Error()
		} else if stopped && t.finished && len(t.interrupts) == 0 {
			for _, w := range t.writes {
				ev.Tasks[i].Result = append(ev.Tasks[i].Result, [2]any{w.ch.name, w.val.Interface()})
			}
		}
		if t.node.sub != nil {
			ns := strings.Join(append(slices.Clip(l.nsPath), t.node.name+":"+t.id), "|")
			ev.Tasks[i].State = map[string]any{"configurable": map[string]any{"thread_id": l.threadID, "checkpoint_ns": ns}}
		}
	}
	if l.cpParent != "" {
		ev.Parent = &checkpoint.Ref{ThreadID: l.threadID, NS: l.ns, CheckpointID: l.cpParent}
	}
	var data any = ev
	if l.c.view != nil {
		// An entrypoint's checkpoint shows its return value (null before it has one).
		data = CheckpointEvent[any]{Ref: ev.Ref, Parent: ev.Parent, Values: l.c.view.state(reflect.ValueOf(ev.Values)), Next: ev.Next, Metadata: ev.Metadata, Tasks: ev.Tasks}
	}
	if l.modes.has(ModeCheckpoints) {
		l.deliver(Event{Mode: ModeCheckpoints, NS: l.nsPath, Step: l.step, Data: data})
	}
	if l.modes.has(ModeDebug) {
		l.deliver(Event{Mode: ModeDebug, NS: l.nsPath, Step: l.step, Data: DebugEvent{Type: "checkpoint", Step: l.step, Payload: data}})
	}
}

// nextNames names the tasks due in the next superstep. As in LangGraph, a deferred node that
// waits for other work to finish is not listed (it is still saved, and runs when its turn comes).
func (l *loop[S]) nextNames() []string {
	due := l.due()
	out := make([]string, len(due))
	for i, t := range due {
		out[i] = t.node.name
	}
	return out
}

// due returns the scheduled tasks that run in the next superstep (see runnable).
func (l *loop[S]) due() []*task {
	now, _ := l.runnable()
	return now
}

// blobs encodes the channels written since the last saved checkpoint: a delta of the updates
// where the reducer allows it and the budget is not spent, the full value otherwise.
func (l *loop[S]) blobs(enc *blobEncoder) ([]checkpoint.Blob, error) {
	var out []checkpoint.Blob
	for _, ch := range l.sc.channels {
		tr := &l.tracks[ch.pos]
		if !tr.dirty {
			continue
		}
		ver := l.versions[ch.name]
		b := checkpoint.Blob{Channel: ch.name, Version: ver}
		if base := l.saved[ch.name]; base != "" && !tr.full && len(tr.updates) > 0 && ch.reducer != ReduceLast {
			data, err := enc.marshalList(tr.updates)
			if err != nil {
				return nil, fmt.Errorf("graph: an update of state key %q cannot be stored as JSON: %w", ch.name, err)
			}
			if tr.chain+len(data) <= max(tr.base, minDeltaBudget) {
				b.Base, b.Data = base, data
				tr.chain += len(data)
			}
		}
		if b.Data == nil {
			data, err := enc.marshal(l.state.Field(ch.index).Interface())
			if err != nil {
				return nil, fmt.Errorf("graph: state key %q cannot be stored as JSON: %w", ch.name, err)
			}
			b.Data = data
			tr.base, tr.chain = len(data), 0
		}
		out = append(out, b)
		l.saved[ch.name] = ver
		tr.dirty, tr.full, tr.updates = false, false, nil
	}
	return out, nil
}

func (l *loop[S]) encodeNext() ([]checkpoint.Task, error) {
	if len(l.next) == 0 {
		return nil, nil
	}
	out := make([]checkpoint.Task, len(l.next))
	for i, t := range l.next {
		out[i] = checkpoint.Task{ID: t.id, Node: t.node.name}
		if t.node == startNode {
			out[i].Arg = t.arg // the run's input, as the start task's outcome
			continue
		}
		if t.send {
			if t.arg == nil {
				data, err := encodeJSON(fmt.Sprintf("the payload sent to %q", t.node.name), l.sc.withoutUntracked(t.input).Interface())
				if err != nil {
					return nil, err
				}
				t.arg = data
			}
			out[i].Arg = t.arg
		}
	}
	return out, nil
}

// putWrites records a task's outcome (or its interrupts and resume values) against the current
// checkpoint.
func (l *loop[S]) putWrites(t *task) error {
	if err := l.putSubs(t); err != nil {
		return err
	}
	if t.persisted {
		return nil
	}
	var ws []checkpoint.PendingWrite
	if t.finished {
		data, err := encodeOutcome(l.sc, t)
		if err != nil {
			return err
		}
		ws = append(ws, checkpoint.PendingWrite{Channel: pendingOutcome, Value: data})
	}
	if len(t.resume) > 0 {
		data, err := encodeJSON("resume values", t.resume)
		if err != nil {
			return err
		}
		ws = append(ws, checkpoint.PendingWrite{Channel: pendingResume, Value: data})
	}
	ins := t.interrupts
	if len(ins) == 0 && t.finished {
		// A resumed task that finished keeps the interrupts it was asked, as LangGraph's history
		// shows them on the paused checkpoint (PutWrites replaces a task's writes).
		ins = t.asked
	}
	if len(ins) > 0 {
		data, err := encodeJSON(fmt.Sprintf("the interrupt value of node %q", t.node.name), ins)
		if err != nil {
			return err
		}
		ws = append(ws, checkpoint.PendingWrite{Channel: pendingInterrupt, Value: data})
	}
	if t.err != nil {
		data, _ := json.Marshal(t.err.Error())
		ws = append(ws, checkpoint.PendingWrite{Channel: pendingError, Value: data})
	}
	if len(ws) == 0 {
		return nil
	}
	req := checkpoint.WritesRequest{Ref: checkpoint.Ref{ThreadID: l.threadID, NS: l.ns, CheckpointID: l.cpID}, TaskID: t.id, Writes: ws}
	t.persisted = true
	if l.writer != nil {
		l.writer.do(func(ctx context.Context, s checkpoint.Saver) error { return s.PutWrites(ctx, req) })
		return nil
	}
	if err := l.saver.PutWrites(context.WithoutCancel(l.ctx), req); err != nil {
		return fmt.Errorf("%s: saving the writes of node %q: %w", l.c.label, t.node.name, err)
	}
	return nil
}

// encodeOutcome encodes what a finished task wrote and where it routed.
func encodeOutcome(sc *schema, t *task) ([]byte, error) {
	var o wireOutcome
	for _, w := range t.writes {
		if !w.ch.stored() {
			continue // an untracked value is never stored, not even as a pending write
		}
		data, err := encodeJSON(fmt.Sprintf("node %q's write to %q", t.node.name, w.ch.name), w.val.Interface())
		if err != nil {
			return nil, err
		}
		o.Writes = append(o.Writes, wireWrite{Key: w.ch.name, Value: data, Overwrite: w.overwrite})
	}
	for _, tg := range t.targets {
		wt := wireTarget{Node: tg.Node, Send: tg.send}
		if tg.send {
			data, err := encodeJSON(fmt.Sprintf("the payload %q sends to %q", t.node.name, tg.Node), sc.withoutUntracked(reflect.ValueOf(tg.Arg)).Interface())
			if err != nil {
				return nil, err
			}
			wt.Arg = data
		}
		o.Goto = append(o.Goto, wt)
	}
	return json.Marshal(o)
}

// saveStop records a superstep that stopped part-way (an interrupt or a failure): the
// checkpoint it started from, and every task's outcome, so that on resume only unfinished tasks
// run again.
func (l *loop[S]) saveStop(tasks []*task) error {
	if l.saver == nil {
		return nil
	}
	if err := l.finalCheckpoint(); err != nil {
		return err
	}
	for _, t := range tasks {
		if err := l.putWrites(t); err != nil {
			return err
		}
	}
	return nil
}

// restore loads a checkpoint into the loop, checking that this graph can continue it.
func (l *loop[S]) restore(tuple *checkpoint.Tuple) error {
	cp := tuple.Checkpoint
	changed := func(format string, args ...any) error {
		return fmt.Errorf("%w: thread %q checkpoint %s: %s", ErrGraphChanged, l.threadID, cp.ID, fmt.Sprintf(format, args...))
	}
	type key struct{ ch, ver string }
	blobs := make(map[key]*checkpoint.Blob, len(tuple.Blobs))
	for i := range tuple.Blobs {
		b := &tuple.Blobs[i]
		blobs[key{b.Channel, b.Version}] = b
	}
	for _, name := range sortedKeys(cp.Versions) {
		ch, ok := l.sc.byName[name]
		if !ok {
			return changed("it holds state key %q, which the state type %s no longer has (add the field back, or start a new thread)", name, l.sc.typ)
		}
		var chain []*checkpoint.Blob
		for v := cp.Versions[name]; v != ""; {
			b := blobs[key{name, v}]
			if b == nil {
				return fmt.Errorf("graph: thread %q checkpoint %s: the saver returned no blob for %s@%s", l.threadID, cp.ID, name, v)
			}
			chain = append(chain, b)
			v = b.Base
			if len(chain) > len(tuple.Blobs) {
				return fmt.Errorf("graph: thread %q checkpoint %s: the blobs of %q form a cycle", l.threadID, cp.ID, name)
			}
		}
		if len(chain) == 0 {
			return fmt.Errorf("graph: thread %q checkpoint %s: state key %q is listed with an empty version (the stored checkpoint is corrupt)", l.threadID, cp.ID, name)
		}
		full := chain[len(chain)-1]
		val, err := ch.decodeValue(full.Data)
		if err != nil {
			return changed("%v", err)
		}
		tr := &l.tracks[ch.pos]
		tr.base = len(full.Data)
		for i := len(chain) - 2; i >= 0; i-- {
			ups, err := ch.decodeDelta(chain[i].Data)
			if err != nil {
				return changed("%v", err)
			}
			if ch.reducer == ReduceLast {
				return changed("state key %q has no reducer now, but its checkpoint stores updates for one", name)
			}
			for _, u := range ups {
				if val, err = ch.reduce(val, u); err != nil {
					return err
				}
			}
			tr.chain += len(chain[i].Data)
		}
		l.state.Field(ch.index).Set(val)
	}
	l.versions = maps.Clone(cp.Versions)
	if l.versions == nil {
		l.versions = map[string]string{}
	}
	l.saved = maps.Clone(l.versions)
	l.cpID, l.cpParent, l.cpMeta = cp.ID, cp.ParentID, cp.Metadata
	l.step = cp.Step + 1
	l.barriers = map[string][]string{}
	for k, v := range cp.Barriers {
		to, idx, _ := strings.Cut(k, "#")
		i, err := strconv.Atoi(idx)
		if err != nil || i >= len(l.c.g.joins) || l.c.g.joins[i].to != to {
			return changed("a join into %q is in progress, but the graph no longer has that join", to)
		}
		l.barriers[k] = slices.Clone(v)
	}
	l.next = nil
	for _, ct := range cp.Next {
		if ct.Node == START {
			// The input checkpoint: the run's input waits to be applied.
			var o wireOutcome
			if err := json.Unmarshal(ct.Arg, &o); err != nil {
				return fmt.Errorf("graph: thread %q checkpoint %s: the input waiting to be applied does not decode: %w", l.threadID, cp.ID, err)
			}
			t := &task{id: ct.ID, node: startNode, arg: ct.Arg}
			if err := l.decodeOutcome(t, o); err != nil {
				return err
			}
			l.next = append(l.next, t)
			continue
		}
		node, ok := l.c.g.nodes[ct.Node]
		if !ok {
			return changed("node %q is scheduled to run next, but the graph no longer has it%s", ct.Node, suggest(ct.Node, l.c.g.order))
		}
		t := &task{id: ct.ID, node: node}
		if ct.Arg != nil {
			v := reflect.New(l.sc.typ)
			if err := json.Unmarshal(ct.Arg, v.Interface()); err != nil {
				return changed("the payload sent to %q no longer decodes as %s: %v", ct.Node, l.sc.typ, err)
			}
			t.input, t.arg, t.send = v.Elem(), ct.Arg, true
		} else {
			t.input = l.sc.snapshot(l.state)
		}
		l.next = append(l.next, t)
	}
	return nil
}

// loadPending applies the pending writes of the checkpoint the loop resumes from, and matches
// resume values with the interrupts waiting for them.
func (l *loop[S]) loadPending(tuple *checkpoint.Tuple, o runOptions) error {
	byID := map[string]*task{}
	for _, t := range l.next {
		byID[t.id] = t
	}
	var waiting []Interruption
	for _, pw := range tuple.Pending {
		if sub, err := loadSub(byID, pw); sub || err != nil {
			if err != nil {
				return err
			}
			continue
		}
		t := byID[pw.TaskID]
		if t == nil {
			continue
		}
		switch pw.Channel {
		case pendingOutcome:
			var o wireOutcome
			if err := json.Unmarshal(pw.Value, &o); err != nil {
				return fmt.Errorf("graph: thread %q: the saved outcome of node %q does not decode: %w", l.threadID, t.node.name, err)
			}
			if err := l.decodeOutcome(t, o); err != nil {
				return err
			}
			t.finished, t.restored, t.persisted = true, true, true
		case pendingResume:
			if err := json.Unmarshal(pw.Value, &t.resume); err != nil {
				return fmt.Errorf("graph: thread %q: the saved resume values of node %q do not decode: %w", l.threadID, t.node.name, err)
			}
		case pendingInterrupt:
			var ins []Interruption
			if err := json.Unmarshal(pw.Value, &ins); err != nil {
				return fmt.Errorf("graph: thread %q: the saved interrupts of node %q do not decode: %w", l.threadID, t.node.name, err)
			}
			t.asked = append(t.asked, ins...)
		}
	}
	// A task that finished after its interrupts were answered keeps them on record (see
	// putWrites): only unfinished tasks still wait.
	for _, t := range l.next {
		if !t.finished {
			waiting = append(waiting, t.asked...)
		}
	}
	if l.ns != "" {
		return nil // a subgraph takes the resume values its parent matched
	}
	ids := make([]string, len(waiting))
	for i, in := range waiting {
		ids[i] = in.ID
	}
	sort.Strings(ids)
	switch {
	case o.resumeMap != nil:
		for id := range o.resumeMap {
			if !slices.Contains(ids, id) {
				return fmt.Errorf("graph: thread %q has no pending interrupt %q (pending: %s)", l.threadID, id, strings.Join(ids, ", "))
			}
		}
		l.resumeMap = o.resumeMap
	case o.hasResume && len(waiting) == 1:
		l.resumeMap = map[string]any{waiting[0].ID: o.resume}
	case o.hasResume && len(waiting) > 1:
		return fmt.Errorf("graph: thread %q is paused at %d interrupts (%s): resume with graph.ResumeMap, giving a value per interrupt ID", l.threadID, len(waiting), strings.Join(ids, ", "))
	}
	return nil
}

func (l *loop[S]) decodeOutcome(t *task, o wireOutcome) error {
	for _, w := range o.Writes {
		ch, ok := l.sc.byName[w.Key]
		if !ok {
			return fmt.Errorf("%w: thread %q: node %q wrote state key %q, which the state type no longer has", ErrGraphChanged, l.threadID, t.node.name, w.Key)
		}
		v, err := ch.decodeValue(w.Value)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrGraphChanged, err)
		}
		t.writes = append(t.writes, write{ch: ch, val: v, overwrite: w.Overwrite})
	}
	for _, g := range o.Goto {
		if !g.Send {
			t.targets = append(t.targets, To(g.Node))
			continue
		}
		v := reflect.New(l.sc.typ)
		if err := json.Unmarshal(g.Arg, v.Interface()); err != nil {
			return fmt.Errorf("%w: the payload sent to %q no longer decodes: %v", ErrGraphChanged, g.Node, err)
		}
		t.targets = append(t.targets, Send(g.Node, v.Elem().Interface()))
	}
	return nil
}

// asyncWriter applies saver calls in order on a goroutine of its own, for DurabilityAsync.
type asyncWriter struct {
	saver checkpoint.Saver
	ops   chan func(context.Context, checkpoint.Saver) error
	done  chan struct{}
	once  sync.Once
	err   error
}

func newAsyncWriter(s checkpoint.Saver) *asyncWriter {
	w := &asyncWriter{saver: s, ops: make(chan func(context.Context, checkpoint.Saver) error, 256), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for op := range w.ops {
			if w.err != nil {
				continue
			}
			w.err = op(context.Background(), w.saver)
		}
	}()
	return w
}

func (w *asyncWriter) do(op func(context.Context, checkpoint.Saver) error) { w.ops <- op }

// close waits for every queued call and returns the first error.
func (w *asyncWriter) close() error {
	w.once.Do(func() { close(w.ops) })
	<-w.done
	if w.err != nil {
		return fmt.Errorf("graph: saving a checkpoint in the background: %w", w.err)
	}
	return nil
}
