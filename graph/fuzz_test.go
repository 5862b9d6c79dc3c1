package graph_test

import (
	"context"
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
)

// fixedSaver serves one stored tuple, whatever it holds, for every Get of its thread's root
// namespace; everything else goes to a memory saver.
type fixedSaver struct {
	*checkpoint.MemorySaver
	tuple *checkpoint.Tuple
}

func (f *fixedSaver) Get(ctx context.Context, ref checkpoint.Ref) (*checkpoint.Tuple, error) {
	if ref.NS == "" {
		t := *f.tuple
		return &t, nil
	}
	return f.MemorySaver.Get(ctx, ref)
}

// FuzzCheckpointDecoding hands arbitrary stored bytes and versions to a resume, a read of the
// thread's state, and an update: each must end with an error or a sane result, never a panic.
func FuzzCheckpointDecoding(f *testing.F) {
	f.Add("notes", "v2", "v1", []byte(`[["b"]]`), []byte(`["a"]`), "ask", []byte(nil), "__task__", []byte(`{"writes":[{"key":"count","value":1}],"goto":[{"node":"b"}]}`), "b#0")
	f.Add("messages", "v1", "", []byte(`[{"role":"user","content":"hi"}]`), []byte(nil), "a", []byte(`{"notes":["x"]}`), "__resume__", []byte(`["yes"]`), "")
	f.Add("count", "v1", "v1", []byte(`[1]`), []byte(`2`), "zz", []byte(`{`), "__interrupt__", []byte(`[{"id":"t1.0"}]`), "x#9")
	f.Add("scores", "v3", "v2", []byte(`[{"a":1}]`), []byte(`{"b":2}`), "b", []byte(`null`), "__task__", []byte(`{"goto":[{"node":"a","send":true,"arg":"bad"}]}`), "b#0")
	f.Add("messages", "v2", "v1", []byte(`[[{"role":"remove","id":"nope"}]]`), []byte(`[]`), "ask", []byte(nil), "__error__", []byte(`"boom"`), "")
	f.Fuzz(func(t *testing.T, channel, version, base string, data, baseData []byte, next string, arg []byte, pendingCh string, pendingVal []byte, barrier string) {
		tuple := &checkpoint.Tuple{
			Ref: checkpoint.Ref{ThreadID: "t", CheckpointID: "cp1"},
			Checkpoint: checkpoint.Checkpoint{
				ID:       "cp1",
				Step:     3,
				Versions: map[string]string{channel: version},
				Next:     []checkpoint.Task{{ID: "t1", Node: next, Arg: arg}},
				Barriers: map[string][]string{barrier: {"a"}},
			},
			Blobs: []checkpoint.Blob{
				{Channel: channel, Version: version, Base: base, Data: data},
				{Channel: channel, Version: base, Data: baseData},
			},
			Pending: []checkpoint.PendingWrite{{TaskID: "t1", Channel: pendingCh, Value: pendingVal}},
		}
		saver := &fixedSaver{MemorySaver: checkpoint.NewMemorySaver(), tuple: tuple}
		g := graph.New[S]()
		g.AddNode("a", note("a")).AddNode("b", note("b"))
		g.AddNode("ask", func(ctx context.Context, s S) (S, error) {
			_, err := graph.Interrupt(ctx, "?")
			return S{}, err
		})
		g.AddEdge(graph.START, "a").AddJoin([]string{"a", "ask"}, "b")
		c, err := g.Compile(graph.CompileOptions{Saver: saver, RecursionLimit: 5})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		// Errors are expected for most inputs; a panic fails the fuzz test.
		_, _ = c.Invoke(ctx, S{}, graph.WithThread("t"), graph.Resume("yes"))
		_, _ = c.Invoke(ctx, S{}, graph.WithThread("t"), graph.Continue())
		_, _ = c.Invoke(ctx, S{Notes: []string{"new"}}, graph.WithThread("t"))
		if snap, err := c.State(ctx, checkpoint.Ref{ThreadID: "t"}); err == nil && snap == nil {
			t.Fatal("State returned neither a snapshot nor an error")
		}
		_, _ = c.UpdateState(ctx, checkpoint.Ref{ThreadID: "t"}, S{Count: 1}, "a")
	})
}
