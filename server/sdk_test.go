package server

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSDKEndToEnd drives the server with the official LangGraph JS SDK
// (@langchain/langgraph-sdk 2.0.0, pinned with its lock file in testdata/sdk). It needs node
// and the installed packages: npm ci --prefix server/testdata/sdk
func TestSDKEndToEnd(t *testing.T) {
	t.Parallel()
	dir, _ := filepath.Abs(filepath.Join("testdata", "sdk"))
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; the SDK end-to-end test needs Node.js 20 or later")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@langchain", "langgraph-sdk")); err != nil {
		t.Skipf("the LangGraph SDK is not installed; run: npm ci --prefix %s", filepath.Join("server", "testdata", "sdk"))
	}
	b := setup(t, setupOpts{extra: []GraphSpec{{ID: "nested", Build: buildNested}, reviewedGraph,
		{ID: "asking", Build: buildAsking}, {ID: "personal", Build: buildPersonal}}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "e2e.mjs"), b.http.URL)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	t.Logf("node output:\n%s", out)
	if err != nil {
		t.Fatalf("the SDK script failed: %v", err)
	}
	if !strings.Contains(string(out), "sdk e2e: ok") {
		t.Fatal("the SDK script did not finish")
	}
}
