package engine

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/trellis-go/trellis/server/internal/periodic"
)

// Leases are the run leases this process's workers hold. A worker holds a run's lease while it
// executes the run (and while it finishes writing it); every heartbeat the process renews all of
// them in one call, and a lease that call did not keep was taken by another worker: the run is
// stopped here.
//
// Leases are safe for concurrent use.
type Leases struct {
	mu   sync.Mutex
	held map[string]held
	stop func()
}

type held struct {
	owner string
	lost  func() // stops the run, whose lease another worker took; nil once the run is done
}

// Renewer renews the leases of runs (by their IDs) in one call and returns those it kept.
type Renewer func(ctx context.Context, runIDs []string) (kept map[string]bool, err error)

// NewLeases starts renewing the leases held, every interval, with renew, until Stop.
func NewLeases(every time.Duration, renew Renewer, log *slog.Logger) *Leases {
	l := &Leases{held: map[string]held{}}
	l.stop = periodic.Every(every, func(ctx context.Context) { l.renew(ctx, renew, log) })
	return l
}

// Hold registers the lease on run that owner (a worker of this process) claimed; lost, when not
// nil, stops the run if another worker takes the lease. Drop it before releasing the lease.
func (l *Leases) Hold(run, owner string, lost func()) {
	l.mu.Lock()
	l.held[run] = held{owner: owner, lost: lost}
	l.mu.Unlock()
}

// Holding reports whether this process holds run's lease.
func (l *Leases) Holding(run string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.held[run]
	return ok
}

// Drop stops renewing run's lease.
func (l *Leases) Drop(run string) {
	l.mu.Lock()
	delete(l.held, run)
	l.mu.Unlock()
}

// Stop stops the renewals, once this process's runs have stopped.
func (l *Leases) Stop() { l.stop() }

// renew renews every held lease in one call and stops the runs whose lease was not kept (unless
// the run was dropped, or held again by another of this process's workers, meanwhile).
func (l *Leases) renew(ctx context.Context, renew Renewer, log *slog.Logger) {
	l.mu.Lock()
	ids := make([]string, 0, len(l.held))
	owners := make(map[string]string, len(l.held))
	for id, h := range l.held {
		ids = append(ids, id)
		owners[id] = h.owner
	}
	l.mu.Unlock()
	kept, err := renew(ctx, ids)
	if err != nil {
		if ctx.Err() == nil {
			log.Warn("cannot renew run leases", "runs", len(ids), "err", err)
		}
		return
	}
	for _, id := range ids {
		if kept[id] {
			continue
		}
		l.mu.Lock()
		h, ok := l.held[id]
		if ok && h.owner == owners[id] {
			delete(l.held, id)
		} else {
			ok = false
		}
		l.mu.Unlock()
		if ok && h.lost != nil {
			log.Error("run lease lost; stopping the run here", "run_id", id)
			h.lost()
		}
	}
}
