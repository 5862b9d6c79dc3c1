package pgsaver_test

import (
	"context"
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/checkpoint/checkpointtest"
)

// BenchmarkPutDelta measures a put that appends one message as a delta (one round trip, one
// commit) and the bytes each checkpoint adds to the tables and their indexes.
func BenchmarkPutDelta(b *testing.B) {
	s, bb := setup(b)
	checkpointtest.BenchPutDelta(b, s, func() int64 {
		var n int64
		if err := bb.pool.QueryRow(context.Background(), `SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`, bb.schema).Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	})
}

// BenchmarkGetLongChain measures Get of the newest checkpoint of a thread whose messages
// channel is a chain of deltas as long as the thread: one statement, one round trip.
func BenchmarkGetLongChain(b *testing.B) {
	checkpointtest.BenchGetLongChain(b, func(b *testing.B) checkpoint.Saver {
		s, _ := setup(b)
		return s
	})
}
