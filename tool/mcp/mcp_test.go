package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/tool"
	"github.com/trellis-go/trellis/tool/mcp"
	"github.com/trellis-go/trellis/tool/tooltest"
)

// When this variable is set, the test binary is an MCP server on stdio (see TestStdioServer).
const serveEnv = "TRELLIS_MCP_TEST_SERVE_STDIO"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		exec := newExecutor(nil)
		// "crash" ends the server process in the middle of a call, as a server that dies would.
		crash := tool.Must(tool.New("crash", "Exits the server.", func(ctx context.Context, _ none) (string, error) {
			os.Exit(3)
			return "", nil
		}))
		exec, err := tool.NewExecutor(append(exec.Tools(), crash), nil)
		if err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(1)
		}
		srv, err := mcp.NewServer(exec, &mcp.ServerOptions{Name: "trellis-test"})
		if err == nil {
			err = mcp.ServeStdio(context.Background(), srv)
		}
		if err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type forecastArgs struct {
	City  string `json:"city" jsonschema:"the city"`
	Units string `json:"units,omitempty" enum:"metric,imperial" default:"metric"`
}

type forecast struct {
	City    string  `json:"city"`
	Celsius float64 `json:"celsius"`
	Units   string  `json:"units"`
}

type none struct{}

// newExecutor returns the tools the test server offers. release, when not nil, is what "hang"
// waits for.
func newExecutor(release chan struct{}) *tool.Executor {
	tools := []tool.Tool{
		tool.Must(tool.New("forecast", "Weather forecast for a city.", func(ctx context.Context, a forecastArgs) (forecast, error) {
			return forecast{City: a.City, Celsius: 21.5, Units: a.Units}, nil
		})),
		tool.Must(tool.New("whoami", "Says who is calling.", func(ctx context.Context, _ none) (string, error) {
			info, _ := tool.CallInfoFrom(ctx)
			return "user=" + info.User + " tenant=" + info.Tenant, nil
		})),
		tool.Must(tool.New("fail", "Always fails.", func(ctx context.Context, _ none) (string, error) {
			return "", errors.New("database is down")
		})),
		tool.Must(tool.New("picture", "Returns an image.", func(ctx context.Context, _ none) (*tool.Result, error) {
			return &tool.Result{Content: "a red dot", Parts: []message.Part{{Type: message.PartImage, ImageURL: "data:image/png;base64,iVBORw0KGgo="}}}, nil
		})),
		tool.WithPolicy(tool.Must(tool.New("admin_reset", "Resets everything.", func(ctx context.Context, _ none) (string, error) {
			return "reset", nil
		})), tool.Policy{Permissions: []string{"admin"}}),
		tool.WithPolicy(tool.Must(tool.New("hang", "Never answers in time.", func(ctx context.Context, _ none) (string, error) {
			if release == nil {
				<-ctx.Done()
				return "", ctx.Err()
			}
			<-release
			return "late", nil
		})), tool.Policy{Timeout: 100 * time.Millisecond}),
	}
	exec, err := tool.NewExecutor(tools, nil)
	if err != nil {
		panic(err)
	}
	return exec
}

// setupInProcess serves the test tools on an in-memory transport and connects a client to them.
func setupInProcess(t *testing.T, opts *mcp.Options) *mcp.Client {
	t.Helper()
	ctx := context.Background()
	srv, err := mcp.NewServer(newExecutor(nil), &mcp.ServerOptions{
		CallInfo: func(ctx context.Context, req *sdk.CallToolRequest) (tool.CallInfo, error) {
			return tool.CallInfo{User: "in-process", Tenant: "acme", Permissions: []string{"read"}}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	c, err := mcp.Connect(ctx, mcp.SDKTransport{Transport: ct, Name: "in-process"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func toolMap(t *testing.T, c *mcp.Client) map[string]tool.Tool {
	t.Helper()
	tools, err := c.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]tool.Tool{}
	for _, tl := range tools {
		m[tl.Spec().Name] = tl
	}
	return m
}

func callTool(t *testing.T, tl tool.Tool, args string) (*tool.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return tl.Call(ctx, json.RawMessage(args))
}

// checkServedTools runs the same checks over any transport that reaches the test server.
func checkServedTools(t *testing.T, c *mcp.Client, wantUser string) {
	t.Helper()
	tools := toolMap(t, c)
	for _, n := range []string{"forecast", "whoami", "fail", "picture", "admin_reset", "hang"} {
		if tools[n] == nil {
			t.Fatalf("tool %q not listed; got %v", n, tools)
		}
	}
	spec := tools["forecast"].Spec()
	if spec.Description != "Weather forecast for a city." || !strings.Contains(string(spec.Parameters), `"enum":["metric","imperial"]`) {
		t.Errorf("forecast spec = %+v / %s", spec, spec.Parameters)
	}
	if p := tool.PolicyOf(tools["forecast"]); !p.External {
		t.Errorf("MCP tools are external by default; policy = %+v", p)
	}

	res, err := callTool(t, tools["forecast"], `{"city":"Lisbon"}`)
	if err != nil || res.IsError {
		t.Fatalf("forecast: %+v, %v", res, err)
	}
	var f forecast
	if err := json.Unmarshal(res.Structured, &f); err != nil || f.City != "Lisbon" || f.Units != "metric" || f.Celsius != 21.5 {
		t.Errorf("forecast structured = %s (%v)", res.Structured, err)
	}

	// Bad arguments are caught before they leave, with the same precise message as a local tool.
	_, err = callTool(t, tools["forecast"], `{"city":3,"units":"kelvin"}`)
	if !errors.Is(err, tool.ErrInvalidArguments) || !strings.Contains(err.Error(), "city: expected a string, got integer 3") ||
		!strings.Contains(err.Error(), `units: must be one of "metric", "imperial"`) {
		t.Errorf("bad arguments: %v", err)
	}

	if res, err := callTool(t, tools["whoami"], `{}`); err != nil || res.Content != wantUser {
		t.Errorf("whoami = %+v, %v; want %q", res, err, wantUser)
	}
	if res, err := callTool(t, tools["fail"], `{}`); err != nil || !res.IsError || !strings.Contains(res.Content, "database is down") {
		t.Errorf("fail = %+v, %v; want an error result", res, err)
	}
	if res, err := callTool(t, tools["admin_reset"], `{}`); err != nil || !res.IsError || !strings.Contains(res.Content, "requires permission admin") {
		t.Errorf("admin_reset = %+v, %v; want permission denied", res, err)
	}
	if res, err := callTool(t, tools["hang"], `{}`); err != nil || !res.IsError || !strings.Contains(res.Content, "timed out") {
		t.Errorf("hang = %+v, %v; want a timeout result", res, err)
	}
	res, err = callTool(t, tools["picture"], `{}`)
	if err != nil || len(res.Parts) != 1 || res.Parts[0].ImageURL != "data:image/png;base64,iVBORw0KGgo=" || !strings.Contains(res.Content, "a red dot") {
		t.Errorf("picture = %+v, %v", res, err)
	}
}

func TestInProcess(t *testing.T) {
	c := setupInProcess(t, nil)
	checkServedTools(t, c, "user=in-process tenant=acme")
	tooltest.Run(t, toolMap(t, c)["forecast"], tooltest.Options{
		Valid:        json.RawMessage(`{"city":"Oslo"}`),
		Invalid:      []json.RawMessage{json.RawMessage(`{"city":1}`), json.RawMessage(`{"units":"metric"}`)},
		CancelWithin: 10 * time.Second,
	})
}

func TestServerSideValidationReachesTheModel(t *testing.T) {
	c := setupInProcess(t, &mcp.Options{NoValidate: true})
	res, err := callTool(t, toolMap(t, c)["forecast"], `{"city":3}`)
	if err != nil || !res.IsError || !strings.Contains(res.Content, "city: expected a string, got integer 3") {
		t.Errorf("server-side validation: %+v, %v", res, err)
	}
}

func TestOptions(t *testing.T) {
	c := setupInProcess(t, &mcp.Options{Prefix: "wx.v2", Include: []string{"forecast", "whoami"}, Trusted: true})
	tools := toolMap(t, c)
	if len(tools) != 2 || tools["wx_v2_forecast"] == nil || tools["wx_v2_whoami"] == nil {
		t.Fatalf("tools = %v", tools)
	}
	if p := tool.PolicyOf(tools["wx_v2_forecast"]); p.External {
		t.Errorf("Trusted tools must not be external: %+v", p)
	}
	// The renamed tools still call the server by their own names, and run in an executor.
	exec, err := tool.NewExecutor([]tool.Tool{tools["wx_v2_forecast"], tools["wx_v2_whoami"]}, &tool.ExecutorOptions{
		Filters: []tool.Filter{tool.LabelExternal(tool.LabelOptions{All: true})},
	})
	if err != nil {
		t.Fatal(err)
	}
	outs, err := exec.Run(context.Background(), []message.ToolCall{
		{ID: "1", Name: "wx_v2_forecast", Arguments: json.RawMessage(`{"city":"Oslo"}`)},
		{ID: "2", Name: "wx_v2_whoami"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(outs[0].Message.Content, `"city":"Oslo"`) || !strings.Contains(outs[0].Message.Content, "<<<external-data") {
		t.Errorf("forecast through executor = %q", outs[0].Message.Content)
	}
	if !strings.Contains(outs[1].Message.Content, "user=in-process") {
		t.Errorf("whoami through executor = %q", outs[1].Message.Content)
	}
}

func TestStreamableHTTP(t *testing.T) {
	srv, err := mcp.NewServer(newExecutor(nil), &mcp.ServerOptions{
		CallInfo: func(ctx context.Context, req *sdk.CallToolRequest) (tool.CallInfo, error) {
			user := strings.TrimPrefix(req.Extra.Header.Get("Authorization"), "Bearer ")
			if user == "" {
				return tool.CallInfo{}, errors.New("no bearer token")
			}
			return tool.CallInfo{User: user, Tenant: req.Extra.Header.Get("X-Tenant")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(mcp.NewHTTPHandler(srv))
	t.Cleanup(hs.Close)

	c, err := mcp.Connect(context.Background(), mcp.HTTP{URL: hs.URL, Header: http.Header{"Authorization": {"Bearer bea"}, "X-Tenant": {"initech"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	checkServedTools(t, c, "user=bea tenant=initech")

	anon, err := mcp.Connect(context.Background(), mcp.HTTP{URL: hs.URL, NoStandaloneStream: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = anon.Close() })
	res, err := callTool(t, toolMap(t, anon)["whoami"], `{}`)
	if err != nil || !res.IsError || !strings.Contains(res.Content, "no bearer token") {
		t.Errorf("call without identity = %+v, %v", res, err)
	}
}

func TestStdioServer(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	c, err := mcp.Connect(context.Background(), mcp.Command{Path: exe, Env: append(os.Environ(), serveEnv+"=1"), Stderr: &stderr}, nil)
	if err != nil {
		t.Fatalf("%v\nserver stderr: %s", err, stderr.String())
	}
	t.Cleanup(func() { _ = c.Close() })
	checkServedTools(t, c, "user= tenant=")
}

func TestConnectErrors(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		tr   mcp.Transport
		want string
	}{
		{"nil", nil, "needs a Transport"},
		{"empty command", mcp.Command{}, "Command.Path is empty"},
		{"missing program", mcp.Command{Path: "no-such-mcp-server-xyz"}, `cannot start MCP server "no-such-mcp-server-xyz"`},
		{"empty URL", mcp.HTTP{}, "HTTP.URL is empty"},
		{"not http", mcp.HTTP{URL: "ftp://x"}, "not an http"},
		{"nil SDK transport", mcp.SDKTransport{}, "SDKTransport.Transport is nil"},
		{"program that is not a server", mcp.Command{Path: "true"}, "mcp: true: connect"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := mcp.Connect(ctx, tc.tr, nil)
			if err == nil {
				_ = c.Close()
				t.Fatal("Connect succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	// Nothing listens on this port, so the handshake fails.
	hs := httptest.NewServer(http.NotFoundHandler())
	url := hs.URL
	hs.Close()
	if _, err := mcp.Connect(ctx, mcp.HTTP{URL: url + "/mcp"}, nil); err == nil || !strings.Contains(err.Error(), "connect") {
		t.Errorf("unreachable HTTP server: %v", err)
	}
	if _, err := mcp.NewServer(nil, nil); err == nil {
		t.Error("NewServer(nil) succeeded")
	}
}
