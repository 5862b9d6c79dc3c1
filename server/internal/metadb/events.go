package metadb

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Event is a row of trellis_run_events: one event of a run's resumable stream.
type Event struct {
	Seq   int64 // the event's number in its run's stream, from 1
	Event string
	Data  json.RawMessage
}

// EventBatch is some of a run's events, in order.
type EventBatch struct {
	RunID  string
	Events []Event
}

// sqliteEventChunk bounds the rows of one INSERT of events on SQLite (four arguments each).
const sqliteEventChunk = 500

// AppendEvents writes the events of any number of runs in as few statements as it can: one on
// Postgres (the rows travel as four arrays), one per sqliteEventChunk rows on SQLite. An event
// already written (the same run and number) is left as it is. On Postgres the commit does not
// wait for the disk (synchronous_commit off): the rows are visible at once and survive the
// server's process dying; only a crash of Postgres itself may lose the last fraction of a
// second of them, as it may lose a replica's in-flight NOTIFYs.
func (m *DB) AppendEvents(ctx context.Context, batches []EventBatch) error {
	n := 0
	for _, b := range batches {
		n += len(b.Events)
	}
	if n == 0 {
		return nil
	}
	if m.postgres {
		ids, seqs, names, data := eventColumns(batches)
		_, err := m.db.ExecContext(ctx, `WITH c AS (SELECT set_config('synchronous_commit', 'off', true))
			INSERT INTO trellis_run_events (run_id, seq, event, data)
			SELECT u.run_id, u.seq, u.event, u.data FROM c, unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) AS u(run_id, seq, event, data)
			ON CONFLICT (run_id, seq) DO NOTHING`, ids, seqs, names, data)
		return err
	}
	return m.appendEventsSQLite(ctx, batches, n)
}

// eventColumns returns the events of batches as the columns of trellis_run_events.
func eventColumns(batches []EventBatch) (ids []string, seqs []int64, names, data []string) {
	for _, b := range batches {
		for _, ev := range b.Events {
			ids, seqs, names, data = append(ids, b.RunID), append(seqs, ev.Seq), append(names, ev.Event), append(data, string(ev.Data))
		}
	}
	return ids, seqs, names, data
}

// AppendEventsNotify writes events as AppendEvents does on Postgres (only there) and sends
// payloads with NOTIFY on channel, in one statement: the notifications go out when the rows
// commit.
func (m *DB) AppendEventsNotify(ctx context.Context, batches []EventBatch, channel string, payloads []string) error {
	ids, seqs, names, data := eventColumns(batches)
	if len(ids) == 0 {
		return nil
	}
	_, err := m.db.ExecContext(ctx, `WITH c AS (SELECT set_config('synchronous_commit', 'off', true)),
		w AS (INSERT INTO trellis_run_events (run_id, seq, event, data)
			SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) ON CONFLICT (run_id, seq) DO NOTHING)
		SELECT pg_notify($5, p) FROM c, unnest($6::text[]) AS p`, ids, seqs, names, data, channel, payloads)
	return err
}

// QueueEventsNotify queues on b (Postgres) what AppendEventsNotify does, but without turning
// synchronous_commit off: b carries other writes (a run's checkpoints, sent with the event that
// follows them), and its commit follows the pool's setting, as theirs would alone.
func QueueEventsNotify(b *pgx.Batch, batches []EventBatch, channel string, payloads []string) {
	ids, seqs, names, data := eventColumns(batches)
	b.Queue(`WITH w AS (INSERT INTO trellis_run_events (run_id, seq, event, data)
			SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) ON CONFLICT (run_id, seq) DO NOTHING)
		SELECT pg_notify($5, p) FROM unnest($6::text[]) AS p`, ids, seqs, names, data, channel, payloads)
}

func (m *DB) appendEventsSQLite(ctx context.Context, batches []EventBatch, n int) error {
	var q strings.Builder
	args := make([]any, 0, 4*min(n, sqliteEventChunk))
	write := func() error {
		if len(args) == 0 {
			return nil
		}
		_, err := m.db.ExecContext(ctx, q.String()+` ON CONFLICT (run_id, seq) DO NOTHING`, args...)
		q.Reset()
		args = args[:0]
		return err
	}
	for _, b := range batches {
		for _, ev := range b.Events {
			if len(args) == 0 {
				q.WriteString(`INSERT INTO trellis_run_events (run_id, seq, event, data) VALUES (?, ?, ?, ?)`)
			} else {
				q.WriteString(`, (?, ?, ?, ?)`)
			}
			args = append(args, b.RunID, ev.Seq, ev.Event, string(ev.Data))
			if len(args) >= 4*sqliteEventChunk {
				if err := write(); err != nil {
					return err
				}
			}
		}
	}
	return write()
}

// LoadEvents reads a run's events numbered after after, in order.
func (m *DB) LoadEvents(ctx context.Context, runID string, after int64) ([]Event, error) {
	return queryAll(ctx, m, func(row scanner) (Event, error) {
		var ev Event
		var data string
		err := row.Scan(&ev.Seq, &ev.Event, &data)
		ev.Data = json.RawMessage(data)
		return ev, err
	}, `SELECT seq, event, data FROM trellis_run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq`, runID, after)
}
