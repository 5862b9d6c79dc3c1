package sqlitesaver_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/checkpoint/sqlitesaver"
)

// chatStep returns the put a chat thread makes each superstep: one message appended to the
// messages channel as a delta, a counter rewritten in full, and a small metadata map.
func chatStep(thread, head string, step int, prevMsg string) (checkpoint.PutRequest, string) {
	msg := checkpoint.NextVersion(prevMsg)
	cnt := fmt.Sprintf("%012d.c", step+1)
	blobs := []checkpoint.Blob{
		{Channel: "messages", Version: msg, Base: prevMsg, Data: fmt.Appendf(nil, `[{"id":"m%d","role":"assistant","content":"step %d of a conversation, one short sentence."}]`, step, step)},
		{Channel: "count", Version: cnt, Data: fmt.Appendf(nil, "%d", step)},
	}
	if prevMsg == "" {
		blobs[0].Data = fmt.Appendf(nil, `[{"id":"m0","role":"user","content":"hello"}]`)
	}
	return checkpoint.PutRequest{
		ThreadID: thread, Head: head, Blobs: blobs,
		Checkpoint: checkpoint.Checkpoint{
			ID: checkpoint.NewID(), ParentID: head, Step: step, Source: checkpoint.SourceLoop,
			Versions:  map[string]string{"messages": msg, "count": cnt},
			Next:      []checkpoint.Task{{ID: fmt.Sprintf("task-%d", step), Node: "agent"}},
			Metadata:  map[string]any{"source": "loop", "step": step},
			CreatedAt: time.Now(),
		},
	}, msg
}

// fileBytes is the database's size in pages in use, after folding the WAL into the file.
func fileBytes(b *testing.B, s *sqlitesaver.Saver) int64 {
	b.Helper()
	var pages, free, size int64
	db := s.DB()
	if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		b.Fatal(err)
	}
	for q, v := range map[string]*int64{"PRAGMA page_count": &pages, "PRAGMA freelist_count": &free, "PRAGMA page_size": &size} {
		if err := db.QueryRow(q).Scan(v); err != nil {
			b.Fatal(err)
		}
	}
	return (pages - free) * size
}

// BenchmarkPutDelta measures a put that appends one message as a delta, at the default
// synchronous=FULL (every put is durable when it returns), and the bytes each checkpoint adds.
func BenchmarkPutDelta(b *testing.B) {
	for _, sync := range []string{"FULL", "NORMAL"} {
		b.Run("synchronous="+sync, func(b *testing.B) {
			ctx := context.Background()
			s, err := sqlitesaver.Open(ctx, b.TempDir()+"/bench.db", &sqlitesaver.Options{Synchronous: sync})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			before := fileBytes(b, s)
			head, msg := "", ""
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				var req checkpoint.PutRequest
				req, msg = chatStep("bench", head, i, msg)
				if err := s.Put(ctx, req); err != nil {
					b.Fatal(err)
				}
				head = req.Checkpoint.ID
			}
			b.StopTimer()
			b.ReportMetric(float64(fileBytes(b, s)-before)/float64(b.N), "bytes/checkpoint")
		})
	}
}

// BenchmarkGetLongChain measures Get of the newest checkpoint of a thread whose messages
// channel is a chain of deltas as long as the thread.
func BenchmarkGetLongChain(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("chain=%d", n), func(b *testing.B) {
			ctx := context.Background()
			s, err := sqlitesaver.Open(ctx, b.TempDir()+"/bench.db", &sqlitesaver.Options{Synchronous: "OFF"})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			head, msg := "", ""
			for i := range n {
				var req checkpoint.PutRequest
				req, msg = chatStep("bench", head, i, msg)
				if err := s.Put(ctx, req); err != nil {
					b.Fatal(err)
				}
				head = req.Checkpoint.ID
			}
			b.ResetTimer()
			for b.Loop() {
				t, err := s.Get(ctx, checkpoint.Ref{ThreadID: "bench"})
				if err != nil {
					b.Fatal(err)
				}
				if len(t.Blobs) != n+1 {
					b.Fatalf("got %d blobs, want %d", len(t.Blobs), n+1)
				}
			}
		})
	}
}
