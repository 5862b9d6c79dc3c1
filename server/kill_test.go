package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The kill test: a real trellis process (built from testdata/killserver, which adds the slow
// "steps" assistant to the binary) executes a background run; it is killed with SIGKILL in the
// middle of the third of five nodes and started again. The run must finish from its last
// checkpoint (the nodes that had finished do not run again), and a client that reconnects with
// Last-Event-ID must receive the rest of the stream with no gap and no duplicate.

func TestKillSQLite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills a server process")
	}
	t.Parallel()
	killTest(t, []string{"--data-dir", filepath.Join(t.TempDir(), "data")})
}

func TestKillPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills a server process")
	}
	t.Parallel()
	killTest(t, []string{"--database-url", pgURL(t)})
}

// The kill test of a stateless run on SQLite, whose checkpoints the server holds back and
// writes together (newThreadSaver): killed with SIGKILL in the middle of the third of five
// nodes and started again, the run is taken up again and finishes. With sync durability (the
// default) the checkpoints of the nodes that had finished were written before the next node
// started, so they do not run again; with async durability nothing was written before the run's
// end, so the run starts over from its input, as the mode allows.
func TestKillSQLiteStateless(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills a server process")
	}
	t.Parallel()
	bin := buildKillServer(t)
	for _, c := range []struct {
		durability string
		// starts of n1 (and n2), n3, n4 (and n5) over both processes
		early, killed, late int
	}{
		{"sync", 1, 2, 1},
		{"async", 2, 2, 1},
	} {
		t.Run(c.durability, func(t *testing.T) {
			logPath := filepath.Join(t.TempDir(), "nodes.log")
			args := []string{"--addr", "127.0.0.1:0", "--heartbeat", "300ms", "--data-dir", filepath.Join(t.TempDir(), "data")}
			env := []string{"KILLTEST_LOG=" + logPath, "KILLTEST_PAUSE=500ms", "TRELLIS_LOG_LEVEL=info"}
			count := func() map[string]int {
				n := map[string]int{}
				for _, l := range nodeLog(logPath, nil) {
					n[l]++
				}
				return n
			}
			p1 := startProc(t, bin, args, env)
			var run Run
			p1.call(t, "POST", "/runs", map[string]any{"assistant_id": "steps", "input": map[string]any{}, "durability": c.durability}, &run)
			waitFor(t, "node n3 to start", 60*time.Second, func() bool { return count()["start_n3"] == 1 })
			if err := p1.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			p1.cmd.Wait()
			if count()["done_n3"] != 0 {
				t.Fatalf("the kill came too late: n3 had finished (%v)", count())
			}
			p2 := startProc(t, bin, args, env)
			defer func() {
				p2.cmd.Process.Signal(os.Interrupt)
				p2.cmd.Wait()
			}()
			waitFor(t, "the run to finish after the restart", 60*time.Second, func() bool { return count()["done_n5"] == 1 })
			got := count()
			for n, want := range map[string]int{"n1": c.early, "n2": c.early, "n3": c.killed, "n4": c.late, "n5": c.late} {
				if got["start_"+n] != want {
					t.Errorf("node %s started %d times, want %d (node log %v)", n, got["start_"+n], want, got)
				}
			}
		})
	}
}

// buildKillServer builds testdata/killserver into a temporary directory.
func buildKillServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "killserver")
	cmd := exec.Command("go", "build", "-o", bin, "./testdata/killserver")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build killserver: %v\n%s", err, out)
	}
	return bin
}

type serverProc struct {
	cmd    *exec.Cmd
	url    string
	stderr *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var servingLine = regexp.MustCompile(`serving on (http://\S+)`)

// startProc starts the binary and waits for it to say where it serves.
func startProc(t *testing.T, bin string, args, env []string) *serverProc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &serverProc{cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			out := p.stderr.String()
			t.Logf("stderr of process %d (last 6000 bytes):\n%s", cmd.Process.Pid, out[max(0, len(out)-6000):])
		}
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				lines <- m[1]
			}
		}
	}()
	select {
	case p.url = <-lines:
	case <-time.After(60 * time.Second):
		t.Fatalf("server did not start in 60s; stderr:\n%s", p.stderr.String())
	}
	return p
}

func (p *serverProc) call(t *testing.T, method, path string, body, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	}
	req, _ := http.NewRequest(method, p.url+path, rd)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, data)
		}
	}
}

// get sends a GET and returns the answer's status and body.
func (p *serverProc) get(t *testing.T, path string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(p.url + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

// follow joins a run's stream from after lastID and sends its events until the stream ends or
// breaks.
func (p *serverProc) follow(ctx context.Context, path string, lastID int, got func(sseEvent)) error {
	req, _ := http.NewRequestWithContext(ctx, "GET", p.url+path, nil)
	if lastID > 0 {
		req.Header.Set("Last-Event-ID", strconv.Itoa(lastID))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		data, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("status %d: %s", resp.StatusCode, data)
	}
	readSSE(resp.Body, func(e sseEvent) bool { got(e); return false })
	return nil
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// nodeLog reads the killserver's node log as "start_n1"-style entries, and the PID that wrote
// each into pids when it is not nil.
func nodeLog(path string, pids map[string]int) []string {
	data, _ := os.ReadFile(path)
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		out = append(out, f[0]+"_"+f[1])
		if pids != nil {
			pids[f[0]+"_"+f[1]], _ = strconv.Atoi(f[2])
		}
	}
	return out
}

func killTest(t *testing.T, dbArgs []string) {
	bin := buildKillServer(t)
	logPath := filepath.Join(t.TempDir(), "nodes.log")
	args := append([]string{"--addr", "127.0.0.1:0", "--heartbeat", "300ms"}, dbArgs...)
	env := []string{"KILLTEST_LOG=" + logPath, "KILLTEST_PAUSE=500ms", "TRELLIS_LOG_LEVEL=info"}
	lines := func() []string { return nodeLog(logPath, nil) }
	has := func(line string) bool { return slices.Contains(lines(), strings.ReplaceAll(line, " ", "_")) }

	p1 := startProc(t, bin, args, env)
	var thread struct {
		ThreadID string `json:"thread_id"`
	}
	p1.call(t, "POST", "/threads", map[string]any{}, &thread)
	var run Run
	p1.call(t, "POST", "/threads/"+thread.ThreadID+"/runs", map[string]any{
		"assistant_id": "steps", "input": map[string]any{}, "stream_mode": []string{"values", "updates", "custom"}, "stream_resumable": true,
	}, &run)
	streamPath := "/threads/" + thread.ThreadID + "/runs/" + run.RunID + "/stream"

	var mu sync.Mutex
	var before []sseEvent
	followed := make(chan error, 1)
	go func() {
		followed <- p1.follow(context.Background(), streamPath, 0, func(e sseEvent) {
			mu.Lock()
			before = append(before, e)
			mu.Unlock()
		})
	}()
	waitFor(t, "node n3 to start", 60*time.Second, func() bool { return has("start n3") })
	time.Sleep(150 * time.Millisecond) // in the middle of n3's slow model call
	if err := p1.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p1.cmd.Wait()
	select {
	case <-followed:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream of the killed server did not break")
	}
	if has("done n3") {
		t.Fatalf("the kill came too late: n3 had finished (%v)", lines())
	}
	mu.Lock()
	seen := len(before)
	mu.Unlock()
	if seen == 0 {
		t.Fatal("no events before the kill")
	}
	for i, e := range before {
		if e.ID != strconv.Itoa(i+1) {
			t.Fatalf("before the kill, event %d has id %q", i+1, e.ID)
		}
	}

	p2 := startProc(t, bin, args, env)
	var after []sseEvent
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := p2.follow(ctx, streamPath, seen, func(e sseEvent) { after = append(after, e) }); err != nil {
		t.Fatalf("rejoin the stream: %v\nstderr:\n%s", err, p2.stderr.String())
	}
	if len(after) == 0 || after[len(after)-1].Event != "end" {
		t.Fatalf("the rejoined stream did not end with end: %v\nstderr:\n%s", names(after), p2.stderr.String())
	}
	for i, e := range after {
		if want := strconv.Itoa(seen + i + 1); e.ID != want {
			t.Fatalf("after the restart, event %d has id %q, want %s (a gap or a duplicate)", i, e.ID, want)
		}
		if e.Event == "error" {
			t.Fatalf("the resumed run failed: %s", e.Data)
		}
		if e.Event == "custom" && (bytes.Contains(e.Data, []byte(`"n1"`)) || bytes.Contains(e.Data, []byte(`"n2"`))) {
			t.Fatalf("a node that had finished streamed again after the restart: %s", e.Data)
		}
	}

	var got Run
	p2.call(t, "GET", "/threads/"+thread.ThreadID+"/runs/"+run.RunID, nil, &got)
	if got.Status != RunSuccess {
		t.Fatalf("run status %q after the restart", got.Status)
	}
	// The record tells the story: a second attempt, why, and n3 to n5 done in it.
	if got.Attempt != 2 || !strings.Contains(got.LastError, "resumed from its last checkpoint") || got.Progress == nil || got.Progress.CurrentNode != "n5" {
		t.Fatalf("run record after the restart: attempt %d, last error %q, progress %+v", got.Attempt, got.LastError, got.Progress)
	}
	if ns := got.Progress.Nodes; len(ns) < 3 || ns[len(ns)-3].Node != "n3" || ns[len(ns)-3].Attempt != 2 || ns[len(ns)-1].Node != "n5" || ns[len(ns)-1].Status != NodeSuccess {
		t.Fatalf("node history after the restart: %+v", ns)
	}
	var st struct {
		Values struct {
			Done []string `json:"done"`
		} `json:"values"`
	}
	p2.call(t, "GET", "/threads/"+thread.ThreadID+"/state", nil, &st)
	if strings.Join(st.Values.Done, ",") != "n1,n2,n3,n4,n5" {
		t.Fatalf("final state done = %v", st.Values.Done)
	}
	count := map[string]int{}
	for _, l := range lines() {
		count[l]++
	}
	for _, n := range []string{"n1", "n2", "n4", "n5"} {
		if count["start_"+n] != 1 || count["done_"+n] != 1 {
			t.Errorf("node %s started %d and finished %d times, want once each", n, count["start_"+n], count["done_"+n])
		}
	}
	if count["start_n3"] != 2 || count["done_n3"] != 1 {
		t.Errorf("node n3 (killed mid-way) started %d and finished %d times, want 2 and 1", count["start_n3"], count["done_n3"])
	}
	t.Logf("events before the kill: %d, after: %d; node log: %v", seen, len(after), lines())

	p2.cmd.Process.Signal(os.Interrupt)
	p2.cmd.Wait()
}
