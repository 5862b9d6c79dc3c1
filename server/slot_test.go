package server

import "testing"

// TestRunAfterEndedRun: once a run's statuses are written (engine.Slots.End), the run only tidies
// up before its thread's slot moves on. A client told it finished may at once start another run
// with the default multitask strategy (reject) or update the thread's state, and is not refused
// with 409; the new run waits in the slot and starts when the slot moves on.
func TestRunAfterEndedRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tid := b.newThread(nil)
	r := b.srv.runs
	r.mu.Lock()
	r.threads.Place(tid, "finished-run", PriorityNormal)
	r.mu.Unlock()
	if !r.busy(tid) {
		t.Fatal("a thread whose run has not ended is not busy")
	}
	if code := b.do("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "x"}}, nil); code != 409 {
		t.Fatalf("a run while another executes: status %d, want 409", code)
	}

	r.ended(tid, "finished-run")
	if r.busy(tid) {
		t.Fatal("a thread whose run has ended is still busy")
	}
	var run Run
	b.mustDo("POST", "/threads/"+tid+"/runs", map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "x"}}, &run, 200)
	if !r.scheduled(tid, run.RunID) {
		t.Fatal("the new run is not in its thread's slot")
	}
	var still Run
	b.mustDo("GET", "/threads/"+tid+"/runs/"+run.RunID, nil, &still, 200)
	if still.Status != RunPending {
		t.Fatalf("the new run did not wait for the slot: %s", still.Status)
	}
	r.release(tid, "finished-run")
	b.waitStatus(tid, run.RunID, RunSuccess) // paused at approve: the thread is interrupted, the run done
}
