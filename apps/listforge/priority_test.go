package listforge_test

import (
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/listforge"
	"github.com/trellis-go/trellis/apps/listforge/catalog"
	"github.com/trellis-go/trellis/apps/listforge/store"
	"github.com/trellis-go/trellis/server"
)

// With the only worker busy, a high-priority research job queued after two low ones starts
// before them.
func TestHighPriorityJobStartsFirst(t *testing.T) {
	t.Parallel()
	market := catalog.NewServer(catalog.Generate(time.Now()))
	market.Delay = 60 * time.Millisecond // each marketplace answer: the running job holds the worker a while
	s, err := server.New(server.Config{Apps: []server.App{listforge.New(listforge.Options{Offline: market})}, DataDir: t.TempDir(),
		MaxConcurrentRuns: 1, Auth: server.AuthConfig{APIKeys: keys}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		hs.Close()
		s.Close()
	})
	e := &env{t: t, url: hs.URL, s: s}
	const key = "key-acme-ana-0000000"
	it := e.demoItem(key, catalog.DemoUPC)
	start := func(prio string) string {
		var out struct{ JobID string }
		if code := e.do(key, "POST", "/api/v1/items/"+it.ID+"/research", map[string]string{"priority": prio}, &out); code != 202 {
			t.Fatalf("start %s: %d", prio, code)
		}
		return out.JobID
	}
	job := func(id string) store.ResearchRun {
		var j store.ResearchRun
		if code := e.do(key, "GET", "/api/v1/items/"+it.ID+"/research/jobs/"+id, nil, &j); code != 200 {
			t.Fatalf("job %s: %d", id, code)
		}
		return j
	}
	// wait polls the job's record until ok holds (the record is what the job's follower writes).
	wait := func(id string, ok func(store.ResearchRun) bool) store.ResearchRun {
		deadline := time.Now().Add(30 * time.Second)
		for {
			j := job(id)
			if ok(j) {
				return j
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s: still %+v", id, j)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	first := start("normal")
	wait(first, func(j store.ResearchRun) bool { return j.StartedAt != nil })
	low1, low2 := start("low"), start("low")
	high := start("high")
	done := func(j store.ResearchRun) bool { return j.Status == store.RunSuccess || j.Status == store.RunError }
	h, l1, l2 := wait(high, done), wait(low1, done), wait(low2, done)
	if h.Status != store.RunSuccess || h.StartedAt == nil || l1.StartedAt == nil || l2.StartedAt == nil {
		t.Fatalf("jobs: high %+v low %+v %+v", h, l1, l2)
	}
	if !h.StartedAt.Before(*l1.StartedAt) || !h.StartedAt.Before(*l2.StartedAt) {
		t.Errorf("the high-priority job started at %v, the low ones queued before it at %v and %v", h.StartedAt, l1.StartedAt, l2.StartedAt)
	}
}
