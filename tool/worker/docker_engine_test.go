package worker_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/trellis-go/trellis/tool/worker"
)

// TestDockerRealEngine runs the Docker runtime against a real engine. It is opt-in: set
// TRELLIS_TEST_DOCKER_IMAGE to a worker image (see docs/skills.md for building the property
// worker's) and, unless the engine is at unix:///var/run/docker.sock, DOCKER_HOST (unix:// or
// http://). It starts two containers, fetches the schema, makes three calls (each replacing a
// container), and checks that StopAll leaves no container of the pool behind.
func TestDockerRealEngine(t *testing.T) {
	image := os.Getenv("TRELLIS_TEST_DOCKER_IMAGE")
	if image == "" {
		t.Skip("TRELLIS_TEST_DOCKER_IMAGE is not set: no real Docker engine test (the Engine API's wire format is tested by TestDockerRuntime)")
	}
	d := &worker.Docker{Host: os.Getenv("DOCKER_HOST"), Network: "trellis-test-workers"}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if !d.Reachable(ctx) {
		t.Skipf("no Docker engine answers at %q (DOCKER_HOST; empty is unix:///var/run/docker.sock)", d.Host)
	}
	rec := &recorder{Runtime: d}
	p := worker.NewPool(rec, nil)
	spec := worker.Spec{Name: "enginetest", Image: image, PoolSize: 2, MemoryLimit: 128 << 20, Timeout: 30 * time.Second}
	if err := p.Start(ctx, spec); err != nil {
		_ = p.StopAll(ctx)
		t.Fatal(err)
	}
	s, err := p.Schema("enginetest")
	if err != nil || len(s.Tools) == 0 {
		_ = p.StopAll(ctx)
		t.Fatalf("schema %+v, %v", s, err)
	}
	for range 3 {
		// Any answer will do (an error result for missing arguments too): the container ran the call.
		if _, err := p.Execute(ctx, "enginetest", s.Tools[0].Name, json.RawMessage(`{}`), 0); err != nil {
			t.Errorf("a call to %s: %v", s.Tools[0].Name, err)
		}
	}
	waitFor(t, "the pool to refill", func() bool { st, _ := p.Stats("enginetest"); return st.Idle == 2 && st.Replaced == 3 })
	if err := p.StopAll(ctx); err != nil {
		t.Fatal(err)
	}
	if live := p.Live(); len(live) != 0 {
		t.Errorf("containers left after StopAll: %v", live)
	}
	if n := len(rec.started()); n != 5 {
		t.Errorf("%d containers started, want 2 + one per call (5)", n)
	}
}
