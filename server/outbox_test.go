package server

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/trellis-go/trellis/server/internal/stream"
)

// eventCount is how many of the run's events the database holds.
func eventCount(t *testing.T, s *Server, runID string) int {
	t.Helper()
	evs, err := s.meta.loadEvents(context.Background(), runID, 0)
	if err != nil {
		t.Fatalf("loadEvents: %v", err)
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d in the database has seq %d: a gap or a duplicate", i+1, ev.Seq)
		}
	}
	return len(evs)
}

// testOutboxRule checks the durability rule on one server: tokens are shown at once and written
// in the next batch; any other event is written, with the tokens before it, before it is shown.
func testOutboxRule(t *testing.T, s *Server) {
	ctx := context.Background()
	run := &Run{RunID: "run-outbox-" + fmt.Sprint(time.Now().UnixNano())}
	l := s.hub.Open(run.RunID)
	l.SetResumable(true)
	r := s.runs
	tok := json.RawMessage(`[{"content":"a"},{}]`)

	// Hold the outbox's batch of this log back (it waits for the log's write lock), so that what
	// is in the database is only what the rule writes at once.
	l.LockWrites()
	r.persistAndAppend(ctx, l, run, "messages", tok)
	r.persistAndAppend(ctx, l, run, "messages|sub:1", tok)
	shown, written := l.Last(), eventCount(t, s, run.RunID)
	l.UnlockWrites()
	if shown != 2 || written != 0 {
		t.Fatalf("after two tokens readers see %d events and the database holds %d; want 2 and 0 (shown at once, written later)", shown, written)
	}

	// A non-token event writes what came before it, then itself, before it is shown.
	r.persistAndAppend(ctx, l, run, "updates", json.RawMessage(`{"agent":{}}`))
	if n := eventCount(t, s, run.RunID); n != 3 {
		t.Fatalf("after an updates event the database holds %d events, want 3", n)
	}

	// More tokens reach the database within the batch interval.
	for range 5 {
		r.persistAndAppend(ctx, l, run, "messages/partial", tok)
	}
	deadline := time.Now().Add(5 * time.Second)
	for eventCount(t, s, run.RunID) != 8 {
		if time.Now().After(deadline) {
			t.Fatalf("tokens not written within 5s (the batch interval is %s): %d of 8", stream.FlushInterval, eventCount(t, s, run.RunID))
		}
		time.Sleep(10 * time.Millisecond)
	}

	// A run that lost its lease writes none of its unwritten tokens. (The outbox's loop is
	// stopped first, so that only the explicit flush below could write.)
	r.out.Close()
	r.persistAndAppend(ctx, l, run, "messages", tok)
	r.out.Discard(l)
	r.out.Flush(ctx)
	if n := eventCount(t, s, run.RunID); n != 8 {
		t.Fatalf("a discarded token was written: %d events, want 8", n)
	}
	if l.Last() != 9 {
		t.Fatalf("readers see %d events, want 9 (discarding is about the database only)", l.Last())
	}
}

func TestOutboxRuleSQLite(t *testing.T) {
	t.Parallel()
	testOutboxRule(t, setup(t).srv)
}

func TestOutboxRulePostgres(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{cfg: Config{DatabaseURL: pgURL(t)}})
	testOutboxRule(t, b.srv)
}

// TestAppendEventRowsChunks writes more rows than one SQLite statement takes, from several
// runs, twice (the second time changes nothing).
func TestAppendEventRowsChunks(t *testing.T) {
	t.Parallel()
	const chunk = 500 // the rows of one INSERT on SQLite (metadb)
	s := setup(t).srv
	ctx := context.Background()
	var batches []stream.Batch
	for r := range 3 {
		var evs []streamEvent
		for i := range chunk + 7 {
			evs = append(evs, streamEvent{Seq: int64(i + 1), Event: "messages", Data: json.RawMessage(fmt.Sprintf(`{"r":%d,"i":%d}`, r, i))})
		}
		batches = append(batches, stream.Batch{RunID: fmt.Sprintf("chunked-%d", r), Events: evs})
	}
	for range 2 {
		if err := s.meta.WriteEvents(ctx, batches); err != nil {
			t.Fatalf("WriteEvents: %v", err)
		}
	}
	for r, b := range batches {
		evs, err := s.meta.loadEvents(ctx, b.RunID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != chunk+7 {
			t.Fatalf("run %d: %d events, want %d", r, len(evs), chunk+7)
		}
		if want := fmt.Sprintf(`{"r":%d,"i":%d}`, r, chunk+6); string(evs[len(evs)-1].Data) != want {
			t.Fatalf("run %d: last event %s, want %s", r, evs[len(evs)-1].Data, want)
		}
	}
}

// TestRenewLeases: one statement renews the leases this process owns and reports the ones it
// does not own any more.
func TestRenewLeases(t *testing.T) {
	t.Parallel()
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			var cfg Config
			if db == "postgres" {
				cfg.DatabaseURL = pgURL(t)
			}
			s := setup(t, setupOpts{cfg: cfg}).srv
			ctx := context.Background()
			now := time.Now().UTC()
			var ids []string
			for i := range 3 {
				run := &Run{RunID: fmt.Sprintf("lease-%d", i), ThreadID: fmt.Sprintf("lt-%d", i), AssistantID: "a", Status: RunPending,
					Metadata: map[string]any{}, Kwargs: &RunKwargs{}, MultitaskStrategy: "reject", CreatedAt: now, tenant: "t"}
				if err := s.meta.insertRun(ctx, run); err != nil {
					t.Fatal(err)
				}
				if attempt, refused, err := s.meta.claimRun(ctx, run, "me/"+run.RunID, time.Second, 0); err != nil || refused != nil || attempt != 1 {
					t.Fatalf("claim %s: attempt %d, refused %v, err %v", run.RunID, attempt, refused, err)
				}
				got, err := s.meta.runByID(ctx, run.RunID)
				if err != nil || got.Status != RunRunning {
					t.Fatalf("claimed run's status %q (%v), want running", got.Status, err)
				}
				ids = append(ids, run.RunID)
			}
			// Another worker takes lease-1.
			if _, err := s.meta.Exec(ctx, `UPDATE trellis_runs SET lease_owner = 'other/x' WHERE run_id = 'lease-1'`); err != nil {
				t.Fatal(err)
			}
			kept, err := s.meta.RenewLeases(ctx, append(ids, "no-such-run"), "me", time.Hour)
			if err != nil {
				t.Fatalf("renewLeases: %v", err)
			}
			if !kept["lease-0"] || kept["lease-1"] || !kept["lease-2"] || kept["no-such-run"] {
				t.Fatalf("renewLeases kept %v, want lease-0 and lease-2", kept)
			}
			var until int64
			if err := s.meta.SQL().QueryRowContext(ctx, s.meta.Q(`SELECT lease_until FROM trellis_runs WHERE run_id = $1`), "lease-2").Scan(&until); err != nil {
				t.Fatal(err)
			}
			if time.Until(fromMS(until)) < 30*time.Minute {
				t.Fatalf("lease-2 runs until %v, want about an hour from now", fromMS(until))
			}
			// A prefix that is only the start of ours owns nothing.
			if kept, err := s.meta.RenewLeases(ctx, ids, "m", time.Hour); err != nil || len(kept) != 0 {
				t.Fatalf("renewLeases with another instance's prefix kept %v (%v)", kept, err)
			}
		})
	}
}

// TestLeaseLostStopsRun: a run whose lease another worker takes is stopped by the next
// renewal, and left pending for that worker.
func TestLeaseLostStopsRun(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{cfg: Config{Heartbeat: 100 * time.Millisecond}})
	tid := b.newThread(nil)
	var run Run
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{}}, &run, 200)
	select {
	case <-b.gates.started:
	case <-time.After(30 * time.Second):
		t.Fatal("the slow run did not start")
	}
	if _, err := b.srv.meta.Exec(context.Background(), `UPDATE trellis_runs SET lease_owner = 'elsewhere/1', lease_until = $1 WHERE run_id = $2`,
		ms(time.Now().Add(time.Hour)), run.RunID); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for b.srv.runs.executing(run.RunID) {
		if time.Now().After(deadline) {
			t.Fatal("the run still executes 10s after another worker took its lease")
		}
		time.Sleep(20 * time.Millisecond)
	}
	got, err := b.srv.meta.runByID(context.Background(), run.RunID)
	if err != nil || got.Status != RunPending {
		t.Fatalf("run status %q (%v) after losing its lease, want pending", got.Status, err)
	}
}
