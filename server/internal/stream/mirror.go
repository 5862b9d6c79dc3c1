package stream

import (
	"context"
	"time"
)

// RunSource is what a mirror reads of a run from the database: its events, and whether it has
// ended (its record has a final status).
type RunSource interface {
	// Events returns the run's events numbered after after, in order.
	Events(ctx context.Context, runID string, after int64) ([]Event, error)
	// Ended reports whether the run's status is final.
	Ended(ctx context.Context, runID string) (bool, error)
}

// Mirror returns a log on h that follows a run executing in another process: it holds the
// events already in the database and appends those the bus b brings, reading the database again
// whenever it sees a gap, and closes when the run ends (the "end" event, or a final status in
// the database, checked every second). fresh says the run was just created, so that the
// database has none of its events yet (the subscription, made before Mirror returns, sees every
// one). A log h already holds for the run is returned as it is.
func Mirror(h *Hub, b *Bus, src RunSource, runID string, fresh bool) *Log {
	l, created := h.OpenMirror(runID)
	if !created {
		return l
	}
	ch, unsub := b.Subscribe(runID)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	l.StartMirror(func() { cancel(); <-stopped })
	go func() {
		defer close(stopped)
		defer unsub()
		fill := func() {
			evs, err := src.Events(ctx, runID, l.Last())
			if err != nil {
				return
			}
			for _, ev := range evs {
				if ev.Seq == l.Last()+1 {
					l.Append(ev.Event, ev.Data)
				}
			}
		}
		finish := func() {
			fill()
			// The executing replica writes the run's final status just after its end event;
			// close once it is there, as a local run's log does, so that whoever was waiting
			// finds the status final.
			for range 100 {
				if ended, err := src.Ended(ctx, runID); err != nil || ended {
					break
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
			if ctx.Err() != nil {
				// Stopped meanwhile: this process took the run, and the log is its now.
				return
			}
			l.Close()
		}
		if !fresh {
			fill()
		}
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case m := <-ch:
				switch {
				case m.Seq <= l.Last():
				case m.Seq == l.Last()+1 && m.Data != nil:
					l.Append(m.Event, m.Data)
				default:
					fill()
				}
				if m.Event == "end" {
					finish()
					return
				}
			case <-tick.C:
				ended, err := src.Ended(ctx, runID)
				if ctx.Err() != nil {
					return // stopped: the query failed for that, not for the run
				}
				if err != nil || ended {
					finish()
					return
				}
			}
		}
	}()
	return l
}
