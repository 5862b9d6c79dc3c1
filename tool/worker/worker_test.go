package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/trellis-go/trellis/tool"
	"github.com/trellis-go/trellis/tool/worker"
)

// calls counts the calls this process served: a worker that is replaced after every call
// always answers 1.
var calls atomic.Int64

type sleepArgs struct {
	MS int `json:"ms"`
}

type echoArgs struct {
	Text string `json:"text"`
}

func testTools(settings worker.Settings) ([]tool.Tool, error) {
	echo, err := tool.New("echo", "Echoes the text.", func(ctx context.Context, a echoArgs) (string, error) { return a.Text, nil })
	if err != nil {
		return nil, err
	}
	state, _ := tool.New("state", "Reports the worker's process and how many calls it served.", func(ctx context.Context, _ struct{}) (map[string]any, error) {
		return map[string]any{"pid": os.Getpid(), "calls": calls.Add(1)}, nil
	})
	env, _ := tool.New("env", "Lists the worker's environment.", func(ctx context.Context, _ struct{}) ([]string, error) { return os.Environ(), nil })
	set, _ := tool.New("settings", "Lists the worker's settings.", func(ctx context.Context, _ struct{}) (worker.Settings, error) { return settings, nil })
	sleep, _ := tool.New("sleep", "Sleeps.", func(ctx context.Context, a sleepArgs) (string, error) {
		time.Sleep(time.Duration(a.MS) * time.Millisecond)
		return "slept", nil
	})
	return []tool.Tool{echo, state, env, set, sleep}, nil
}

const parentSecret = "sk-ant-parent-secret-0123456789"

func TestMain(m *testing.M) {
	worker.ServeIfChild("testskill", testTools)
	// The server's key: a worker must never see it.
	os.Setenv("ANTHROPIC_API_KEY", parentSecret)
	os.Exit(m.Run())
}

// recorder remembers every worker a runtime started.
type recorder struct {
	worker.Runtime
	mu  sync.Mutex
	all []worker.Instance
}

func (r *recorder) Start(ctx context.Context, spec worker.Spec, name string) (worker.Instance, error) {
	in, err := r.Runtime.Start(ctx, spec, name)
	if err == nil {
		r.mu.Lock()
		r.all = append(r.all, in)
		r.mu.Unlock()
	}
	return in, err
}

func (r *recorder) started() []worker.Instance {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.all)
}

func self(t testing.TB) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, "-test.run=^$"}
}

func startPool(t testing.TB, size int, timeout time.Duration) (*worker.Pool, *recorder) {
	rec := &recorder{Runtime: &worker.Subprocess{}}
	p := worker.NewPool(rec, nil)
	spec := worker.Spec{Name: "testskill", Command: self(t), PoolSize: size, Timeout: timeout, Env: []string{"SKILL_SETTING=from-the-env-file"}}
	if err := p.Start(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.StopAll(context.Background()) })
	return p, rec
}

// waitFor polls cond until it holds or ten seconds pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s after 10s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestEveryCallGetsAFreshWorker(t *testing.T) {
	t.Parallel()
	p, rec := startPool(t, 2, 0)
	s, err := p.Schema("testskill")
	if err != nil || len(s.Tools) != 5 || s.Tools[0].Name != "echo" {
		t.Fatalf("schema %+v, %v", s, err)
	}
	pids := map[float64]bool{}
	for i := range 6 {
		res, err := p.Execute(context.Background(), "testskill", "state", nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out struct{ PID, Calls float64 }
		if err := json.Unmarshal(res.Structured, &out); err != nil {
			t.Fatal(err)
		}
		if out.Calls != 1 {
			t.Errorf("call %d: the worker had served %v calls; state bled between calls", i, out.Calls)
		}
		if pids[out.PID] {
			t.Errorf("call %d: worker %v served twice", i, out.PID)
		}
		pids[out.PID] = true
	}
	waitFor(t, "the pool to refill and the used workers to stop", func() bool {
		st, _ := p.Stats("testskill")
		return st.Idle == 2 && st.Replaced == 6 && st.Live == 2
	})
	if n := len(rec.started()); n != 8 {
		t.Errorf("%d workers started, want 2 + one per call (8)", n)
	}
	st, _ := p.Stats("testskill")
	if st.Live != 2 || st.Calls != 6 {
		t.Errorf("stats %+v, want 2 live after 6 calls", st)
	}
}

func TestATimeoutRefillsThePool(t *testing.T) {
	t.Parallel()
	p, _ := startPool(t, 1, 300*time.Millisecond)
	start := time.Now()
	_, err := p.Execute(context.Background(), "testskill", "sleep", json.RawMessage(`{"ms": 5000}`), 0)
	if !errors.Is(err, worker.ErrTimeout) {
		t.Fatalf("err %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the timeout of 300ms took %s", d)
	}
	// The stuck worker is replaced; the next call gets a fresh one.
	res, err := p.Execute(context.Background(), "testskill", "echo", json.RawMessage(`{"text": "after"}`), 0)
	if err != nil || res.Content != "after" {
		t.Fatalf("%+v %v", res, err)
	}
	waitFor(t, "the pool to refill", func() bool { st, _ := p.Stats("testskill"); return st.Idle == 1 && st.Live == 1 })
}

func TestStopAllLeavesNoProcess(t *testing.T) {
	t.Parallel()
	p, rec := startPool(t, 3, 0)
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := p.Execute(context.Background(), "testskill", "echo", json.RawMessage(`{"text":"x"}`), 0); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	// Stop while replacements are under way.
	if err := p.StopAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if live := p.Live(); len(live) != 0 {
		t.Errorf("live after StopAll: %v", live)
	}
	started := rec.started()
	if len(started) < 3 {
		t.Fatalf("only %d workers started", len(started))
	}
	for _, in := range started {
		pid, err := worker.PIDOf(in)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("worker %s (pid %d) still exists after StopAll: %v", in.Name(), pid, err)
		}
	}
	if _, err := p.Execute(context.Background(), "testskill", "echo", json.RawMessage(`{"text":"x"}`), 0); !errors.Is(err, worker.ErrClosed) {
		t.Errorf("a call after StopAll: %v", err)
	}
}

func TestAWorkerGetsOnlyTheSkillEnvironment(t *testing.T) {
	t.Parallel()
	p, _ := startPool(t, 1, 0)
	res, err := p.Execute(context.Background(), "testskill", "env", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	if err := json.Unmarshal(res.Structured, &env); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(res.Structured), parentSecret) || strings.Contains(string(res.Structured), "ANTHROPIC_API_KEY") {
		t.Errorf("the server's key reached the worker: %v", env)
	}
	if !slices.Contains(env, "SKILL_SETTING=from-the-env-file") {
		t.Errorf("the skill's env file did not reach the worker: %v", env)
	}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k != "SKILL_SETTING" && !strings.HasPrefix(k, "TRELLIS_WORKER") {
			t.Errorf("the worker inherited %s", k)
		}
	}
}

func TestAWorkerGetsItsSettings(t *testing.T) {
	t.Parallel()
	p, _ := startPool(t, 1, 0)
	res, err := p.Execute(context.Background(), "testskill", "settings", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got worker.Settings
	if err := json.Unmarshal(res.Structured, &got); err != nil {
		t.Fatal(err)
	}
	if got.Get("SKILL_SETTING") != "from-the-env-file" {
		t.Errorf("SKILL_SETTING = %q, want the env file's value (settings %v)", got.Get("SKILL_SETTING"), got)
	}
	for k := range got {
		if strings.HasPrefix(k, "TRELLIS_WORKER") || k == "ANTHROPIC_API_KEY" {
			t.Errorf("the settings hold %s, which is not the skill's", k)
		}
	}
}

func TestWorkerErrors(t *testing.T) {
	t.Parallel()
	p, _ := startPool(t, 1, 0)
	if _, err := p.Execute(context.Background(), "nope", "echo", nil, 0); !errors.Is(err, worker.ErrUnknownSkill) {
		t.Errorf("unknown skill: %v", err)
	}
	_, err := p.Execute(context.Background(), "testskill", "nosuchtool", nil, 0)
	if err == nil || !strings.Contains(err.Error(), `unknown tool "nosuchtool"`) {
		t.Errorf("unknown tool: %v", err)
	}
	res, err := p.Execute(context.Background(), "testskill", "echo", json.RawMessage(`{"text": 5}`), 0)
	if err != nil || !res.IsError || !strings.Contains(res.Content, "text") {
		t.Errorf("bad arguments: %+v %v", res, err)
	}
	if err := p.Start(context.Background(), worker.Spec{Name: "testskill", Command: self(t)}); err == nil {
		t.Error("a skill started twice")
	}
}

// fakeInstance is a worker served in this process.
type fakeInstance struct {
	name string
	srv  *httptest.Server
}

func (f *fakeInstance) Name() string                   { return f.name }
func (f *fakeInstance) URL() string                    { return f.srv.URL }
func (f *fakeInstance) Stop(ctx context.Context) error { f.srv.Close(); return nil }

type slowRuntime struct{ unready int32 }

func (s *slowRuntime) Start(ctx context.Context, spec worker.Spec, name string) (worker.Instance, error) {
	tools, _ := testTools(nil)
	h, _ := worker.Handler(tools)
	var refused atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/schema" && refused.Add(1) <= s.unready {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}))
	return &fakeInstance{name: name, srv: srv}, nil
}

func TestSchemaIsPolledUntilTheWorkerAnswers(t *testing.T) {
	t.Parallel()
	p := worker.NewPool(&slowRuntime{unready: 3}, nil)
	defer p.StopAll(context.Background())
	if err := p.Start(context.Background(), worker.Spec{Name: "slow"}); err != nil {
		t.Fatal(err)
	}
	if s, _ := p.Schema("slow"); len(s.Tools) != 5 {
		t.Errorf("schema %+v", s)
	}

	never := worker.NewPool(&slowRuntime{unready: 1 << 30}, &worker.Options{SchemaTimeout: 200 * time.Millisecond})
	defer never.StopAll(context.Background())
	err := never.Start(context.Background(), worker.Spec{Name: "never"})
	if err == nil || !strings.Contains(err.Error(), "GET /schema") {
		t.Errorf("a worker that never answers: %v", err)
	}
	if live := never.Live(); len(live) != 0 {
		t.Errorf("the unready worker was left running: %v", live)
	}
}

func TestSubprocessWithoutCommand(t *testing.T) {
	t.Parallel()
	p := worker.NewPool(nil, nil)
	defer p.StopAll(context.Background())
	err := p.Start(context.Background(), worker.Spec{Name: "empty"})
	if err == nil || !strings.Contains(err.Error(), "no command") {
		t.Errorf("err %v", err)
	}
}

func TestCheckoutWaitsForAFreeWorker(t *testing.T) {
	t.Parallel()
	rec := &recorder{Runtime: &worker.Subprocess{}}
	p := worker.NewPool(rec, &worker.Options{CheckoutTimeout: 100 * time.Millisecond})
	defer p.StopAll(context.Background())
	if err := p.Start(context.Background(), worker.Spec{Name: "testskill", Command: self(t), PoolSize: 1, Timeout: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	busy := make(chan error, 1)
	go func() {
		_, err := p.Execute(context.Background(), "testskill", "sleep", json.RawMessage(`{"ms": 1500}`), 0)
		busy <- err
	}()
	waitFor(t, "the worker to be checked out", func() bool { st, _ := p.Stats("testskill"); return st.Calls == 1 })
	_, err := p.Execute(context.Background(), "testskill", "echo", json.RawMessage(`{"text":"x"}`), 0)
	if !errors.Is(err, worker.ErrTimeout) || !strings.Contains(err.Error(), "no testskill worker was free") {
		t.Errorf("with the only worker busy: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Execute(ctx, "testskill", "echo", nil, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled caller: %v", err)
	}
	if err := <-busy; err != nil {
		t.Errorf("the slow call: %v", err)
	}
}

// readyRuntime serves workers in this process that say they are ready, and counts the GET
// /schema they answer.
type readyRuntime struct{ schemas atomic.Int32 }

type readyInstance struct{ *fakeInstance }

func (readyInstance) Ready() bool { return true }

func (rt *readyRuntime) Start(ctx context.Context, spec worker.Spec, name string) (worker.Instance, error) {
	tools, _ := testTools(nil)
	h, _ := worker.Handler(tools)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/schema" {
			rt.schemas.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	return readyInstance{&fakeInstance{name: name, srv: srv}}, nil
}

func TestTheSchemaIsFetchedOncePerSkill(t *testing.T) {
	t.Parallel()
	rt := &readyRuntime{}
	p := worker.NewPool(rt, nil)
	defer p.StopAll(context.Background())
	if err := p.Start(context.Background(), worker.Spec{Name: "ready", PoolSize: 3}); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if _, err := p.Execute(context.Background(), "ready", "echo", json.RawMessage(`{"text":"x"}`), 0); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the pool to refill", func() bool { st, _ := p.Stats("ready"); return st.Replaced == 4 && st.Idle == 3 })
	// The three first workers start together, so up to three may be asked; the replacements never are.
	if n := rt.schemas.Load(); n < 1 || n > 3 {
		t.Errorf("GET /schema asked %d times for 3 + 4 workers; want once per skill (at most once per first worker)", n)
	}
}

func TestAWorkerOnALoopbackPort(t *testing.T) {
	t.Parallel()
	rec := &recorder{Runtime: &worker.Subprocess{NoSocket: true}}
	p := worker.NewPool(rec, nil)
	defer p.StopAll(context.Background())
	if err := p.Start(context.Background(), worker.Spec{Name: "testskill", Command: self(t), PoolSize: 1}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		res, err := p.Execute(context.Background(), "testskill", "echo", json.RawMessage(`{"text":"over tcp"}`), 0)
		if err != nil || res.Content != "over tcp" {
			t.Fatalf("%+v %v", res, err)
		}
	}
	if u := rec.started()[0].URL(); !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Errorf("a worker without the socket pair is at %q, want a loopback URL", u)
	}
}
