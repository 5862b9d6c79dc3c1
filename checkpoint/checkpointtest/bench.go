package checkpointtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/trellis-go/trellis/checkpoint"
)

// ChatStep returns the put a chat thread makes at a superstep: one message appended to the
// messages channel as a delta on prevMsg (its version; empty for the first step), a counter
// rewritten in full, and a small metadata map. It returns the new messages version, for the next
// step. Savers' benchmarks use it so that their figures compare.
func ChatStep(thread, head string, step int, prevMsg string) (checkpoint.PutRequest, string) {
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

// Chat puts n chat steps (ChatStep) on thread after head and prevMsg, and returns the new head
// and messages version.
func Chat(tb testing.TB, s checkpoint.Saver, thread, head, prevMsg string, from, n int) (string, string) {
	tb.Helper()
	for i := from; i < from+n; i++ {
		var req checkpoint.PutRequest
		req, prevMsg = ChatStep(thread, head, i, prevMsg)
		if err := s.Put(context.Background(), req); err != nil {
			tb.Fatal(err)
		}
		head = req.Checkpoint.ID
	}
	return head, prevMsg
}

// BenchPutDelta measures a put that appends one message as a delta, and reports the bytes each
// checkpoint adds as size (a function of the saver's database) reads them.
func BenchPutDelta(b *testing.B, s checkpoint.Saver, size func() int64) {
	head, msg := Chat(b, s, "bench", "", "", 0, 50) // the first pages filled: the size grows per checkpoint, not per page
	before := size()
	b.ResetTimer()
	for i := 50; b.Loop(); i++ {
		head, msg = Chat(b, s, "bench", head, msg, i, 1)
	}
	b.StopTimer()
	b.ReportMetric(float64(size()-before)/float64(b.N), "bytes/checkpoint")
}

// BenchGetLongChain measures Get of the newest checkpoint of a thread whose messages channel is
// a chain of deltas as long as the thread (10, 100 and 1,000 steps), on a saver newSaver makes
// for each length.
func BenchGetLongChain(b *testing.B, newSaver func(b *testing.B) checkpoint.Saver) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("chain=%d", n), func(b *testing.B) {
			s := newSaver(b)
			Chat(b, s, "bench", "", "", 0, n)
			b.ResetTimer()
			for b.Loop() {
				t, err := s.Get(context.Background(), checkpoint.Ref{ThreadID: "bench"})
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
