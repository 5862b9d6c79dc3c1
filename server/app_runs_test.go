package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// runsApp captures the deps an app gets, and mounts a guarded route.
func runsApp(got *AppDeps) App {
	return App{Name: "runner", Build: func(ctx context.Context, d AppDeps) (*AppParts, error) {
		*got = d
		mux := http.NewServeMux()
		mux.HandleFunc("GET /me", func(w http.ResponseWriter, r *http.Request) {
			p, _ := PrincipalFrom(r.Context())
			w.Write([]byte(p.User + "@" + p.Tenant))
		})
		return &AppParts{Handler: d.Guard(mux)}, nil
	}}
}

// collect follows a run to its end and returns its events.
func collect(t *testing.T, seq func(func(RunEvent, error) bool)) []RunEvent {
	t.Helper()
	var out []RunEvent
	for ev, err := range seq {
		if err != nil {
			t.Fatalf("follow: %v", err)
		}
		out = append(out, ev)
	}
	return out
}

// An app's own transport runs graphs through the run machinery: runs are queued and recorded
// like the API's (the API lists them), a thread carries a conversation across runs, a paused run
// resumes with a command, a run can be cancelled, and tenants are kept apart.
func TestAppRunAPI(t *testing.T) {
	t.Parallel()
	var deps AppDeps
	b := setup(t, setupOpts{cfg: Config{Apps: []App{runsApp(&deps)}}})
	rs := deps.Runs
	ctx := context.Background()
	ann := Principal{User: "ann", Tenant: DevPrincipal.Tenant}
	tid := ThreadIDFor("runner", "session-1")
	if tid != ThreadIDFor("runner", "session-1") || tid == ThreadIDFor("other", "session-1") {
		t.Fatal("ThreadIDFor is not a stable, app-specific ID")
	}

	run, events, err := rs.Stream(ctx, ann, RunRequest{AssistantID: "flow", ThreadID: tid, Input: map[string]any{"topic": "lamps"},
		StreamMode: []string{"values", "custom"}})
	if err != nil {
		t.Fatal(err)
	}
	evs := collect(t, events)
	var names []string
	for _, ev := range evs {
		names = append(names, ev.Event)
	}
	joined := strings.Join(names, ",")
	if !strings.HasPrefix(joined, "metadata,") || !strings.Contains(joined, "custom") || !strings.Contains(joined, "values") {
		t.Errorf("events %s", joined)
	}
	var last RunEvent
	for _, ev := range evs {
		if ev.Event == "values" {
			last = ev
		}
	}
	if evs[len(evs)-1].Event != "end" || !strings.Contains(string(last.Data), "__interrupt__") {
		t.Errorf("the paused run's last event: %s %s", last.Event, last.Data)
	}
	// The API sees the app's run on the thread, and the thread's state.
	var listed []Run
	b.mustDo("GET", "/threads/"+tid+"/runs", nil, &listed, 200)
	if len(listed) != 1 || listed[0].RunID != run.RunID || listed[0].Status != RunSuccess {
		t.Errorf("API lists %+v", listed)
	}
	st, err := rs.State(ctx, ann, tid)
	if err != nil || !strings.Contains(string(st), `"next":["approve"]`) {
		t.Errorf("state: %v %s", err, st)
	}
	// Resuming on the same thread continues the conversation.
	run2, err := rs.Start(ctx, ann, RunRequest{AssistantID: "flow", ThreadID: tid, Command: &RunCommand{Resume: json.RawMessage(`"yes"`)}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := rs.Wait(ctx, ann, tid, run2.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var final flowState
	if err := json.Unmarshal(out, &final); err != nil || final.Approved != "yes" || strings.Join(final.Steps, ",") != "plan,approve,act" {
		t.Errorf("after resume: %v %s", err, out)
	}
	// Following a finished run replays its stream from the database.
	again := collect(t, rs.Follow(ctx, ann, tid, run.RunID, 0))
	if len(again) != len(evs) {
		t.Errorf("replay: %d events, want %d", len(again), len(evs))
	}
	// after skips what the client has.
	if tail := collect(t, rs.Follow(ctx, ann, tid, run.RunID, evs[1].Seq)); len(tail) != len(evs)-2 {
		t.Errorf("resume after seq %d: %d events, want %d", evs[1].Seq, len(tail), len(evs)-2)
	}

	// Another tenant sees none of it.
	eve := Principal{User: "eve", Tenant: "evil"}
	if _, err := rs.Get(ctx, eve, tid, run.RunID); !errors.Is(err, ErrNotFound) {
		t.Errorf("another tenant got the run: %v", err)
	}
	for _, err := range rs.Follow(ctx, eve, tid, run.RunID, 0) {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("another tenant followed the run: %v", err)
		}
	}
	if _, err := rs.State(ctx, eve, tid); err == nil {
		t.Error("another tenant read the thread's state")
	}
	// A run on a busy thread is refused as the API refuses it; cancel frees the thread.
	stid := ThreadIDFor("runner", "slow")
	slow, err := rs.Start(ctx, ann, RunRequest{AssistantID: "slow", ThreadID: stid, Input: map[string]any{"topic": "s"}})
	if err != nil {
		t.Fatal(err)
	}
	<-b.gates.started
	if _, err := rs.Start(ctx, ann, RunRequest{AssistantID: "slow", ThreadID: stid, Input: map[string]any{"topic": "t"}}); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("second run on a busy thread: %v", err)
	}
	if err := rs.Cancel(ctx, ann, stid, slow.RunID, false); err != nil {
		t.Fatal(err)
	}
	b.waitStatus(stid, slow.RunID, RunInterrupted)

	// Bad requests get the API's errors.
	if _, err := rs.Start(ctx, ann, RunRequest{AssistantID: "nope"}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown assistant: %v", err)
	}
	if _, err := rs.Start(ctx, Principal{}, RunRequest{AssistantID: "flow"}); err == nil || !strings.Contains(err.Error(), "tenant") {
		t.Errorf("no tenant: %v", err)
	}
	if _, err := rs.Start(ctx, ann, RunRequest{AssistantID: "flow", Input: map[string]any{"topic": "a\x00b"}}); err == nil {
		t.Error("a NUL in the input was accepted")
	}
	if _, err := (&Runs{}).Start(ctx, ann, RunRequest{AssistantID: "flow"}); err == nil || !strings.Contains(err.Error(), "before the server has started") {
		t.Errorf("unstarted: %v", err)
	}
}

// Guard and OpenStream give app routes the API's authentication and limits.
func TestAppGuardAndLimits(t *testing.T) {
	t.Parallel()
	var deps AppDeps
	key := "runner-key-0123456789abcdef"
	b := setup(t, setupOpts{cfg: Config{Apps: []App{runsApp(&deps)}, RateLimit: 1, RateBurst: 2, MaxStreamsPerTenant: 1,
		Auth: AuthConfig{APIKeys: map[string]Principal{key: {User: "ann", Tenant: "acme"}}}}})
	url := b.http.URL + "/apps/runner/me"
	if code, _ := get(t, url); code != 401 {
		t.Errorf("no credentials: %d, want 401", code)
	}
	codes := []int{}
	for range 4 {
		code, body := get(t, url+"?token="+key)
		codes = append(codes, code)
		if code == 200 && body != "ann@acme" {
			t.Errorf("principal in context: %q", body)
		}
	}
	if codes[0] != 200 || codes[3] != 429 {
		t.Errorf("a burst of 4 at 1/s with a burst of 2: %v, want 200 first and 429 last", codes)
	}
	done, err := deps.OpenStream("acme")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := deps.OpenStream("acme"); err == nil {
		t.Error("a second stream over a limit of 1 was allowed")
	}
	// Following a run counts as a stream.
	for _, err := range deps.Runs.Follow(context.Background(), Principal{Tenant: "acme"}, ThreadIDFor("x", "y"), "r", 0) {
		if err == nil {
			t.Error("follow with no run")
		}
	}
	done()
	if d, err := deps.OpenStream("acme"); err != nil {
		t.Errorf("after done: %v", err)
	} else {
		d()
	}
	_ = httptest.NewRecorder
	_ = time.Second
}
