package engine

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestBatcherBatches: items added together are flushed together, at most size at a time, and in
// order; a batch that fails is flushed again, whole, before anything after it.
func TestBatcherBatches(t *testing.T) {
	var mu sync.Mutex
	var flushed [][]int
	failOnce := true
	done := make(chan struct{})
	b := NewBatcher(20*time.Millisecond, 3, "numbers", func(ctx context.Context, batch []int) error {
		mu.Lock()
		defer mu.Unlock()
		if failOnce && batch[0] == 3 {
			failOnce = false
			return errors.New("database down")
		}
		flushed = append(flushed, slices.Clone(batch))
		if batch[len(batch)-1] == 6 {
			close(done)
		}
		return nil
	}, discard)
	defer b.Stop()
	for i := range 7 {
		b.Add(i)
	}
	<-done
	mu.Lock()
	defer mu.Unlock()
	want := [][]int{{0, 1, 2}, {3, 4, 5}, {6}}
	if !slices.EqualFunc(flushed, want, slices.Equal) {
		t.Fatalf("flushed %v, want %v", flushed, want)
	}
}

// TestBatcherStopFlushes: Stop flushes what is pending before it returns.
func TestBatcherStopFlushes(t *testing.T) {
	var got []string
	b := NewBatcher(time.Hour, 10, "words", func(ctx context.Context, batch []string) error {
		got = append(got, batch...)
		return nil
	}, discard)
	b.Add("a")
	b.Add("b")
	b.Stop()
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("Stop flushed %v", got)
	}
}
