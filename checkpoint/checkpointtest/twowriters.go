package checkpointtest

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
)

// TwoWriters checks two savers on one database (two processes, each with its own connections)
// racing to extend one thread for rounds rounds: in every round exactly one put wins and the
// other fails with [checkpoint.ErrConflict], and the history stays one line, as both savers
// read it.
func TwoWriters(t *testing.T, a, b checkpoint.Saver, rounds int) {
	t.Helper()
	ctx := context.Background()
	first := checkpoint.Checkpoint{ID: checkpoint.NewID(), Versions: map[string]string{}}
	if err := a.Put(ctx, checkpoint.PutRequest{ThreadID: "two-writers", Checkpoint: first}); err != nil {
		t.Fatal(err)
	}
	head := first.ID
	for round := range rounds {
		var wg sync.WaitGroup
		errs, ids := make([]error, 2), make([]string, 2)
		for i, s := range []checkpoint.Saver{a, b} {
			ids[i] = checkpoint.NewID()
			wg.Go(func() {
				errs[i] = s.Put(ctx, checkpoint.PutRequest{ThreadID: "two-writers", Head: head,
					Checkpoint: checkpoint.Checkpoint{ID: ids[i], ParentID: head, Versions: map[string]string{}}})
			})
		}
		wg.Wait()
		var won []string
		for i, err := range errs {
			switch {
			case err == nil:
				won = append(won, ids[i])
			case errors.Is(err, checkpoint.ErrConflict):
			default:
				t.Fatalf("round %d: writer %d failed with %v; want success or ErrConflict", round, i, err)
			}
		}
		if len(won) != 1 {
			t.Fatalf("round %d: %d writers won, want exactly 1 (errors: %v)", round, len(won), errs)
		}
		head = won[0]
	}
	for _, s := range []checkpoint.Saver{a, b} {
		var list []*checkpoint.Tuple
		for tup, err := range s.List(ctx, checkpoint.ListOptions{ThreadID: "two-writers"}) {
			if err != nil {
				t.Fatal(err)
			}
			list = append(list, tup)
		}
		if len(list) != rounds+1 {
			t.Fatalf("history has %d checkpoints, want %d", len(list), rounds+1)
		}
		if list[0].Checkpoint.ID != head {
			t.Errorf("the newest checkpoint is %q, not the last winner %q", list[0].Checkpoint.ID, head)
		}
		for i := 0; i+1 < len(list); i++ {
			if list[i].Checkpoint.ParentID != list[i+1].Checkpoint.ID {
				t.Errorf("history forked at %q: its parent is %q, the next older checkpoint is %q", list[i].Checkpoint.ID, list[i].Checkpoint.ParentID, list[i+1].Checkpoint.ID)
			}
		}
	}
}
