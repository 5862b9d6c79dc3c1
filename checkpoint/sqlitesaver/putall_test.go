package sqlitesaver_test

import (
	"context"
	"errors"
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
)

// chain returns n puts of thread, each on the one before, the first on head, each with a blob
// of channel "c" at its own version.
func chain(thread, head string, n int) []checkpoint.PutRequest {
	reqs := make([]checkpoint.PutRequest, n)
	for i := range reqs {
		v := checkpoint.NewID()
		cp := checkpoint.Checkpoint{ID: checkpoint.NewID(), ParentID: head, Step: i, Versions: map[string]string{"c": v}}
		reqs[i] = checkpoint.PutRequest{ThreadID: thread, Checkpoint: cp, Head: head,
			Blobs: []checkpoint.Blob{{Channel: "c", Version: v, Data: []byte(`"` + cp.ID + `"`)}}}
		head = cp.ID
	}
	return reqs
}

// PutAll stores a chain of checkpoints in one transaction: each is readable as Put would have
// stored it, the newest is the last, and a retry of the same chain stores nothing twice.
func TestPutAllChain(t *testing.T) {
	s, _ := setup(t)
	ctx := context.Background()
	reqs := append(chain("a", "", 3), chain("b", "", 2)...)
	if err := s.PutAll(ctx, reqs); err != nil {
		t.Fatal(err)
	}
	for _, thread := range []string{"a", "b"} {
		var want []string
		for _, r := range reqs {
			if r.ThreadID == thread {
				want = append(want, r.Checkpoint.ID)
			}
		}
		newest, err := s.Get(ctx, checkpoint.Ref{ThreadID: thread})
		if err != nil {
			t.Fatal(err)
		}
		if newest.Checkpoint.ID != want[len(want)-1] {
			t.Errorf("thread %s: newest %s, want %s", thread, newest.Checkpoint.ID, want[len(want)-1])
		}
		for _, id := range want {
			tu, err := s.Get(ctx, checkpoint.Ref{ThreadID: thread, CheckpointID: id})
			if err != nil {
				t.Fatalf("thread %s checkpoint %s: %v", thread, id, err)
			}
			if len(tu.Blobs) != 1 || string(tu.Blobs[0].Data) != `"`+id+`"` {
				t.Errorf("thread %s checkpoint %s: blobs %+v", thread, id, tu.Blobs)
			}
		}
	}
	if err := s.PutAll(ctx, reqs); err != nil {
		t.Errorf("the same puts again (a lost reply): %v", err)
	}
	var n int
	if err := s.DB().QueryRow(`SELECT count(*) FROM trellis_checkpoints`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != len(reqs) {
		t.Errorf("%d checkpoints stored, want %d", n, len(reqs))
	}
	// The chain goes on from its last checkpoint, with Put too.
	put(t, s, "a", reqs[2].Checkpoint.ID)
}

// A put of PutAll that cannot be stored stores none of them: the error is the put's.
func TestPutAllAllOrNothing(t *testing.T) {
	s, _ := setup(t)
	ctx := context.Background()
	head := put(t, s, "a", "")
	good := chain("b", "", 2)
	stale := chain("a", "", 1) // "a" has a head: a put on none conflicts
	err := s.PutAll(ctx, append(good, stale...))
	if !errors.Is(err, checkpoint.ErrConflict) {
		t.Fatalf("PutAll with a stale head: %v, want ErrConflict", err)
	}
	if _, err := s.Get(ctx, checkpoint.Ref{ThreadID: "b"}); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("thread b after the failed PutAll: %v, want ErrNotFound (nothing written)", err)
	}
	newest, err := s.Get(ctx, checkpoint.Ref{ThreadID: "a"})
	if err != nil || newest.Checkpoint.ID != head {
		t.Errorf("thread a after the failed PutAll: %v %v, want its head %s", newest, err, head)
	}
	bad := chain("c", "", 2)
	bad[1].Checkpoint.ID = "" // fails the check before anything is written
	if err := s.PutAll(ctx, bad); err == nil {
		t.Error("PutAll of a checkpoint without an ID: no error")
	}
	if err := s.PutAll(ctx, nil); err != nil {
		t.Errorf("PutAll of nothing: %v", err)
	}
}
