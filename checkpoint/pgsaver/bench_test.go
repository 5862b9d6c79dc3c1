package pgsaver_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/trellis-go/trellis/checkpoint"
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

// BenchmarkPutDelta measures a put that appends one message as a delta (one round trip, one
// commit) and the bytes each checkpoint adds to the tables and their indexes.
func BenchmarkPutDelta(b *testing.B) {
	ctx := context.Background()
	s, bb := setup(b)
	size := func() int64 {
		var n int64
		if err := bb.pool.QueryRow(ctx, `SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`, bb.schema).Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	}
	head, msg := "", ""
	warm := func(n int) { // fill the first pages so the size difference is per checkpoint, not per page
		for i := range n {
			var req checkpoint.PutRequest
			req, msg = chatStep("bench", head, i, msg)
			if err := s.Put(ctx, req); err != nil {
				b.Fatal(err)
			}
			head = req.Checkpoint.ID
		}
	}
	warm(50)
	before := size()
	b.ResetTimer()
	for i := 50; b.Loop(); i++ {
		var req checkpoint.PutRequest
		req, msg = chatStep("bench", head, i, msg)
		if err := s.Put(ctx, req); err != nil {
			b.Fatal(err)
		}
		head = req.Checkpoint.ID
	}
	b.StopTimer()
	b.ReportMetric(float64(size()-before)/float64(b.N), "bytes/checkpoint")
}

// BenchmarkGetLongChain measures Get of the newest checkpoint of a thread whose messages
// channel is a chain of deltas as long as the thread: one statement, one round trip.
func BenchmarkGetLongChain(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("chain=%d", n), func(b *testing.B) {
			ctx := context.Background()
			s, _ := setup(b)
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
