package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// streamEvent is one event of a run's stream, numbered from 1 in the order the run produced it.
// The number is the SSE id, so a client that reconnects with Last-Event-ID n gets events n+1 on.
type streamEvent struct {
	Seq   int64           `json:"id"`
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data"`
	// Tail, when set, is the rest of the data, shared with other events: the metadata that ends
	// every token of a message (see tokenEncoder). Only logs that are not written to the
	// database or a bus (runs that are not resumable) hold events with a tail; readers write
	// Data then Tail (appendData).
	Tail json.RawMessage `json:"-"`
}

// appendData appends the event's whole data to buf.
func (e streamEvent) appendData(buf []byte) []byte {
	return append(append(buf, e.Data...), e.Tail...)
}

// data returns the event's whole data.
func (e streamEvent) data() json.RawMessage {
	if len(e.Tail) == 0 {
		return e.Data
	}
	return e.appendData(make([]byte, 0, len(e.Data)+len(e.Tail)))
}

// mode returns the stream mode an event belongs to: its name without a subgraph namespace, and
// "messages" for messages/partial and friends.
func (e streamEvent) mode() string {
	name := e.Event
	if i := strings.IndexByte(name, '|'); i >= 0 {
		name = name[:i]
	}
	if i := strings.IndexByte(name, '/'); i >= 0 {
		name = name[:i]
	}
	return name
}

// runLog is the event log of one run. The run appends; any number of readers follow it from
// any position without slowing the run: a reader that falls behind reads the log later, it never
// holds a buffer the run must fill.
type runLog struct {
	mu        sync.Mutex
	events    []streamEvent
	first     int64 // Seq of events[0] minus 1 (events before it were loaded from the database)
	done      bool
	doneAt    time.Time
	wake      chan struct{} // closed on the first append after a reader took it, and on close
	watched   bool          // a reader took wake (since): the next append closes it
	resumable bool
	// size is the bytes of the events' data; hub, while the log is in it, the hub whose total
	// counts them.
	size int64
	hub  *hub
	// runID names the log's run in the database (set by the executing process; see outbox).
	runID string
	// pmu serialises the writing of this log's events to the database and the bus, so that
	// they are written and published in order; durable is the Seq of the last event written
	// (and published), pending whether the outbox holds the log for its next batch.
	pmu     sync.Mutex
	durable int64
	pending bool
	// output is what wait and join answer once the run has ended (see runner.waitOutput);
	// makeOutput, when set, makes it at the first call of result.
	output     any
	makeOutput func() any
	// stopMirror, when set, stops the goroutine that fills this log from another replica's
	// events (see Server.mirror).
	stopMirror func()
}

func newRunLog() *runLog { return &runLog{wake: make(chan struct{})} }

// token reports whether an event is a token of the messages stream, which the outbox writes
// in batches rather than before it is shown (see outbox).
func (e streamEvent) token() bool { return e.mode() == "messages" }

func (l *runLog) append(event string, data json.RawMessage) streamEvent {
	return l.appendTail(event, data, nil)
}

// appendTail appends an event whose data is head followed by tail (see streamEvent.Tail).
func (l *runLog) appendTail(event string, head, tail json.RawMessage) streamEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	ev := streamEvent{Seq: l.first + int64(len(l.events)) + 1, Event: event, Data: head, Tail: tail}
	l.events = append(l.events, ev)
	// The tail is shared by the tokens of a message; counting it for each overstates a little.
	n := int64(len(event) + len(head) + len(tail))
	l.size += n
	if l.hub != nil {
		l.hub.bytes.Add(n)
	}
	if l.watched {
		// Only a channel a reader holds needs closing: a log nobody follows makes none.
		close(l.wake)
		l.wake = make(chan struct{})
		l.watched = false
	}
	return ev
}

// setEventsLocked replaces the log's events (with those the database kept), counting their
// bytes in place of the old ones'; the caller holds l.mu.
func (l *runLog) setEventsLocked(evs []streamEvent) {
	var n int64
	for _, ev := range evs {
		n += int64(len(ev.Event) + len(ev.Data) + len(ev.Tail))
	}
	if l.hub != nil {
		l.hub.bytes.Add(n - l.size)
	}
	l.events, l.size = evs, n
}

func (l *runLog) setOutput(v any) {
	l.mu.Lock()
	l.output, l.makeOutput = v, nil
	l.mu.Unlock()
}

// setOutputFunc sets the output to what make returns, made when it is first asked for: most
// runs' outputs (a streamed run's) are never read.
func (l *runLog) setOutputFunc(make func() any) {
	l.mu.Lock()
	l.output, l.makeOutput = nil, make
	l.mu.Unlock()
}

func (l *runLog) result() any {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.makeOutput != nil {
		l.output, l.makeOutput = l.makeOutput(), nil
	}
	return l.output
}

func (l *runLog) close() {
	l.mu.Lock()
	if l.done {
		l.mu.Unlock()
		return
	}
	l.done, l.doneAt = true, time.Now()
	close(l.wake)
	l.wake = make(chan struct{})
	l.watched = false
	h := l.hub
	l.mu.Unlock()
	if h != nil {
		h.trim()
	}
}

// since returns the events after seq, whether the log is closed, and a channel closed on the
// next change.
func (l *runLog) since(seq int64) ([]streamEvent, bool, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := seq - l.first
	if i < 0 {
		i = 0
	}
	var out []streamEvent
	if i < int64(len(l.events)) {
		out = l.events[i:len(l.events):len(l.events)]
	}
	l.watched = true
	return out, l.done, l.wake
}

// unwritten returns the events after the durable mark; the caller holds l.pmu.
func (l *runLog) unwritten() []streamEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := l.durable - l.first
	if i < 0 {
		i = 0
	}
	if i >= int64(len(l.events)) {
		return nil
	}
	return l.events[i:len(l.events):len(l.events)]
}

func (l *runLog) last() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.first + int64(len(l.events))
}

// hub holds the logs of runs that are executing or finished recently: a finished run's log
// for the retention, as long as the logs' bytes stay within maxBytes; past it, the logs of the
// runs that finished first go first (see trim).
type hub struct {
	mu        sync.Mutex
	logs      map[string]*runLog
	retention time.Duration
	swept     time.Time // when sweepLocked last looked at every log
	// maxBytes bounds bytes, the size of the logs' events (runLog.size); 0 means no bound.
	maxBytes int64
	bytes    atomic.Int64
	evicted  atomic.Int64 // logs dropped for the bound, for tests and metrics
}

func newHub(retention time.Duration, maxBytes int64) *hub {
	return &hub{logs: map[string]*runLog{}, retention: retention, maxBytes: max(maxBytes, 0)}
}

// add puts a new log in the hub; the caller holds h.mu.
func (h *hub) addLocked(runID string) *runLog {
	l := newRunLog()
	l.runID, l.hub = runID, h
	h.logs[runID] = l
	return l
}

// removeLocked takes a log out of the hub, and its bytes out of the total; the caller holds
// h.mu. Readers that hold the log keep reading it.
func (h *hub) removeLocked(id string, l *runLog) {
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
func (h *hub) trim() {
	if h.maxBytes <= 0 || h.bytes.Load() <= h.maxBytes {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	type done struct {
		id string
		l  *runLog
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

// open returns the run's log, creating it.
func (h *hub) open(runID string) *runLog {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sweepLocked()
	l := h.logs[runID]
	if l == nil {
		l = h.addLocked(runID)
	}
	return l
}

// openMirror returns the run's log, and whether it was created by this call.
func (h *hub) openMirror(runID string) (*runLog, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sweepLocked()
	if l := h.logs[runID]; l != nil {
		return l, false
	}
	return h.addLocked(runID), true
}

// takeMirror stops a log's mirroring, for the process that is about to execute the run.
func (l *runLog) takeMirror() bool {
	l.mu.Lock()
	stop := l.stopMirror
	l.stopMirror = nil
	l.mu.Unlock()
	if stop != nil {
		stop()
	}
	return stop != nil
}

func (h *hub) get(runID string) *runLog {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.logs[runID]
}

// sweepGap is the least time between two sweeps: a quarter of the retention, at most a second.
func (h *hub) sweepGap() time.Duration {
	return min(max(h.retention/4, time.Millisecond), time.Second)
}

func (h *hub) drop(runID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if l := h.logs[runID]; l != nil {
		h.removeLocked(runID, l)
	}
}

// sweep drops the logs of runs that ended more than the retention ago; the runner calls it
// every heartbeat, so that they go even when no run starts.
func (h *hub) sweep() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sweepLocked()
}

// sweepLocked is sweep with h.mu held. It looks at every log, so it does so at most once per
// sweepGap: 10,000 runs starting together would otherwise cost 10,000 looks each.
func (h *hub) sweepLocked() {
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

// The outbox writes the events of resumable runs (every run's, when replicas share a bus) to
// the database and publishes them on the bus. Its rule:
//
//   - a token of the messages stream (messages, messages/partial, ... in any subgraph) is shown
//     to readers at once, and written, with every other run's pending tokens, in one batch at
//     most outboxInterval later;
//   - any other event (metadata, values, updates, custom, tasks, checkpoints, debug, error, end)
//     is written, after whatever its run had not written yet, before any reader sees it.
//
// So when a client sees an event that follows a checkpoint (a node's update, the values after a
// superstep), everything before it is durable. What a crash can lose is the tail of tokens the
// node that was running streamed in its last interval; that node had not checkpointed, so it
// runs again when the run resumes and streams its tokens again, numbered on from the last event
// the database kept: the numbering stays gapless and without duplicates. A client that saw some
// of the lost tokens and rejoins with Last-Event-ID receives the resumed run's events after that
// number (docs/server.md says what this means for it).
type outbox struct {
	meta *metaDB
	bus  *bus // nil: no replicas to publish to
	log  *slog.Logger

	mu    sync.Mutex
	queue []*runLog // logs with tokens to write; runLog.pending is guarded by mu

	stop chan struct{}
	done chan struct{}
}

// outboxInterval is the longest a token waits to be written; outboxChunk bounds the rows of one
// INSERT on SQLite.
const (
	outboxInterval = 50 * time.Millisecond
	outboxChunk    = 500
)

func newOutbox(meta *metaDB, b *bus, log *slog.Logger) *outbox {
	o := &outbox{meta: meta, bus: b, log: log, stop: make(chan struct{}), done: make(chan struct{})}
	go o.loop()
	return o
}

func (o *outbox) loop() {
	defer close(o.done)
	t := time.NewTicker(outboxInterval)
	defer t.Stop()
	for {
		select {
		case <-o.stop:
			o.flush(context.Background())
			return
		case <-t.C:
			o.flush(context.Background())
		}
	}
}

// close writes what is pending and stops the outbox.
func (o *outbox) close() {
	select {
	case <-o.stop:
	default:
		close(o.stop)
	}
	<-o.done
}

// add puts a log with unwritten tokens in the next batch.
func (o *outbox) add(l *runLog) {
	o.mu.Lock()
	if !l.pending {
		l.pending = true
		o.queue = append(o.queue, l)
	}
	o.mu.Unlock()
}

// writeNow writes the log's unwritten events and a new event, then appends the new event for
// readers and publishes what was written; it returns the event.
func (o *outbox) writeNow(ctx context.Context, l *runLog, event string, data json.RawMessage) streamEvent {
	l.pmu.Lock()
	defer l.pmu.Unlock()
	old := l.unwritten()
	evs := make([]streamEvent, 0, len(old)+1)
	evs = append(evs, old...)
	evs = append(evs, streamEvent{Seq: l.last() + 1, Event: event, Data: data})
	err := o.write(ctx, []eventBatch{{runID: l.runID, events: evs}})
	ev := l.append(event, data)
	if err != nil {
		o.log.Warn("cannot persist stream events; retrying with the next batch", "run_id", l.runID, "err", err)
		o.add(l)
		return ev
	}
	l.durable = ev.Seq
	return ev
}

// sync writes and publishes the log's unwritten events now.
func (o *outbox) sync(ctx context.Context, l *runLog) {
	l.pmu.Lock()
	defer l.pmu.Unlock()
	evs := l.unwritten()
	if len(evs) == 0 {
		return
	}
	if err := o.write(ctx, []eventBatch{{runID: l.runID, events: evs}}); err != nil {
		o.log.Warn("cannot persist stream events", "run_id", l.runID, "err", err)
		return
	}
	l.durable = evs[len(evs)-1].Seq
}

// discard gives up the log's unwritten events: the run stops here without writing them (its
// lease went to another worker, which numbers its events on from the durable ones).
func (o *outbox) discard(l *runLog) {
	l.pmu.Lock()
	l.durable = l.last()
	l.pmu.Unlock()
}

// flush writes every pending log's tokens in one batch and publishes them.
func (o *outbox) flush(ctx context.Context) {
	o.mu.Lock()
	logs := o.queue
	o.queue = nil
	for _, l := range logs {
		l.pending = false
	}
	o.mu.Unlock()
	if len(logs) == 0 {
		return
	}
	batches := make([]eventBatch, 0, len(logs))
	locked := make([]*runLog, 0, len(logs))
	for _, l := range logs {
		l.pmu.Lock()
		evs := l.unwritten()
		if len(evs) == 0 {
			l.pmu.Unlock()
			continue
		}
		locked = append(locked, l)
		batches = append(batches, eventBatch{runID: l.runID, events: evs})
	}
	defer func() {
		for _, l := range locked {
			l.pmu.Unlock()
		}
	}()
	if len(batches) == 0 {
		return
	}
	if err := o.write(ctx, batches); err != nil {
		o.log.Warn("cannot persist stream events; retrying with the next batch", "runs", len(batches), "err", err)
		for _, l := range locked {
			o.add(l)
		}
		return
	}
	for i, l := range locked {
		evs := batches[i].events
		l.durable = evs[len(evs)-1].Seq
	}
}

// write writes events to the database and then publishes them on the bus, if there is one: on
// Postgres with its own NOTIFY bus in one statement, which notifies as it commits. An error is
// the database's; the bus failing only costs followers a read of the database.
func (o *outbox) write(ctx context.Context, batches []eventBatch) error {
	b := o.bus
	if b != nil && b.kind == "postgres" && o.meta.postgres {
		return o.meta.appendEventRowsNotify(ctx, batches, busChannel, b.eventPayloads(batches))
	}
	if err := o.meta.appendEventRows(ctx, batches); err != nil {
		return err
	}
	if b != nil {
		if err := b.publishEvents(ctx, batches); err != nil {
			o.log.Warn("cannot publish stream events; followers read them from the database", "err", err)
		}
	}
	return nil
}
