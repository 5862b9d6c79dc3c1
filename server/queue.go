package server

import (
	"context"
	"errors"
	"sync"
	"time"
)

// LocalQueue is the in-process [Queue]: runs execute in goroutines of this process, at most
// limit at once: high-priority runs first, and runs of one priority in the order they were
// enqueued (see [Priority]). Runs waiting in it are lost if the process
// dies; the server finds them again at its next start (their status is still pending) or, when
// another process shares the database, once their lease expires.
type LocalQueue struct {
	mu      sync.Mutex
	exec    func(ctx context.Context, runID string) error
	waiting [priorityLevels][]string // by Priority.rank
	running int
	limit   int
	closed  bool
	wg      sync.WaitGroup
	timers  map[*time.Timer]struct{}
	ctx     context.Context
	cancel  context.CancelFunc
}

// NewLocalQueue returns a queue that executes up to limit runs at once (at least 1).
func NewLocalQueue(limit int) *LocalQueue {
	ctx, cancel := context.WithCancel(context.Background())
	return &LocalQueue{limit: max(limit, 1), ctx: ctx, cancel: cancel, timers: map[*time.Timer]struct{}{}}
}

// Start implements [Queue].
func (q *LocalQueue) Start(exec func(ctx context.Context, runID string) error) {
	q.mu.Lock()
	q.exec = exec
	q.mu.Unlock()
	q.pump()
}

// Enqueue implements [Queue]: the run is of normal priority.
func (q *LocalQueue) Enqueue(ctx context.Context, runID string) error {
	return q.EnqueuePriority(ctx, runID, PriorityNormal)
}

// EnqueuePriority implements [PriorityQueue].
func (q *LocalQueue) EnqueuePriority(_ context.Context, runID string, p Priority) error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return ErrShuttingDown
	}
	k := p.rank()
	q.waiting[k] = append(q.waiting[k], runID)
	q.mu.Unlock()
	q.pump()
	return nil
}

// next takes the first waiting run of the highest priority; q.mu is held.
func (q *LocalQueue) next() (string, Priority, bool) {
	for k := range q.waiting {
		if len(q.waiting[k]) > 0 {
			id := q.waiting[k][0]
			q.waiting[k] = q.waiting[k][1:]
			return id, [priorityLevels]Priority{PriorityHigh, PriorityNormal, PriorityLow}[k], true
		}
	}
	return "", "", false
}

func (q *LocalQueue) pump() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.exec != nil && !q.closed && q.running < q.limit {
		id, prio, ok := q.next()
		if !ok {
			break
		}
		q.running++
		q.wg.Add(1)
		exec := q.exec
		go func() {
			defer q.wg.Done()
			err := exec(q.ctx, id)
			q.mu.Lock()
			q.running--
			var re *RetryError
			if errors.As(err, &re) && !q.closed {
				var t *time.Timer
				t = time.AfterFunc(re.After, func() {
					q.mu.Lock()
					delete(q.timers, t)
					q.mu.Unlock()
					_ = q.EnqueuePriority(context.Background(), id, prio)
				})
				q.timers[t] = struct{}{}
			}
			q.mu.Unlock()
			q.pump()
		}()
	}
}

// Depth returns how many runs wait for a slot.
func (q *LocalQueue) Depth() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, w := range q.waiting {
		n += len(w)
	}
	return n
}

// Close implements [Queue]: it stops starting runs and waits for the executing ones until ctx
// ends, then cancels their context and waits for them to return.
func (q *LocalQueue) Close(ctx context.Context) error {
	q.mu.Lock()
	q.closed = true
	q.waiting = [priorityLevels][]string{}
	for t := range q.timers {
		t.Stop()
	}
	clear(q.timers)
	q.mu.Unlock()
	done := make(chan struct{})
	go func() { q.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		q.cancel()
		<-done
		return ctx.Err()
	}
}
