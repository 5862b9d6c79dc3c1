// Package periodic runs the server's background chores (TTL sweeps, cron ticks, lease
// renewals) on a ticker.
package periodic

import (
	"context"
	"time"
)

// Every calls fn every d, on a goroutine of its own, until stop is called; stop cancels fn's
// context and waits for the goroutine (and a call under way) to return.
func Every(d time.Duration, fn func(ctx context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			fn(ctx)
		}
	}()
	return func() { cancel(); <-done }
}
