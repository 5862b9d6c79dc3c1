package server

import (
	"context"
	"sync"
)

// Priority orders the runs waiting for a slot in a process: high ones start before normal
// ones, normal ones before low ones, and runs of one priority in the order they were queued. A
// run is created with one (the API's "priority" field, RunRequest.Priority); it orders nothing
// else (the runs of one thread still execute one at a time, in the order they were created).
type Priority string

// Run priorities; the empty Priority is normal.
const (
	PriorityLow    Priority = "low"
	PriorityNormal Priority = "normal"
	PriorityHigh   Priority = "high"
)

// priorityLevels is the number of priorities; rank numbers them from 0 (high) to 2 (low).
const priorityLevels = 3

func (p Priority) rank() int {
	switch p {
	case PriorityHigh:
		return 0
	case PriorityLow:
		return 2
	}
	return 1
}

// riverPriority is the River job priority of a run's: River starts 1 before 2 before 3.
func (p Priority) riverPriority() int { return p.rank() + 1 }

func priorityOfRiver(n int) Priority {
	switch n {
	case 1:
		return PriorityHigh
	case 3, 4:
		return PriorityLow
	}
	return PriorityNormal
}

// parsePriority checks the API's "priority" field.
func parsePriority(s string) (Priority, error) {
	switch p := Priority(s); p {
	case "":
		return PriorityNormal, nil
	case PriorityLow, PriorityNormal, PriorityHigh:
		return p, nil
	}
	return "", badRequest("use low, normal or high", "field \"priority\" is %q", s)
}

// PriorityQueue is a [Queue] that starts waiting runs by priority. Both queues of this package
// are; the server enqueues through EnqueuePriority when its queue has it, through Enqueue (every
// run normal) otherwise.
type PriorityQueue interface {
	Queue
	EnqueuePriority(ctx context.Context, runID string, p Priority) error
}

// enqueue hands a run to the queue with its priority.
func (r *runner) enqueue(ctx context.Context, runID string, p Priority) error {
	if pq, ok := r.q.(PriorityQueue); ok {
		return pq.EnqueuePriority(ctx, runID, p)
	}
	return r.q.Enqueue(ctx, runID)
}

// runPriority is the priority a run was created with.
func runPriority(run *Run) Priority {
	if run.Kwargs == nil {
		return PriorityNormal
	}
	p, _ := parsePriority(run.Kwargs.Priority)
	return p
}

// prioSlots bounds the runs executing at once in a process; a run waiting for a slot gets one
// before every run of a lower priority waiting, and after those of its priority that waited
// longer.
type prioSlots struct {
	mu      sync.Mutex
	free    int
	waiting [priorityLevels][]chan struct{}
}

func newPrioSlots(n int) *prioSlots { return &prioSlots{free: max(n, 1)} }

// tryAcquire takes a slot if one is free and nobody waits for one.
func (s *prioSlots) tryAcquire() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.free > 0 && s.queued() == 0 {
		s.free--
		return true
	}
	return false
}

// acquire waits for a slot; waited says whether it had to. It fails only when ctx ends first.
func (s *prioSlots) acquire(ctx context.Context, p Priority) (waited bool, err error) {
	s.mu.Lock()
	if s.free > 0 && s.queued() == 0 {
		s.free--
		s.mu.Unlock()
		return false, nil
	}
	ch := make(chan struct{})
	k := p.rank()
	s.waiting[k] = append(s.waiting[k], ch)
	s.mu.Unlock()
	select {
	case <-ch:
		return true, nil
	case <-ctx.Done():
		s.mu.Lock()
		for i, c := range s.waiting[k] {
			if c == ch {
				s.waiting[k] = append(s.waiting[k][:i], s.waiting[k][i+1:]...)
				s.mu.Unlock()
				return true, ctx.Err()
			}
		}
		s.mu.Unlock()
		// The slot was handed over meanwhile: pass it on.
		s.release()
		return true, ctx.Err()
	}
}

// release gives a slot back: to the first waiter of the highest priority, if any.
func (s *prioSlots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.waiting {
		if len(s.waiting[k]) > 0 {
			ch := s.waiting[k][0]
			s.waiting[k] = s.waiting[k][1:]
			close(ch)
			return
		}
	}
	s.free++
}

// queued counts the waiters; s.mu is held.
func (s *prioSlots) queued() int {
	n := 0
	for _, w := range s.waiting {
		n += len(w)
	}
	return n
}
