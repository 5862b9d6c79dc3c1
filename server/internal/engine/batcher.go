package engine

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// Batcher hands items to a flush function in batches, on a goroutine of its own: an item added
// wakes it, it waits a little for more (so one flush takes all that arrived meanwhile), then
// flushes what is pending, at most a batch size at a time. A batch that fails stays pending and
// is tried again a second later. The run engine deletes finished stateless runs' threads so.
type Batcher[T any] struct {
	gather time.Duration
	size   int
	flush  func(ctx context.Context, batch []T) error
	what   string
	log    *slog.Logger

	mu      sync.Mutex
	pending []T
	wake    chan struct{} // one buffered signal: something is pending
	stop    chan struct{}
	done    chan struct{}
}

// flushTimeout bounds one flush.
const flushTimeout = 30 * time.Second

// NewBatcher starts a batcher that waits gather after an item arrives and flushes at most size
// items at a time; what names the items in its log.
func NewBatcher[T any](gather time.Duration, size int, what string, flush func(ctx context.Context, batch []T) error, log *slog.Logger) *Batcher[T] {
	b := &Batcher[T]{gather: gather, size: max(size, 1), flush: flush, what: what, log: log,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go b.loop()
	return b
}

// Add hands an item to the batcher.
func (b *Batcher[T]) Add(item T) {
	b.mu.Lock()
	b.pending = append(b.pending, item)
	b.mu.Unlock()
	b.poke()
}

// Stop flushes what is pending (once) and stops the batcher.
func (b *Batcher[T]) Stop() {
	close(b.stop)
	<-b.done
}

func (b *Batcher[T]) poke() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

func (b *Batcher[T]) loop() {
	defer close(b.done)
	for {
		select {
		case <-b.stop:
			b.flushPending()
			return
		case <-b.wake:
		}
		// Let more arrive meanwhile: one flush takes them all.
		select {
		case <-b.stop:
			b.flushPending()
			return
		case <-time.After(b.gather):
		}
		b.flushPending()
	}
}

// flushPending flushes the pending items, a batch at a time. A batch that fails goes back to
// the front and is tried again a second later.
func (b *Batcher[T]) flushPending() {
	for {
		b.mu.Lock()
		batch := slices.Clone(b.pending[:min(len(b.pending), b.size)])
		b.pending = b.pending[len(batch):]
		if len(b.pending) == 0 {
			b.pending = nil
		}
		b.mu.Unlock()
		if len(batch) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
		err := b.flush(ctx, batch)
		cancel()
		if err != nil {
			b.log.Warn("cannot flush a batch; retrying", "what", b.what, "items", len(batch), "err", err)
			b.mu.Lock()
			b.pending = append(batch, b.pending...)
			b.mu.Unlock()
			time.AfterFunc(time.Second, b.poke)
			return
		}
	}
}
