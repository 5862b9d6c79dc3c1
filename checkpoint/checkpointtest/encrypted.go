package checkpointtest

import (
	"bytes"
	"context"
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
)

// Secret is the marker PlantSecret writes into every value of a checkpoint.
const Secret = "PLAINTEXT-SECRET-7f3a"

// PlantSecret stores, through s (an encrypted saver), a checkpoint whose channel value, pending
// write, Send argument and recorded step writes all hold Secret, and checks that s reads every
// one of them back. The caller then reads its database directly and looks for Secret.
func PlantSecret(t *testing.T, s checkpoint.Saver) {
	t.Helper()
	ctx := context.Background()
	thread := newThread(t)
	value := []byte(`{"note":"` + Secret + `"}`)
	cp := checkpoint.Checkpoint{ID: checkpoint.NewID(), Versions: map[string]string{"notes": "1"},
		Next:     []checkpoint.Task{{ID: "t1", Node: "worker", Arg: value}},
		Metadata: map[string]any{"source": "loop", "writes": map[string]any{"planner": map[string]any{"note": Secret}}}}
	if err := s.Put(ctx, checkpoint.PutRequest{ThreadID: thread, Checkpoint: cp,
		Blobs: []checkpoint.Blob{{Channel: "notes", Version: "1", Data: value}}}); err != nil {
		t.Fatalf("Put: %v", err)
	}
	ref := checkpoint.Ref{ThreadID: thread, CheckpointID: cp.ID}
	if err := s.PutWrites(ctx, checkpoint.WritesRequest{Ref: ref, TaskID: "t1",
		Writes: []checkpoint.PendingWrite{{TaskID: "t1", Channel: "notes", Value: value}}}); err != nil {
		t.Fatalf("PutWrites: %v", err)
	}
	got, err := s.Get(ctx, ref)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if len(got.Blobs) != 1 || !bytes.Equal(got.Blobs[0].Data, value) {
		t.Errorf("blob read back as %q", got.Blobs)
	}
	if len(got.Pending) != 1 || !bytes.Equal(got.Pending[0].Value, value) {
		t.Errorf("pending write read back as %+v", got.Pending)
	}
	if len(got.Checkpoint.Next) != 1 || !bytes.Equal(got.Checkpoint.Next[0].Arg, value) {
		t.Errorf("task argument read back as %+v", got.Checkpoint.Next)
	}
	w, _ := got.Checkpoint.Metadata["writes"].(map[string]any)
	if p, _ := w["planner"].(map[string]any); p["note"] != Secret || got.Checkpoint.Metadata["source"] != "loop" {
		t.Errorf("metadata read back as %v", got.Checkpoint.Metadata)
	}
	for tuple, err := range s.List(ctx, checkpoint.ListOptions{ThreadID: thread}) {
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		if len(tuple.Checkpoint.Next) != 1 || !bytes.Equal(tuple.Checkpoint.Next[0].Arg, value) {
			t.Errorf("List: task argument %+v", tuple.Checkpoint.Next)
		}
	}
}
