package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/trellis-go/trellis/graph"
)

// The cluster tests start several servers in this test process on one Postgres schema: each
// has its own runner, River client, bus connection and HTTP listener, as separate processes
// would, but they share one recorder, so a test sees which replica executed what and when.
// (replicas_test.go does the same with real processes, to kill them.)

// ticksState is the state of the "ticks" graph: one node that emits Ticks custom events over
// MS milliseconds and appends Label to Done.
type ticksState struct {
	MS    int      `json:"ms,omitempty"`
	Ticks int      `json:"ticks,omitempty"`
	Label string   `json:"label,omitempty"`
	Done  []string `json:"done" reduce:"append"`
}

// span is one execution of the ticks node.
type span struct {
	replica    int
	runID      string
	tenant     string
	label      string
	start, end time.Time
	ticks      int
	cancelled  bool
}

type recorder struct {
	mu    sync.Mutex
	spans []span
}

func (r *recorder) all() []span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.spans)
}

// started returns the run's execution as far as it went (end is zero while it runs).
func (r *recorder) started(runID string) (span, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.spans {
		if s.runID == runID {
			return s, true
		}
	}
	return span{}, false
}

func buildTicks(rec *recorder, replica int) func(Deps) (graph.Runnable, error) {
	return func(deps Deps) (graph.Runnable, error) {
		g := graph.New[ticksState]()
		g.AddNode("tick", func(ctx context.Context, s ticksState) (ticksState, error) {
			info, _ := graph.InfoFrom(ctx)
			sp := span{replica: replica, label: s.Label, start: time.Now()}
			sp.runID, _ = info.Config["run_id"].(string)
			sp.tenant, _ = info.Config["tenant"].(string)
			rec.mu.Lock()
			rec.spans = append(rec.spans, sp)
			i := len(rec.spans) - 1
			rec.mu.Unlock()
			finish := func(cancelled bool, ticks int) {
				rec.mu.Lock()
				rec.spans[i].end, rec.spans[i].cancelled, rec.spans[i].ticks = time.Now(), cancelled, ticks
				rec.mu.Unlock()
			}
			n := max(s.Ticks, 1)
			for k := range n {
				select {
				case <-time.After(time.Duration(s.MS) * time.Millisecond / time.Duration(n)):
				case <-ctx.Done():
					finish(true, k)
					return ticksState{}, ctx.Err()
				}
				graph.Emit(ctx, map[string]any{"tick": k + 1, "label": s.Label})
			}
			finish(false, n)
			return ticksState{Done: []string{s.Label}}, nil
		})
		g.AddEdge(graph.START, "tick").AddEdge("tick", graph.END)
		return graph.Erase(g.Compile(graph.CompileOptions{Name: "ticks", Saver: deps.Saver}))
	}
}

// newCluster starts n servers on one fresh Postgres schema (skipping when Postgres is
// unreachable), each offering the ticks graph.
func newCluster(t *testing.T, n int, cfg Config) ([]*bundle, *recorder) {
	t.Helper()
	url := pgURL(t)
	rec := &recorder{}
	reps := make([]*bundle, n)
	for i := range reps {
		c := cfg
		c.DatabaseURL = url
		reps[i] = setup(t, setupOpts{cfg: c, extra: []GraphSpec{{ID: "ticks", Build: buildTicks(rec, i)}}})
	}
	return reps, rec
}

// call sends a request to a replica with the given bearer token (none when empty) and decodes
// the answer; it returns the status. Safe to call from several goroutines.
func call(t *testing.T, b *bundle, token, method, path string, body, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	}
	req, _ := http.NewRequest(method, b.http.URL+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, path, err)
		return 0
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Errorf("%s %s: %d %s", method, path, resp.StatusCode, data)
	} else if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Errorf("%s %s: %v in %s", method, path, err, data)
		}
	}
	return resp.StatusCode
}

// waitFinal polls a run until its status is final, and returns it.
func waitFinal(t *testing.T, b *bundle, token, tid, rid string, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		var run Run
		call(t, b, token, "GET", "/threads/"+tid+"/runs/"+rid, nil, &run)
		if run.Status != RunPending && run.Status != RunRunning && run.Status != "" {
			return run.Status
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("run %s did not finish in %s", rid, within)
	return ""
}

// maxOverlap returns the most spans executing at one instant.
func maxOverlap(spans []span) int {
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, s := range spans {
		edges = append(edges, edge{s.start, 1}, edge{s.end, -1})
	}
	// Ends sort before starts at the same instant: touching spans do not overlap.
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].at.Equal(edges[j].at) {
			return edges[i].delta < edges[j].delta
		}
		return edges[i].at.Before(edges[j].at)
	})
	most, cur := 0, 0
	for _, e := range edges {
		cur += e.delta
		most = max(most, cur)
	}
	return most
}

// TestClusterThreadRunsInOrder: three replicas accept enqueue runs for one thread at the same
// instant; the runs execute one at a time, never overlapping, in the order of their creation,
// whichever replica accepted or executes each.
func TestClusterThreadRunsInOrder(t *testing.T) {
	t.Parallel()
	reps, rec := newCluster(t, 3, Config{})
	tid := reps[0].newThread(nil)
	const perReplica = 3
	var wg sync.WaitGroup
	var mu sync.Mutex
	var runs []Run
	gate := make(chan struct{})
	for i, b := range reps {
		for k := range perReplica {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-gate
				var run Run
				if call(t, b, "", "POST", "/threads/"+tid+"/runs", map[string]any{
					"assistant_id": "ticks", "multitask_strategy": "enqueue",
					"input": map[string]any{"ms": 150, "ticks": 3, "label": fmt.Sprintf("r%d-%d", i, k)},
				}, &run) == 200 {
					mu.Lock()
					runs = append(runs, run)
					mu.Unlock()
				}
			}()
		}
	}
	close(gate)
	wg.Wait()
	if len(runs) != 3*perReplica {
		t.Fatalf("%d runs accepted, want %d", len(runs), 3*perReplica)
	}
	for _, run := range runs {
		if st := waitFinal(t, reps[0], "", tid, run.RunID, 90*time.Second); st != RunSuccess {
			t.Fatalf("run %s: %s", run.RunID, st)
		}
	}
	// The order of creation is the database's: created_at, then run_id.
	var listed []Run
	reps[1].mustDo("GET", "/threads/"+tid+"/runs?limit=100", nil, &listed, 200)
	sort.Slice(listed, func(i, j int) bool {
		if !listed[i].CreatedAt.Equal(listed[j].CreatedAt) {
			return listed[i].CreatedAt.Before(listed[j].CreatedAt)
		}
		return listed[i].RunID < listed[j].RunID
	})
	spans := rec.all()
	sort.Slice(spans, func(i, j int) bool { return spans[i].start.Before(spans[j].start) })
	if len(spans) != len(listed) {
		t.Fatalf("%d executions for %d runs", len(spans), len(listed))
	}
	byReplica := map[int]int{}
	for i, s := range spans {
		byReplica[s.replica]++
		if s.runID != listed[i].RunID {
			t.Errorf("execution %d was run %s (%s), but the %dth created is %s", i+1, s.runID, s.label, i+1, listed[i].RunID)
		}
		if i > 0 && s.start.Before(spans[i-1].end) {
			t.Errorf("run %s (%s) started %s before run %s (%s) ended", s.runID, s.label, spans[i-1].end.Sub(s.start), spans[i-1].runID, spans[i-1].label)
		}
	}
	t.Logf("executions per replica: %v; first start to last end %s", byReplica, spans[len(spans)-1].end.Sub(spans[0].start).Round(time.Millisecond))
	var st ThreadState
	reps[2].mustDo("GET", "/threads/"+tid+"/state", nil, &st, 200)
	done, _ := st.Values.(map[string]any)["done"].([]any)
	if len(done) != len(spans) {
		t.Fatalf("thread state has %d labels for %d runs", len(done), len(spans))
	}
	for i, s := range spans {
		if done[i] != s.label {
			t.Fatalf("state's labels %v are not in execution order", done)
		}
	}
}

// TestClusterTenantLimit: with MaxRunsPerTenant 2 on three replicas, one tenant's six runs
// (on six threads, accepted by every replica) never execute more than two at once across the
// cluster, while another tenant's run goes ahead meanwhile.
func TestClusterTenantLimit(t *testing.T) {
	t.Parallel()
	const acmeKey, globexKey = "acme-key-0123456789abcdef", "globex-key-0123456789abcdef"
	cfg := Config{MaxRunsPerTenant: 2, Auth: AuthConfig{APIKeys: map[string]Principal{
		acmeKey:   {User: "ann", Tenant: "acme"},
		globexKey: {User: "gus", Tenant: "globex"},
	}}}
	reps, rec := newCluster(t, 3, cfg)
	type started struct{ tid, rid string }
	var acme []started
	for i := range 6 {
		var th Thread
		call(t, reps[i%3], acmeKey, "POST", "/threads", map[string]any{}, &th)
		acme = append(acme, started{tid: th.ThreadID})
	}
	var gth Thread
	call(t, reps[0], globexKey, "POST", "/threads", map[string]any{}, &gth)
	var wg sync.WaitGroup
	for i := range acme {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var run Run
			call(t, reps[i%3], acmeKey, "POST", "/threads/"+acme[i].tid+"/runs", map[string]any{
				"assistant_id": "ticks", "input": map[string]any{"ms": 300, "ticks": 2, "label": fmt.Sprint("acme", i)},
			}, &run)
			acme[i].rid = run.RunID
		}()
	}
	wg.Wait()
	time.Sleep(100 * time.Millisecond)
	var grun Run
	call(t, reps[1], globexKey, "POST", "/threads/"+gth.ThreadID+"/runs", map[string]any{
		"assistant_id": "ticks", "input": map[string]any{"ms": 100, "ticks": 1, "label": "globex"},
	}, &grun)
	for _, a := range acme {
		if st := waitFinal(t, reps[2], acmeKey, a.tid, a.rid, 90*time.Second); st != RunSuccess {
			t.Fatalf("acme run %s: %s", a.rid, st)
		}
	}
	if st := waitFinal(t, reps[2], globexKey, gth.ThreadID, grun.RunID, 30*time.Second); st != RunSuccess {
		t.Fatalf("globex run: %s", st)
	}
	var acmeSpans []span
	var globex span
	var lastAcmeStart time.Time
	replicas := map[int]bool{}
	for _, s := range rec.all() {
		if s.tenant == "globex" {
			globex = s
			continue
		}
		acmeSpans = append(acmeSpans, s)
		replicas[s.replica] = true
		if s.start.After(lastAcmeStart) {
			lastAcmeStart = s.start
		}
	}
	if len(acmeSpans) != 6 {
		t.Fatalf("%d acme executions, want 6", len(acmeSpans))
	}
	if m := maxOverlap(acmeSpans); m != 2 {
		t.Fatalf("acme had up to %d runs executing at once across the replicas, want exactly its limit of 2", m)
	}
	if !globex.start.Before(lastAcmeStart) {
		t.Fatalf("globex's run started only after acme's last run started: it waited on another tenant's limit")
	}
	t.Logf("acme's runs executed on replicas %v, never more than 2 at once; globex's run started %s before acme's last",
		replicas, lastAcmeStart.Sub(globex.start).Round(time.Millisecond))
}

// TestClusterWebSocket: a WebSocket client connected to one replica follows a run executing on
// another to its end with no gap, then starts a run and cancels it through its replica.
func TestClusterWebSocket(t *testing.T) {
	t.Parallel()
	reps, rec := newCluster(t, 2, Config{})
	tid := reps[0].newThread(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// A background run, accepted by replica 0; find where it executes.
	var run Run
	reps[0].mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "ticks", "stream_mode": []string{"values", "custom"},
		"input": map[string]any{"ms": 1500, "ticks": 15, "label": "followed"}}, &run, 200)
	var exec span
	waitFor(t, "the run to start", 30*time.Second, func() bool {
		var ok bool
		exec, ok = rec.started(run.RunID)
		return ok
	})
	other := reps[1-exec.replica]
	t.Logf("run executes on replica %d; the WebSocket is on replica %d", exec.replica, 1-exec.replica)

	wsURL := "ws" + strings.TrimPrefix(other.http.URL, "http") + "/threads/" + tid + "/ws"
	c, _, err := websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	send := func(m map[string]any) {
		data, _ := json.Marshal(m)
		if err := c.Write(ctx, websocket.MessageText, data); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	read := func() wsOut {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("%v after %v", err, seen)
		}
		seen = append(seen, string(data[:min(len(data), 60)]))
		var m wsOut
		json.Unmarshal(data, &m)
		return m
	}
	send(map[string]any{"type": "subscribe", "run_id": run.RunID, "last_event_id": 0})
	var evs []wsOut
	for {
		m := read()
		if m.Type == "error" {
			t.Fatalf("error: %s", m.Detail)
		}
		if m.Type == "done" {
			break
		}
		evs = append(evs, m)
	}
	ticks := 0
	for i, e := range evs {
		if e.ID != int64(i+1) {
			t.Fatalf("event %d has id %d (a gap or a duplicate): %v", i+1, e.ID, evs)
		}
		if e.Event == "custom" {
			ticks++
		}
	}
	if ticks != 15 || evs[len(evs)-1].Event != "end" {
		t.Fatalf("followed %d ticks, last event %q; want 15 and end", ticks, evs[len(evs)-1].Event)
	}

	// A run started through this WebSocket executes wherever River delivers it; it is
	// cancelled through a WebSocket on the replica that does not execute it, and the first
	// WebSocket sees its stream end.
	send(map[string]any{"type": "run", "assistant_id": "ticks", "stream_mode": []string{"custom"},
		"input": map[string]any{"ms": 20000, "ticks": 200, "label": "cancelled"}})
	first := read()
	if first.Type != "run" {
		t.Fatalf("first message %+v", first)
	}
	runID := first.RunID
	for {
		m := read()
		if m.Type == "error" || m.Type == "done" {
			t.Fatalf("before the cancel: %+v", m)
		}
		if m.Event == "custom" {
			break
		}
	}
	sp, _ := rec.started(runID)
	asker := reps[1-sp.replica]
	cancelURL := "ws" + strings.TrimPrefix(asker.http.URL, "http") + "/threads/" + tid + "/ws"
	c2, _, err := websocket.Dial(ctx, cancelURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.CloseNow()
	data, _ := json.Marshal(map[string]any{"type": "cancel", "run_id": runID, "action": "interrupt"})
	if err := c2.Write(ctx, websocket.MessageText, data); err != nil {
		t.Fatal(err)
	}
	var last wsOut
	for {
		m := read()
		if m.Type == "error" {
			t.Fatalf("error: %s", m.Detail)
		}
		if m.Type == "done" {
			break
		}
		last = m
	}
	if last.Event != "end" {
		t.Fatalf("the cancelled run's stream ended with %+v", last)
	}
	if st := waitFinal(t, reps[0], "", tid, runID, 20*time.Second); st != RunInterrupted {
		t.Fatalf("cancelled run's status %q", st)
	}
	waitFor(t, "the node to stop", 10*time.Second, func() bool {
		s, _ := rec.started(runID)
		return !s.end.IsZero()
	})
	sp, _ = rec.started(runID)
	if !sp.cancelled || sp.ticks >= 200 {
		t.Fatalf("the node was not cancelled: %+v", sp)
	}
	t.Logf("second run executed on replica %d, was cancelled through replica %d after %d ticks", sp.replica, 1-sp.replica, sp.ticks)
}

// TestClusterReject: six requests with multitask_strategy reject reach three replicas for one
// idle thread at the same instant: exactly one run is accepted, the others answer 409.
func TestClusterReject(t *testing.T) {
	t.Parallel()
	reps, rec := newCluster(t, 3, Config{})
	tid := reps[0].newThread(nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	var accepted string
	gate := make(chan struct{})
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data, _ := json.Marshal(map[string]any{"assistant_id": "ticks", "input": map[string]any{"ms": 300, "label": fmt.Sprint("r", i)}})
			<-gate
			resp, err := http.Post(reps[i%3].http.URL+"/threads/"+tid+"/runs", "application/json", bytes.NewReader(data))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			var run Run
			json.NewDecoder(resp.Body).Decode(&run)
			mu.Lock()
			codes[resp.StatusCode]++
			if resp.StatusCode == 200 {
				accepted = run.RunID
			}
			mu.Unlock()
		}()
	}
	close(gate)
	wg.Wait()
	if codes[200] != 1 || codes[409] != 5 {
		t.Fatalf("answers %v, want one 200 and five 409", codes)
	}
	if st := waitFinal(t, reps[1], "", tid, accepted, 30*time.Second); st != RunSuccess {
		t.Fatalf("accepted run: %s", st)
	}
	if n := len(rec.all()); n != 1 {
		t.Fatalf("%d executions, want 1", n)
	}
}
