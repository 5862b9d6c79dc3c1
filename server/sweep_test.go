package server

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Finished stateless runs' threads are hidden from the API at once and deleted by the
// sweeper, many in one transaction: afterwards no thread, run, event or checkpoint row of
// theirs is left, and a kept thread's rows are.
func TestStatelessThreadsSwept(t *testing.T) {
	t.Parallel()
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			var cfg Config
			if db == "postgres" {
				cfg.DatabaseURL = pgURL(t)
			}
			b := setup(t, setupOpts{cfg: cfg})
			kept := b.newThread(nil)
			b.mustDo("POST", "/threads/"+kept+"/runs/wait", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "k"}, "interrupt_before": []string{"approve"}}, nil, 200)

			const n = 24
			var wg sync.WaitGroup
			errs := make(chan string, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					input := map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "t"}, "stream_resumable": i%4 == 1}
					switch i % 3 {
					case 0:
						var out map[string]any
						if code := b.do("POST", "/runs/wait", input, &out); code != 200 {
							errs <- "wait: status " + strconv.Itoa(code)
						} else if steps, _ := out["steps"].([]any); len(steps) == 0 {
							errs <- "wait: no output"
						}
					case 1:
						_, evs := b.stream("POST", "/runs/stream", input, nil, nil)
						if len(evs) == 0 || evs[len(evs)-1].Event != "end" {
							errs <- "stream: no end"
						}
					default:
						// In the background, followed to its end: then its thread and run are gone.
						var run Run
						if code := b.do("POST", "/runs", input, &run); code != 200 {
							errs <- "create: status " + strconv.Itoa(code)
							return
						}
						// Follow it to its end (404 if it ended already: gone).
						resp, err := http.Get(b.http.URL + "/runs/" + run.RunID + "/stream")
						if err != nil {
							errs <- "join stream: " + err.Error()
							return
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode != 200 && resp.StatusCode != 404 {
							errs <- "join stream: status " + strconv.Itoa(resp.StatusCode)
						}
						if code := b.do("GET", "/threads/"+run.ThreadID+"/runs/"+run.RunID, nil, nil); code != 404 {
							errs <- "a finished stateless run is still visible: status " + strconv.Itoa(code)
						}
						if code := b.do("GET", "/threads/"+run.ThreadID, nil, nil); code != 404 {
							errs <- "a finished stateless run's thread is still visible: status " + strconv.Itoa(code)
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Error(e)
			}

			// The sweeper forgets a thread once its rows are deleted; wait for that.
			deadline := time.Now().Add(30 * time.Second)
			for b.srv.runs.Sweeping() > 0 {
				if time.Now().After(deadline) {
					t.Fatalf("%d threads still wait for the sweeper", b.srv.runs.Sweeping())
				}
				time.Sleep(5 * time.Millisecond)
			}
			m := b.srv.meta
			count := func(q string) int {
				t.Helper()
				var c int
				if err := m.SQL().QueryRowContext(context.Background(), m.Q(q), kept).Scan(&c); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				return c
			}
			for _, q := range []string{
				`SELECT count(*) FROM trellis_threads WHERE thread_id <> $1`,
				`SELECT count(*) FROM trellis_runs WHERE thread_id <> $1`,
				`SELECT count(*) FROM trellis_run_events WHERE run_id NOT IN (SELECT run_id FROM trellis_runs WHERE thread_id = $1)`,
				`SELECT count(*) FROM trellis_checkpoint_spaces WHERE thread_id <> $1`,
				`SELECT count(*) FROM trellis_checkpoints WHERE space NOT IN (SELECT id FROM trellis_checkpoint_spaces WHERE thread_id = $1)`,
				`SELECT count(*) FROM trellis_checkpoint_blobs WHERE space NOT IN (SELECT id FROM trellis_checkpoint_spaces WHERE thread_id = $1)`,
				`SELECT count(*) FROM trellis_checkpoint_writes WHERE space NOT IN (SELECT id FROM trellis_checkpoint_spaces WHERE thread_id = $1)`,
			} {
				if c := count(q); c != 0 {
					t.Errorf("%d rows of stateless runs left: %s", c, q)
				}
			}
			for _, q := range []string{
				`SELECT count(*) FROM trellis_threads WHERE thread_id = $1`,
				`SELECT count(*) FROM trellis_runs WHERE thread_id = $1`,
				`SELECT count(*) FROM trellis_checkpoints WHERE space IN (SELECT id FROM trellis_checkpoint_spaces WHERE thread_id = $1)`,
			} {
				if count(q) == 0 {
					t.Errorf("the kept thread lost its rows: %s", q)
				}
			}
			b.mustDo("GET", "/threads/"+kept, nil, nil, 200)
		})
	}
}
