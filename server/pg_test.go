package server

import (
	"fmt"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/trellis-go/trellis/server/internal/dbtest"
)

// pgURL returns a connection string to a fresh schema of the test database, dropped when the
// test ends, or skips the test when Postgres is unreachable.
func pgURL(t *testing.T) string { return dbtest.PostgresURL(t, "srv") }

// TestPostgres runs the main flows with every table in Postgres.
func TestPostgres(t *testing.T) {
	t.Parallel()
	url := pgURL(t)
	b := setup(t, setupOpts{cfg: Config{DatabaseURL: url}})
	tid := b.newThread(map[string]any{"db": "pg"})
	var out map[string]any
	b.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "pg"}, "stream_resumable": true}, &out, 200)
	if ints, _ := out["__interrupt__"].([]any); len(ints) != 1 {
		t.Fatalf("first run: %v", out)
	}
	b.mustDo("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "flow", "command": map[string]any{"resume": "y"}}, &out, 200)
	if out["approved"] != "y" {
		t.Fatalf("resume: %v", out)
	}
	var runs []Run
	b.mustDo("GET", "/threads/"+tid+"/runs", nil, &runs, 200)
	if len(runs) != 2 {
		t.Fatalf("runs: %d", len(runs))
	}
	// The resumable run's events are in the database: drop them from memory and join again.
	b.srv.hub.Drop(runs[1].RunID)
	_, evs := b.stream("GET", "/threads/"+tid+"/runs/"+runs[1].RunID+"/stream", nil, map[string][]string{"Last-Event-ID": {"1"}}, nil)
	if len(evs) == 0 || evs[0].ID != "2" || evs[len(evs)-1].Event != "end" {
		t.Fatalf("persisted stream: %v", evs)
	}
	b.mustDo("PUT", "/store/items", map[string]any{"namespace": []string{"pg"}, "key": "k", "value": map[string]any{"a": 1}}, nil, 204)
	b.mustDo("GET", "/store/items?namespace=pg&key=k", nil, nil, 200)
	var found []Thread
	b.mustDo("POST", "/threads/search", map[string]any{"metadata": map[string]any{"db": "pg"}}, &found, 200)
	if len(found) != 1 || found[0].Status != ThreadIdle {
		t.Fatalf("search: %+v", found)
	}
	b.mustDo("GET", "/readyz", nil, nil, 200)
}

// TestRestartResumesPendingRun checks that a run left running by a stopped server finishes at
// the next start from its last checkpoint, without running finished nodes again.
func TestRestartResumesPendingRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := setup(t, setupOpts{cfg: Config{DataDir: dir, ShutdownGrace: 50 * time.Millisecond}})
	tid := b.newThread(nil)
	var run Run
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{"topic": "r"}, "stream_resumable": true}, &run, 200)
	<-b.gates.started
	b.srv.Close() // the grace passes; the run is stopped and left pending
	b2 := setup(t, setupOpts{cfg: Config{DataDir: dir}})
	if got := <-b2.gates.started; got != "r" {
		t.Fatalf("restarted run topic %q", got)
	}
	b2.gates.release <- struct{}{}
	b2.waitStatus(tid, run.RunID, RunSuccess)
	var st ThreadState
	b2.mustDo("GET", "/threads/"+tid+"/state", nil, &st, 200)
	steps := st.Values.(map[string]any)["steps"].([]any)
	if len(steps) != 2 || steps[0] != "first" || steps[1] != "wait:r" {
		t.Fatalf("steps after restart %v (first must not run twice)", steps)
	}
	_, evs := b2.stream("GET", "/threads/"+tid+"/runs/"+run.RunID+"/stream", nil, nil, nil)
	for i, e := range evs {
		if e.ID != fmt.Sprint(i+1) {
			t.Fatalf("event %d has id %s: numbering continues across the restart", i, e.ID)
		}
	}
}
