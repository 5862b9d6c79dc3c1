package listforge_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/trellis-go/trellis/appdb"
	"github.com/trellis-go/trellis/appdb/appdbtest"
	"github.com/trellis-go/trellis/apps/listforge"
	"github.com/trellis-go/trellis/apps/listforge/research"
	"github.com/trellis-go/trellis/apps/listforge/store"
	"github.com/trellis-go/trellis/server"
)

// holder holds the research job at one node: the node reports it was reached and waits until
// its run is cancelled.
type holder struct {
	mu      sync.Mutex
	node    string
	reached chan struct{}
}

func (h *holder) at(node string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.node, h.reached = node, make(chan struct{})
	return h.reached
}

func (h *holder) before(ctx context.Context, node string) {
	h.mu.Lock()
	if node != h.node {
		h.mu.Unlock()
		return
	}
	ch := h.reached
	h.node = ""
	h.mu.Unlock()
	close(ch)
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute): // not cancelled: the test fails on the job's status
	}
}

// Deleting an item while its research runs, at every step of the job: the run is cancelled,
// the job ends failed ("Item deleted"), and no row of the item is left, including rows the job
// would have written after the deletion. On SQLite and Postgres.
func TestDeleteDuringResearch(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			dir, url := t.TempDir(), ""
			if backend == "postgres" {
				url = appdbtest.PostgresURL(t)
			}
			h := &holder{}
			e := serve(t, dir, url, listforge.Options{BeforeNode: h.before, NoDemo: true})
			db, err := appdb.Open(context.Background(), listforge.AppName, &appdb.Options{DataDir: dir, DatabaseURL: url})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			st, err := store.Open(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			key := "key-acme-ana-0000000"
			for _, node := range research.Nodes {
				if node == research.NodeRefineSearch {
					continue // not on the UPC path's way
				}
				t.Run(node, func(t *testing.T) {
					var it store.Item
					if code := e.do(key, "POST", "/api/v1/items", map[string]any{"title": "Sony WH-1000XM4 Black headphones", "condition": "Used",
						"lifecycleStatus": "ready", "defaultPrice": 180}, &it); code != 201 {
						t.Fatalf("create: %d", code)
					}
					var sess struct{ SessionID string }
					e.do(key, "POST", "/api/v1/items/"+it.ID+"/chat/sessions", nil, &sess)
					e.do(key, "PATCH", "/api/v1/items/"+it.ID, map[string]any{"description": "light wear", "reason": "details"}, nil)
					reached := h.at(node)
					var started struct{ JobID string }
					if code := e.do(key, "POST", "/api/v1/items/"+it.ID+"/research", nil, &started); code != 202 {
						t.Fatalf("start: %d", code)
					}
					<-reached
					var job store.ResearchRun
					if code := e.do(key, "GET", "/api/v1/items/"+it.ID+"/research/jobs/"+started.JobID, nil, &job); code != 200 || job.RunID == "" {
						t.Fatalf("job: %d %+v", code, job)
					}
					c := e.dial(key, listforge.ResearchPath)
					send(t, c, "subscribe_job", map[string]string{"jobId": started.JobID})
					if f := read(t, c); f.Event != "job_status" {
						t.Fatalf("first frame %s %s", f.Event, f.Data)
					}
					var derr struct{ Error string }
					if code := e.do(key, "DELETE", "/api/v1/items/"+it.ID, nil, &derr); code != 204 {
						t.Fatalf("delete: %d %s", code, derr.Error)
					}
					// The subscriber is told the job failed.
					for {
						f := read(t, c)
						if f.Event != "job_complete" {
							continue
						}
						var done listforge.JobComplete
						_ = json.Unmarshal(f.Data, &done)
						if done.Status != store.RunError || done.Error != listforge.MsgItemDeleted {
							t.Fatalf("job_complete %+v", done)
						}
						break
					}
					// The run ends, cancelled, without success.
					var run server.Run
					e.doRoot(key, "GET", "/threads/"+job.ThreadID+"/runs/"+job.RunID+"/join", &map[string]any{})
					if code := e.doRoot(key, "GET", "/threads/"+job.ThreadID+"/runs/"+job.RunID, &run); code != 200 || run.Status == server.RunSuccess {
						t.Fatalf("the run: %d %s", code, run.Status)
					}
					rows, err := st.ItemRows(context.Background(), store.Who{Org: "acme", User: "ana"}, it.ID)
					if err != nil {
						t.Fatal(err)
					}
					for table, n := range rows {
						if n != 0 {
							t.Errorf("%d rows of the deleted item left in %s", n, table)
						}
					}
					if code := e.do(key, "GET", "/api/v1/items/"+it.ID+"/research/jobs/"+started.JobID, nil, nil); code != 404 {
						t.Fatalf("the deleted item's job: %d", code)
					}
				})
			}
		})
	}
}
