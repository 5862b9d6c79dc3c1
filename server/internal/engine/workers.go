package engine

import (
	"context"
	"sync"
)

// Workers bounds the runs executing at once in a process. A run waiting for a worker gets one
// before every waiting run of a lower rank, and after the waiting runs of its rank that waited
// longer; rank 0 comes first.
//
// Workers are safe for concurrent use.
type Workers struct {
	mu      sync.Mutex
	free    int
	waiting [][]chan struct{} // by rank
}

// NewWorkers returns n workers (at least one) for runs of ranks 0 to ranks-1.
func NewWorkers(n, ranks int) *Workers {
	return &Workers{free: max(n, 1), waiting: make([][]chan struct{}, max(ranks, 1))}
}

// TryAcquire takes a worker if one is free and no run waits for one.
func (w *Workers) TryAcquire() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.free > 0 && w.queued() == 0 {
		w.free--
		return true
	}
	return false
}

// Acquire waits for a worker for a run of the given rank (clamped to the ranks there are);
// waited says whether it had to. It fails only when ctx ends first.
func (w *Workers) Acquire(ctx context.Context, rank int) (waited bool, err error) {
	w.mu.Lock()
	if w.free > 0 && w.queued() == 0 {
		w.free--
		w.mu.Unlock()
		return false, nil
	}
	ch := make(chan struct{})
	k := min(max(rank, 0), len(w.waiting)-1)
	w.waiting[k] = append(w.waiting[k], ch)
	w.mu.Unlock()
	select {
	case <-ch:
		return true, nil
	case <-ctx.Done():
		w.mu.Lock()
		for i, c := range w.waiting[k] {
			if c == ch {
				w.waiting[k] = append(w.waiting[k][:i], w.waiting[k][i+1:]...)
				w.mu.Unlock()
				return true, ctx.Err()
			}
		}
		w.mu.Unlock()
		// The worker was handed over meanwhile: pass it on.
		w.Release()
		return true, ctx.Err()
	}
}

// Release gives a worker back: to the first waiting run of the lowest rank, if any.
func (w *Workers) Release() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.waiting {
		if len(w.waiting[k]) > 0 {
			ch := w.waiting[k][0]
			w.waiting[k] = w.waiting[k][1:]
			close(ch)
			return
		}
	}
	w.free++
}

// queued counts the waiting runs; w.mu is held.
func (w *Workers) queued() int {
	n := 0
	for _, q := range w.waiting {
		n += len(q)
	}
	return n
}
