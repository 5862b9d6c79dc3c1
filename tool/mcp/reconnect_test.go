package mcp_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/tool"
	"github.com/trellis-go/trellis/tool/mcp"
)

// metaRecorder is a server whose CallInfo comes from the client's _meta, remembering the last
// _meta it received.
type metaRecorder struct {
	mu   sync.Mutex
	last sdk.Meta
}

func (m *metaRecorder) server(t *testing.T) *sdk.Server {
	t.Helper()
	srv, err := mcp.NewServer(newExecutor(nil), &mcp.ServerOptions{
		CallInfo: func(ctx context.Context, req *sdk.CallToolRequest) (tool.CallInfo, error) {
			m.mu.Lock()
			m.last = req.Params.Meta
			m.mu.Unlock()
			return mcp.CallInfoFromMeta(ctx, req)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func (m *metaRecorder) get() sdk.Meta {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last
}

// inMemory connects a client to srv over in-memory transports; each redial makes a new pair and
// counts it.
func inMemory(t *testing.T, srv *sdk.Server, opts *mcp.Options, redials *atomic.Int32, failRedial *atomic.Bool) (*mcp.Client, func()) {
	t.Helper()
	var (
		mu       sync.Mutex
		sessions []*sdk.ServerSession
	)
	dial := func() (sdk.Transport, error) {
		ct, st := sdk.NewInMemoryTransports()
		ss, err := srv.Connect(context.Background(), st, nil)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		sessions = append(sessions, ss)
		mu.Unlock()
		return ct, nil
	}
	first, err := dial()
	if err != nil {
		t.Fatal(err)
	}
	tr := mcp.SDKTransport{Transport: first, Name: "in-memory", Redial: func() (sdk.Transport, error) {
		redials.Add(1)
		if failRedial != nil && failRedial.Load() {
			return nil, errors.New("server is restarting")
		}
		return dial()
	}}
	c, err := mcp.Connect(context.Background(), tr, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	// drop ends the server side of every session, as a server that restarts would.
	drop := func() {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range sessions {
			_ = s.Close()
		}
		sessions = nil
	}
	return c, drop
}

func TestCallInfoTravelsInMeta(t *testing.T) {
	rec := &metaRecorder{}
	var redials atomic.Int32
	c, _ := inMemory(t, rec.server(t), nil, &redials, nil)
	whoami := toolMap(t, c)["whoami"]
	ctx := tool.WithCallInfo(context.Background(), tool.CallInfo{User: "ana", Tenant: "t1", ThreadID: "th-1", RunID: "run-1", CallID: "call-9", Permissions: []string{"admin"}})
	res, err := whoami.Call(ctx, []byte(`{}`))
	if err != nil || res.Content != "user=ana tenant=t1" {
		t.Fatalf("whoami = %+v, %v", res, err)
	}
	meta := trellisMeta(rec.get())
	want := map[string]string{mcp.MetaUser: "ana", mcp.MetaTenant: "t1", mcp.MetaThreadID: "th-1", mcp.MetaRunID: "run-1", mcp.MetaCallID: "call-9"}
	for k, v := range want {
		if meta[k] != v {
			t.Errorf("_meta[%q] = %v, want %q (all: %v)", k, meta[k], v, meta)
		}
	}
	if len(meta) != len(want) {
		t.Errorf("_meta has extra keys (permissions must not travel): %v", meta)
	}

	// Through an executor, the call ID is the model's.
	exec, err := tool.NewExecutor([]tool.Tool{whoami}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.Run(tool.WithCallInfo(context.Background(), tool.CallInfo{User: "bo"}), []message.ToolCall{{ID: "model-call-1", Name: "whoami", Arguments: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	if meta := trellisMeta(rec.get()); meta[mcp.MetaCallID] != "model-call-1" || meta[mcp.MetaUser] != "bo" || meta[mcp.MetaTenant] != nil {
		t.Errorf("_meta through the executor = %v", meta)
	}

	off, _ := inMemory(t, rec.server(t), &mcp.Options{NoCallInfo: true}, &redials, nil)
	res, err = toolMap(t, off)["whoami"].Call(ctx, []byte(`{}`))
	if err != nil || res.Content != "user= tenant=" || len(trellisMeta(rec.get())) != 0 {
		t.Errorf("with NoCallInfo: %+v, %v, _meta %v", res, err, rec.get())
	}
}

// trellisMeta keeps the keys trellis sends (the SDK adds its own).
func trellisMeta(m sdk.Meta) sdk.Meta {
	out := sdk.Meta{}
	for k, v := range m {
		if strings.HasPrefix(k, "trellis/") {
			out[k] = v
		}
	}
	return out
}

// callAfterDrop calls a tool right after its server dropped the session. The client may or may not
// have noticed the end yet: if it has, the call reconnects first; if not, the call fails saying the
// next one reconnects. Either way the call after it goes through.
func callAfterDrop(t *testing.T, tl tool.Tool, args string) *tool.Result {
	t.Helper()
	res, err := callTool(t, tl, args)
	if err != nil {
		if !strings.Contains(err.Error(), "the next call reconnects") {
			t.Fatalf("first call after the drop: %v", err)
		}
		res, err = callTool(t, tl, args)
	}
	if err != nil || res.IsError {
		t.Fatalf("call after the drop = %+v, %v", res, err)
	}
	return res
}

func TestReconnectsInProcess(t *testing.T) {
	rec := &metaRecorder{}
	var redials atomic.Int32
	var failing atomic.Bool
	c, drop := inMemory(t, rec.server(t), &mcp.Options{MaxReconnects: 2, ReconnectBackoff: 20 * time.Millisecond}, &redials, &failing)
	forecast := toolMap(t, c)["forecast"]
	if _, err := callTool(t, forecast, `{"city":"Oslo"}`); err != nil {
		t.Fatal(err)
	}
	first := c.Session()

	drop()
	if res := callAfterDrop(t, forecast, `{"city":"Porto"}`); !strings.Contains(string(res.Structured), "Porto") {
		t.Fatalf("call after the session ended = %+v", res)
	}
	if n := redials.Load(); n != 1 || c.Session() == first {
		t.Errorf("redials = %d (want 1), new session: %v", n, c.Session() != first)
	}

	// A server that stays away: a clear error after MaxReconnects attempts, then recovery.
	failing.Store(true)
	second := c.Session()
	drop()
	_ = second.Wait()
	time.Sleep(20 * time.Millisecond) // let the client's watcher see the end
	start := time.Now()
	_, err := callTool(t, forecast, `{"city":"Faro"}`)
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Errorf("two attempts took %v; the 20ms backoff was not waited", d)
	}
	if !errors.Is(err, mcp.ErrUnavailable) || !strings.Contains(err.Error(), "2 connection attempts failed") || !strings.Contains(err.Error(), "server is restarting") {
		t.Fatalf("err = %v", err)
	}
	if n := redials.Load(); n != 3 {
		t.Errorf("redials = %d, want 3", n)
	}
	failing.Store(false)
	if res, err := callTool(t, forecast, `{"city":"Faro"}`); err != nil || res.IsError {
		t.Fatalf("call after the server came back = %+v, %v", res, err)
	}

	// Without Redial an in-memory client cannot reconnect, and says so.
	ct, st := sdk.NewInMemoryTransports()
	ss, err := rec.server(t).Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	once, err := mcp.Connect(context.Background(), mcp.SDKTransport{Transport: ct}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer once.Close()
	tl := toolMap(t, once)["forecast"]
	_ = ss.Close()
	_ = once.Session().Wait()
	_, err = callTool(t, tl, `{"city":"Oslo"}`)
	if err != nil && strings.Contains(err.Error(), "the connection was lost") {
		// Sent before the client saw the session end.
		_, err = callTool(t, tl, `{"city":"Oslo"}`)
	}
	if !errors.Is(err, mcp.ErrUnavailable) || !strings.Contains(err.Error(), "does not reconnect") {
		t.Errorf("err = %v", err)
	}
	_ = once.Close()
	if _, err := callTool(t, tl, `{"city":"Oslo"}`); err == nil || !strings.Contains(err.Error(), "client is closed") {
		t.Errorf("after Close: %v", err)
	}
}

// loopback is an MCP server on a fixed loopback address that can be restarted (forgetting its
// sessions) and stopped.
type loopback struct {
	t    *testing.T
	addr string
	srv  *sdk.Server
	hs   *http.Server
}

func newLoopback(t *testing.T, srv *sdk.Server) *loopback {
	l := &loopback{t: t, srv: srv, addr: "127.0.0.1:0"}
	l.start()
	t.Cleanup(l.stop)
	return l
}

func (l *loopback) start() {
	ln, err := net.Listen("tcp", l.addr)
	if err != nil {
		l.t.Fatal(err)
	}
	l.addr = ln.Addr().String()
	l.hs = &http.Server{Handler: mcp.NewHTTPHandler(l.srv)}
	go func() { _ = l.hs.Serve(ln) }()
}

func (l *loopback) stop() {
	if l.hs != nil {
		_ = l.hs.Close()
		l.hs = nil
	}
}

func TestReconnectsOverHTTP(t *testing.T) {
	rec := &metaRecorder{}
	l := newLoopback(t, rec.server(t))
	c, err := mcp.Connect(context.Background(), mcp.HTTP{URL: "http://" + l.addr}, &mcp.Options{MaxReconnects: 3, ReconnectBackoff: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	forecast := toolMap(t, c)["forecast"]
	if _, err := callTool(t, forecast, `{"city":"Oslo"}`); err != nil {
		t.Fatal(err)
	}

	// A restart forgets the session: the next call reconnects and goes through.
	l.stop()
	l.start()
	if res := callAfterDrop(t, forecast, `{"city":"Braga"}`); !strings.Contains(string(res.Structured), "Braga") {
		t.Fatalf("call after a restart = %+v", res)
	}

	// A server that is down: a clear error once the attempts are spent.
	l.stop()
	_, err = callTool(t, forecast, `{"city":"Evora"}`)
	if err != nil && strings.Contains(err.Error(), "the next call reconnects") {
		// The call went out on a kept-alive connection the stop cut; the next one reconnects.
		_, err = callTool(t, forecast, `{"city":"Evora"}`)
	}
	if !errors.Is(err, mcp.ErrUnavailable) || !strings.Contains(err.Error(), "3 connection attempts failed") {
		t.Fatalf("err = %v", err)
	}

	// Back up on the same address: the next call reconnects.
	l.start()
	if res, err := callTool(t, forecast, `{"city":"Evora"}`); err != nil || res.IsError {
		t.Fatalf("call after the server came back = %+v, %v", res, err)
	}
}

// A stdio server that dies is started again by the next call.
func TestReconnectsOverStdio(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c, err := mcp.Connect(context.Background(), mcp.Command{Path: exe, Env: append(os.Environ(), serveEnv+"=1")}, &mcp.Options{ReconnectBackoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	tools := toolMap(t, c)
	first := c.Session()
	if _, err := callTool(t, tools["crash"], `{}`); err == nil || !strings.Contains(err.Error(), "the next call reconnects") {
		t.Fatalf("call that kills the server: %v", err)
	}
	res, err := callTool(t, tools["forecast"], `{"city":"Tromsø"}`)
	if err != nil || res.IsError || !strings.Contains(string(res.Structured), "Tromsø") {
		t.Fatalf("call after the server died = %+v, %v", res, err)
	}
	if c.Session() == first {
		t.Error("the session was not replaced")
	}
}
