package server

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// redisURL returns the test Redis, or skips the test when it is unreachable.
func redisURL(t *testing.T) string {
	t.Helper()
	addr := "127.0.0.1:6379"
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Skipf("Redis unreachable at %s: %v", addr, err)
	}
	c.Close()
	return "redis://" + addr + "/0"
}

// TestReplicasRedis and TestReplicasListenNotify start three server processes on one Postgres
// schema, start a background run, follow its stream through a replica that does not execute
// it, and kill -9 the one that does: a survivor takes the run over from its last checkpoint and
// the follower's stream goes on to the end with no gap and no duplicate. A cancellation asked
// of one replica then stops a run executing on another.
func TestReplicasRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs three server processes")
	}
	t.Parallel()
	replicaTest(t, pgURL(t), redisURL(t))
}

func TestReplicasListenNotify(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs three server processes")
	}
	t.Parallel()
	replicaTest(t, pgURL(t), "")
}

func replicaTest(t *testing.T, dbURL, redis string) {
	bin := buildKillServer(t)
	logPath := filepath.Join(t.TempDir(), "nodes.log")
	args := []string{"--addr", "127.0.0.1:0", "--heartbeat", "300ms", "--database-url", dbURL}
	if redis != "" {
		args = append(args, "--redis-url", redis)
	}
	env := []string{"KILLTEST_LOG=" + logPath, "KILLTEST_PAUSE=500ms"}
	procs := make([]*serverProc, 3)
	for i := range procs {
		procs[i] = startProc(t, bin, args, env)
	}
	byPID := func(pid int) int {
		for i, p := range procs {
			if p.cmd.Process.Pid == pid {
				return i
			}
		}
		return -1
	}

	var thread struct {
		ThreadID string `json:"thread_id"`
	}
	procs[0].call(t, "POST", "/threads", map[string]any{}, &thread)
	var run Run
	procs[0].call(t, "POST", "/threads/"+thread.ThreadID+"/runs", map[string]any{
		"assistant_id": "steps", "input": map[string]any{}, "stream_mode": []string{"values", "custom"},
	}, &run)
	streamPath := "/threads/" + thread.ThreadID + "/runs/" + run.RunID + "/stream"

	pids := map[string]int{}
	waitFor(t, "node n1 to start", 60*time.Second, func() bool {
		return slices.Contains(nodeLog(logPath, pids), "start_n1")
	})
	exec := byPID(pids["start_n1"])
	if exec < 0 {
		t.Fatalf("node n1 ran in an unknown process %d", pids["start_n1"])
	}
	follower := procs[(exec+1)%3]
	var mu sync.Mutex
	var got []sseEvent
	followed := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	go func() {
		followed <- follower.follow(ctx, streamPath, 0, func(e sseEvent) {
			mu.Lock()
			got = append(got, e)
			mu.Unlock()
		})
	}()
	waitFor(t, "node n3 to start", 60*time.Second, func() bool {
		return slices.Contains(nodeLog(logPath, nil), "start_n3")
	})
	time.Sleep(150 * time.Millisecond)
	procs[exec].cmd.Process.Kill()
	procs[exec].cmd.Wait()
	t.Logf("killed replica %d, which executed the run; following through replica %d", exec, (exec+1)%3)

	if err := <-followed; err != nil {
		t.Fatalf("follow: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 || got[len(got)-1].Event != "end" {
		t.Fatalf("the followed stream did not end with end: %v", names(got))
	}
	for i, e := range got {
		if e.ID != strconv.Itoa(i+1) {
			t.Fatalf("event %d has id %q (a gap or a duplicate): %v", i+1, e.ID, names(got))
		}
		if e.Event == "error" {
			t.Fatalf("the run failed: %s", e.Data)
		}
	}
	other := procs[(exec+2)%3]
	var final Run
	other.call(t, "GET", "/threads/"+thread.ThreadID+"/runs/"+run.RunID, nil, &final)
	if final.Status != RunSuccess {
		t.Fatalf("run status %q", final.Status)
	}
	count := map[string]int{}
	for _, l := range nodeLog(logPath, nil) {
		count[l]++
	}
	for _, n := range []string{"n1", "n2", "n4", "n5"} {
		if count["start_"+n] != 1 {
			t.Errorf("node %s started %d times, want once", n, count["start_"+n])
		}
	}
	if count["start_n3"] != 2 || count["done_n3"] != 1 {
		t.Errorf("node n3 started %d and finished %d times, want 2 and 1", count["start_n3"], count["done_n3"])
	}
	t.Logf("%d events, node log %v", len(got), nodeLog(logPath, nil))

	// Cancellation travels too: a run executing on one replica is cancelled through another.
	os.Remove(logPath)
	survivors := []*serverProc{procs[(exec+1)%3], procs[(exec+2)%3]}
	var run2 Run
	survivors[0].call(t, "POST", "/threads/"+thread.ThreadID+"/runs", map[string]any{"assistant_id": "steps", "input": map[string]any{}}, &run2)
	waitFor(t, "the second run to start", 60*time.Second, func() bool {
		return slices.Contains(nodeLog(logPath, pids), "start_n1")
	})
	runner := byPID(pids["start_n1"])
	asker := survivors[0]
	if procs[runner] == survivors[0] {
		asker = survivors[1]
	}
	asker.call(t, "POST", "/threads/"+thread.ThreadID+"/runs/"+run2.RunID+"/cancel?wait=1&action=interrupt", nil, nil)
	var after Run
	asker.call(t, "GET", "/threads/"+thread.ThreadID+"/runs/"+run2.RunID, nil, &after)
	if after.Status != RunInterrupted {
		t.Fatalf("cancelled run has status %q", after.Status)
	}
	if n := strings.Count(strings.Join(nodeLog(logPath, nil), " "), "done_"); n >= 5 {
		t.Fatalf("the cancelled run ran to the end (%d nodes done)", n)
	}

	// A stateless run's record goes soon after the run ends, and at once for the replica that
	// ran it; meanwhile the other replicas must not report it as still running.
	for i := range 20 {
		var r Run
		survivors[0].call(t, "POST", "/runs", map[string]any{"assistant_id": "quick", "input": map[string]any{}}, &r)
		path := "/threads/" + r.ThreadID + "/runs/" + r.RunID
		waitFor(t, "the stateless run to end", 10*time.Second, func() bool {
			code, data := survivors[0].get(t, path)
			var got Run
			return code == http.StatusNotFound || json.Unmarshal(data, &got) == nil && got.Status == RunSuccess
		})
		code, data := survivors[1].get(t, path)
		var got Run
		if code != http.StatusNotFound && (json.Unmarshal(data, &got) != nil || got.Status != RunSuccess) {
			t.Fatalf("stateless run %d, read through another replica once it had ended: %d %s", i, code, data)
		}
	}

	for _, p := range survivors {
		p.cmd.Process.Signal(os.Interrupt)
		p.cmd.Wait()
	}
}
