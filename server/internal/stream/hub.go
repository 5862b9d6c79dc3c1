package stream

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Hub holds the logs of runs that are executing or finished recently: a finished run's log for
// the retention, as long as the logs' bytes stay within maxBytes; past it, the logs of the runs
// that finished first go first (see trim).
type Hub struct {
	mu        sync.Mutex
	logs      map[string]*Log
	retention time.Duration
	swept     time.Time // when sweepLocked last looked at every log
	// maxBytes bounds bytes, the size of the logs' events (Log.size); 0 means no bound.
	maxBytes int64
	bytes    atomic.Int64
	evicted  atomic.Int64 // logs dropped for the bound, for tests and metrics
}

// NewHub returns a hub that keeps a finished run's log for retention, within maxBytes of events
// (0: no bound).
func NewHub(retention time.Duration, maxBytes int64) *Hub {
	return &Hub{logs: map[string]*Log{}, retention: retention, maxBytes: max(maxBytes, 0)}
}

// Bytes returns the size of the events of the logs in the hub.
func (h *Hub) Bytes() int64 { return h.bytes.Load() }

// Evicted counts the logs dropped to keep the hub within its bound.
func (h *Hub) Evicted() int64 { return h.evicted.Load() }

// addLocked puts a new log in the hub; the caller holds h.mu.
func (h *Hub) addLocked(runID string) *Log {
	l := NewLog()
	l.runID, l.hub = runID, h
	h.logs[runID] = l
	return l
}

// removeLocked takes a log out of the hub, and its bytes out of the total; the caller holds
// h.mu. Readers that hold the log keep reading it.
func (h *Hub) removeLocked(id string, l *Log) {
	delete(h.logs, id)
	l.mu.Lock()
	if l.hub == h {
		h.bytes.Add(-l.size)
		l.hub = nil
	}
	l.mu.Unlock()
}

// trim drops the logs of finished runs, those that finished first first, until the logs' bytes
// are within the bound. The logs of running runs are never dropped: they count, and make the
// finished ones go sooner. A dropped resumable run's events are still read from the database
// by whoever joins it; a dropped run that was not resumable can no longer be joined.
func (h *Hub) trim() {
	if h.maxBytes <= 0 || h.bytes.Load() <= h.maxBytes {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	type done struct {
		id string
		l  *Log
		at time.Time
	}
	var finished []done
	for id, l := range h.logs {
		l.mu.Lock()
		if l.done {
			finished = append(finished, done{id, l, l.doneAt})
		}
		l.mu.Unlock()
	}
	slices.SortFunc(finished, func(a, b done) int { return a.at.Compare(b.at) })
	for _, d := range finished {
		if h.bytes.Load() <= h.maxBytes {
			return
		}
		h.removeLocked(d.id, d.l)
		h.evicted.Add(1)
	}
}

// Open returns the run's log, creating it.
func (h *Hub) Open(runID string) *Log {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sweepLocked()
	l := h.logs[runID]
	if l == nil {
		l = h.addLocked(runID)
	}
	return l
}

// OpenMirror returns the run's log, and whether it was created by this call.
func (h *Hub) OpenMirror(runID string) (*Log, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sweepLocked()
	if l := h.logs[runID]; l != nil {
		return l, false
	}
	return h.addLocked(runID), true
}

// Get returns the run's log, or nil.
func (h *Hub) Get(runID string) *Log {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.logs[runID]
}

// Drop takes the run's log out of the hub.
func (h *Hub) Drop(runID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if l := h.logs[runID]; l != nil {
		h.removeLocked(runID, l)
	}
}

// Sweep drops the logs of runs that ended more than the retention ago; the server calls it
// every heartbeat, so that they go even when no run starts.
func (h *Hub) Sweep() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sweepLocked()
}

// sweepGap is the least time between two sweeps: a quarter of the retention, at most a second.
func (h *Hub) sweepGap() time.Duration {
	return min(max(h.retention/4, time.Millisecond), time.Second)
}

// sweepLocked is Sweep with h.mu held. It looks at every log, so it does so at most once per
// sweepGap: 10,000 runs starting together would otherwise cost 10,000 looks each.
func (h *Hub) sweepLocked() {
	now := time.Now()
	if now.Sub(h.swept) < h.sweepGap() {
		return
	}
	h.swept = now
	for id, l := range h.logs {
		l.mu.Lock()
		old := l.done && now.Sub(l.doneAt) > h.retention
		l.mu.Unlock()
		if old {
			h.removeLocked(id, l)
		}
	}
}
