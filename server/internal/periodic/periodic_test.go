package periodic

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// Every calls fn on every tick, and stop cancels the context of a call under way and waits for it.
func TestEveryStopsAndWaits(t *testing.T) {
	var calls atomic.Int32
	inCall := make(chan struct{}, 1)
	var sawCancel atomic.Bool
	stop := Every(time.Millisecond, func(ctx context.Context) {
		if calls.Add(1) == 3 {
			inCall <- struct{}{}
			<-ctx.Done()
			sawCancel.Store(true)
		}
	})
	<-inCall
	stop()
	if !sawCancel.Load() {
		t.Fatal("stop returned before the call under way saw its context cancelled")
	}
}
