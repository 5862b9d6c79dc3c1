package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/server/internal/dbtest"
	"github.com/trellis-go/trellis/server/internal/metadb"
	"github.com/trellis-go/trellis/server/internal/stream"
)

// testDB opens a migrated metadata database: SQLite in the test's directory, or a fresh schema
// of the Postgres test database.
func testDB(t *testing.T, postgres bool) *metadb.DB {
	t.Helper()
	ctx := context.Background()
	var m *metadb.DB
	if postgres {
		m = metadb.New(dbtest.Postgres(t, "engine"), true, nil)
	} else {
		m = metadb.New(dbtest.SQLite(t), false, nil)
	}
	if err := m.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return m
}

// noQueue is a queue that delivers nothing: the tests drive the runner's parts directly.
type noQueue struct {
	mu       sync.Mutex
	enqueued []string
}

func (q *noQueue) Start(func(context.Context, string) error) {}
func (q *noQueue) Enqueue(_ context.Context, runID, _ string) error {
	q.mu.Lock()
	q.enqueued = append(q.enqueued, runID)
	q.mu.Unlock()
	return nil
}
func (q *noQueue) Close(context.Context) error { return nil }

// noHost serves no graph.
type noHost struct{}

func (noHost) Graph(id string) (graph.Runnable, error)                 { return nil, fmt.Errorf("no assistant %q", id) }
func (noHost) Visible(context.Context, *Run) bool                      { return true }
func (noHost) ThreadGraph(map[string]any) graph.Runnable               { return nil }
func (noHost) Attempt(*Run, int) Attempt                               { panic("noHost runs nothing") }
func (noHost) DeleteThreads(context.Context, []metadb.ThreadKey) error { return nil }
func (noHost) Retryable(error) bool                                    { return false }
func (noHost) ErrorEvent(err error) any                                { return map[string]any{"message": err.Error()} }

func testRunner(t *testing.T, postgres bool) (*Runner, *noQueue) {
	t.Helper()
	q := &noQueue{}
	r := New(Deps{DB: testDB(t, postgres), Hub: stream.NewHub(time.Minute, 1<<20), Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Metrics: Metrics{Created: prometheus.NewCounter(prometheus.CounterOpts{Name: "c"}), Active: prometheus.NewGauge(prometheus.GaugeOpts{Name: "a"}),
			Finished: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "f"}, []string{"status"}), Seconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "s"}),
			Events: prometheus.NewCounter(prometheus.CounterOpts{Name: "e"})},
		Host: noHost{}, Hidden: &sync.Map{}, Config: Config{Heartbeat: time.Second, MaxAttempts: 3}}, q)
	r.Start()
	t.Cleanup(func() { r.Shutdown(context.Background()) })
	return r, q
}

// eventCount is how many of the run's events the database holds, checking they have no gap.
func eventCount(t *testing.T, r *Runner, runID string) int {
	t.Helper()
	evs, err := Events{r.DB}.Events(context.Background(), runID, 0)
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d in the database has seq %d: a gap or a duplicate", i+1, ev.Seq)
		}
	}
	return len(evs)
}

// TestOutboxRule: tokens are shown at once and written in the next batch; any other event is
// written, with the tokens before it, before it is shown; a run that lost its lease writes none
// of its unwritten tokens.
func TestOutboxRule(t *testing.T) {
	t.Parallel()
	for _, postgres := range []bool{false, true} {
		t.Run(map[bool]string{false: "sqlite", true: "postgres"}[postgres], func(t *testing.T) {
			t.Parallel()
			r, _ := testRunner(t, postgres)
			ctx := context.Background()
			runID := "run-outbox"
			l := r.Hub.Open(runID)
			l.SetResumable(true)
			tok := json.RawMessage(`[{"content":"a"},{}]`)

			// Hold the outbox's batch of this log back (it waits for the log's write lock), so
			// that what is in the database is only what the rule writes at once.
			l.LockWrites()
			r.persistAndAppend(ctx, l, "messages", tok)
			r.persistAndAppend(ctx, l, "messages|sub:1", tok)
			shown, written := l.Last(), eventCount(t, r, runID)
			l.UnlockWrites()
			if shown != 2 || written != 0 {
				t.Fatalf("after two tokens readers see %d events and the database holds %d; want 2 and 0 (shown at once, written later)", shown, written)
			}

			// A non-token event writes what came before it, then itself, before it is shown.
			r.persistAndAppend(ctx, l, "updates", json.RawMessage(`{"agent":{}}`))
			if n := eventCount(t, r, runID); n != 3 {
				t.Fatalf("after an updates event the database holds %d events, want 3", n)
			}

			// More tokens reach the database within the batch interval.
			for range 5 {
				r.persistAndAppend(ctx, l, "messages/partial", tok)
			}
			deadline := time.Now().Add(5 * time.Second)
			for eventCount(t, r, runID) != 8 {
				if time.Now().After(deadline) {
					t.Fatalf("tokens not written within 5s (the batch interval is %s): %d of 8", stream.FlushInterval, eventCount(t, r, runID))
				}
				time.Sleep(10 * time.Millisecond)
			}

			// A run that lost its lease writes none of its unwritten tokens. (The outbox's loop
			// is stopped first, so that only the explicit flush below could write.)
			r.out.Close()
			r.persistAndAppend(ctx, l, "messages", tok)
			r.out.Discard(l)
			r.out.Flush(ctx)
			if n := eventCount(t, r, runID); n != 8 {
				t.Fatalf("a discarded token was written: %d events, want 8", n)
			}
			if l.Last() != 9 {
				t.Fatalf("readers see %d events, want 9 (discarding is about the database only)", l.Last())
			}
		})
	}
}

// newRun makes a pending run of thread for Submit.
func newRun(thread, strategy string) *Run {
	return RunOf(&metadb.Run{Tenant: "t", ThreadID: thread, AssistantID: "a", Status: Pending, Metadata: map[string]any{},
		Kwargs: json.RawMessage(`{}`), MultitaskStrategy: strategy})
}

// TestRunAfterEndedRun: once a run's statuses are written (ended), the run only tidies up before
// its thread's slot moves on. A client told it finished may at once submit another run with the
// reject strategy, which is not refused; the new run waits in the slot and is enqueued when the
// slot moves on.
func TestRunAfterEndedRun(t *testing.T) {
	t.Parallel()
	r, q := testRunner(t, false)
	ctx := context.Background()
	first := newRun("th", "reject")
	if _, err := r.Submit(ctx, first, false, false); err != nil {
		t.Fatal(err)
	}
	if !r.Busy("th") || len(q.enqueued) != 1 {
		t.Fatalf("after the first run: busy %v, enqueued %v; want busy with the run enqueued", r.Busy("th"), q.enqueued)
	}
	if _, err := r.Submit(ctx, newRun("th", "reject"), false, false); err != ErrThreadBusy {
		t.Fatalf("a run while another executes: %v, want ErrThreadBusy", err)
	}

	r.ended("th", first.RunID)
	if r.Busy("th") {
		t.Fatal("a thread whose run has ended is still busy")
	}
	next := newRun("th", "reject")
	if _, err := r.Submit(ctx, next, false, false); err != nil {
		t.Fatalf("a run after the thread's run ended: %v", err)
	}
	if !r.scheduled("th", next.RunID) || len(q.enqueued) != 1 {
		t.Fatalf("the new run: scheduled %v, enqueued %v; want it waiting in the slot", r.scheduled("th", next.RunID), q.enqueued)
	}
	r.Release("th", first.RunID)
	if len(q.enqueued) != 2 || q.enqueued[1] != next.RunID {
		t.Fatalf("after the slot moved on, enqueued %v; want the new run last", q.enqueued)
	}
}

// TestCancelWaitingRun: a run waiting in its thread's slot behind another is cancelled without
// starting: its record says interrupted, it leaves the slot, and it is never enqueued; with
// rollback its record goes.
func TestCancelWaitingRun(t *testing.T) {
	t.Parallel()
	r, q := testRunner(t, false)
	ctx := context.Background()
	first := newRun("th", "enqueue")
	if _, err := r.Submit(ctx, first, false, false); err != nil {
		t.Fatal(err)
	}
	waiting, dropped := newRun("th", "enqueue"), newRun("th", "enqueue")
	for _, run := range []*Run{waiting, dropped} {
		if _, err := r.Submit(ctx, run, false, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Cancel(ctx, waiting, ErrInterrupt, false); err != nil {
		t.Fatal(err)
	}
	if err := r.Cancel(ctx, dropped, ErrRollback, false); err != nil {
		t.Fatal(err)
	}
	if row, err := r.DB.RunByID(ctx, waiting.RunID); err != nil || row.Status != Interrupted {
		t.Fatalf("the cancelled waiting run: %+v (%v), want status interrupted", row, err)
	}
	if _, err := r.DB.RunByID(ctx, dropped.RunID); err == nil {
		t.Fatal("the run cancelled with rollback is still recorded")
	}
	r.Release("th", first.RunID)
	if len(q.enqueued) != 1 || r.Busy("th") {
		t.Fatalf("after the first run: enqueued %v, busy %v; want only the first enqueued and the thread free", q.enqueued, r.Busy("th"))
	}
}
