package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trellis-go/trellis/graph"
)

// nested returns a JSON object nested n levels deep.
func nested(n int) string {
	return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n)
}

// hostile is a corpus of requests a careless or hostile client sends: each must be refused with a
// 400 that names what was wrong, and none may be stored.
var hostile = []struct {
	method, path, body string
	want               string // in the error message
}{
	{"POST", "/threads", `{"metadata":{"owner":"a\u0000b"}}`, `"metadata.owner" holds a NUL`},
	{"POST", "/threads", `{"metadata":{"own\u0000er":"a"}}`, `key in field "metadata" holds a NUL`},
	{"POST", "/threads", `{"metadata":` + nested(1000) + `}`, "nests deeper than 64"},
	{"POST", "/threads", `{"metadata":{"tags":["ok","bad\u0000"]}}`, `"metadata.tags[1]" holds a NUL`},
	{"POST", "/threads/search", `{"metadata":{"owner":"\u0000"}}`, "NUL"},
	{"POST", "/threads/search", `{"limit":-1}`, `"limit" is -1`},
	{"POST", "/threads/search", `{"offset":-5}`, `"offset" is -5`},
	{"POST", "/assistants/search", `{"limit":-1}`, `"limit" is -1`},
	{"POST", "/assistants", `{"graph_id":"flow","name":"evil\u0000name"}`, `"name" holds a NUL`},
	{"PUT", "/store/items", `{"namespace":["docs"],"key":"k","value":` + nested(200) + `}`, "nests deeper than 64"},
	{"PUT", "/store/items", `{"namespace":["a.b"],"key":"k","value":{"v":1}}`, `label "a.b" holds a '.'`},
	{"PUT", "/store/items", `{"namespace":["docs",""],"key":"k","value":{"v":1}}`, "label 1 is empty"},
	{"PUT", "/store/items", `{"namespace":["docs"],"key":"k\u0000","value":{"v":1}}`, `"key" holds a NUL`},
	{"POST", "/store/items/search", `{"namespace_prefix":["docs"],"limit":-3}`, `"limit" is -3`},
	{"POST", "/runs/wait", `{"assistant_id":"flow","input":{"topic":"x"},"config":{"recursion_limit":-1}}`, `"config.recursion_limit" is -1`},
	{"POST", "/runs/wait", `{"assistant_id":"flow","input":{"topic":"x"},"config":{"recursion_limit":"ten"}}`, `"config.recursion_limit" is "ten"`},
	{"POST", "/runs/wait", `{"assistant_id":"flow","input":{"topic":"x"},"config":{"recursion_limit":2.5}}`, `recursion_limit`},
	{"POST", "/runs/wait", `{"assistant_id":"flow","input":{"topic":"a\u0000"}}`, `"input.topic" holds a NUL`},
	{"GET", "/threads/abc%00def", ``, "path holds a NUL"},
	{"GET", "/threads/abc%00def/state", ``, "path holds a NUL"},
	{"GET", "/assistants/flow%00", ``, "path holds a NUL"},
	{"GET", "/store/items?namespace=docs&key=k%00", ``, `"key" holds a NUL`},
}

// Hostile input is refused at the door on SQLite and Postgres, and afterwards every search and
// count of the tenant still works: one bad row can no longer break a tenant.
func TestHostileInputIsRefusedAtTheDoor(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			cfg := Config{}
			if backend == "postgres" {
				cfg.DatabaseURL = pgURL(t)
			}
			b := setup(t, setupOpts{cfg: cfg})
			b.newThread(map[string]any{"owner": "ann"})
			for _, h := range hostile {
				var body io.Reader
				if h.body != "" {
					body = strings.NewReader(h.body)
				}
				req, _ := http.NewRequest(h.method, b.http.URL+h.path, body)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var e struct{ Detail, Hint string }
				_ = json.Unmarshal(raw, &e)
				msg := e.Detail + "; " + e.Hint
				if resp.StatusCode != 400 || !strings.Contains(msg, h.want) || e.Hint == "" {
					t.Errorf("%s %s %.80s: %d %s, want 400 saying %q", h.method, h.path, h.body, resp.StatusCode, msg, h.want)
				}
			}
			// The tenant's reads still work and hold only the good thread.
			var found []map[string]any
			b.mustDo("POST", "/threads/search", map[string]any{"metadata": map[string]any{"owner": "ann"}}, &found, 200)
			if len(found) != 1 {
				t.Errorf("search found %d threads, want the one good thread", len(found))
			}
			var n int
			b.mustDo("POST", "/threads/count", map[string]any{}, &n, 200)
			if n != 1 {
				t.Errorf("count %d, want 1: a refused request stored a thread", n)
			}
			b.mustDo("POST", "/store/items/search", map[string]any{"namespace_prefix": []string{"docs"}}, nil, 200)
		})
	}
}

// FuzzJSONEntryPoints sends arbitrary bodies to the routes that store or read JSON (thread
// metadata, run input, store values, searches): the answer may be any 2xx or 4xx, never a 5xx.
// `go test -fuzz FuzzJSONEntryPoints ./server/` explores further than the seeds.
func FuzzJSONEntryPoints(f *testing.F) {
	for _, h := range hostile {
		if h.body != "" {
			f.Add(h.method+" "+h.path, h.body)
		}
	}
	f.Add("POST /threads", `{"metadata":{"a":{"b":[1,2,{"c":null}]}}}`)
	f.Add("PUT /store/items", `{"namespace":["n"],"key":"k","value":{"deep":`+nested(63)+`}}`)
	f.Add("POST /threads/search", `{"values":{"x":1},"sort_by":"created_at","limit":3}`)
	f.Add("POST /runs/wait", `{"assistant_id":"flow","input":{"topic":"\ud800"}}`)
	s, err := New(Config{Graphs: []GraphSpec{{ID: "flow", Build: buildFlow}}, DataDir: f.TempDir(), Dev: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	h := s.Handler()
	routes := map[string]bool{"POST /threads": true, "POST /threads/search": true, "POST /threads/count": true,
		"PUT /store/items": true, "POST /store/items/search": true, "POST /runs/wait": true, "POST /assistants/search": true}
	f.Fuzz(func(t *testing.T, route, body string) {
		if !routes[route] {
			return
		}
		method, path, _ := strings.Cut(route, " ")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, path, bytes.NewReader([]byte(body))))
		if rec.Code >= 500 {
			var e map[string]any
			_ = json.Unmarshal(rec.Body.Bytes(), &e)
			t.Fatalf("%s %q: %d %s", route, body, rec.Code, fmt.Sprint(e))
		}
	})
}

// A 5xx is logged at the default level with its route and error, so an operator sees it without
// turning on debug logs.
func TestServerErrorsAreLogged(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	b := setup(t, setupOpts{cfg: Config{Logger: slog.New(slog.NewJSONHandler(&logs, nil))}})
	tid := b.newThread(nil)
	b.srv.meta.SQL().Close() // every read of the metadata now fails
	if code := b.do("GET", "/threads/"+tid, nil, nil); code != 500 {
		t.Fatalf("status %d, want 500", code)
	}
	out := logs.String()
	if !strings.Contains(out, `"msg":"request failed"`) || !strings.Contains(out, `"route":"GET /threads/{tid}"`) ||
		!strings.Contains(out, `"level":"ERROR"`) || !strings.Contains(out, "closed") {
		t.Fatalf("the 500 was not logged with its route and error:\n%s", out)
	}
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines to log into.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A body sent a byte at a time is cut off after ReadTimeout; a run that takes longer than that
// to answer is not.
func TestSlowBodyIsCutOff(t *testing.T) {
	t.Parallel()
	sleepy := GraphSpec{ID: "sleepy", Build: func(d Deps) (graph.Runnable, error) {
		g := graph.New[flowState]()
		g.AddNode("nap", func(ctx context.Context, s flowState) (flowState, error) {
			select {
			case <-time.After(700 * time.Millisecond):
			case <-ctx.Done():
				return flowState{}, ctx.Err()
			}
			return flowState{Steps: []string{"nap"}}, nil
		})
		g.AddEdge(graph.START, "nap")
		return graph.Erase(g.Compile(graph.CompileOptions{Saver: d.Saver}))
	}}
	b := setup(t, setupOpts{cfg: Config{ReadTimeout: 300 * time.Millisecond}, extra: []GraphSpec{sleepy}})
	// A run that takes longer than ReadTimeout is answered: only the body's reading is bounded.
	var out map[string]any
	b.mustDo("POST", "/runs/wait", map[string]any{"assistant_id": "sleepy", "input": map[string]any{}}, &out, 200)
	if steps, _ := out["steps"].([]any); len(steps) != 1 {
		t.Fatalf("the long run: %v", out)
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(b.http.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"metadata":{"owner":"` + strings.Repeat("s", 100) + `"}}`
	fmt.Fprintf(conn, "POST /threads HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	start := time.Now()
	done := make(chan string, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			done <- "hung up: " + err.Error()
			return
		}
		resp.Body.Close()
		done <- resp.Status
	}()
	for i := 0; i < len(body); i++ {
		if _, err := conn.Write([]byte{body[i]}); err != nil {
			break // the server has hung up: what we want
		}
		select {
		case resp := <-done:
			t.Logf("after %s: %s", time.Since(start), resp)
			if strings.Contains(resp, "201") || strings.Contains(resp, " 200 ") {
				t.Fatalf("the slow request was served: %s", resp)
			}
			if time.Since(start) > 5*time.Second {
				t.Fatalf("cut off only after %s", time.Since(start))
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	select {
	case resp := <-done:
		t.Logf("after the whole body, %s: %s", time.Since(start), resp)
		if strings.Contains(resp, "201") || strings.Contains(resp, " 200 ") {
			t.Fatalf("the slow request was served: %s", resp)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server still holds the slow request")
	}
}

// A webhook to a loopback address (by IP or by name) is not sent unless the configuration allows
// it, and the refusal is logged. (A dev server, which listens on loopback only, sends them:
// TestWebhookLoopbackInDev.)
func TestWebhookToLoopbackIsRefused(t *testing.T) {
	t.Parallel()
	called := make(chan struct{}, 2)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { called <- struct{}{} }))
	defer hook.Close()
	var logs syncBuffer
	const key = "webhook-key-0123456789abcdef"
	b := setup(t, setupOpts{cfg: Config{Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		Auth: AuthConfig{APIKeys: map[string]Principal{key: {User: "u", Tenant: "t"}}}}})
	b.token = key
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(hook.URL, "http://"))
	for _, url := range []string{hook.URL + "/done", "http://localhost:" + port + "/done"} {
		b.mustDo("POST", "/runs/wait", map[string]any{"assistant_id": "example", "input": map[string]any{"messages": []any{}}, "webhook": url}, nil, 200)
	}
	// The webhooks go out in the background once each run has finished: wait for both refusals.
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(logs.String(), "is a loopback address") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the refusals were not logged:\n%s", logs.String())
		}
		b.srv.runs.hooks.bg.Wait()
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case <-called:
		t.Fatal("a webhook reached a loopback address")
	default:
	}
}

// GET /metrics asks for the metrics token when one is set.
func TestMetricsToken(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{cfg: Config{MetricsToken: "m-secret"}})
	get := func(auth string) int {
		req, _ := http.NewRequest("GET", b.http.URL+"/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(""); code != 401 {
		t.Errorf("no token: %d, want 401", code)
	}
	if code := get("Bearer wrong"); code != 401 {
		t.Errorf("wrong token: %d, want 401", code)
	}
	if code := get("Bearer m-secret"); code != 200 {
		t.Errorf("right token: %d, want 200", code)
	}
}

// The server's store searches by vectors as well as by words: with no embedder configured it uses
// the local one (hashed n-grams), so a query with typos, which shares no word with any item, still
// finds the closest one first.
func TestStoreSearchesByVectors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.mustDo("PUT", "/store/items", map[string]any{"namespace": []string{"pets"}, "key": "cat", "value": map[string]any{"text": "the cat sat on the mat"}}, nil, 204)
	b.mustDo("PUT", "/store/items", map[string]any{"namespace": []string{"pets"}, "key": "tax", "value": map[string]any{"text": "quarterly revenue and taxation report"}}, nil, 204)
	var res struct {
		Items []struct {
			Key   string   `json:"key"`
			Score *float64 `json:"score"`
		} `json:"items"`
	}
	b.mustDo("POST", "/store/items/search", map[string]any{"namespace_prefix": []string{"pets"}, "query": "quartrly revnue taxes"}, &res, 200)
	if len(res.Items) == 0 || res.Items[0].Key != "tax" || res.Items[0].Score == nil || *res.Items[0].Score <= 0 {
		for _, it := range res.Items {
			t.Logf("%s %v", it.Key, *it.Score)
		}
		t.Fatalf("search by meaning: %+v", res.Items)
	}
}
