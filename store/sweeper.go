package store

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// StartSweeper calls s.Sweep every interval in a goroutine until the returned stop function is
// called; stop waits for a sweep under way to finish. Backends call it when
// [Config.SweepInterval] is set, and stop it in Close.
func StartSweeper(s Sweeper, interval time.Duration, log *slog.Logger, backend string) (stop func()) {
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				n, err := s.Sweep(ctx)
				switch {
				case err != nil && ctx.Err() == nil:
					log.Warn("store: sweep failed", "backend", backend, "err", err)
				case n > 0:
					log.Debug("store: swept expired items", "backend", backend, "deleted", n)
				}
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			wg.Wait()
		})
	}
}
