package serverbench

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer collects a child's standard error for the test's log.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startPeer starts the LangGraph.js API server of bench/peers/langgraphapi with the paced
// model's settings and returns its URL; it skips the test when node or the peer's packages are
// missing.
func startPeer(t *testing.T, workers, tokens, pause int, interval time.Duration) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: the LangGraph.js API peer is not tested (install Node.js 20 or later)")
	}
	dir, err := filepath.Abs(filepath.Join("..", "peers", "langgraphapi"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
		t.Skipf("%s has no node_modules: run npm ci there to test the LangGraph.js API peer", dir)
	}
	cmd := exec.Command(node, "--expose-gc", "serve.mjs", "--workers", strconv.Itoa(workers),
		"--tokens", strconv.Itoa(tokens), "--pause", strconv.Itoa(pause),
		"--interval-ms", strconv.FormatInt(interval.Milliseconds(), 10))
	cmd.Dir = dir
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the peer: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		stdin.Close() // serve.mjs stops when its standard input closes
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("the peer's standard error:\n%s", stderr)
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "LISTEN "); ok {
				found <- u
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout) // keep the pipe drained
	}()
	select {
	case u := <-found:
		return u
	case <-exited:
		t.Fatalf("the peer exited before it listened:\n%s", stderr)
	case <-time.After(2 * time.Minute):
		t.Fatalf("the peer did not say LISTEN within 2 minutes:\n%s", stderr)
	}
	return ""
}

// TestPeerStreams runs the streams measurement's small variant against the LangGraph.js API
// server serving stream.mjs: every stream must bring every token in order (RunStreams fails
// otherwise), every answer must wait at the peer's gate, and its stats must answer.
func TestPeerStreams(t *testing.T) {
	const n, tokens, pause = 20, 6, 3
	url := startPeer(t, n+8, tokens, pause, 10*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := RunStreams(ctx, StreamOptions{URL: url, Streams: n, Tokens: tokens, PauseAfter: pause, Peer: true,
		Settle: 100 * time.Millisecond, Retention: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("RunStreams against the peer: %v", err)
	}
	if res.Tokens != n*tokens {
		t.Errorf("%d tokens arrived, want %d", res.Tokens, n*tokens)
	}
	if res.Idle.Waiting != n {
		t.Errorf("%d answers waited at the peer's gate, want %d", res.Idle.Waiting, n)
	}
	if res.Idle.RSS == 0 || res.Idle.HeapAlloc == 0 || res.Idle.CPU == 0 {
		t.Errorf("the peer's stats lack memory or CPU: %+v", res.Idle)
	}
	if res.P50 <= 0 || res.P99 < res.P50 {
		t.Errorf("latency percentiles out of order: p50 %s p99 %s", res.P50, res.P99)
	}
	t.Logf("peer, %d streams: p50 %s p99 %s; per idle stream %.0f B heap, %.0f B RSS", n, res.P50, res.P99, res.HeapPerStream, res.RSSPerStream)
}
