package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// testClock is a settable clock for Config.Now.
type testClock struct{ ms atomic.Int64 }

func (c *testClock) now() time.Time      { return time.UnixMilli(c.ms.Load()).UTC() }
func (c *testClock) set(t time.Time)     { c.ms.Store(t.UnixMilli()) }
func (c *testClock) add(d time.Duration) { c.ms.Add(d.Milliseconds()) }
func newTestClock(t time.Time) *testClock {
	c := &testClock{}
	c.set(t)
	return c
}
func clockConfig(c *testClock, cfg Config) Config { cfg.Now = c.now; return cfg }

func TestThreadRecordShapeSQLite(t *testing.T) { threadRecordShapeTest(t, "") }
func TestThreadRecordShapePostgres(t *testing.T) {
	t.Parallel()
	threadRecordShapeTest(t, pgURL(t))
}

// threadRecordShapeTest: a thread has values {} and interrupts {} from creation, stamps by the
// server's clock, and state_updated_at, which moves when its state does (not its metadata) and
// sorts the search.
func threadRecordShapeTest(t *testing.T, dbURL string) {
	epoch := time.Date(2031, 3, 4, 5, 6, 7, 0, time.UTC)
	clock := newTestClock(epoch)
	b := setup(t, setupOpts{cfg: clockConfig(clock, Config{DatabaseURL: dbURL})})
	var raw map[string]json.RawMessage
	b.mustDo("POST", "/threads", map[string]any{"metadata": map[string]any{"graph_id": "flow"}}, &raw, 200)
	if string(raw["values"]) != "{}" || string(raw["interrupts"]) != "{}" {
		t.Fatalf("a new thread's values %s and interrupts %s, want {} and {}", raw["values"], raw["interrupts"])
	}
	var first Thread
	_ = json.Unmarshal(mustMarshal(t, raw), &first)
	if !first.CreatedAt.Equal(epoch) || !first.StateUpdatedAt.Equal(epoch) || !first.UpdatedAt.Equal(epoch) {
		t.Fatalf("stamps %v %v %v, want the clock's %v", first.CreatedAt, first.UpdatedAt, first.StateUpdatedAt, epoch)
	}
	clock.add(time.Minute)
	second := b.newThread(map[string]any{"graph_id": "flow"})
	clock.add(time.Minute)
	// The first thread's state changes; the second's metadata does.
	b.mustDo("POST", "/threads/"+first.ThreadID+"/state", map[string]any{"values": map[string]any{"topic": "x"}, "as_node": "plan"}, nil, 200)
	clock.add(time.Minute)
	b.mustDo("PATCH", "/threads/"+second, map[string]any{"metadata": map[string]any{"k": "v"}}, nil, 200)
	var got Thread
	b.mustDo("GET", "/threads/"+first.ThreadID, nil, &got, 200)
	if want := epoch.Add(2 * time.Minute); !got.StateUpdatedAt.Equal(want) {
		t.Fatalf("state_updated_at %v after update-state at %v", got.StateUpdatedAt, want)
	}
	order := func(by string) []string {
		var list []map[string]any
		b.mustDo("POST", "/threads/search", map[string]any{"sort_by": by, "select": []string{"thread_id", "state_updated_at"}}, &list, 200)
		var ids []string
		for _, th := range list {
			ids = append(ids, th["thread_id"].(string))
		}
		return ids
	}
	if ids := order("state_updated_at"); !slices.Equal(ids, []string{first.ThreadID, second}) {
		t.Fatalf("by state_updated_at: %v, want the first thread (state updated last) first", ids)
	}
	if ids := order("updated_at"); !slices.Equal(ids, []string{second, first.ThreadID}) {
		t.Fatalf("by updated_at: %v, want the second thread (metadata patched last) first", ids)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A thread is busy from the moment a run is pending on it; cancelling a run scheduled for later
// frees the thread at once (it used to answer 409 until the old schedule passed), and a rollback
// of one lets the new run start (it used to stay pending for ever).
func TestScheduledRunCancelFreesThread(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tid := b.newThread(nil)
	var sched Run
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "later"}, "after_seconds": 600}, &sched, 200)
	var th Thread
	b.mustDo("GET", "/threads/"+tid, nil, &th, 200)
	if th.Status != ThreadBusy {
		t.Fatalf("a thread with a pending run is %q, want busy", th.Status)
	}
	b.mustDo("POST", "/threads/"+tid+"/runs/"+sched.RunID+"/cancel", nil, nil, 202)
	b.mustDo("GET", "/threads/"+tid, nil, &th, 200)
	if th.Status != ThreadIdle {
		t.Fatalf("after its only run was cancelled the thread is %q, want idle", th.Status)
	}
	var next Run
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "now"}}, &next, 200)
	var out map[string]any
	b.mustDo("GET", "/threads/"+tid+"/runs/"+next.RunID+"/join", nil, &out, 200)
	if out["topic"] != "now" {
		t.Fatalf("the run after a cancelled scheduled one answered %v", out)
	}

	// Rollback: a new run replaces a scheduled one and runs now.
	tid2 := b.newThread(nil)
	b.mustDo("POST", "/threads/"+tid2+"/runs", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "later"}, "after_seconds": 600}, &sched, 200)
	b.mustDo("POST", "/threads/"+tid2+"/runs", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "instead"}, "multitask_strategy": "rollback"}, &next, 200)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", b.http.URL+"/threads/"+tid2+"/runs/"+next.RunID+"/join", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("the run that rolled back a scheduled one never ended: %v", err)
	}
	resp.Body.Close()
	if code := b.do("GET", "/threads/"+tid2+"/runs/"+sched.RunID, nil, nil); code != 404 {
		t.Fatalf("the rolled-back scheduled run: %d, want 404 (deleted)", code)
	}
}

// update-state and a new thread's supersteps accept as_node "__start__" (the values stand for
// input: the first node is next); PATCH /threads/{id}/state merges metadata into the newest
// checkpoint's.
func TestStateAsStartAndPatch(t *testing.T) {
	t.Parallel()
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			var cfg Config
			if db == "postgres" {
				cfg.DatabaseURL = pgURL(t)
			}
			b := setup(t, setupOpts{cfg: cfg})
			tid := b.newThread(map[string]any{"graph_id": "flow"})
			b.mustDo("POST", "/threads/"+tid+"/state", map[string]any{"values": map[string]any{"topic": "begun"}, "as_node": "__start__"}, nil, 200)
			var st ThreadState
			b.mustDo("GET", "/threads/"+tid+"/state", nil, &st, 200)
			if !slices.Equal(st.Next, []string{"plan"}) || st.Values.(map[string]any)["topic"] != "begun" {
				t.Fatalf("after an update as __start__: next %v, values %v", st.Next, st.Values)
			}
			var th Thread
			b.mustDo("POST", "/threads", map[string]any{"metadata": map[string]any{"graph_id": "flow"}, "supersteps": []any{
				map[string]any{"updates": []any{map[string]any{"values": map[string]any{"topic": "seeded"}, "as_node": "__start__"}}},
			}}, &th, 200)
			b.mustDo("GET", "/threads/"+th.ThreadID+"/state", nil, &st, 200)
			if !slices.Equal(st.Next, []string{"plan"}) {
				t.Fatalf("supersteps as __start__: next %v", st.Next)
			}

			source := st.Metadata["source"]
			b.mustDo("PATCH", "/threads/"+th.ThreadID+"/state", map[string]any{"metadata": map[string]any{"reviewed": true, "by": "kim"}}, nil, 204)
			b.mustDo("GET", "/threads/"+th.ThreadID+"/state", nil, &st, 200)
			if st.Metadata["reviewed"] != true || st.Metadata["by"] != "kim" || st.Metadata["source"] != source {
				t.Fatalf("patched metadata %v (source was %v)", st.Metadata, source)
			}
			var e map[string]any
			if code := b.do("PATCH", "/threads/"+th.ThreadID+"/state", map[string]any{}, &e); code != 400 || !strings.Contains(fmt.Sprint(e), "metadata") {
				t.Fatalf("a patch without metadata: %d %v", code, e)
			}
			empty := b.newThread(map[string]any{"graph_id": "flow"})
			if code := b.do("PATCH", "/threads/"+empty+"/state", map[string]any{"metadata": map[string]any{"a": 1}}, nil); code != 404 {
				t.Fatalf("a patch of a thread without state: %d, want 404", code)
			}
		})
	}
}

// select keeps only the named fields of a thread's runs; an unknown one is 400. A run that
// hits its recursion limit fails with LangGraph's error name, GraphRecursionError.
func TestRunListSelectAndErrorNames(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tid := b.newThread(nil)
	var out map[string]any
	b.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "t"}, "config": map[string]any{"recursion_limit": 1}}, &out, 200)
	e, _ := out["__error__"].(map[string]any)
	if e["error"] != "GraphRecursionError" {
		t.Fatalf("a run past its recursion limit: %v, want error GraphRecursionError", out)
	}
	var list []map[string]any
	b.mustDo("GET", "/threads/"+tid+"/runs?select=run_id&select=status", nil, &list, 200)
	if len(list) != 1 || len(list[0]) != 2 || list[0]["status"] != RunError || list[0]["run_id"] == nil {
		t.Fatalf("runs with select=run_id,status: %v", list)
	}
	list = nil
	b.mustDo("GET", "/threads/"+tid+`/runs?select=["run_id","kwargs"]`, nil, &list, 200)
	if len(list[0]) != 2 || list[0]["kwargs"] == nil {
		t.Fatalf("runs with a JSON list select: %v", list)
	}
	var bad map[string]any
	if code := b.do("GET", "/threads/"+tid+"/runs?select=nope", nil, &bad); code != 400 || !strings.Contains(fmt.Sprint(bad), "nope") {
		t.Fatalf("select of an unknown field: %d %v", code, bad)
	}
}

// POST /runs/batch creates stateless runs in order; a bad request in it names its index and
// creates none. POST /runs/cancel cancels by thread, by run IDs and by status.
func TestRunsBatchAndCancelMany(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var runs []Run
	b.mustDo("POST", "/runs/batch", []any{
		map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "a"}, "on_completion": "keep"},
		map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "b"}, "on_completion": "keep"},
	}, &runs, 200)
	if len(runs) != 2 || runs[0].RunID == runs[1].RunID || runs[0].ThreadID == runs[1].ThreadID {
		t.Fatalf("batch: %+v", runs)
	}
	var e map[string]any
	if code := b.do("POST", "/runs/batch", []any{map[string]any{"assistant_id": "flow"}, map[string]any{"assistant_id": "ghost"}}, &e); code != 404 || !strings.Contains(fmt.Sprint(e), "run [1]") {
		t.Fatalf("a batch with an unknown assistant: %d %v", code, e)
	}

	// By thread: the running run and the one enqueued behind it.
	tid := b.newThread(nil)
	var r1, r2 Run
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{"topic": "one"}}, &r1, 200)
	<-b.gates.started
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{"topic": "two"}, "multitask_strategy": "enqueue"}, &r2, 200)
	b.mustDo("POST", "/runs/cancel", map[string]any{"thread_id": tid}, nil, 204)
	b.waitStatus(tid, r1.RunID, RunInterrupted)
	b.waitStatus(tid, r2.RunID, RunInterrupted)

	// By status, and by run IDs.
	var s1, s2, s3 Run
	t1, t2, t3 := b.newThread(nil), b.newThread(nil), b.newThread(nil)
	later := map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "later"}, "after_seconds": 600}
	b.mustDo("POST", "/threads/"+t1+"/runs", later, &s1, 200)
	b.mustDo("POST", "/threads/"+t2+"/runs", later, &s2, 200)
	b.mustDo("POST", "/threads/"+t3+"/runs", later, &s3, 200)
	if code := b.do("POST", "/runs/cancel", map[string]any{"run_ids": []string{s3.RunID, "0190c4d1-0000-7000-8000-000000000000"}}, &e); code != 404 {
		t.Fatalf("cancel naming an unknown run: %d %v", code, e)
	}
	b.waitStatus(t3, s3.RunID, RunPending) // nothing was cancelled
	b.mustDo("POST", "/runs/cancel?action=interrupt", map[string]any{"run_ids": []string{s3.RunID}}, nil, 204)
	b.waitStatus(t3, s3.RunID, RunInterrupted)
	b.mustDo("POST", "/runs/cancel", map[string]any{"status": "pending"}, nil, 204)
	b.waitStatus(t1, s1.RunID, RunInterrupted)
	b.waitStatus(t2, s2.RunID, RunInterrupted)
	for _, body := range []map[string]any{{}, {"status": "done"}, {"run_ids": []string{s1.RunID}, "status": "all"}} {
		if code := b.do("POST", "/runs/cancel", body, nil); code != 400 {
			t.Errorf("cancel %v: %d, want 400", body, code)
		}
	}
	if code := b.do("POST", "/runs/cancel?action=explode", map[string]any{"thread_id": t1}, nil); code != 400 {
		t.Errorf("cancel with a bad action: %d, want 400", code)
	}
}

// GET /threads/{id}/stream joins the thread's active run (threadstream_test.go has the rest); join with cancel_on_disconnect
// cancels the run when the client goes.
func TestThreadJoinStreamAndJoinCancel(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tid := b.newThread(nil)
	var run Run
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{"topic": "joined"}, "stream_mode": []string{"values", "updates"}}, &run, 200)
	<-b.gates.started
	done := make(chan []sseEvent)
	joined := make(chan struct{})
	go func() {
		first := true
		_, evs := b.stream("GET", "/threads/"+tid+"/stream", nil, nil, func(ev sseEvent) bool {
			if first {
				first = false
				close(joined) // the run's metadata event: the stream is joined
			}
			return strings.Contains(string(ev.Data), "run_done") // the stream stays open across runs
		})
		done <- evs
	}()
	<-joined
	b.gates.release <- struct{}{}
	evs := <-done
	got := names(evs)
	if !slices.Contains(got, "updates") || !slices.Contains(got, "values") || got[len(got)-1] != "metadata" || !strings.Contains(string(evs[len(evs)-1].Data), "run_done") {
		t.Fatalf("the thread's stream (run_modes): %v", got)
	}

	// join?cancel_on_disconnect=true
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{"topic": "left"}}, &run, 200)
	<-b.gates.started
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", b.http.URL+"/threads/"+tid+"/runs/"+run.RunID+"/join?cancel_on_disconnect=true", nil)
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	for !b.srv.runs.Waited(run.RunID) { // the join request has reached the server
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-errc
	b.waitStatus(tid, run.RunID, RunInterrupted)
}

// POST /threads/prune deletes threads (skipping unknown ones) or keeps only their newest
// checkpoint.
func TestThreadPrune(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a, c := b.newThread(nil), b.newThread(nil)
	for _, tid := range []string{a, c} {
		b.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "p"}}, nil, 200)
	}
	var hist []ThreadState
	b.mustDo("POST", "/threads/"+c+"/history", map[string]any{"limit": 100}, &hist, 200)
	if len(hist) < 2 {
		t.Fatalf("history before pruning: %d checkpoints", len(hist))
	}
	var res map[string]any
	b.mustDo("POST", "/threads/prune", map[string]any{"thread_ids": []string{a, "0190c4d1-0000-7000-8000-000000000000"}}, &res, 200)
	if res["pruned_count"] != float64(1) {
		t.Fatalf("prune: %v", res)
	}
	if code := b.do("GET", "/threads/"+a, nil, nil); code != 404 {
		t.Fatalf("a pruned thread: %d, want 404", code)
	}
	b.mustDo("POST", "/threads/prune", map[string]any{"thread_ids": []string{c}, "strategy": "keep_latest"}, &res, 200)
	b.mustDo("POST", "/threads/"+c+"/history", map[string]any{"limit": 100}, &hist, 200)
	if len(hist) != 1 || res["pruned_count"] != float64(1) {
		t.Fatalf("keep_latest left %d checkpoints (%v)", len(hist), res)
	}
	for _, body := range []map[string]any{{"thread_ids": []string{}}, {"thread_ids": []string{c}, "strategy": "all"}} {
		if code := b.do("POST", "/threads/prune", body, nil); code != 400 {
			t.Errorf("prune %v: %d, want 400", body, code)
		}
	}
}

// A cron tick whose run cannot be created (its thread busy) is given back and tried again, not
// lost until the schedule's next tick.
func TestCronTickRetried(t *testing.T) {
	t.Parallel()
	b := setup(t)
	clock := newCronClock(cronEpoch).use(b.srv)
	tid := b.newThread(nil)
	var c Cron
	b.mustDo("POST", "/threads/"+tid+"/runs/crons", map[string]any{"assistant_id": "flow", "schedule": "*/5 * * * *", "input": map[string]any{"topic": "tick"}}, &c, 200)
	// The thread is busy when the tick comes.
	var blocker Run
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{"topic": "busy"}}, &blocker, 200)
	<-b.gates.started
	due := time.Date(2030, 1, 1, 0, 5, 0, 0, time.UTC)
	clock.set(due)
	if n := b.srv.tickCrons(context.Background()); n != 0 {
		t.Fatalf("a tick on a busy thread started %d runs", n)
	}
	b.gates.release <- struct{}{}
	b.waitStatus(tid, blocker.RunID, RunSuccess)
	clock.set(due.Add(cronRetry))
	if n := b.srv.tickCrons(context.Background()); n != 1 {
		t.Fatalf("the retried tick started %d runs, want 1", n)
	}
	var got Cron
	var list []Cron
	b.mustDo("POST", "/runs/crons/search", map[string]any{"thread_id": tid}, &list, 200)
	if len(list) == 1 {
		got = list[0]
	}
	if got.NextRunDate == nil || !got.NextRunDate.Equal(time.Date(2030, 1, 1, 0, 10, 0, 0, time.UTC)) {
		t.Fatalf("after the retried tick the cron is next due %v, want 00:10", got.NextRunDate)
	}
}

// command.goto steers a thread: the update is applied and the nodes named run next, in place of
// the task waiting at an interrupt; an unknown node, or goto with resume, is 400.
func TestCommandGoto(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tid := b.newThread(nil)
	b.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "g"}}, nil, 200)
	var out map[string]any
	b.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "flow", "command": map[string]any{"goto": "act", "update": map[string]any{"approved": "skipped"}}}, &out, 200)
	if fmt.Sprint(out["steps"]) != "[plan act]" || out["approved"] != "skipped" || out["__interrupt__"] != nil {
		t.Fatalf("after goto act: %v; want plan then act, the approval skipped", out)
	}
	b.mustDo("POST", "/runs/wait", map[string]any{"assistant_id": "flow", "command": map[string]any{"goto": []string{"act"}}}, &out, 200)
	if fmt.Sprint(out["steps"]) != "[act]" {
		t.Fatalf("goto act on a new thread: %v", out)
	}
	for _, cmd := range []map[string]any{{"goto": "nowhere"}, {"goto": "act", "resume": "yes"}, {"goto": map[string]any{"node": "act"}}} {
		var e map[string]any
		if code := b.do("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "flow", "command": cmd}, &e); code != 400 || !strings.Contains(fmt.Sprint(e), "goto") {
			t.Errorf("command %v: %d %v, want 400 naming goto", cmd, code, e)
		}
	}
}
