package stream

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"
)

// Outbox writes the events of resumable runs (every run's, when replicas share a bus) to the
// database and publishes them on the bus. Its rule:
//
//   - a token of the messages stream (messages, messages/partial, ... in any subgraph), and the
//     metadata event that opens an attempt's stream (Event.Batched), is shown to readers of
//     this process at once, and written, with every other run's pending ones, in one batch at
//     most FlushInterval later, or sooner with its run's next other event;
//   - any other event (values, updates, custom, tasks, checkpoints, debug, error, end) is
//     written, after whatever its run had not written yet, before any reader sees it.
//
// So when a client sees an event that follows a checkpoint (a node's update, the values after a
// superstep), everything before it is durable. What a crash can lose is the tail of tokens the
// node that was running streamed in its last interval (or an attempt's metadata event, when
// nothing followed it yet); that node had not checkpointed, so it runs again when the run
// resumes and streams its tokens again, numbered on from the last event the database kept: the
// numbering stays gapless and without duplicates. A client that saw some of the lost tokens and
// rejoins with Last-Event-ID receives the resumed run's events after that number (docs/server.md
// says what this means for it). Batching the metadata event saves a statement of every run: its
// first values event, written right after the run's first checkpoint, takes it along.
type Outbox struct {
	db     EventWriter
	bus    *Bus // nil: no replicas to publish to
	notify bool // db writes and notifies the bus's Postgres channel in one statement
	log    *slog.Logger

	mu     sync.Mutex
	queue  []*Log            // logs with tokens to write, in the order they came
	queued map[*Log]struct{} // the logs in queue

	stop chan struct{}
	done chan struct{}
}

// FlushInterval is the longest a token waits to be written.
const FlushInterval = 50 * time.Millisecond

// EventWriter writes runs' events to the database.
type EventWriter interface {
	// WriteEvents writes the batches in one transaction.
	WriteEvents(ctx context.Context, batches []Batch) error
	// WriteEventsNotify writes the batches and sends payloads with NOTIFY on channel, in one
	// statement (Postgres).
	WriteEventsNotify(ctx context.Context, batches []Batch, channel string, payloads []string) error
}

// NewOutbox starts an outbox writing to db and publishing on b (nil: no replicas). With notify,
// db is the Postgres database whose LISTEN/NOTIFY b is: the events are written and published in
// one statement.
func NewOutbox(db EventWriter, b *Bus, notify bool, log *slog.Logger) *Outbox {
	o := &Outbox{db: db, bus: b, notify: notify && b != nil, log: log, queued: map[*Log]struct{}{}, stop: make(chan struct{}), done: make(chan struct{})}
	go o.loop()
	return o
}

func (o *Outbox) loop() {
	defer close(o.done)
	t := time.NewTicker(FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-o.stop:
			o.Flush(context.Background())
			return
		case <-t.C:
			o.Flush(context.Background())
		}
	}
}

// Close writes what is pending and stops the outbox.
func (o *Outbox) Close() {
	select {
	case <-o.stop:
	default:
		close(o.stop)
	}
	<-o.done
}

// Add puts a log with unwritten tokens in the next batch.
func (o *Outbox) Add(l *Log) {
	o.mu.Lock()
	if _, ok := o.queued[l]; !ok {
		o.queued[l] = struct{}{}
		o.queue = append(o.queue, l)
	}
	o.mu.Unlock()
}

// WriteNow writes the log's unwritten events and a new event, then appends the new event for
// readers and publishes what was written; it returns the event.
func (o *Outbox) WriteNow(ctx context.Context, l *Log, event string, data json.RawMessage) Event {
	ev, _ := o.writeNow(ctx, l, event, data, o.write)
	return ev
}

// WriteNowWith is WriteNow for an outbox that notifies through its database, with write doing
// the database's part: it must write the batches and notify the payloads on the channel as
// EventWriter.WriteEventsNotify does, and may do more in the same statement (a run's end writes
// its status with its end event). It reports false, doing nothing, for any other outbox: the
// caller then writes its part on its own. An error is write's; the events are then appended for
// readers and left for the next batch, as WriteNow leaves them.
func (o *Outbox) WriteNowWith(ctx context.Context, l *Log, event string, data json.RawMessage,
	write func(ctx context.Context, batches []Batch, channel string, payloads []string) error) (bool, error) {
	if !o.notify {
		return false, nil
	}
	_, err := o.writeNow(ctx, l, event, data, func(ctx context.Context, batches []Batch) error {
		return write(ctx, batches, Channel, o.bus.EventPayloads(batches))
	})
	return true, err
}

func (o *Outbox) writeNow(ctx context.Context, l *Log, event string, data json.RawMessage, write func(context.Context, []Batch) error) (Event, error) {
	l.LockWrites()
	defer l.UnlockWrites()
	old := l.Unwritten()
	evs := make([]Event, 0, len(old)+1)
	evs = append(evs, old...)
	evs = append(evs, Event{Seq: l.Last() + 1, Event: event, Data: data})
	err := write(ctx, []Batch{{RunID: l.RunID(), Events: evs}})
	ev := l.Append(event, data)
	if err != nil {
		o.log.Warn("cannot persist stream events; retrying with the next batch", "run_id", l.RunID(), "err", err)
		o.Add(l)
		return ev, err
	}
	l.SetDurable(ev.Seq)
	return ev, nil
}

// Sync writes and publishes the log's unwritten events now.
func (o *Outbox) Sync(ctx context.Context, l *Log) {
	l.LockWrites()
	defer l.UnlockWrites()
	evs := l.Unwritten()
	if len(evs) == 0 {
		return
	}
	if err := o.write(ctx, []Batch{{RunID: l.RunID(), Events: evs}}); err != nil {
		o.log.Warn("cannot persist stream events", "run_id", l.RunID(), "err", err)
		return
	}
	l.SetDurable(evs[len(evs)-1].Seq)
}

// Discard gives up the log's unwritten events: the run stops here without writing them (its
// lease went to another worker, which numbers its events on from the durable ones).
func (o *Outbox) Discard(l *Log) {
	l.LockWrites()
	l.SetDurable(l.Last())
	l.UnlockWrites()
}

// Flush writes every pending log's tokens in one batch and publishes them.
func (o *Outbox) Flush(ctx context.Context) {
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
	batches := make([]Batch, 0, len(logs))
	locked := make([]*Log, 0, len(logs))
	for _, l := range logs {
		l.LockWrites()
		evs := l.Unwritten()
		if len(evs) == 0 {
			l.UnlockWrites()
			continue
		}
		locked = append(locked, l)
		batches = append(batches, Batch{RunID: l.RunID(), Events: evs})
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
			o.Add(l)
		}
		return
	}
	for i, l := range locked {
		evs := batches[i].Events
		l.SetDurable(evs[len(evs)-1].Seq)
	}
}

// write writes events to the database and then publishes them on the bus, if there is one: with
// notify, in one statement, which notifies as it commits. An error is the database's; the bus
// failing only costs followers a read of the database.
func (o *Outbox) write(ctx context.Context, batches []Batch) error {
	b := o.bus
	if o.notify {
		return o.db.WriteEventsNotify(ctx, batches, Channel, b.EventPayloads(batches))
	}
	if err := o.db.WriteEvents(ctx, batches); err != nil {
		return err
	}
	if b != nil {
		if err := b.PublishEvents(ctx, batches); err != nil {
			o.log.Warn("cannot publish stream events; followers read them from the database", "err", err)
		}
	}
	return nil
}
