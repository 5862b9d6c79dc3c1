package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/example"
	"github.com/trellis-go/trellis/server"
)

func TestParseAPIKeys(t *testing.T) {
	keys, err := parseAPIKeys("k1234567890abcdef=svc@acme:read|write, k2=ops@globex")
	if err != nil {
		t.Fatal(err)
	}
	if p := keys["k1234567890abcdef"]; p.User != "svc" || p.Tenant != "acme" || len(p.Permissions) != 2 {
		t.Fatalf("first key: %+v", p)
	}
	if _, err := parseAPIKeys("secret-without-user"); err == nil || strings.Contains(err.Error(), "secret-without-user") {
		t.Fatalf("bad entry: %v (must not echo the key)", err)
	}
}

func TestServeDevRefusesPublicAddress(t *testing.T) {
	var out, errb bytes.Buffer
	err := withExample.Run(context.Background(), []string{"serve", "--dev", "--apps", "example", "--addr", "0.0.0.0:0", "--data-dir", t.TempDir()}, nil, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "loopback") || ExitCode(err) != 2 {
		t.Fatalf("dev on 0.0.0.0: %v", err)
	}
}

func TestServeStartsAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- withExample.Run(ctx, []string{"serve", "--dev", "--apps", "example", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir()}, nil, &out, &errb)
	}()
	// Stop at once: Serve shuts down gracefully and returns.
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v\n%s", err, errb.String())
	}
}

func TestGraphAndRun(t *testing.T) {
	var out bytes.Buffer
	if err := withExample.Run(context.Background(), []string{"graph", "example"}, nil, &out, &out); err != nil || !strings.Contains(out.String(), "model -.-> tools") {
		t.Fatalf("graph: %v\n%s", err, out.String())
	}
	out.Reset()
	err := withExample.Run(context.Background(), []string{"run", "--modes", "values", "example", `{"messages": [{"role": "user", "content": "What time is it in Tokyo?"}]}`}, nil, &out, &out)
	if err != nil || !strings.Contains(out.String(), "Tokyo") {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if err := withExample.Run(context.Background(), []string{"run", "example", "[1]"}, nil, &out, &out); ExitCode(err) != 2 {
		t.Fatalf("bad input: %v", err)
	}
	if err := withExample.Run(context.Background(), []string{"graph", "ghost"}, nil, &out, &out); err == nil || !strings.Contains(err.Error(), "example") {
		t.Fatalf("unknown assistant: %v", err)
	}
}

// withExample is the command with the example application, as cmd/trellis runs it with every
// application.
var withExample = Program{Apps: []server.App{example.App()}}

// An unknown application in --apps is a usage error that lists the known ones.
func TestServeUnknownApp(t *testing.T) {
	var out bytes.Buffer
	err := withExample.Run(context.Background(), []string{"serve", "--dev", "--apps", "exmaple", "--data-dir", t.TempDir()}, nil, &out, &out)
	if ExitCode(err) != 2 || !strings.Contains(err.Error(), `"exmaple"`) || !strings.Contains(err.Error(), "example") {
		t.Fatalf("err = %v", err)
	}
}
