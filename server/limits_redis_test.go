package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// redisReplicas starts two servers on one Postgres schema and one Redis with cfg's limits, both
// taking the requests of one API key whose tenant is new (the shared Redis keeps limits by
// tenant).
func redisReplicas(t *testing.T, cfg Config) []*bundle {
	cfg.RedisURL, cfg.DatabaseURL = redisURL(t), pgURL(t)
	key := "limits-test-key-" + uuid.NewString()
	cfg.Auth = AuthConfig{APIKeys: map[string]Principal{key: {User: "svc", Tenant: "limits-" + uuid.NewString(), Permissions: []string{"*"}}}}
	a, b := setup(t, setupOpts{cfg: cfg}), setup(t, setupOpts{cfg: cfg})
	a.token, b.token = key, key
	return []*bundle{a, b}
}

// TestRateLimitSharedThroughRedis checks that a tenant's burst is the tenant's, whichever
// replica takes its requests.
func TestRateLimitSharedThroughRedis(t *testing.T) {
	t.Parallel()
	replicas := redisReplicas(t, Config{RateLimit: 0.2, RateBurst: 4})
	for i := range 4 {
		if code := replicas[i%2].do("POST", "/threads/search", map[string]any{}, nil); code != 200 {
			t.Fatalf("request %d, within the tenant's burst: %d", i, code)
		}
	}
	for i, r := range replicas {
		wantRateLimited(t, r, fmt.Sprintf("replica %d after the tenant's burst", i))
	}
}

// wantRateLimited sends one more request through r and fails the test unless it is refused
// with 429, a Retry-After header and a message saying why.
func wantRateLimited(t *testing.T, r *bundle, what string) {
	t.Helper()
	req, _ := http.NewRequest("POST", r.http.URL+"/threads/search", strings.NewReader("{}"))
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "over its rate") {
		t.Fatalf("%s: %d, Retry-After %q, %s", what, resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
}

// TestStreamLimitSharedThroughRedis checks that a tenant's open streams are counted across
// replicas, and that a slot closed on one replica is free on the other.
func TestStreamLimitSharedThroughRedis(t *testing.T) {
	t.Parallel()
	replicas := redisReplicas(t, Config{MaxStreamsPerTenant: 2})
	a, b := replicas[0], replicas[1]
	var th Thread
	a.mustDo("POST", "/threads", map[string]any{}, &th, 200)
	var run Run
	a.mustDo("POST", "/threads/"+th.ThreadID+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{"topic": "s"}}, &run, 200)
	select {
	case <-a.gates.started:
	case <-b.gates.started:
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not start")
	}
	path := "/threads/" + th.ThreadID + "/runs/" + run.RunID + "/stream"
	codeA, _, closeA := openStream(t, a, path)
	defer closeA()
	codeB, _, closeB := openStream(t, b, path)
	defer closeB()
	if codeA != 200 || codeB != 200 {
		t.Fatalf("two streams within the limit: %d and %d", codeA, codeB)
	}
	for i, r := range replicas {
		if code, body, _ := openStream(t, r, path); code != 429 || !strings.Contains(body, "streams open") {
			t.Fatalf("a third stream through replica %d: %d %s", i, code, body)
		}
	}
	closeA()
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, _, closeIt := openStream(t, b, path)
		closeIt()
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slot closed on one replica was not free on the other (status %d)", code)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// openStream opens a run's stream through r and returns its answer's status and, when refused,
// its body, and a function that closes it.
func openStream(t *testing.T, r *bundle, path string) (int, string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", r.http.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+r.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("GET %s: %v", path, err)
	}
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		return resp.StatusCode, string(body), func() {}
	}
	return 200, "", func() { cancel(); resp.Body.Close() }
}
