package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trellis-go/trellis/graph"
)

func TestRunTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{cfg: Config{RunTimeout: 300 * time.Millisecond}})
	tid := b.newThread(nil)
	var run Run
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{"topic": "t"}}, &run, 200)
	<-b.gates.started
	b.waitStatus(tid, run.RunID, RunError)
	_, evs := b.stream("GET", "/threads/"+tid+"/runs/"+run.RunID+"/stream", nil, nil, nil)
	var msg string
	for _, e := range evs {
		if e.Event == "error" {
			msg = string(e.Data)
		}
	}
	if !strings.Contains(msg, "exceeded its timeout of 300ms") {
		t.Fatalf("error event %q does not say the run timed out (events %v)", msg, names(evs))
	}
}

// TestTenantLimit: with one run per tenant, a tenant's second run waits, pending, until its
// first ends.
func TestTenantLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{cfg: Config{MaxRunsPerTenant: 1}})
	t1, t2 := b.newThread(nil), b.newThread(nil)
	var r1, r2 Run
	b.mustDo("POST", "/threads/"+t1+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{"topic": "one"}}, &r1, 200)
	if got := <-b.gates.started; got != "one" {
		t.Fatalf("started %q", got)
	}
	b.mustDo("POST", "/threads/"+t2+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{"topic": "two"}}, &r2, 200)
	// The queue offers the second run several times (it polls every 100ms, and a refused run is
	// offered again after 200ms); it must stay pending every time.
	for range 5 {
		select {
		case got := <-b.gates.started:
			t.Fatalf("run %q started while its tenant was at its limit", got)
		case <-time.After(200 * time.Millisecond):
		}
		var cur Run
		b.mustDo("GET", "/threads/"+t2+"/runs/"+r2.RunID, nil, &cur, 200)
		if cur.Status != RunPending {
			t.Fatalf("second run is %q, want pending", cur.Status)
		}
	}
	b.gates.release <- struct{}{}
	b.waitStatus(t1, r1.RunID, RunSuccess)
	if got := <-b.gates.started; got != "two" {
		t.Fatalf("started %q", got)
	}
	b.gates.release <- struct{}{}
	b.waitStatus(t2, r2.RunID, RunSuccess)
}

// TestTransientRetry: a node failing with ErrTransient is retried from the last checkpoint;
// the node before it does not run again.
func TestTransientRetry(t *testing.T) {
	t.Parallel()
	var firstRuns, flakyCalls atomic.Int64
	flaky := GraphSpec{ID: "flaky", Build: func(d Deps) (graph.Runnable, error) {
		g := graph.New[flowState]()
		g.AddNode("first", func(ctx context.Context, s flowState) (flowState, error) {
			firstRuns.Add(1)
			return flowState{Steps: []string{"first"}}, nil
		})
		g.AddNode("flaky", func(ctx context.Context, s flowState) (flowState, error) {
			if flakyCalls.Add(1) == 1 {
				return flowState{}, fmt.Errorf("upstream hiccup: %w", ErrTransient)
			}
			return flowState{Steps: []string{"flaky"}}, nil
		})
		g.AddEdge(graph.START, "first").AddEdge("first", "flaky").AddEdge("flaky", graph.END)
		return graph.Erase(g.Compile(graph.CompileOptions{Name: "flaky", Saver: d.Saver}))
	}}
	b := setup(t, setupOpts{extra: []GraphSpec{flaky}})
	tid := b.newThread(nil)
	var out map[string]any
	b.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "flaky", "input": map[string]any{}}, &out, 200)
	if fmt.Sprint(out["steps"]) != "[first flaky]" {
		t.Fatalf("output %v", out)
	}
	if firstRuns.Load() != 1 || flakyCalls.Load() != 2 {
		t.Fatalf("first ran %d times (want 1), flaky %d (want 2)", firstRuns.Load(), flakyCalls.Load())
	}
	var runs []Run
	b.mustDo("GET", "/threads/"+tid+"/runs", nil, &runs, 200)
	if len(runs) != 1 || runs[0].Status != RunSuccess {
		t.Fatalf("runs %+v", runs)
	}
}

// TestTransientGivesUp: a run that keeps failing transiently fails after MaxRunAttempts.
func TestTransientGivesUp(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	broken := GraphSpec{ID: "broken", Build: func(d Deps) (graph.Runnable, error) {
		g := graph.New[flowState]()
		g.AddNode("n", func(ctx context.Context, s flowState) (flowState, error) {
			calls.Add(1)
			return flowState{}, fmt.Errorf("still down: %w", ErrTransient)
		})
		g.AddEdge(graph.START, "n").AddEdge("n", graph.END)
		return graph.Erase(g.Compile(graph.CompileOptions{Name: "broken", Saver: d.Saver}))
	}}
	b := setup(t, setupOpts{cfg: Config{MaxRunAttempts: 2}, extra: []GraphSpec{broken}})
	tid := b.newThread(nil)
	var out map[string]any
	b.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "broken", "input": map[string]any{}}, &out, 200)
	if out["__error__"] == nil {
		t.Fatalf("output %v, want __error__", out)
	}
	if calls.Load() != 2 {
		t.Fatalf("node called %d times, want 2 (MaxRunAttempts)", calls.Load())
	}
}

func TestLocalQueueStillWorks(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{cfg: Config{Queue: NewLocalQueue(2)}})
	tid := b.newThread(nil)
	var out map[string]any
	b.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "local"}}, &out, 200)
	if ints, _ := out["__interrupt__"].([]any); len(ints) != 1 {
		t.Fatalf("output %v", out)
	}
}

func TestQueueConfigErrors(t *testing.T) {
	t.Parallel()
	for _, cfg := range []Config{{RunTimeout: -1}, {MaxRunsPerTenant: -1}, {Heartbeat: -time.Second}, {MaxRunAttempts: -2}, {RateLimit: -1}, {RateBurst: -1}, {MaxStreamsPerTenant: -1}} {
		cfg.Graphs = []GraphSpec{{ID: "flow", Build: buildFlow}}
		cfg.Dev, cfg.DataDir = true, t.TempDir()
		_, err := New(cfg)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "negative") {
			t.Errorf("%+v: err = %v, want a ConfigError about a negative value", cfg, err)
		}
	}
	for _, c := range []struct{ db, redis, want string }{
		{"postgres://127.0.0.1:5432/test", "::not a url", "cannot be parsed"},
		{"", "redis://127.0.0.1:6379/0", "DatabaseURL is empty"},
	} {
		_, err := New(Config{Graphs: []GraphSpec{{ID: "flow", Build: buildFlow}}, Dev: true, DataDir: t.TempDir(), DatabaseURL: c.db, RedisURL: c.redis})
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "RedisURL") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("RedisURL %q on %q: err = %v, want a ConfigError saying %q", c.redis, c.db, err, c.want)
		}
	}
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{cfg: Config{RateLimit: 0.5, RateBurst: 2}})
	for i := range 2 {
		if code := b.do("POST", "/threads/search", map[string]any{}, nil); code != 200 {
			t.Fatalf("request %d within the burst: %d", i, code)
		}
	}
	wantRateLimited(t, b, "third request")
	// Health checks are not counted.
	if code := b.do("GET", "/healthz", nil, nil); code != 200 {
		t.Fatalf("healthz: %d", code)
	}
}

func TestStreamLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{cfg: Config{MaxStreamsPerTenant: 1}})
	tid := b.newThread(nil)
	var run Run
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{"topic": "s"}}, &run, 200)
	<-b.gates.started
	path := b.http.URL + "/threads/" + tid + "/runs/" + run.RunID + "/stream"
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", path, nil)
	first, err := http.DefaultClient.Do(req)
	if err != nil || first.StatusCode != 200 {
		t.Fatalf("first stream: %v %v", err, first)
	}
	second, err := http.Get(path)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(second.Body)
	second.Body.Close()
	if second.StatusCode != 429 || !strings.Contains(string(body), "streams open") {
		t.Fatalf("second stream: %d %s", second.StatusCode, body)
	}
	cancel()
	first.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get(path + "?stream_mode=values")
		if err != nil {
			t.Fatal(err)
		}
		code := resp.StatusCode
		resp.Body.Close()
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a stream slot was not given back after the first stream closed (status %d)", code)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
