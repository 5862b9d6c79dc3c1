package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/tool"
	"github.com/trellis-go/trellis/tool/mcp"
)

// The reference MCP server, @modelcontextprotocol/server-everything, pinned in
// testdata/everything/package.json and installed by `npm ci --prefix tool/mcp/testdata/everything`.
const everythingDir = "testdata/everything"

// everythingEntry returns the node program and the server's entry script, or skips the test.
func everythingEntry(t *testing.T) (node, script string) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join(everythingDir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Skipf("server-everything is not installed (%v); install it with: npm ci --prefix tool/mcp/testdata/everything", err)
	}
	node, err = exec.LookPath("node")
	if err != nil {
		t.Skipf("node is not in PATH (%v); server-everything needs Node.js 18 or later", err)
	}
	return node, script
}

const fakeKey = "sk-test-everything-0123456789abcdef"

// checkEverything exercises the reference server's tools through trellis.
func checkEverything(t *testing.T, c *mcp.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	list, err := c.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]tool.Tool{}
	for _, tl := range list {
		tools[tl.Spec().Name] = tl
	}
	for _, n := range []string{"echo", "get-sum", "get-structured-content", "get-tiny-image", "get-env", "trigger-long-running-operation"} {
		if tools[n] == nil {
			t.Fatalf("server-everything has no tool %q; listed %d tools", n, len(tools))
		}
	}
	// The zod-made schemas work as trellis parameters.
	if err := tool.CheckSpec(tools["get-sum"].Spec()); err != nil {
		t.Errorf("get-sum spec: %v", err)
	}

	if res, err := tools["echo"].Call(ctx, json.RawMessage(`{"message":"hello"}`)); err != nil || res.Content != "Echo: hello" {
		t.Errorf("echo = %+v, %v", res, err)
	}
	if res, err := tools["get-sum"].Call(ctx, json.RawMessage(`{"a":2,"b":3}`)); err != nil || !strings.Contains(res.Content, "is 5") {
		t.Errorf("get-sum = %+v, %v", res, err)
	}
	_, err = tools["get-sum"].Call(ctx, json.RawMessage(`{"a":"two","b":3}`))
	if !errors.Is(err, tool.ErrInvalidArguments) || !strings.Contains(err.Error(), "a: expected a number, got string") {
		t.Errorf("get-sum with a string: %v", err)
	}
	_, err = tools["get-structured-content"].Call(ctx, json.RawMessage(`{"location":"Paris"}`))
	if !errors.Is(err, tool.ErrInvalidArguments) || !strings.Contains(err.Error(), `"New York", "Chicago", "Los Angeles"`) {
		t.Errorf("get-structured-content outside its enum: %v", err)
	}
	res, err := tools["get-structured-content"].Call(ctx, json.RawMessage(`{"location":"Chicago"}`))
	if err != nil {
		t.Fatal(err)
	}
	var weather struct {
		Temperature float64 `json:"temperature"`
		Conditions  string  `json:"conditions"`
	}
	if err := json.Unmarshal(res.Structured, &weather); err != nil || weather.Conditions == "" {
		t.Errorf("structured content = %s (%v)", res.Structured, err)
	}
	res, err = tools["get-tiny-image"].Call(ctx, json.RawMessage(`{}`))
	if err != nil || len(res.Parts) != 1 || !strings.HasPrefix(res.Parts[0].ImageURL, "data:image/png;base64,") {
		t.Errorf("get-tiny-image = %+v, %v", res, err)
	}

	// Through an executor: a secret in the server's environment is redacted, the output is
	// labelled as external data, and a call that runs past its timeout is cut off.
	red, err := tool.NewRedactor(&tool.RedactOptions{Secrets: []string{fakeKey}})
	if err != nil {
		t.Fatal(err)
	}
	slow := tool.WithPolicy(tools["trigger-long-running-operation"], tool.Policy{Timeout: 300 * time.Millisecond, External: true})
	exec, err := tool.NewExecutor([]tool.Tool{tools["get-env"], slow, tools["echo"]}, &tool.ExecutorOptions{
		Filters: []tool.Filter{red, tool.LabelExternal(tool.LabelOptions{})},
	})
	if err != nil {
		t.Fatal(err)
	}
	outs, err := exec.Run(ctx, []message.ToolCall{
		{ID: "1", Name: "get-env"},
		{ID: "2", Name: "trigger-long-running-operation", Arguments: json.RawMessage(`{"duration":30,"steps":1}`)},
		{ID: "3", Name: "echo", Arguments: json.RawMessage(`{"message":"after the slow one"}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	env := outs[0].Message.Content
	if strings.Contains(env, fakeKey) || !strings.Contains(env, "TRELLIS_TEST_API_KEY") || !strings.Contains(env, "[REDACTED]") || !strings.Contains(env, "<<<external-data") {
		t.Errorf("get-env through the executor is not redacted and labelled: %.300s", env)
	}
	if !errors.Is(outs[1].Err, tool.ErrTimeout) || !outs[1].Message.IsError || strings.Contains(outs[1].Message.Content, "<<<external-data") {
		t.Errorf("long-running operation: %+v", outs[1])
	}
	if !strings.Contains(outs[2].Message.Content, "Echo: after the slow one") {
		t.Errorf("echo after timeout = %q", outs[2].Message.Content)
	}
}

func everythingEnv() []string {
	return append(os.Environ(), "TRELLIS_TEST_API_KEY="+fakeKey)
}

func TestEverythingStdio(t *testing.T) {
	node, script := everythingEntry(t)
	var stderr strings.Builder
	c, err := mcp.Connect(context.Background(), mcp.Command{Path: node, Args: []string{script, "stdio"}, Env: everythingEnv(), Stderr: &stderr, TerminateAfter: time.Second}, nil)
	if err != nil {
		t.Fatalf("%v\nserver stderr: %s", err, stderr.String())
	}
	t.Cleanup(func() { _ = c.Close() })
	checkEverything(t, c)
}

func TestEverythingStreamableHTTP(t *testing.T) {
	node, script := everythingEntry(t)
	port := freePort(t)
	cmd := exec.Command(node, script, "streamableHttp")
	cmd.Env = append(everythingEnv(), fmt.Sprintf("PORT=%d", port))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	waitListening(t, addr, &out)

	c, err := mcp.Connect(context.Background(), mcp.HTTP{URL: "http://" + addr + "/mcp"}, nil)
	if err != nil {
		t.Fatalf("%v\nserver output: %s", err, out.String())
	}
	t.Cleanup(func() { _ = c.Close() })
	checkEverything(t, c)
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitListening waits until something accepts connections on addr: node takes a moment to start.
func waitListening(t *testing.T, addr string, out fmt.Stringer) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			conn.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("server-everything did not listen on %s within 30s; output:\n%s", addr, out.String())
}
