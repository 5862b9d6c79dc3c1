package server

import (
	"encoding/json"
	"sync"
	"testing"
)

// TestBusHandlersSetWhileListening: a bus's listener may dispatch another replica's cancel and
// done messages while the server is still setting the bus's handlers (on a shared Redis, other
// servers publish all the time). The race detector reported this once in
// TestRoomsAcrossReplicasRedis; dispatching while setting must be free of races, and once set the
// handlers get the messages.
func TestBusHandlersSetWhileListening(t *testing.T) {
	b := newBus("redis", nil)
	done, _ := json.Marshal(busMsg{Kind: "done", Thread: "t1", RunID: "r1"})
	cancel, _ := json.Marshal(busMsg{Kind: "cancel", RunID: "r2", Action: "interrupt"})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 200 {
			b.dispatch(string(done))
			b.dispatch(string(cancel))
		}
	}()
	var mu sync.Mutex
	got := map[string]string{}
	b.handle(busHandlers{cancel: func(runID, action string) {
		mu.Lock()
		got[runID] = action
		mu.Unlock()
	}, done: func(threadID, runID string) {
		mu.Lock()
		got[runID] = threadID
		mu.Unlock()
	}})
	wg.Wait()
	b.dispatch(string(done))
	b.dispatch(string(cancel))
	mu.Lock()
	defer mu.Unlock()
	if got["r1"] != "t1" || got["r2"] != "interrupt" {
		t.Fatalf("handlers got %v, want r1→t1 and r2→interrupt", got)
	}
}
