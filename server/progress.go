package server

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/trellis-go/trellis/graph"
)

// A run's progress is kept on its record as the graph runs: the node running now, the
// supersteps taken, and each node's start, end, status and error. The run engine follows the
// graph's task events (graph.ModeTasks, always on for the root graph) and writes the record at
// most every progressInterval while the run executes, and once more with its final status; a
// reader in the process executing the run sees it live. A run asked to stream "progress" gets an
// event for every node that starts or ends.

// RunProgress is how far a run got, on the run's record ("progress").
type RunProgress struct {
	// CurrentNode is the node started last (while the run executes, the one running now; when
	// several run in one superstep, the last to start).
	CurrentNode string `json:"current_node,omitempty"`
	// Step is the graph's superstep number (as LangGraph numbers a thread's checkpoints) of the
	// last node started; Steps counts the supersteps this run executed (one executed again
	// by a later attempt counts once).
	Step  int `json:"step"`
	Steps int `json:"steps"`
	// Nodes lists the nodes the run executed, oldest first: the last maxNodeHistory of them,
	// Dropped counting those left out before.
	Nodes   []NodeRun `json:"nodes"`
	Dropped int       `json:"dropped,omitempty"`
}

// NodeRun is one execution of a node (a task) in a run.
type NodeRun struct {
	Node   string `json:"node"`
	TaskID string `json:"task_id,omitempty"`
	Step   int    `json:"step"`
	// Attempt is the run's attempt the node ran in.
	Attempt    int        `json:"attempt"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	// Status is running, success, error, interrupted (it paused on an interrupt) or stopped
	// (the run ended or was cut off while it ran).
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// Node statuses.
const (
	NodeRunning     = "running"
	NodeSuccess     = "success"
	NodeError       = "error"
	NodeInterrupted = "interrupted"
	NodeStopped     = "stopped"
)

const (
	// progressInterval is the most often a run's progress is written while it executes.
	progressInterval = 250 * time.Millisecond
	// maxNodeHistory bounds the nodes a run's record lists.
	maxNodeHistory = 200
)

// progressMode is the stream mode that asks for progress events; it needs graph.ModeTasks.
const progressMode = "progress"

// progressBook holds the trackers of the runs executing in this process.
type progressBook struct {
	mu   sync.Mutex
	runs map[string]*progressTracker
}

// progressTracker follows one run's progress for its executor.
type progressTracker struct {
	r       *runner
	runID   string
	attempt int
	mu      sync.Mutex
	p       RunProgress
	steps   map[int]bool // the supersteps seen
	dirty   bool
	timer   *time.Timer
	closed  bool
	// wmu orders the writes: no periodic write lands after the final one.
	wmu sync.Mutex
}

// track starts following a run's progress, from what its record says (an earlier attempt's).
func (r *runner) track(run *Run, attempt int) *progressTracker {
	t := &progressTracker{r: r, runID: run.RunID, attempt: attempt, steps: map[int]bool{}}
	if run.Progress != nil {
		t.p = *run.Progress
		t.p.Nodes = slices.Clone(run.Progress.Nodes)
		for i := range t.p.Nodes {
			t.steps[t.p.Nodes[i].Step] = true       // a superstep run again is counted once
			if t.p.Nodes[i].Status == NodeRunning { // its worker stopped with it
				t.p.Nodes[i].Status = NodeStopped
			}
		}
	}
	r.progress.mu.Lock()
	r.progress.runs[run.RunID] = t
	r.progress.mu.Unlock()
	return t
}

// observe takes a task event of the root graph and returns the node entry it changed.
func (t *progressTracker) observe(ev graph.Event) (NodeRun, bool) {
	te, ok := ev.Data.(graph.TaskEvent)
	if !ok {
		return NodeRun{}, false
	}
	now := time.Now().UTC()
	t.mu.Lock()
	defer t.mu.Unlock()
	var n NodeRun
	if !te.Finished {
		if !t.steps[ev.Step] {
			t.steps[ev.Step] = true
			t.p.Steps++
		}
		t.p.CurrentNode, t.p.Step = te.Name, ev.Step
		n = NodeRun{Node: te.Name, TaskID: te.ID, Step: ev.Step, Attempt: t.attempt, StartedAt: now, Status: NodeRunning}
		t.p.Nodes = append(t.p.Nodes, n)
		if over := len(t.p.Nodes) - maxNodeHistory; over > 0 {
			t.p.Nodes = slices.Delete(t.p.Nodes, 0, over)
			t.p.Dropped += over
		}
	} else {
		i := t.find(te.ID)
		if i < 0 {
			return NodeRun{}, false
		}
		p := &t.p.Nodes[i]
		p.FinishedAt = &now
		switch {
		case te.Error != "":
			p.Status, p.Error = NodeError, te.Error
		case len(te.Interrupts) > 0:
			p.Status = NodeInterrupted
		default:
			p.Status = NodeSuccess
		}
		n = *p
	}
	t.dirty = true
	if t.timer == nil && !t.closed {
		t.timer = time.AfterFunc(progressInterval, t.flush)
	}
	return n, true
}

// find returns the index of the running entry of task id in this attempt, or -1.
func (t *progressTracker) find(id string) int {
	for i := len(t.p.Nodes) - 1; i >= 0; i-- {
		if n := t.p.Nodes[i]; n.TaskID == id && n.Attempt == t.attempt && n.Status == NodeRunning {
			return i
		}
	}
	return -1
}

// snapshot returns a copy of the progress.
func (t *progressTracker) snapshot() *RunProgress {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.p
	p.Nodes = slices.Clone(t.p.Nodes)
	if p.Nodes == nil {
		p.Nodes = []NodeRun{}
	}
	return &p
}

// flush writes the progress if it changed since the last write (the periodic write).
func (t *progressTracker) flush() {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	t.mu.Lock()
	t.timer = nil
	if t.closed || !t.dirty {
		t.mu.Unlock()
		return
	}
	t.dirty = false
	t.mu.Unlock()
	raw, _ := json.Marshal(t.snapshot())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := t.r.meta.SetRunProgress(ctx, t.runID, raw); err != nil {
		t.r.log.Warn("cannot record a run's progress", "run_id", t.runID, "err", err)
	}
}

// finish stops the periodic writes and marks the nodes still running as stopped; it returns
// the final progress, which the caller writes with the run's status.
func (t *progressTracker) finish() *RunProgress {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	now := time.Now().UTC()
	t.mu.Lock()
	t.closed = true
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
	for i := range t.p.Nodes {
		if n := &t.p.Nodes[i]; n.Status == NodeRunning && n.Attempt == t.attempt {
			n.Status, n.FinishedAt = NodeStopped, &now
		}
	}
	t.mu.Unlock()
	return t.snapshot()
}

// untrack forgets the run's tracker once its record is final.
func (r *runner) untrack(runID string) {
	r.progress.mu.Lock()
	delete(r.progress.runs, runID)
	r.progress.mu.Unlock()
}

// live puts the progress of runs executing in this process, newer than their records', on
// them.
func (r *runner) live(runs ...*Run) {
	for _, run := range runs {
		r.progress.mu.Lock()
		t := r.progress.runs[run.RunID]
		r.progress.mu.Unlock()
		if t != nil {
			run.Progress = t.snapshot()
		}
	}
}

// progressEvent is the data of a "progress" stream event: the run's counters and the node that
// started or ended.
func (t *progressTracker) progressEvent(n NodeRun) map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	return map[string]any{"run_id": t.runID, "attempt": t.attempt, "current_node": t.p.CurrentNode, "step": t.p.Step, "steps": t.p.Steps, "node": n}
}
