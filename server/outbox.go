package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/trellis-go/trellis/server/internal/stream"
)

// streamEvent is the server's name of a run's stream event (stream.Event), which the metadata
// database reads and writes.
type streamEvent = stream.Event

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
	meta *metaStore
	bus  *stream.Bus // nil: no replicas to publish to
	log  *slog.Logger

	mu     sync.Mutex
	queue  []*stream.Log            // logs with tokens to write, in the order they came
	queued map[*stream.Log]struct{} // the logs in queue

	stop chan struct{}
	done chan struct{}
}

// outboxInterval is the longest a token waits to be written; outboxChunk bounds the rows of one
// INSERT on SQLite.
const (
	outboxInterval = 50 * time.Millisecond
	outboxChunk    = 500
)

func newOutbox(meta *metaStore, b *stream.Bus, log *slog.Logger) *outbox {
	o := &outbox{meta: meta, bus: b, log: log, queued: map[*stream.Log]struct{}{}, stop: make(chan struct{}), done: make(chan struct{})}
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
func (o *outbox) add(l *stream.Log) {
	o.mu.Lock()
	if _, ok := o.queued[l]; !ok {
		o.queued[l] = struct{}{}
		o.queue = append(o.queue, l)
	}
	o.mu.Unlock()
}

// writeNow writes the log's unwritten events and a new event, then appends the new event for
// readers and publishes what was written; it returns the event.
func (o *outbox) writeNow(ctx context.Context, l *stream.Log, event string, data json.RawMessage) stream.Event {
	l.LockWrites()
	defer l.UnlockWrites()
	old := l.Unwritten()
	evs := make([]stream.Event, 0, len(old)+1)
	evs = append(evs, old...)
	evs = append(evs, stream.Event{Seq: l.Last() + 1, Event: event, Data: data})
	err := o.write(ctx, []eventBatch{{runID: l.RunID(), events: evs}})
	ev := l.Append(event, data)
	if err != nil {
		o.log.Warn("cannot persist stream events; retrying with the next batch", "run_id", l.RunID(), "err", err)
		o.add(l)
		return ev
	}
	l.SetDurable(ev.Seq)
	return ev
}

// sync writes and publishes the log's unwritten events now.
func (o *outbox) sync(ctx context.Context, l *stream.Log) {
	l.LockWrites()
	defer l.UnlockWrites()
	evs := l.Unwritten()
	if len(evs) == 0 {
		return
	}
	if err := o.write(ctx, []eventBatch{{runID: l.RunID(), events: evs}}); err != nil {
		o.log.Warn("cannot persist stream events", "run_id", l.RunID(), "err", err)
		return
	}
	l.SetDurable(evs[len(evs)-1].Seq)
}

// discard gives up the log's unwritten events: the run stops here without writing them (its
// lease went to another worker, which numbers its events on from the durable ones).
func (o *outbox) discard(l *stream.Log) {
	l.LockWrites()
	l.SetDurable(l.Last())
	l.UnlockWrites()
}

// flush writes every pending log's tokens in one batch and publishes them.
func (o *outbox) flush(ctx context.Context) {
	o.mu.Lock()
	logs := o.queue
	o.queue = nil
	for _, l := range logs {
		delete(o.queued, l)
	}
	o.mu.Unlock()
	if len(logs) == 0 {
		return
	}
	batches := make([]eventBatch, 0, len(logs))
	locked := make([]*stream.Log, 0, len(logs))
	for _, l := range logs {
		l.LockWrites()
		evs := l.Unwritten()
		if len(evs) == 0 {
			l.UnlockWrites()
			continue
		}
		locked = append(locked, l)
		batches = append(batches, eventBatch{runID: l.RunID(), events: evs})
	}
	defer func() {
		for _, l := range locked {
			l.UnlockWrites()
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
		l.SetDurable(evs[len(evs)-1].Seq)
	}
}

// write writes events to the database and then publishes them on the bus, if there is one: on
// Postgres with its own NOTIFY bus in one statement, which notifies as it commits. An error is
// the database's; the bus failing only costs followers a read of the database.
func (o *outbox) write(ctx context.Context, batches []eventBatch) error {
	b := o.bus
	if b != nil && b.Kind() == "postgres" && o.meta.Postgres() {
		return o.meta.appendEventRowsNotify(ctx, batches, busChannel, b.EventPayloads(streamBatches(batches)))
	}
	if err := o.meta.appendEventRows(ctx, batches); err != nil {
		return err
	}
	if b != nil {
		if err := b.PublishEvents(ctx, streamBatches(batches)); err != nil {
			o.log.Warn("cannot publish stream events; followers read them from the database", "err", err)
		}
	}
	return nil
}

// streamBatches gives the bus the batches the database writes.
func streamBatches(batches []eventBatch) []stream.Batch {
	out := make([]stream.Batch, len(batches))
	for i, b := range batches {
		out[i] = stream.Batch{RunID: b.runID, Events: b.events}
	}
	return out
}
