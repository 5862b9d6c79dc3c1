package listforge_test

import (
	"strings"
	"testing"

	"github.com/trellis-go/trellis/appdb/appdbtest"
	"github.com/trellis-go/trellis/apps/listforge"
	"github.com/trellis-go/trellis/apps/listforge/catalog"
	"github.com/trellis-go/trellis/apps/listforge/store"
)

// The lists the web page comes back to an item with: the caller's chat sessions (not a
// colleague's, not another organisation's) and the item's research jobs, newest first; on
// SQLite and Postgres.
func TestListSessionsAndJobs(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		listSessionsAndJobs(t, serve(t, t.TempDir(), "", listforge.Options{}))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		listSessionsAndJobs(t, serve(t, t.TempDir(), appdbtest.PostgresURL(t), listforge.Options{}))
	})
}

func listSessionsAndJobs(t *testing.T, e *env) {
	const ana, bob, gil = "key-acme-ana-0000000", "key-acme-bob-0000000", "key-globex-gil-000000"
	it := e.demoItem(ana, catalog.DemoUPC)
	base := "/api/v1/items/" + it.ID

	var list struct{ Items []store.Session }
	if code := e.do(ana, "GET", base+"/chat/sessions", nil, &list); code != 200 || len(list.Items) != 0 {
		t.Fatalf("no sessions yet: %d %+v", code, list)
	}
	var s1, s2, sb struct{ SessionID string }
	e.do(ana, "POST", base+"/chat/sessions", nil, &s1)
	e.do(ana, "POST", base+"/chat/sessions", nil, &s2)
	e.do(bob, "POST", base+"/chat/sessions", nil, &sb)
	if s1.SessionID == "" || s2.SessionID == "" || sb.SessionID == "" {
		t.Fatalf("sessions not created: %v %v %v", s1, s2, sb)
	}
	if code := e.do(ana, "GET", base+"/chat/sessions", nil, &list); code != 200 || len(list.Items) != 2 {
		t.Fatalf("ana's sessions: %d %+v", code, list)
	}
	for _, ss := range list.Items {
		if ss.UserID != "ana" || ss.ItemID != it.ID || ss.ID == sb.SessionID {
			t.Fatalf("a session that is not ana's about the item: %+v", ss)
		}
	}
	if code := e.do(bob, "GET", base+"/chat/sessions", nil, &list); code != 200 || len(list.Items) != 1 || list.Items[0].ID != sb.SessionID {
		t.Fatalf("bob's sessions: %d %+v", code, list)
	}
	if code := e.do(gil, "GET", base+"/chat/sessions", nil, nil); code != 404 {
		t.Fatalf("another organisation's item: %d, want 404", code)
	}

	var jobs struct{ Items []store.ResearchRun }
	if code := e.do(ana, "GET", base+"/research/jobs", nil, &jobs); code != 200 || len(jobs.Items) != 0 {
		t.Fatalf("no jobs yet: %d %+v", code, jobs)
	}
	var j1, j2 struct{ JobID string }
	e.do(ana, "POST", base+"/research", nil, &j1)
	progress(t, e, ana, j1.JobID)
	e.do(ana, "POST", base+"/research", map[string]string{"type": "pricing_refresh"}, &j2)
	if code := e.do(ana, "GET", base+"/research/jobs", nil, &jobs); code != 200 || len(jobs.Items) != 2 {
		t.Fatalf("jobs: %d %+v", code, jobs)
	}
	if jobs.Items[0].ID != j2.JobID || jobs.Items[1].ID != j1.JobID || jobs.Items[1].Status != store.RunSuccess || jobs.Items[1].StepCount != 8 {
		t.Fatalf("jobs, newest first, the first finished in 8 steps: %+v", jobs.Items)
	}
	if code := e.do(ana, "GET", base+"/research/jobs?limit=1", nil, &jobs); code != 200 || len(jobs.Items) != 1 {
		t.Fatalf("limit=1: %d %d", code, len(jobs.Items))
	}
	var bad struct{ Detail, Hint string }
	if code := e.do(ana, "GET", base+"/research/jobs?limit=0", nil, &bad); code != 400 || !strings.Contains(bad.Detail, "field limit:") {
		t.Fatalf("limit=0: %d %+v", code, bad)
	}
	if code := e.do(gil, "GET", base+"/research/jobs", nil, nil); code != 404 {
		t.Fatalf("another organisation's jobs: %d, want 404", code)
	}
	progress(t, e, ana, j2.JobID)
}
