package server

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// cronClock is a settable clock for the cron scheduler.
type cronClock struct{ ms atomic.Int64 }

func newCronClock(t time.Time) *cronClock {
	c := &cronClock{}
	c.set(t)
	return c
}
func (c *cronClock) set(t time.Time)          { c.ms.Store(t.UnixMilli()) }
func (c *cronClock) now() time.Time           { return time.UnixMilli(c.ms.Load()).UTC() }
func (c *cronClock) use(s *Server) *cronClock { s.setCronClock(c.now); return c }

var cronEpoch = time.Date(2030, 1, 1, 0, 0, 30, 0, time.UTC)

// cronRuns counts the runs a cron has started, in the metadata database.
func cronRuns(t *testing.T, s *Server, cronID string) int {
	t.Helper()
	var n int
	if err := s.meta.SQL().QueryRowContext(context.Background(), s.meta.Q(`SELECT count(*) FROM trellis_runs WHERE metadata LIKE $1`), "%"+cronID+"%").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCronAPI(t *testing.T) {
	t.Parallel()
	keyA, keyB := "cron-key-a-0123456789abcdef", "cron-key-b-0123456789abcdef"
	b := setup(t, setupOpts{cfg: Config{Auth: AuthConfig{APIKeys: map[string]Principal{
		keyA: {User: "ann", Tenant: "acme", Permissions: []string{"*"}},
		keyB: {User: "bob", Tenant: "globex", Permissions: []string{"*"}},
	}}}})
	newCronClock(cronEpoch).use(b.srv)
	b.token = keyA

	var c Cron
	b.mustDo("POST", "/runs/crons", map[string]any{"assistant_id": "flow", "schedule": "*/5 * * * *", "input": map[string]any{"topic": "digest"},
		"metadata": map[string]any{"purpose": "digest"}}, &c, 200)
	if c.CronID == "" || c.ThreadID != nil || c.Schedule != "*/5 * * * *" || !c.Enabled || c.Payload["input"] == nil ||
		c.Metadata["purpose"] != "digest" || c.UserID == nil || *c.UserID != "ann" || c.OnRunCompleted == nil || *c.OnRunCompleted != "delete" {
		t.Fatalf("created cron: %+v", c)
	}
	if c.NextRunDate == nil || !c.NextRunDate.Equal(time.Date(2030, 1, 1, 0, 5, 0, 0, time.UTC)) {
		t.Fatalf("next_run_date %v, want 00:05", c.NextRunDate)
	}
	if c.AssistantID != AssistantID("flow") {
		t.Fatalf("assistant_id %q", c.AssistantID)
	}
	tid := b.newThread(nil)
	var tc Cron
	b.mustDo("POST", "/threads/"+tid+"/runs/crons", map[string]any{"assistant_id": "flow", "schedule": "0 9 * * 1", "end_time": "2031-01-01T00:00:00Z"}, &tc, 200)
	if tc.ThreadID == nil || *tc.ThreadID != tid || tc.EndTime == nil || tc.EndTime.Year() != 2031 {
		t.Fatalf("thread cron: %+v", tc)
	}

	var list []map[string]any
	b.mustDo("POST", "/runs/crons/search", map[string]any{}, &list, 200)
	if len(list) != 2 {
		t.Fatalf("search: %v", list)
	}
	list = nil
	b.mustDo("POST", "/runs/crons/search", map[string]any{"thread_id": tid, "select": []string{"cron_id", "schedule"}}, &list, 200)
	if len(list) != 1 || list[0]["cron_id"] != tc.CronID || len(list[0]) != 2 {
		t.Fatalf("search by thread with select: %v", list)
	}
	list = nil
	b.mustDo("POST", "/runs/crons/search", map[string]any{"sort_by": "next_run_date", "sort_order": "asc", "limit": 1}, &list, 200)
	if len(list) != 1 || list[0]["cron_id"] != c.CronID {
		t.Fatalf("search sorted by next_run_date: %v", list)
	}
	var n int
	b.mustDo("POST", "/runs/crons/count", map[string]any{"assistant_id": AssistantID("flow")}, &n, 200)
	if n != 2 {
		t.Fatalf("count %d", n)
	}

	var up Cron
	b.mustDo("PATCH", "/runs/crons/"+c.CronID, map[string]any{"schedule": "0 * * * *", "input": map[string]any{"topic": "hourly"}, "enabled": false}, &up, 200)
	if up.Schedule != "0 * * * *" || up.Enabled || up.NextRunDate != nil || up.Payload["input"].(map[string]any)["topic"] != "hourly" {
		t.Fatalf("patched: %+v", up)
	}
	b.mustDo("PATCH", "/runs/crons/"+c.CronID, map[string]any{"enabled": true}, &up, 200)
	if !up.Enabled || up.NextRunDate == nil || !up.NextRunDate.Equal(time.Date(2030, 1, 1, 1, 0, 0, 0, time.UTC)) {
		t.Fatalf("re-enabled: %+v", up)
	}
	b.mustDo("POST", "/runs/crons/count", map[string]any{"enabled": true}, &n, 200)
	if n != 2 {
		t.Fatalf("count enabled %d", n)
	}

	for _, tc := range []struct {
		name, method, path, body, want string
	}{
		{"bad schedule", "POST", "/runs/crons", `{"assistant_id": "flow", "schedule": "every tuesday"}`, "schedule"},
		{"six fields", "POST", "/runs/crons", `{"assistant_id": "flow", "schedule": "0 0 * * * *"}`, "schedule"},
		{"no schedule", "POST", "/runs/crons", `{"assistant_id": "flow"}`, "schedule"},
		{"no assistant", "POST", "/runs/crons", `{"schedule": "* * * * *"}`, "assistant_id"},
		{"bad end_time", "POST", "/runs/crons", `{"assistant_id": "flow", "schedule": "* * * * *", "end_time": "tomorrow"}`, "end_time"},
		{"bad input", "POST", "/runs/crons", `{"assistant_id": "flow", "schedule": "* * * * *", "input": 3}`, "input"},
		{"unknown field", "POST", "/runs/crons", `{"assistant_id": "flow", "schedule": "* * * * *", "cadence": 1}`, "cadence"},
		{"bad on_run_completed", "POST", "/runs/crons", `{"assistant_id": "flow", "schedule": "* * * * *", "on_run_completed": "shred"}`, "on_run_completed"},
		{"bad patch schedule", "PATCH", "/runs/crons/" + c.CronID, `{"schedule": "61 * * * *"}`, "schedule"},
		{"bad sort", "POST", "/runs/crons/search", `{"sort_by": "colour"}`, "sort_by"},
		{"bad select", "POST", "/runs/crons/search", `{"select": ["colour"]}`, "select"},
	} {
		var e map[string]any
		if code := b.do(tc.method, tc.path, tc.body, &e); code != 400 || !strings.Contains(fmt.Sprint(e["detail"]), tc.want) {
			t.Errorf("%s: %d %v, want 400 naming %q", tc.name, code, e, tc.want)
		}
	}
	if code := b.do("POST", "/runs/crons", `{"assistant_id": "ghost", "schedule": "* * * * *"}`, nil); code != 404 {
		t.Errorf("unknown assistant: %d", code)
	}
	if code := b.do("POST", "/threads/6b1f3c0e-0000-4000-8000-000000000000/runs/crons", `{"assistant_id": "flow", "schedule": "* * * * *"}`, nil); code != 404 {
		t.Errorf("unknown thread: %d", code)
	}

	// Another tenant sees none of them.
	b.token = keyB
	list = nil
	b.mustDo("POST", "/runs/crons/search", map[string]any{}, &list, 200)
	b.mustDo("POST", "/runs/crons/count", map[string]any{}, &n, 200)
	if len(list) != 0 || n != 0 {
		t.Fatalf("other tenant sees %v, %d", list, n)
	}
	if code := b.do("PATCH", "/runs/crons/"+c.CronID, `{"enabled": false}`, nil); code != 404 {
		t.Errorf("other tenant's patch: %d", code)
	}
	if code := b.do("DELETE", "/runs/crons/"+c.CronID, nil, nil); code != 404 {
		t.Errorf("other tenant's delete: %d", code)
	}
	if code := b.do("POST", "/threads/"+tid+"/runs/crons", `{"assistant_id": "flow", "schedule": "* * * * *"}`, nil); code != 404 {
		t.Errorf("cron on another tenant's thread: %d", code)
	}

	b.token = keyA
	b.mustDo("DELETE", "/runs/crons/"+c.CronID, nil, nil, 204)
	b.mustDo("DELETE", "/runs/crons/"+c.CronID, nil, nil, 404)
	b.mustDo("POST", "/runs/crons/count", map[string]any{}, &n, 200)
	if n != 1 {
		t.Fatalf("count after delete %d", n)
	}
}

// TestCronTick: a due cron starts one run per tick, as its creator, and end_time stops it.
func TestCronTick(t *testing.T) {
	t.Parallel()
	b := setup(t)
	clock := newCronClock(cronEpoch).use(b.srv)
	ctx := context.Background()

	tid := b.newThread(nil)
	var tc Cron
	b.mustDo("POST", "/threads/"+tid+"/runs/crons", map[string]any{"assistant_id": "flow", "schedule": "* * * * *",
		"input": map[string]any{"topic": "tick"}, "end_time": "2030-01-01T00:03:00Z"}, &tc, 200)

	b.srv.tickCrons(ctx)
	if n := cronRuns(t, b.srv, tc.CronID); n != 0 {
		t.Fatalf("%d runs before the first tick", n)
	}
	clock.set(time.Date(2030, 1, 1, 0, 1, 0, 0, time.UTC))
	b.srv.tickCrons(ctx)
	b.srv.tickCrons(ctx) // the same minute again: nothing more
	if n := cronRuns(t, b.srv, tc.CronID); n != 1 {
		t.Fatalf("%d runs after one tick, want 1", n)
	}
	var runs []Run
	b.mustDo("GET", "/threads/"+tid+"/runs", nil, &runs, 200)
	if len(runs) != 1 || runs[0].ThreadID != tid {
		t.Fatalf("the thread's runs: %+v", runs)
	}
	b.waitStatus(tid, runs[0].RunID, RunSuccess)

	// Ticks missed while nothing polled are not made up: one run, then the next minute.
	clock.set(time.Date(2030, 1, 1, 0, 2, 40, 0, time.UTC))
	b.srv.tickCrons(ctx)
	if n := cronRuns(t, b.srv, tc.CronID); n != 2 {
		t.Fatalf("%d runs after the second tick, want 2", n)
	}
	var list []Cron
	b.mustDo("POST", "/runs/crons/search", map[string]any{}, &list, 200)
	if len(list) != 1 || list[0].NextRunDate == nil || !list[0].NextRunDate.Equal(time.Date(2030, 1, 1, 0, 3, 0, 0, time.UTC)) {
		t.Fatalf("after the second tick: %+v", list)
	}
	// 00:03 is the end time (still runs); 00:04 is past it.
	b.mustDo("GET", "/threads/"+tid+"/runs", nil, &runs, 200)
	b.waitStatus(tid, runs[0].RunID, RunSuccess)
	clock.set(time.Date(2030, 1, 1, 0, 3, 0, 0, time.UTC))
	b.srv.tickCrons(ctx)
	clock.set(time.Date(2030, 1, 1, 0, 9, 0, 0, time.UTC))
	b.srv.tickCrons(ctx)
	if n := cronRuns(t, b.srv, tc.CronID); n != 3 {
		t.Fatalf("%d runs after the end time, want 3", n)
	}

	// A stateless cron makes a new thread each tick; a disabled one starts nothing.
	var sc, off Cron
	b.mustDo("POST", "/runs/crons", map[string]any{"assistant_id": "flow", "schedule": "*/10 * * * *", "on_run_completed": "keep",
		"input": map[string]any{"topic": "stateless"}}, &sc, 200)
	b.mustDo("POST", "/runs/crons", map[string]any{"assistant_id": "flow", "schedule": "*/10 * * * *", "enabled": false}, &off, 200)
	clock.set(time.Date(2030, 1, 1, 0, 10, 0, 0, time.UTC))
	b.srv.tickCrons(ctx)
	clock.set(time.Date(2030, 1, 1, 0, 20, 0, 0, time.UTC))
	b.srv.tickCrons(ctx)
	if n := cronRuns(t, b.srv, sc.CronID); n != 2 {
		t.Fatalf("stateless cron: %d runs, want 2", n)
	}
	if n := cronRuns(t, b.srv, off.CronID); n != 0 {
		t.Fatalf("disabled cron: %d runs", n)
	}
	var threads []Thread
	b.mustDo("POST", "/threads/search", map[string]any{"metadata": map[string]any{"graph_id": "flow"}}, &threads, 200)
	seen := map[string]bool{}
	for _, th := range threads {
		if th.ThreadID != tid {
			seen[th.ThreadID] = true
		}
	}
	if len(seen) != 2 {
		t.Fatalf("stateless cron threads: %d, want 2 (%+v)", len(seen), threads)
	}
}

// TestCronPostgresReplicas: two servers on one Postgres start exactly one run per tick.
func TestCronPostgresReplicas(t *testing.T) {
	t.Parallel()
	url := pgURL(t)
	a := setup(t, setupOpts{cfg: Config{DatabaseURL: url}})
	b := setup(t, setupOpts{cfg: Config{DatabaseURL: url}})
	clock := newCronClock(cronEpoch)
	clock.use(a.srv)
	clock.use(b.srv)
	var c Cron
	a.mustDo("POST", "/runs/crons", map[string]any{"assistant_id": "flow", "schedule": "* * * * *", "on_run_completed": "keep",
		"input": map[string]any{"topic": "replicas"}}, &c, 200)
	const ticks = 5
	var started atomic.Int64
	for i := 1; i <= ticks; i++ {
		clock.set(cronEpoch.Add(time.Duration(i) * time.Minute))
		var wg sync.WaitGroup
		for _, s := range []*Server{a.srv, b.srv, a.srv, b.srv} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				started.Add(int64(s.tickCrons(context.Background())))
			}()
		}
		wg.Wait()
		if n := cronRuns(t, a.srv, c.CronID); n != i {
			t.Fatalf("after tick %d: %d runs, want %d", i, n, i)
		}
	}
	if started.Load() > ticks {
		t.Fatalf("%d runs started for %d ticks", started.Load(), ticks)
	}
}

// TestCronThreadGone: a thread's cron whose thread was deleted is dropped at its next tick.
func TestCronThreadGone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	clock := newCronClock(cronEpoch).use(b.srv)
	tid := b.newThread(nil)
	var c Cron
	b.mustDo("POST", "/threads/"+tid+"/runs/crons", map[string]any{"assistant_id": "flow", "schedule": "* * * * *"}, &c, 200)
	b.mustDo("DELETE", "/threads/"+tid, nil, nil, 204)
	clock.set(cronEpoch.Add(time.Minute))
	if n := b.srv.tickCrons(context.Background()); n != 0 {
		t.Fatalf("%d runs started on a deleted thread", n)
	}
	var n int
	b.mustDo("POST", "/runs/crons/count", map[string]any{}, &n, 200)
	if n != 0 {
		t.Fatalf("%d crons left after their thread was deleted", n)
	}
}

// TestCronPerUser: per-user principals of one tenant see only their own crons.
func TestCronPerUser(t *testing.T) {
	t.Parallel()
	keyA, keyB := "cron-user-a-0123456789abcdef", "cron-user-b-0123456789abcdef"
	b := setup(t, setupOpts{cfg: Config{Auth: AuthConfig{APIKeys: map[string]Principal{
		keyA: {User: "ann", Tenant: "acme", Permissions: []string{"*"}, PerUser: true},
		keyB: {User: "bea", Tenant: "acme", Permissions: []string{"*"}, PerUser: true},
	}}}})
	b.token = keyA
	var c Cron
	b.mustDo("POST", "/runs/crons", map[string]any{"assistant_id": "flow", "schedule": "@hourly"}, &c, 200)
	b.token = keyB
	var n int
	b.mustDo("POST", "/runs/crons/count", map[string]any{}, &n, 200)
	if n != 0 {
		t.Fatalf("bea counts %d of ann's crons", n)
	}
	b.mustDo("PATCH", "/runs/crons/"+c.CronID, map[string]any{"enabled": false}, nil, 404)
	b.mustDo("DELETE", "/runs/crons/"+c.CronID, nil, nil, 404)
	b.token = keyA
	b.mustDo("POST", "/runs/crons/count", map[string]any{}, &n, 200)
	if n != 1 {
		t.Fatalf("ann counts %d crons", n)
	}
}

// TestCronContext: a cron created with a context runs its graph with that context when it
// fires (merged over its assistant's, the cron's keys winning), as a run created with it does.
func TestCronContext(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{extra: []GraphSpec{{ID: "personal", Build: buildPersonal}}})
	clock := newCronClock(cronEpoch).use(b.srv)

	var a Assistant
	b.mustDo("POST", "/assistants", map[string]any{"graph_id": "personal", "context": map[string]any{"locale": "de", "user_id": "default"}}, &a, 200)
	cases := []struct {
		assistant string
		context   map[string]any
		want      string
	}{
		{"personal", map[string]any{"user_id": "cara", "locale": "nl"}, "hello cara (nl)"},
		{a.AssistantID, map[string]any{"user_id": "dan"}, "hello dan (de)"},
		{"personal", nil, "hello, stranger"},
	}
	threads := make([]string, len(cases))
	for i, tc := range cases {
		threads[i] = b.newThread(nil)
		body := map[string]any{"assistant_id": tc.assistant, "schedule": "* * * * *", "input": map[string]any{}}
		if tc.context != nil {
			body["context"] = tc.context
		}
		var c Cron
		b.mustDo("POST", "/threads/"+threads[i]+"/runs/crons", body, &c, 200)
	}
	clock.set(cronEpoch.Add(time.Minute))
	if n := b.srv.tickCrons(context.Background()); n != len(cases) {
		t.Fatalf("the tick started %d runs, want %d", n, len(cases))
	}
	for i, tc := range cases {
		var runs []Run
		b.mustDo("GET", "/threads/"+threads[i]+"/runs", nil, &runs, 200)
		if len(runs) != 1 {
			t.Fatalf("cron %d: the thread has %d runs, want 1", i, len(runs))
		}
		b.waitStatus(threads[i], runs[0].RunID, RunSuccess)
		var st struct {
			Values map[string]any `json:"values"`
		}
		b.mustDo("GET", "/threads/"+threads[i]+"/state", nil, &st, 200)
		if got := st.Values["greeting"]; got != tc.want {
			t.Errorf("cron %d (context %v): greeting %v, want %q", i, tc.context, got, tc.want)
		}
	}
}
