package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trellis-go/trellis/graph"
)

// nodeStatuses lists "node:status" for each node of a run's progress.
func nodeStatuses(p *RunProgress) string {
	if p == nil {
		return "<nil>"
	}
	var out []string
	for _, n := range p.Nodes {
		out = append(out, n.Node+":"+n.Status)
	}
	return strings.Join(out, " ")
}

// TestRunProgress: a run's record says which nodes ran, how they ended and how many supersteps
// it took, through GET /threads/{id}/runs/{id}, GET /runs/{id} and AppDeps.Runs, and the run
// streams a progress event for every node that starts or ends.
func TestRunProgress(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tid := b.newThread(nil)
	_, evs := b.stream("POST", "/threads/"+tid+"/runs/stream", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "explode"}, "stream_mode": []string{"values", "progress"}}, nil, nil)
	var seen []string
	var runID string
	for _, e := range evs {
		if e.Event != "progress" {
			continue
		}
		var pe struct {
			RunID       string  `json:"run_id"`
			Attempt     int     `json:"attempt"`
			CurrentNode string  `json:"current_node"`
			Node        NodeRun `json:"node"`
		}
		if err := json.Unmarshal(e.Data, &pe); err != nil {
			t.Fatal(err)
		}
		runID = pe.RunID
		if pe.Attempt != 1 || pe.CurrentNode != pe.Node.Node {
			t.Fatalf("progress event %s", e.Data)
		}
		seen = append(seen, pe.Node.Node+":"+pe.Node.Status)
	}
	if got := strings.Join(seen, " "); got != "plan:running plan:success approve:running approve:interrupted" {
		t.Fatalf("progress events: %q (events %v)", got, names(evs))
	}
	var run Run
	b.mustDo("GET", "/threads/"+tid+"/runs/"+runID, nil, &run, 200)
	if run.Attempt != 1 || run.Priority != PriorityNormal || run.Progress == nil || run.Progress.CurrentNode != "approve" || run.Progress.Steps != 2 ||
		nodeStatuses(run.Progress) != "plan:success approve:interrupted" || run.LastError != "" {
		t.Fatalf("run record: %+v progress %+v", run, run.Progress)
	}
	for _, n := range run.Progress.Nodes {
		if n.FinishedAt == nil || n.FinishedAt.Before(n.StartedAt) || n.Attempt != 1 {
			t.Fatalf("node entry %+v", n)
		}
	}
	// GET /runs/{run_id} reads the same record; so does the app's run API.
	var same Run
	b.mustDo("GET", "/runs/"+runID, nil, &same, 200)
	if nodeStatuses(same.Progress) != nodeStatuses(run.Progress) {
		t.Fatalf("GET /runs/{id}: %+v", same.Progress)
	}
	rs := &Runs{s: b.srv}
	got, err := rs.Get(context.Background(), DevPrincipal, tid, runID)
	if err != nil || nodeStatuses(got.Progress) != nodeStatuses(run.Progress) {
		t.Fatalf("Runs.Get: %+v %v", got, err)
	}

	// The resumed run fails in act: its record says where and why.
	var out map[string]any
	b.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "flow", "command": map[string]any{"resume": "y"}}, &out, 200)
	runs, err := rs.List(context.Background(), DevPrincipal, tid, 10)
	if err != nil || len(runs) != 2 {
		t.Fatalf("Runs.List: %v %v", runs, err)
	}
	last := runs[0]
	if last.Status != RunError || !strings.Contains(last.LastError, "refuses to explode") || last.Progress.CurrentNode != "act" ||
		!strings.Contains(nodeStatuses(last.Progress), "act:error") {
		t.Fatalf("failed run: %+v progress %+v", last, last.Progress)
	}
	if n := last.Progress.Nodes[len(last.Progress.Nodes)-1]; !strings.Contains(n.Error, "refuses to explode") {
		t.Fatalf("the node's error: %+v", n)
	}
}

// TestRunProgressLive: while a run executes, its progress is readable at once in the process
// executing it, and reaches the record (for the other replicas) within progressInterval.
func TestRunProgressLive(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tid := b.newThread(nil)
	var run Run
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{"topic": "live"}}, &run, 200)
	<-b.gates.started
	var cur Run
	b.mustDo("GET", "/threads/"+tid+"/runs/"+run.RunID, nil, &cur, 200)
	if cur.Status != RunRunning || cur.Progress == nil || cur.Progress.CurrentNode != "wait" || nodeStatuses(cur.Progress) != "first:success wait:running" {
		t.Fatalf("live progress: %+v", cur.Progress)
	}
	deadline := time.Now().Add(10 * progressInterval)
	for {
		rec, err := b.srv.meta.getRun(context.Background(), DevPrincipal.Tenant, tid, run.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Progress != nil && nodeStatuses(rec.Progress) == "first:success wait:running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the record's progress after %s: %+v", 10*progressInterval, rec.Progress)
		}
		time.Sleep(progressInterval / 5)
	}
	b.gates.release <- struct{}{}
	b.waitStatus(tid, run.RunID, RunSuccess)
	b.mustDo("GET", "/threads/"+tid+"/runs/"+run.RunID, nil, &cur, 200)
	if nodeStatuses(cur.Progress) != "first:success wait:success" || cur.Progress.CurrentNode != "wait" {
		t.Fatalf("final progress: %+v", cur.Progress)
	}
}

// TestRunProgressRetry: a run retried after a transient error records the error and when it is
// tried again, and its node history spans both attempts.
func TestRunProgressRetry(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	proceed := make(chan struct{})
	flaky := GraphSpec{ID: "flaky-progress", Build: func(d Deps) (graph.Runnable, error) {
		g := graph.New[flowState]()
		g.AddNode("first", func(ctx context.Context, s flowState) (flowState, error) {
			return flowState{Steps: []string{"first"}}, nil
		})
		g.AddNode("flaky", func(ctx context.Context, s flowState) (flowState, error) {
			if calls.Add(1) == 1 {
				return flowState{}, fmt.Errorf("upstream hiccup: %w", ErrTransient)
			}
			<-proceed
			return flowState{Steps: []string{"flaky"}}, nil
		})
		g.AddEdge(graph.START, "first").AddEdge("first", "flaky").AddEdge("flaky", graph.END)
		return graph.Erase(g.Compile(graph.CompileOptions{Name: "flaky", Saver: d.Saver}))
	}}
	b := setup(t, setupOpts{extra: []GraphSpec{flaky}})
	tid := b.newThread(nil)
	var run Run
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "flaky-progress", "input": map[string]any{}}, &run, 200)
	// Between the attempts the record says why and when.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var cur Run
		b.mustDo("GET", "/threads/"+tid+"/runs/"+run.RunID, nil, &cur, 200)
		if cur.Attempt == 1 && cur.Status == RunPending {
			if !strings.Contains(cur.LastError, "upstream hiccup") || cur.NextAttemptAt == nil || cur.NextAttemptAt.Before(cur.UpdatedAt) ||
				nodeStatuses(cur.Progress) != "first:success flaky:error" {
				t.Fatalf("between attempts: %+v progress %+v", cur, cur.Progress)
			}
			break
		}
		if time.Now().After(deadline) || cur.Attempt > 1 {
			t.Fatalf("never saw the run between attempts: %+v", cur)
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(proceed)
	b.waitStatus(tid, run.RunID, RunSuccess)
	var cur Run
	b.mustDo("GET", "/threads/"+tid+"/runs/"+run.RunID, nil, &cur, 200)
	if cur.Attempt != 2 || cur.NextAttemptAt != nil || nodeStatuses(cur.Progress) != "first:success flaky:error flaky:success" ||
		cur.Progress.Nodes[2].Attempt != 2 || cur.Progress.Steps != 2 {
		t.Fatalf("after the retry: %+v progress %+v", cur, cur.Progress)
	}
}

// TestPriorityLocalQueue: the in-process queue starts waiting runs high first, then normal,
// then low, each priority in the order queued.
func TestPriorityLocalQueue(t *testing.T) {
	t.Parallel()
	q := NewLocalQueue(1)
	var mu sync.Mutex
	var order []string
	release := make(chan struct{})
	done := make(chan struct{}, 8)
	q.Start(func(ctx context.Context, id string) error {
		mu.Lock()
		order = append(order, id)
		mu.Unlock()
		if id == "block" {
			<-release
		}
		done <- struct{}{}
		return nil
	})
	ctx := context.Background()
	_ = q.EnqueuePriority(ctx, "block", PriorityLow)
	_ = q.EnqueuePriority(ctx, "low1", PriorityLow)
	_ = q.Enqueue(ctx, "normal")
	_ = q.EnqueuePriority(ctx, "low2", PriorityLow)
	_ = q.EnqueuePriority(ctx, "high", PriorityHigh)
	if q.Depth() != 4 {
		t.Fatalf("depth %d", q.Depth())
	}
	close(release)
	for range 5 {
		<-done
	}
	if got := strings.Join(order, " "); got != "block high normal low1 low2" {
		t.Fatalf("order %q", got)
	}
	_ = q.Close(ctx)
}

func TestPrioritySQLiteRiver(t *testing.T) {
	t.Parallel()
	testPriority(t, Config{})
}

func TestPriorityPostgresRiver(t *testing.T) {
	t.Parallel()
	testPriority(t, Config{DatabaseURL: pgURL(t)})
}

func TestPriorityLocal(t *testing.T) {
	t.Parallel()
	testPriority(t, Config{Queue: NewLocalQueue(1)})
}

// testPriority: with one slot taken, a high-priority run queued after low ones starts first.
func testPriority(t *testing.T, cfg Config) {
	cfg.MaxConcurrentRuns = 1
	b := setup(t, setupOpts{cfg: cfg})
	start := func(topic, prio string) Run {
		var run Run
		body := map[string]any{"assistant_id": "slow", "input": map[string]any{"topic": topic}}
		if prio != "" {
			body["priority"] = prio
		}
		b.mustDo("POST", "/threads/"+b.newThread(nil)+"/runs", body, &run, 200)
		return run
	}
	start("block", "high")
	if got := <-b.gates.started; got != "block" {
		t.Fatalf("started %q", got)
	}
	l1, l2 := start("low1", "low"), start("low2", "low")
	// The high one through the app's run API.
	h, err := (&Runs{s: b.srv}).Start(context.Background(), DevPrincipal, RunRequest{AssistantID: "slow", Input: map[string]any{"topic": "high"}, Priority: PriorityHigh})
	if err != nil {
		t.Fatal(err)
	}
	if l1.Priority != PriorityLow || h.Priority != PriorityHigh {
		t.Fatalf("priorities on the records: %q %q", l1.Priority, h.Priority)
	}
	b.gates.release <- struct{}{} // block ends; one slot frees
	if got := <-b.gates.started; got != "high" {
		t.Fatalf("after the blocking run, %q started, want the high-priority run queued after the low ones", got)
	}
	lows := map[string]bool{}
	for range 2 {
		b.gates.release <- struct{}{}
		lows[<-b.gates.started] = true
	}
	if !lows["low1"] || !lows["low2"] {
		t.Fatalf("then %v started", lows)
	}
	b.gates.release <- struct{}{}
	b.waitStatus(l2.ThreadID, l2.RunID, RunSuccess)
	b.waitStatus(l1.ThreadID, l1.RunID, RunSuccess)
}

// TestPriorityRefused: a priority other than low, normal or high is a 400 naming the field.
func TestPriorityRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var e map[string]any
	code := b.do("POST", "/runs", map[string]any{"assistant_id": "flow", "priority": "urgent"}, &e)
	if code != 400 || !strings.Contains(fmt.Sprint(e), "priority") {
		t.Fatalf("%d %v", code, e)
	}
}
