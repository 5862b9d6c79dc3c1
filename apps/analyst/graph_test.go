package analyst_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/trellis-go/trellis/apps/analyst"
	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/embed"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/memory"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/model/scripted"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/memstore"
)

// harness builds the analyst outside the server: an in-memory store with the local embedder,
// tables in memory, and the given models (offline when nil).
func harness(t testing.TB, cfg analyst.Options, roles *model.Roles) (*analyst.Analyst, *graph.Compiled[analyst.State]) {
	t.Helper()
	st, err := memstore.New(&memstore.Options{Config: store.Config{Index: &store.IndexConfig{Embedder: embed.NewLocal(nil), Dims: 256}}})
	if err != nil {
		t.Fatal(err)
	}
	if roles == nil {
		roles = model.NewRoles(offline.New(nil), "")
	}
	ctx := context.Background()
	d := server.AppDeps{Deps: server.Deps{Store: st, SharedStore: st}, Models: roles,
		Compile: graph.CompileOptions{Saver: checkpoint.NewMemorySaver(), Store: st}}
	a, err := analyst.Open(ctx, d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	g, err := a.Graph(d.Compile)
	if err != nil {
		t.Fatal(err)
	}
	return a, g
}

type run struct {
	t      testing.TB
	g      *graph.Compiled[analyst.State]
	thread string
	user   string
	opts   []graph.RunOption
	state  analyst.State
	action string
}

func (r *run) options() []graph.RunOption {
	return append([]graph.RunOption{graph.WithThread(r.thread), graph.WithConfig(map[string]any{"user_id": r.user, "tenant": "acme"})}, r.opts...)
}

func (r *run) finish(out analyst.State, err error) {
	r.t.Helper()
	r.state, r.action = out, ""
	var ie *graph.InterruptedError
	if errors.As(err, &ie) {
		raw, _ := json.Marshal(ie.Interrupts[0].Value)
		var reqs []map[string]any
		_ = json.Unmarshal(raw, &reqs)
		r.action, _ = reqs[0]["action_request"].(map[string]any)["action"].(string)
		snap, err := r.g.State(context.Background(), checkpoint.Ref{ThreadID: r.thread})
		if err != nil {
			r.t.Fatal(err)
		}
		r.state = snap.Values
		return
	}
	if err != nil {
		r.t.Fatal(err)
	}
}

func (r *run) ask(text string, profile map[string]string) {
	r.t.Helper()
	r.finish(r.g.Invoke(context.Background(), analyst.State{Profile: profile, Messages: []message.Message{message.User(text)}}, r.options()...))
}

func (r *run) resume(typ string, args any) {
	r.t.Helper()
	resp := map[string]any{"type": typ}
	if args != nil {
		resp["args"] = args
	}
	r.finish(r.g.Invoke(context.Background(), analyst.State{}, append(r.options(), graph.Resume([]any{resp}))...))
}

// Task agents run in parallel: against a slow search server, their spans overlap, and the
// research round takes about one search's time, not the sum. Every node's span carries its
// input keys and output delta; memory reads and writes have spans of their own.
func TestTaskAgentsRunInParallel(t *testing.T) {
	t.Parallel()
	web, err := analyst.NewOfflineWeb()
	if err != nil {
		t.Fatal(err)
	}
	const delay = 300 * time.Millisecond
	web.Delay = delay
	srv := httptest.NewServer(web)
	defer srv.Close()
	_, g := harness(t, analyst.Options{TavilyURL: srv.URL}, nil)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	r := &run{t: t, g: g, thread: "par", user: "dana", opts: []graph.RunOption{graph.WithTracer(tp.Tracer("test"))}}
	r.ask("Compare Voltra and Spinlane in B2B fleet leasing", map[string]string{"name": "Dana"})
	if r.action != "Review research plan" {
		t.Fatalf("at %q", r.action)
	}
	start := time.Now()
	r.resume("accept", nil)
	took := time.Since(start)
	if r.action != "Review discoveries" {
		t.Fatalf("at %q", r.action)
	}
	var agents []sdktrace.ReadOnlySpan
	names := map[string]int{}
	for _, s := range rec.Ended() {
		names[s.Name()]++
		if s.Name() == "graph.node task_agent" {
			agents = append(agents, s)
		}
		// Subgraph nodes are traced through their own nodes; a paused gate has no output.
		if strings.HasPrefix(s.Name(), "graph.node ") && !strings.HasSuffix(s.Name(), "_subgraph") {
			var in, out, paused bool
			for _, kv := range s.Attributes() {
				in = in || kv.Key == "analyst.input_keys"
				out = out || kv.Key == "analyst.output_delta"
				paused = paused || kv.Key == "trellis.interrupted"
			}
			if !in || !(out || paused) {
				t.Errorf("%s lacks input keys or output delta: %v", s.Name(), s.Attributes())
			}
		}
	}
	// The first round sends one agent per sub-question; those whose first source is the web wait
	// on the slow server together.
	overlapping := 0
	for i, a := range agents {
		for _, b := range agents[i+1:] {
			if a.StartTime().Before(b.EndTime()) && b.StartTime().Before(a.EndTime()) && a.EndTime().Sub(a.StartTime()) >= delay && b.EndTime().Sub(b.StartTime()) >= delay {
				overlapping++
			}
		}
	}
	if overlapping == 0 {
		t.Fatalf("no two slow task agents overlap (%d agents)", len(agents))
	}
	// The overlap of the agents' spans shows they ran together; no bound on the wall time (the
	// machine's load decides it).
	webCalls := names["execute_tool web_search_tool"]
	if webCalls < 3 {
		t.Errorf("%d web searches, want one per task whose first source is the web", webCalls)
	}
	for _, want := range []string{"graph.node research_supervisor", "graph.node supervisor_review", "graph.node discovery_synthesiser",
		"memory.read episodic_memory", "memory.write episodic_memory", "execute_tool rag_tool",
		// the research supervisor's tool loop, on the offline model
		"execute_tool memory_search_tool", "execute_tool write_memory_tool", "execute_tool Done"} {
		if names[want] == 0 {
			t.Errorf("no span %q (spans: %v)", want, names)
		}
	}
	t.Logf("%d task agents, %d overlapping pairs, %d web searches of %v in %v", len(agents), overlapping, webCalls, delay, took)
}

// Memory is only added to and corrected: whatever a model proposes, and whatever the user says,
// every fact known before is still there afterwards.
func TestMemoryNeverLosesAFact(t *testing.T) {
	t.Parallel()
	var calls int
	var mu sync.Mutex
	m := scripted.New(scripted.Rule(func(req *model.Request) *model.Response {
		mu.Lock()
		defer mu.Unlock()
		calls++
		var doc struct {
			Facts []memory.Fact
		}
		sys := req.Messages[0].Text()
		if i := strings.Index(sys, "<Memory>\n"); i >= 0 {
			_ = json.Unmarshal([]byte(sys[i+9:strings.Index(sys, "\n</Memory>")]), &doc.Facts)
		}
		ops := []map[string]any{{"op": "add", "text": fmt.Sprintf("note %d", calls)}}
		if len(doc.Facts) > 0 {
			ops = append(ops, map[string]any{"op": "correct", "id": doc.Facts[0].ID, "text": ""}, // refused: empty
				map[string]any{"op": "correct", "id": "nope", "text": "x"}, // refused: unknown id
				map[string]any{"op": "correct", "id": doc.Facts[0].ID, "text": fmt.Sprintf("corrected %d", calls)})
		}
		raw, _ := json.Marshal(map[string]any{"operations": ops})
		return &model.Response{Message: message.Assistant(string(raw))}
	}))
	m.Repeat = true
	for _, roles := range []*model.Roles{nil, model.NewRoles(m, "scripted")} {
		a, _ := harness(t, analyst.Options{}, roles)
		mem := a.Memory()
		ctx := context.Background()
		said := []string{"My name is Dana Whitfield", "I am a senior manager", "I prefer SWOT and concise reports",
			"Actually I prefer Porter's five forces", "I live in Rotterdam", "I live in Amsterdam now", "use footnotes please"}
		seen := map[string]string{}
		for i, text := range said {
			for _, ns := range []string{analyst.NSUserProfile, analyst.NSPreferences} {
				doc, err := mem.Update(ctx, "dana", ns, "test", []message.Message{message.User(text)})
				if err != nil {
					t.Fatal(err)
				}
				ids := map[string]bool{}
				for _, f := range doc.Facts {
					ids[f.ID] = true
				}
				for key, text := range seen {
					kns, id, _ := strings.Cut(key, "\x00")
					if kns == ns && !ids[id] {
						t.Fatalf("step %d: fact %s (%q) of %s was dropped", i, id, text, ns)
					}
				}
				for _, f := range doc.Facts {
					seen[ns+"\x00"+f.ID] = f.Text
				}
			}
		}
		prefs, _ := mem.Load(ctx, "dana", analyst.NSPreferences)
		var fw memory.Fact
		for _, f := range prefs.Facts {
			if strings.HasPrefix(f.Text, "[FRAMEWORK]") {
				fw = f
			}
		}
		if roles == nil && (fw.Text != "[FRAMEWORK] preferred: Porter's five forces" || len(fw.Previous) == 0) {
			t.Errorf("framework preference not corrected with its history: %+v", fw)
		}
		if len(prefs.Facts) == 0 {
			t.Error("no preferences")
		}
	}
}
