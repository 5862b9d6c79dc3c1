package listforge_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/listforge"
	"github.com/trellis-go/trellis/apps/listforge/catalog"
	"github.com/trellis-go/trellis/apps/listforge/store"
	"github.com/trellis-go/trellis/server"
)

// TestKillHelperProcess is the server process of TestKillMidResearch (it runs only when that
// test starts it): the app on SQLite in LISTFORGE_KILL_DIR, eBay answering after
// LISTFORGE_KILL_DELAY.
func TestKillHelperProcess(t *testing.T) {
	dir := os.Getenv("LISTFORGE_KILL_DIR")
	if dir == "" {
		t.Skip("started by TestKillMidResearch")
	}
	delay, _ := time.ParseDuration(os.Getenv("LISTFORGE_KILL_DELAY"))
	market := catalog.NewServer(catalog.Generate(time.Now()))
	market.Delay = delay
	s, err := server.New(server.Config{Apps: []server.App{listforge.New(listforge.Options{Offline: market})}, DataDir: dir,
		Auth: server.AuthConfig{APIKeys: keys}, Logger: slog.New(slog.DiscardHandler),
		Heartbeat: 200 * time.Millisecond}) // a killed worker's lease lapses after three
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("URL=http://%s\n", ln.Addr())
	_ = http.Serve(ln, s.Handler())
}

func startHelper(t *testing.T, dir string, delay time.Duration) (*exec.Cmd, *env) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillHelperProcess$", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), "LISTFORGE_KILL_DIR="+dir, "LISTFORGE_KILL_DELAY="+delay.String())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "URL="); ok {
			go func() {
				for sc.Scan() {
				}
			}()
			return cmd, &env{t: t, url: u}
		}
	}
	t.Fatal("the helper server did not start")
	return nil, nil
}

// A server process is killed with SIGKILL while a research job is searching eBay, and started
// again on the same data: the job resumes from its last checkpoint and finishes, and the nodes
// that had finished before the kill do not run again.
func TestKillMidResearch(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills server processes")
	}
	t.Parallel()
	dir := t.TempDir()
	cmd, e := startHelper(t, dir, 3*time.Second)
	it := e.demoItem(key, catalog.DemoLabels)
	var started struct{ JobID string }
	if code := e.do(key, "POST", "/api/v1/items/"+it.ID+"/research", nil, &started); code != 202 {
		t.Fatalf("start: %d", code)
	}
	c := e.dial(key, listforge.ResearchPath)
	send(t, c, "subscribe_job", map[string]string{"jobId": started.JobID})
	for {
		f := read(t, c)
		var j store.ResearchRun
		_ = json.Unmarshal(f.Data, &j)
		if f.Event == "job_status" && j.CurrentNode == "search_comps" {
			break // identify_product's checkpoint is written; search_comps waits on eBay
		}
	}
	c.CloseNow()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	// The killed worker's lease (three heartbeats of 200 ms) lapses before the new process
	// starts, so it takes the run up at once rather than at a later sweep.
	time.Sleep(700 * time.Millisecond)

	_, e2 := startHelper(t, dir, 0)
	_, done, _ := progress(t, e2, key, started.JobID)
	if done.Status != "success" || done.Research == nil {
		t.Fatalf("after the restart: %+v", done)
	}
	var job store.ResearchRun
	e2.do(key, "GET", "/api/v1/items/"+it.ID+"/research/jobs/"+started.JobID, nil, &job)
	runs := map[string]int{}
	for _, s := range job.StepHistory {
		runs[s.Node]++
	}
	for _, n := range []string{"load_context", "analyze_media", "identify_product"} {
		if runs[n] != 1 {
			t.Fatalf("%s ran %d times: %+v", n, runs[n], job.StepHistory)
		}
	}
	if runs["persist_results"] != 1 || job.Status != "success" {
		t.Fatalf("job %+v", job)
	}
}
