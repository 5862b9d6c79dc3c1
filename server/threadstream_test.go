package server

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// openThreadStream opens GET /threads/{id}/stream (with query q and Last-Event-ID lastID) and
// returns its events as they come; the stream is subscribed when it returns.
func openThreadStream(t *testing.T, b *bundle, tid, q, lastID string) <-chan sseEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", b.http.URL+"/threads/"+tid+"/stream"+q, nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("join the thread's stream: %v", err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("join the thread's stream: status %d", resp.StatusCode)
	}
	if loc := resp.Header.Get("Location"); loc != "/threads/"+tid+"/stream" {
		t.Errorf("Location %q: a reconnecting client must come back to the thread's stream", loc)
	}
	ch := make(chan sseEvent, 256)
	go func() {
		defer resp.Body.Close()
		defer close(ch)
		readSSE(resp.Body, func(ev sseEvent) bool {
			ch <- ev
			return false
		})
	}()
	return ch
}

// until reads events from ch up to and including the first for which stop is true.
func until(t *testing.T, ch <-chan sseEvent, stop func(sseEvent) bool) []sseEvent {
	t.Helper()
	var evs []sseEvent
	for ev := range ch {
		evs = append(evs, ev)
		if stop(ev) {
			return evs
		}
	}
	t.Fatalf("the stream ended before the event awaited; got %v", names(evs))
	return nil
}

func runDone(runID string) func(sseEvent) bool {
	return func(ev sseEvent) bool {
		return ev.Event == "metadata" && strings.Contains(string(ev.Data), `"run_done"`) && strings.Contains(string(ev.Data), runID)
	}
}

// GET /threads/{id}/stream follows the thread's runs as LangGraph's does: it stays open across
// runs, run_modes carries the runs' events each closed by a run_done metadata event, lifecycle
// only the runs' starts and ends, state_update the state updates made through the API; event
// IDs resume the stream after them.
func TestThreadStreamFollowsRuns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tid := b.newThread(nil)
	all := openThreadStream(t, b, tid, "", "")
	life := openThreadStream(t, b, tid, "?stream_mode=lifecycle", "")
	states := openThreadStream(t, b, tid, "?stream_modes=state_update", "")
	both := openThreadStream(t, b, tid, "?stream_mode=lifecycle,state_update", "")

	var r1, r2 Run
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "t"}, "stream_mode": []string{"values", "updates"}}, &r1, 200)
	evs1 := until(t, all, runDone(r1.RunID))
	got := names(evs1)
	if got[0] != "metadata" || !slices.Contains(got, "values") || !slices.Contains(got, "updates") || slices.Contains(got, "end") {
		t.Fatalf("run 1 on the thread's stream: %v", got)
	}
	for _, ev := range evs1 {
		if !strings.HasPrefix(ev.ID, r1.RunID+":") {
			t.Fatalf("event %s has ID %q, want %s:<seq>", ev.Event, ev.ID, r1.RunID)
		}
	}
	// The second run resumes the first's interrupt; the stream, still open, follows it.
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "flow", "command": map[string]any{"resume": "yes"}}, &r2, 200)
	evs2 := until(t, all, runDone(r2.RunID))
	if names(evs2)[0] != "metadata" || !strings.Contains(string(evs2[0].Data), r2.RunID) {
		t.Fatalf("run 2 on the thread's stream: %v", names(evs2))
	}
	b.waitStatus(tid, r2.RunID, RunSuccess)

	// A state update through the API.
	b.mustDo("POST", "/threads/"+tid+"/state", map[string]any{"values": map[string]any{"topic": "edited"}}, nil, 200)
	st := until(t, states, func(sseEvent) bool { return true })[0]
	var upd struct {
		ThreadID string `json:"thread_id"`
		State    struct {
			Values map[string]any `json:"values"`
		} `json:"state"`
	}
	if err := json.Unmarshal(st.Data, &upd); err != nil || st.Event != "state_update" || upd.ThreadID != tid || upd.State.Values["topic"] != "edited" {
		t.Fatalf("the state_update event: %s %s (%v)", st.Event, st.Data, err)
	}

	// lifecycle: run 1 starts and ends, run 2 starts and ends; nothing else.
	lev := until(t, life, runDone(r2.RunID))
	if len(lev) != 4 {
		t.Fatalf("lifecycle events: %v", names(lev))
	}
	for i, want := range []string{r1.RunID, r1.RunID, r2.RunID, r2.RunID} {
		var md map[string]any
		_ = json.Unmarshal(lev[i].Data, &md)
		done := md["status"] == "run_done"
		if lev[i].Event != "metadata" || md["run_id"] != want || done != (i%2 == 1) || (!done && md["attempt"] == nil) {
			t.Fatalf("lifecycle event %d: %s %s", i, lev[i].Event, lev[i].Data)
		}
	}
	// Two modes at once: the lifecycle's four and the state update, which may come before run
	// 2's end (the update waited for run 2's status, which is written before its end is told).
	n := 0
	bev := until(t, both, func(sseEvent) bool { n++; return n == 5 })
	counts := map[string]int{}
	for _, ev := range bev {
		counts[ev.Event]++
	}
	if counts["metadata"] != 4 || counts["state_update"] != 1 || bev[0].Event != "metadata" {
		t.Fatalf("lifecycle and state_update: %v", names(bev))
	}

	// Resuming after run 1's end replays run 2 only; after one of run 1's events, the rest of it.
	resumed := until(t, openThreadStream(t, b, tid, "", r1.RunID+":done"), runDone(r2.RunID))
	if len(resumed) != len(evs2) || resumed[0].ID != evs2[0].ID {
		t.Fatalf("resumed after run 1: %v, want %v", names(resumed), names(evs2))
	}
	resumed = until(t, openThreadStream(t, b, tid, "", evs1[1].ID), runDone(r2.RunID))
	if len(resumed) != len(evs1)-2+len(evs2) || resumed[0].ID != evs1[2].ID {
		t.Fatalf("resumed after %s: %d events, want %d", evs1[1].ID, len(resumed), len(evs1)-2+len(evs2))
	}
	// "-" replays the thread's runs.
	replayed := until(t, openThreadStream(t, b, tid, "?stream_mode=lifecycle", "-"), runDone(r2.RunID))
	if len(replayed) != 4 {
		t.Fatalf("lifecycle replayed from the start: %v", names(replayed))
	}

	for _, q := range []string{"?stream_mode=values", "?stream_modes=lifecycle,bogus"} {
		if code := b.do("GET", "/threads/"+tid+"/stream"+q, nil, nil); code != 400 {
			t.Errorf("GET /threads/{id}/stream%s: %d, want 400", q, code)
		}
	}
	req, _ := http.NewRequest("GET", b.http.URL+"/threads/"+tid+"/stream", nil)
	req.Header.Set("Last-Event-ID", "garbage")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Detail string `json:"detail"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(e.Detail, "garbage") {
		t.Errorf("a bad Last-Event-ID: %d %q, want 400 naming it", resp.StatusCode, e.Detail)
	}
}
