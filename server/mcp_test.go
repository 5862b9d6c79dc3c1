package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/trellis-go/trellis/graph"
)

// buildSteps is a graph of three nodes, a -> b -> c, each appending its name; c fails on the
// topic "explode".
func buildSteps(deps Deps) (graph.Runnable, error) {
	g := graph.New[flowState]()
	for _, n := range []string{"a", "b", "c"} {
		g.AddNode(n, func(ctx context.Context, s flowState) (flowState, error) {
			if n == "c" && s.Topic == "explode" {
				return flowState{}, errors.New("node c refuses to explode")
			}
			return flowState{Steps: []string{n}}, nil
		})
	}
	g.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", "c").AddEdge("c", graph.END)
	return graph.Erase(g.Compile(graph.CompileOptions{Name: "steps", Saver: deps.Saver}))
}

// headerTransport adds a header to every request (the MCP client's credentials).
type headerTransport struct {
	key, value string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if h.key != "" {
		r.Header.Set(h.key, h.value)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// progressLog collects a client's progress notifications.
type progressLog struct {
	mu   sync.Mutex
	msgs []string
	ch   chan struct{}
}

func (p *progressLog) handle(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	p.mu.Lock()
	p.msgs = append(p.msgs, req.Params.Message)
	p.mu.Unlock()
	p.ch <- struct{}{}
}

// wait waits for n notifications in all.
func (p *progressLog) wait(t *testing.T, n int) []string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		p.mu.Lock()
		got := slices.Clone(p.msgs)
		p.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-p.ch:
		case <-timeout:
			t.Fatalf("got %d progress notifications, want %d: %v", len(got), n, got)
		}
	}
}

// mcpConnect opens an MCP session on the server's /mcp with the Go SDK's client, sending
// header (a credential) with every request.
func mcpConnect(t *testing.T, b *bundle, headerKey, headerValue string, progress *progressLog) (*sdk.ClientSession, error) {
	t.Helper()
	opts := &sdk.ClientOptions{}
	if progress != nil {
		opts.ProgressNotificationHandler = progress.handle
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "trellis-test", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sess, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: b.http.URL + "/mcp", MaxRetries: -1, DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: headerTransport{headerKey, headerValue}}}, nil)
	if err == nil {
		t.Cleanup(func() { _ = sess.Close() })
	}
	return sess, err
}

func toolNamed(t *testing.T, tools []*sdk.Tool, name string) *sdk.Tool {
	t.Helper()
	for _, tl := range tools {
		if tl.Name == name {
			return tl
		}
	}
	names := make([]string, len(tools))
	for i, tl := range tools {
		names[i] = tl.Name
	}
	t.Fatalf("no tool %q among %v", name, names)
	return nil
}

func stepsOf(t *testing.T, res *sdk.CallToolResult) []string {
	t.Helper()
	if res.IsError {
		t.Fatalf("the call failed: %v", res.Content)
	}
	var out flowState
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("structured content %s: %v", raw, err)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	if !json.Valid([]byte(text)) || !strings.Contains(text, `"steps"`) {
		t.Fatalf("the text content is not the state as JSON: %s", text)
	}
	return out.Steps
}

// TestMCPAssistantsAsTools lists the assistants as tools with the Go SDK's client and calls
// them: stateless, on a thread (whose state the API then shows), with progress notifications,
// a failing run, and an interrupt.
func TestMCPAssistantsAsTools(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{extra: []GraphSpec{{ID: "steps", Description: "three steps in a row", Build: buildSteps}}})
	progress := &progressLog{ch: make(chan struct{}, 64)}
	sess, err := mcpConnect(t, b, "", "", progress)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := sess.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	steps := toolNamed(t, list.Tools, "steps")
	if steps.Description != "three steps in a row" {
		t.Errorf("description %q, want the graph's", steps.Description)
	}
	schema, _ := json.Marshal(steps.InputSchema)
	for _, want := range []string{`"topic"`, `"thread_id"`, `"type":"object"`} {
		if !strings.Contains(string(schema), want) {
			t.Errorf("input schema %s lacks %s", schema, want)
		}
	}
	if fl := toolNamed(t, list.Tools, "flow"); fl.Description != "plan, approve, act" {
		t.Errorf("flow's description %q", fl.Description)
	}

	// Stateless, with a progress token: one notification per node.
	res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "steps", Arguments: map[string]any{"topic": "x"}, Meta: sdk.Meta{"progressToken": "p1"}})
	if err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	if got := stepsOf(t, res); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("stateless steps %v", got)
	}
	if _, ok := res.Meta["thread_id"]; ok {
		t.Errorf("a stateless call reports a thread: %v", res.Meta)
	}
	if got := progress.wait(t, 3); !slices.Equal(got, []string{"finished a", "finished b", "finished c"}) {
		t.Errorf("progress messages %v", got)
	}

	// On a thread: the second call continues the first's state.
	tid := NewThreadID()
	for i, want := range [][]string{{"a", "b", "c"}, {"a", "b", "c", "a", "b", "c"}} {
		res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "steps", Arguments: map[string]any{"topic": "y", "thread_id": tid}})
		if err != nil {
			t.Fatalf("call %d on a thread: %v", i, err)
		}
		if got := stepsOf(t, res); !slices.Equal(got, want) {
			t.Fatalf("call %d on the thread: steps %v, want %v", i, got, want)
		}
		if res.Meta["thread_id"] != tid {
			t.Errorf("call %d: meta %v, want thread_id %s", i, res.Meta, tid)
		}
	}
	var state struct {
		Values flowState `json:"values"`
	}
	b.mustDo("GET", "/threads/"+tid+"/state", nil, &state, 200)
	if len(state.Values.Steps) != 6 {
		t.Errorf("the API shows the thread's steps %v", state.Values.Steps)
	}

	// A failing run is a tool error naming the node's error.
	res, err = sess.CallTool(ctx, &sdk.CallToolParams{Name: "steps", Arguments: map[string]any{"topic": "explode"}})
	if err != nil {
		t.Fatalf("failing call: %v", err)
	}
	if !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "node c refuses to explode") {
		t.Errorf("a failed run answers %+v", res.Content[0])
	}

	// Bad arguments are a tool error saying what is wrong.
	res, err = sess.CallTool(ctx, &sdk.CallToolParams{Name: "steps", Arguments: map[string]any{"thread_id": 7}})
	if err != nil {
		t.Fatalf("call with a bad thread_id: %v", err)
	}
	if !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "thread_id") {
		t.Errorf("a numeric thread_id answers %+v", res.Content[0])
	}

	// A graph that interrupts answers with the interrupt.
	res, err = sess.CallTool(ctx, &sdk.CallToolParams{Name: "flow", Arguments: map[string]any{"topic": "z"}})
	if err != nil {
		t.Fatalf("flow: %v", err)
	}
	if text := res.Content[0].(*sdk.TextContent).Text; res.IsError || !strings.Contains(text, "__interrupt__") || !strings.Contains(text, "approve z?") {
		t.Errorf("an interrupted run answers %s", text)
	}
}

// TestMCPAuthAndTenants: /mcp authenticates as the API does, and each tenant sees its own
// assistants as tools and cannot run on another tenant's thread.
func TestMCPAuthAndTenants(t *testing.T) {
	t.Parallel()
	keyA, keyB := "mcp-key-tenant-a-0123456789", "mcp-key-tenant-b-0123456789"
	b := setup(t, setupOpts{
		cfg: Config{Auth: AuthConfig{APIKeys: map[string]Principal{
			keyA: {User: "ann", Tenant: "a"},
			keyB: {User: "bob", Tenant: "b"},
		}}},
		extra: []GraphSpec{{ID: "steps", Build: buildSteps}},
	})
	if _, err := mcpConnect(t, b, "", "", nil); err == nil {
		t.Fatal("a client without credentials connected")
	}
	if _, err := mcpConnect(t, b, "X-Api-Key", "not-a-key-of-this-server", nil); err == nil {
		t.Fatal("a client with a wrong key connected")
	}
	b.token = keyA
	b.mustDo("POST", "/assistants", map[string]any{"graph_id": "steps", "name": "ann's steps", "description": "tenant a's own"}, nil, 200)
	b.token = ""

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sessA, err := mcpConnect(t, b, "X-Api-Key", keyA, nil)
	if err != nil {
		t.Fatalf("tenant a: %v", err)
	}
	sessB, err := mcpConnect(t, b, "Authorization", "Bearer "+keyB, nil)
	if err != nil {
		t.Fatalf("tenant b: %v", err)
	}
	la, err := sessA.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	own := toolNamed(t, la.Tools, "ann_s_steps")
	if own.Description != "tenant a's own" || own.Title != "ann's steps" {
		t.Errorf("tenant a's assistant as a tool: %+v", own)
	}
	lb, err := sessB.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range lb.Tools {
		if tl.Name == "ann_s_steps" {
			t.Fatal("tenant b sees tenant a's assistant")
		}
	}
	res, err := sessB.CallTool(ctx, &sdk.CallToolParams{Name: "ann_s_steps", Arguments: map[string]any{}})
	if err == nil && !res.IsError {
		t.Fatal("tenant b ran tenant a's assistant")
	}

	tid := NewThreadID()
	res, err = sessA.CallTool(ctx, &sdk.CallToolParams{Name: "ann_s_steps", Arguments: map[string]any{"topic": "mine", "thread_id": tid}})
	if err != nil {
		t.Fatal(err)
	}
	if got := stepsOf(t, res); len(got) != 3 {
		t.Fatalf("tenant a's steps %v", got)
	}
	res, err = sessB.CallTool(ctx, &sdk.CallToolParams{Name: "steps", Arguments: map[string]any{"thread_id": tid}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "not found") {
		t.Fatalf("tenant b on tenant a's thread: %+v", res.Content[0])
	}
	var th Thread
	b.token = keyA
	b.mustDo("GET", "/threads/"+tid, nil, &th, 200)
	if th.Metadata["assistant_id"] == nil {
		t.Errorf("the thread does not record its assistant: %v", th.Metadata)
	}
}

// TestMCPTypeScriptClient drives /mcp with the official MCP TypeScript SDK's client
// (@modelcontextprotocol/sdk, pinned with its lock in testdata/mcpjs). It needs node and the
// installed packages: npm ci --prefix server/testdata/mcpjs
func TestMCPTypeScriptClient(t *testing.T) {
	t.Parallel()
	dir, _ := filepath.Abs(filepath.Join("testdata", "mcpjs"))
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; the MCP TypeScript client test needs Node.js 20 or later")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Skipf("the MCP TypeScript SDK is not installed; run: npm ci --prefix %s", filepath.Join("server", "testdata", "mcpjs"))
	}
	key := "mcp-js-key-0123456789abcdef"
	b := setup(t, setupOpts{cfg: Config{Auth: AuthConfig{APIKeys: map[string]Principal{key: {User: "js", Tenant: "t"}}}},
		extra: []GraphSpec{{ID: "steps", Description: "three steps in a row", Build: buildSteps}}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "client.mjs"), b.http.URL, key)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	t.Logf("node output:\n%s", out)
	if err != nil {
		t.Fatalf("the MCP client script failed: %v", err)
	}
	_, tid, ok := strings.Cut(strings.TrimSpace(string(out)), "mcp e2e: ok ")
	if !ok {
		t.Fatal("the MCP client script did not finish")
	}
	// The thread the script ran on is the tenant's, with both calls' steps.
	var state struct {
		Values flowState `json:"values"`
	}
	b.token = key
	b.mustDo("GET", "/threads/"+tid+"/state", nil, &state, 200)
	if len(state.Values.Steps) != 6 {
		t.Errorf("the script's thread has steps %v", state.Values.Steps)
	}
}

// TestMCPCancelledCallCancelsItsRun: a tools/call whose client gives up cancels the run.
func TestMCPCancelledCallCancelsItsRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sess, err := mcpConnect(t, b, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	tid := NewThreadID()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{"topic": "held", "thread_id": tid}})
		done <- err
	}()
	select {
	case <-b.gates.started: // the run is inside its node
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not start")
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the cancelled call returned no error")
	}
	var runs []Run
	b.mustDo("GET", "/threads/"+tid+"/runs", nil, &runs, 200)
	if len(runs) != 1 {
		t.Fatalf("%d runs on the thread", len(runs))
	}
	b.waitStatus(tid, runs[0].RunID, "interrupted")
}
