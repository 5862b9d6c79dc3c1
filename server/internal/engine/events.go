package engine

import (
	"context"

	"github.com/trellis-go/trellis/server/internal/metadb"
	"github.com/trellis-go/trellis/server/internal/stream"
)

// Events is the metadata database as the stream package uses it: it writes and reads the runs'
// stream events (stream.EventWriter) and tells whether a run ended (stream.RunSource).
type Events struct{ DB *metadb.DB }

var (
	_ stream.EventWriter = Events{}
	_ stream.RunSource   = Events{}
)

func rows(batches []stream.Batch) []metadb.EventBatch {
	out := make([]metadb.EventBatch, len(batches))
	for i, b := range batches {
		evs := make([]metadb.Event, len(b.Events))
		for j, ev := range b.Events {
			evs[j] = metadb.Event{Seq: ev.Seq, Event: ev.Event, Data: ev.Data}
		}
		out[i] = metadb.EventBatch{RunID: b.RunID, Events: evs}
	}
	return out
}

// WriteEvents writes the events of any number of runs (metadb.DB.AppendEvents).
func (e Events) WriteEvents(ctx context.Context, batches []stream.Batch) error {
	return e.DB.AppendEvents(ctx, rows(batches))
}

// WriteEventsNotify writes events and sends payloads with NOTIFY on channel, on Postgres
// (metadb.DB.AppendEventsNotify).
func (e Events) WriteEventsNotify(ctx context.Context, batches []stream.Batch, channel string, payloads []string) error {
	return e.DB.AppendEventsNotify(ctx, rows(batches), channel, payloads)
}

// Events reads a run's events numbered after after, in order.
func (e Events) Events(ctx context.Context, runID string, after int64) ([]stream.Event, error) {
	evs, err := e.DB.LoadEvents(ctx, runID, after)
	if err != nil {
		return nil, err
	}
	out := make([]stream.Event, len(evs))
	for i, ev := range evs {
		out[i] = stream.Event{Seq: ev.Seq, Event: ev.Event, Data: ev.Data}
	}
	return out, nil
}

// Ended reports whether the run ended: its status is neither pending nor running.
func (e Events) Ended(ctx context.Context, runID string) (bool, error) {
	r, err := e.DB.RunByID(ctx, runID)
	if err != nil {
		return false, err
	}
	return r.Status != Pending && r.Status != Running, nil
}
