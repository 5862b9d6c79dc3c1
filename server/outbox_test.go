package server

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/trellis-go/trellis/server/internal/engine"
	"github.com/trellis-go/trellis/server/internal/stream"
)

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
		if err := (engine.Events{DB: s.meta.DB}).WriteEvents(ctx, batches); err != nil {
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
				row := runRow(run)
				if err := s.meta.InsertRun(ctx, row); err != nil {
					t.Fatal(err)
				}
				if attempt, refused, err := s.meta.ClaimRun(ctx, row, "me/"+run.RunID, time.Second, 0, false); err != nil || refused != nil || attempt != 1 {
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
	for b.srv.runs.Executing(run.RunID) {
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
