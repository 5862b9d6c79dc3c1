package metadb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/trellis-go/trellis/checkpoint/pgsaver"
	"github.com/trellis-go/trellis/server/internal/dbtest"
)

// eachDialect runs fn on a fresh SQLite database and, when Postgres answers, on a fresh schema
// of the test database; both hold the checkpoint saver's tables too, as the server's do.
func eachDialect(t *testing.T, fn func(t *testing.T, m *DB)) {
	t.Run("sqlite", func(t *testing.T) {
		fn(t, migrated(t, New(dbtest.SQLite(t), false, nil)))
	})
	t.Run("postgres", func(t *testing.T) {
		fn(t, migrated(t, New(dbtest.Postgres(t, "metadb"), true, nil)))
	})
}

func migrated(t *testing.T, m *DB) *DB {
	t.Helper()
	for range 2 { // a second run finds everything applied
		if err := m.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func TestQ(t *testing.T) {
	const q = `SELECT a FROM t WHERE b = $1 AND c = $12`
	if got := New(nil, true, nil).Q(q); got != q {
		t.Errorf("Postgres: %s", got)
	}
	if got, want := New(nil, false, nil).Q(q), `SELECT a FROM t WHERE b = ?1 AND c = ?12`; got != want {
		t.Errorf("SQLite: %s, want %s", got, want)
	}
}

// Stamps never repeat, even when the clock stands still.
func TestStampMonotonic(t *testing.T) {
	at := time.UnixMilli(1_700_000_000_000)
	m := New(nil, false, func() time.Time { return at })
	a, b := m.Stamp(), m.Stamp()
	if !a.Equal(at) || !b.Equal(at.Add(time.Millisecond)) {
		t.Fatalf("stamps %v, %v; want %v and a millisecond later", a, b, at)
	}
}

func TestThreads(t *testing.T) {
	eachDialect(t, func(t *testing.T, m *DB) {
		ctx := context.Background()
		for i, id := range []string{"t1", "t2", "t3"} {
			th := &Thread{Tenant: "acme", ThreadID: id, Status: "idle", Metadata: map[string]any{"n": float64(i), "owner": "bob"}}
			if ok, err := m.CreateThread(ctx, th); err != nil || !ok {
				t.Fatalf("create %s: %v %v", id, ok, err)
			}
			if th.CreatedAt.IsZero() {
				t.Fatal("CreatedAt not stamped")
			}
		}
		if ok, err := m.CreateThread(ctx, &Thread{Tenant: "other", ThreadID: "t1", Status: "idle"}); err != nil || ok {
			t.Fatalf("a taken ID: created %v, %v", ok, err)
		}
		if _, err := m.GetThread(ctx, "other", "t1"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("another tenant's thread: %v, want ErrNotFound", err)
		}
		if err := m.SetThreadStatus(ctx, "acme", "t2", "interrupted", json.RawMessage(`{"x":1}`), json.RawMessage(`{"a":[]}`)); err != nil {
			t.Fatal(err)
		}
		th, err := m.GetThread(ctx, "acme", "t2")
		if err != nil || th.Status != "interrupted" || string(th.Values) != `{"x":1}` || th.StateUpdatedAt.Before(th.CreatedAt) {
			t.Fatalf("t2 after SetThreadStatus: %+v, %v", th, err)
		}
		var seen []string
		f := ThreadFilter{Metadata: map[string]any{"owner": "bob"}, SortBy: "created_at", Asc: true}
		if err := m.EachThread(ctx, "acme", f, func(th *Thread) bool { seen = append(seen, th.ThreadID); return true }); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(seen) != "[t1 t2 t3]" {
			t.Fatalf("search: %v, want the three threads in creation order", seen)
		}
		if err := m.DeleteThreads(ctx, []ThreadKey{{"acme", "t1"}, {"acme", "t3"}}); err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]bool{"t1": false, "t2": true, "t3": false} {
			if taken, err := m.ThreadTaken(ctx, id); err != nil || taken != want {
				t.Errorf("%s taken: %v %v, want %v", id, taken, err, want)
			}
		}
	})
}

// Runs of one thread are claimed one at a time, oldest first; a lease held stops other owners.
func TestClaims(t *testing.T) {
	eachDialect(t, func(t *testing.T, m *DB) {
		ctx := context.Background()
		if _, err := m.CreateThread(ctx, &Thread{Tenant: "acme", ThreadID: "th", Status: "idle"}); err != nil {
			t.Fatal(err)
		}
		var runs []*Run
		for _, id := range []string{"r1", "r2"} {
			r := &Run{Tenant: "acme", RunID: id, ThreadID: "th", AssistantID: "a", Status: "pending", Kwargs: json.RawMessage(`{"input":{}}`), CreatedAt: m.Stamp()}
			active, err := m.InsertRunOnThread(ctx, r, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(active) != len(runs) {
				t.Fatalf("inserting %s found %v unfinished", id, active)
			}
			runs = append(runs, r)
		}
		if _, refused, err := m.ClaimRun(ctx, runs[1], "p/1", time.Minute, 0, false); err != nil || refused == nil || refused.Why != ThreadBusy {
			t.Fatalf("claiming the newer run: %+v, %v; want ThreadBusy", refused, err)
		}
		attempt, refused, err := m.ClaimRun(ctx, runs[0], "p/1", time.Minute, 0, false)
		if err != nil || refused != nil || attempt != 1 {
			t.Fatalf("claiming the older run: %d %+v %v", attempt, refused, err)
		}
		if _, refused, err := m.ClaimRun(ctx, runs[0], "q/1", time.Minute, 0, false); err != nil || refused == nil || refused.Why != LeaseHeld {
			t.Fatalf("claiming a leased run: %+v, %v; want LeaseHeld", refused, err)
		}
		kept, err := m.RenewLeases(ctx, []string{"r1", "r2"}, "p", time.Minute)
		if err != nil || !kept["r1"] || kept["r2"] {
			t.Fatalf("renewed %v, %v; want r1 only", kept, err)
		}
		r, err := m.RunByID(ctx, "r1")
		if err != nil || r.Status != "running" || r.Attempt != 1 || string(r.Kwargs) != `{"input":{}}` {
			t.Fatalf("r1: %+v, %v", r, err)
		}
		if err := m.SetRunEnd(ctx, "r1", RunEnd{Status: "success", Progress: json.RawMessage(`{"step":3}`), LastError: "boom"}); err != nil {
			t.Fatal(err)
		}
		if err := m.ReleaseLease(ctx, "r1", "p/1"); err != nil {
			t.Fatal(err)
		}
		if attempt, refused, err := m.ClaimRun(ctx, runs[1], "q/1", time.Minute, 0, false); err != nil || refused != nil || attempt != 1 {
			t.Fatalf("claiming r2 once r1 ended: %d %+v %v", attempt, refused, err)
		}
		r, err = m.GetRun(ctx, "acme", "th", "r1")
		if err != nil || r.Status != "success" || string(r.Progress) != `{"step":3}` || r.LastError != "boom" || !r.NextAttemptAt.IsZero() {
			t.Fatalf("r1 after SetRunEnd: %+v, %v", r, err)
		}
		if _, err := m.GetRun(ctx, "acme", "other", "r1"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("r1 on another thread: %v, want ErrNotFound", err)
		}
	})
}

// Events are written in chunks on SQLite, once each, and read back in order.
func TestEvents(t *testing.T) {
	eachDialect(t, func(t *testing.T, m *DB) {
		ctx := context.Background()
		var a, b []Event
		for i := range sqliteEventChunk + 3 {
			a = append(a, Event{Seq: int64(i + 1), Event: "values", Data: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))})
		}
		b = append(b, Event{Seq: 1, Event: "end", Data: json.RawMessage(`null`)})
		batches := []EventBatch{{RunID: "ra", Events: a}, {RunID: "rb", Events: b}}
		for range 2 { // the second write changes nothing
			if err := m.AppendEvents(ctx, batches); err != nil {
				t.Fatal(err)
			}
		}
		got, err := m.LoadEvents(ctx, "ra", 10)
		if err != nil || len(got) != len(a)-10 || got[0].Seq != 11 || string(got[len(got)-1].Data) != fmt.Sprintf(`{"i":%d}`, len(a)-1) {
			t.Fatalf("ra after 10: %d events, %v", len(got), err)
		}
		if got, err := m.LoadEvents(ctx, "rb", 0); err != nil || len(got) != 1 || got[0].Event != "end" {
			t.Fatalf("rb: %+v, %v", got, err)
		}
	})
}

// Of two processes claiming a cron's tick, one succeeds.
func TestClaimCron(t *testing.T) {
	eachDialect(t, func(t *testing.T, m *DB) {
		ctx := context.Background()
		next := time.UnixMilli(1_700_000_000_000).UTC()
		c := &Cron{Tenant: "acme", CronID: "c1", AssistantID: "a", Principal: json.RawMessage(`{"user":"bob"}`), Schedule: "* * * * *",
			NextRunDate: next, Enabled: true, CreatedAt: m.Stamp(), UpdatedAt: m.Stamp()}
		if err := m.InsertCron(ctx, c); err != nil {
			t.Fatal(err)
		}
		due, err := m.DueCrons(ctx, next, 10)
		if err != nil || len(due) != 1 || !due[0].NextRunDate.Equal(next) || string(due[0].Principal) != `{"user":"bob"}` || due[0].ThreadID != nil {
			t.Fatalf("due: %+v, %v", due, err)
		}
		first, err1 := m.ClaimCron(ctx, "c1", next.UnixMilli(), next.UnixMilli()+60000)
		second, err2 := m.ClaimCron(ctx, "c1", next.UnixMilli(), next.UnixMilli()+60000)
		if err1 != nil || err2 != nil || !first || second {
			t.Fatalf("claims: %v %v (%v %v); want the first only", first, second, err1, err2)
		}
		if n, err := m.CountCrons(ctx, "acme", CronFilter{UserID: "alice"}); err != nil || n != 0 {
			t.Fatalf("alice's crons: %d %v", n, err)
		}
	})
}

// A run's end on Postgres writes its events and its status and notifies, in one statement;
// the notifications go out with the commit.
func TestSetRunEndEvents(t *testing.T) {
	ctx := context.Background()
	url := dbtest.PostgresURL(t, "metadb_end")
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := pgsaver.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	db := stdlib.OpenDBFromPool(pool)
	t.Cleanup(func() { db.Close() })
	m := migrated(t, New(db, true, nil))
	if _, err := m.CreateThread(ctx, &Thread{Tenant: "acme", ThreadID: "th", Status: "idle"}); err != nil {
		t.Fatal(err)
	}
	r := &Run{Tenant: "acme", RunID: "r1", ThreadID: "th", AssistantID: "a", Status: "pending", Kwargs: json.RawMessage(`{}`), CreatedAt: m.Stamp()}
	if _, err := m.InsertRunOnThread(ctx, r, false); err != nil {
		t.Fatal(err)
	}
	listener, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close(ctx)
	if _, err := listener.Exec(ctx, "LISTEN trellis_end_test"); err != nil {
		t.Fatal(err)
	}
	evs := []EventBatch{{RunID: "r1", Events: []Event{{Seq: 1, Event: "values", Data: json.RawMessage(`{"a":1}`)}, {Seq: 2, Event: "end", Data: json.RawMessage(`null`)}}}}
	end := RunEnd{Status: "success", Progress: json.RawMessage(`{"step":2}`)}
	if err := m.SetRunEndEvents(ctx, "r1", end, evs, "trellis_end_test", []string{"p1", "p2"}); err != nil {
		t.Fatal(err)
	}
	got, err := m.LoadEvents(ctx, "r1", 0)
	if err != nil || len(got) != 2 || got[1].Event != "end" || string(got[0].Data) != `{"a":1}` {
		t.Fatalf("events: %+v, %v", got, err)
	}
	run, err := m.RunByID(ctx, "r1")
	if err != nil || run.Status != "success" || string(run.Progress) != `{"step":2}` {
		t.Fatalf("run: %+v, %v", run, err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, want := range []string{"p1", "p2"} {
		n, err := listener.WaitForNotification(wctx)
		if err != nil || n.Payload != want {
			t.Fatalf("notification: %+v, %v; want %s", n, err, want)
		}
	}
}
