package engine

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// TestWorkersByRank: with every worker taken, the waiting runs get the workers given back by
// rank, and in the order they came within a rank; nobody jumps the line with TryAcquire.
func TestWorkersByRank(t *testing.T) {
	w := NewWorkers(1, 3)
	if !w.TryAcquire() || w.TryAcquire() {
		t.Fatal("one worker: the first TryAcquire must succeed, the second fail")
	}
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	queued := 0
	wait := func(name string, rank int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			waited, err := w.Acquire(context.Background(), rank)
			if err != nil || !waited {
				t.Errorf("%s: waited %v, err %v", name, waited, err)
			}
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			w.Release()
		}()
		queued++
		for { // until this run is in line
			w.mu.Lock()
			n := w.queued()
			w.mu.Unlock()
			if n == queued {
				return
			}
			runtime.Gosched()
		}
	}
	wait("low", 2)
	wait("normal-1", 1)
	wait("normal-2", 1)
	wait("high", 0)
	if w.TryAcquire() {
		t.Fatal("TryAcquire took a worker while runs wait")
	}
	w.Release()
	wg.Wait()
	if want := []string{"high", "normal-1", "normal-2", "low"}; !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	if !w.TryAcquire() {
		t.Fatal("the worker was not given back at the end")
	}
}

// TestWorkersAcquireCancelled: a waiting run whose context ends leaves the line; a worker handed
// to it as it gave up goes on to the next.
func TestWorkersAcquireCancelled(t *testing.T) {
	w := NewWorkers(1, 1)
	w.TryAcquire()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if waited, err := w.Acquire(ctx, 0); err == nil || !waited {
		t.Fatalf("a cancelled Acquire: waited %v, err %v", waited, err)
	}
	w.Release()
	if !w.TryAcquire() {
		t.Fatal("the worker given back did not come free")
	}
}
