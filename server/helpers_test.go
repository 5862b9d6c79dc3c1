package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trellis-go/trellis/examples/react"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/model/offline"
)

// flowState is the state of the test graph "flow": plan -> approve (interrupts) -> act.
type flowState struct {
	Topic    string   `json:"topic,omitempty"`
	Steps    []string `json:"steps" reduce:"append"`
	Approved string   `json:"approved,omitempty"`
}

// gates lets tests hold the "slow" graph's node until they release it.
type gates struct {
	started chan string
	release chan struct{}
	runs    atomic.Int64
}

func buildFlow(deps Deps) (graph.Runnable, error) {
	g := graph.New[flowState]()
	g.AddNode("plan", func(ctx context.Context, s flowState) (flowState, error) {
		graph.Emit(ctx, map[string]any{"progress": "planning " + s.Topic})
		return flowState{Steps: []string{"plan"}}, nil
	})
	g.AddNode("approve", func(ctx context.Context, s flowState) (flowState, error) {
		v, err := graph.Interrupt(ctx, map[string]any{"question": "approve " + s.Topic + "?"})
		if err != nil {
			return flowState{}, err
		}
		return flowState{Steps: []string{"approve"}, Approved: fmt.Sprint(v)}, nil
	})
	g.AddNode("act", func(ctx context.Context, s flowState) (flowState, error) {
		if s.Topic == "explode" {
			return flowState{}, errors.New("the act node refuses to explode")
		}
		return flowState{Steps: []string{"act"}}, nil
	})
	g.AddEdge(graph.START, "plan").AddEdge("plan", "approve").AddEdge("approve", "act").AddEdge("act", graph.END)
	return graph.Erase(g.Compile(graph.CompileOptions{Name: "flow", Saver: deps.Saver, Store: deps.Store}))
}

func buildSlow(gt *gates) func(Deps) (graph.Runnable, error) {
	return func(deps Deps) (graph.Runnable, error) {
		g := graph.New[flowState]()
		g.AddNode("first", func(ctx context.Context, s flowState) (flowState, error) {
			return flowState{Steps: []string{"first"}}, nil
		})
		g.AddNode("wait", func(ctx context.Context, s flowState) (flowState, error) {
			gt.runs.Add(1)
			select {
			case gt.started <- s.Topic:
			case <-ctx.Done():
				return flowState{}, ctx.Err()
			}
			select {
			case <-gt.release:
			case <-ctx.Done():
				return flowState{}, ctx.Err()
			}
			return flowState{Steps: []string{"wait:" + s.Topic}}, nil
		})
		g.AddEdge(graph.START, "first").AddEdge("first", "wait").AddEdge("wait", graph.END)
		return graph.Erase(g.Compile(graph.CompileOptions{Name: "slow", Saver: deps.Saver}))
	}
}

func buildExample(deps Deps) (graph.Runnable, error) {
	return graph.Erase(react.New(offline.New(nil), graph.CompileOptions{Saver: deps.Saver, Store: deps.Store}))
}

// bundle is what setup returns besides the server.
type bundle struct {
	t     testing.TB
	srv   *Server
	http  *httptest.Server
	gates *gates
	token string // sent as Authorization: Bearer when set
}

type setupOpts struct {
	cfg Config
	// extra graphs registered besides flow, slow and example.
	extra []GraphSpec
}

// setup starts a server on a fresh SQLite data directory (or on cfg.DatabaseURL) with the test
// graphs "flow", "slow" and "example", in dev mode unless cfg.Auth is set.
func setup(t testing.TB, opts ...setupOpts) *bundle {
	t.Helper()
	var o setupOpts
	if len(opts) > 0 {
		o = opts[0]
	}
	gt := &gates{started: make(chan string, 16), release: make(chan struct{})}
	cfg := o.cfg
	cfg.Graphs = []GraphSpec{
		{ID: "flow", Description: "plan, approve, act", Build: buildFlow},
		{ID: "slow", Build: buildSlow(gt)},
		{ID: "example", Build: buildExample},
	}
	cfg.Graphs = append(cfg.Graphs, o.extra...)
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	if len(cfg.Auth.APIKeys) == 0 && len(cfg.Auth.JWTSecret) == 0 {
		cfg.Dev = true
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.ShutdownGrace == 0 {
		cfg.ShutdownGrace = 5 * time.Second
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	b := &bundle{t: t, srv: s, gates: gt}
	b.http = httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		close(gt.release)
		b.http.CloseClientConnections()
		b.http.Close()
		s.Close()
	})
	return b
}

// do sends a request with a JSON body (a string is sent as is) and decodes the answer into out.
func (b *bundle) do(method, path string, body any, out any) int {
	b.t.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(v)
	case []byte:
		rd = bytes.NewReader(v)
	default:
		data, err := json.Marshal(v)
		if err != nil {
			b.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, b.http.URL+path, rd)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if b.token != "" {
		req.Header.Set("Authorization", "Bearer "+b.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			b.t.Fatalf("%s %s: answer %d is not JSON for %T: %v\n%s", method, path, resp.StatusCode, out, err, data)
		}
	}
	return resp.StatusCode
}

// mustDo is do that fails the test on an unexpected status.
func (b *bundle) mustDo(method, path string, body any, out any, want int) {
	b.t.Helper()
	var raw json.RawMessage
	code := b.do(method, path, body, &raw)
	if code != want {
		b.t.Fatalf("%s %s: status %d, want %d: %s", method, path, code, want, raw)
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			b.t.Fatalf("%s %s: %v", method, path, err)
		}
	}
}

type sseEvent struct {
	ID    string
	Event string
	Data  json.RawMessage
}

// stream sends a request and reads its SSE answer to the end (or until stop returns true).
func (b *bundle) stream(method, path string, body any, header http.Header, stop func(sseEvent) bool) (*http.Response, []sseEvent) {
	b.t.Helper()
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, b.http.URL+path, rd)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	if b.token != "" {
		req.Header.Set("Authorization", "Bearer "+b.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		data, _ := io.ReadAll(resp.Body)
		b.t.Logf("%s %s: status %d: %s", method, path, resp.StatusCode, data)
		return resp, nil
	}
	evs := readSSE(resp.Body, stop)
	return resp, evs
}

func readSSE(r io.Reader, stop func(sseEvent) bool) []sseEvent {
	var evs []sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var cur sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Event != "" {
				evs = append(evs, cur)
				if stop != nil && stop(cur) {
					return evs
				}
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id: "):
			cur.ID = line[4:]
		case strings.HasPrefix(line, "event: "):
			cur.Event = line[7:]
		case strings.HasPrefix(line, "data: "):
			cur.Data = json.RawMessage(line[6:])
		}
	}
	return evs
}

func names(evs []sseEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Event
	}
	return out
}

func (b *bundle) newThread(md map[string]any) string {
	b.t.Helper()
	var th Thread
	b.mustDo("POST", "/threads", map[string]any{"metadata": md}, &th, 200)
	return th.ThreadID
}

// waitStatus polls a run until it has the status (for tests of background runs).
func (b *bundle) waitStatus(tid, rid, status string) {
	b.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var run Run
		code := b.do("GET", "/threads/"+tid+"/runs/"+rid, nil, &run)
		if code == 200 && run.Status == status {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.t.Fatalf("run %s never reached status %s", rid, status)
}
