package server

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

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
