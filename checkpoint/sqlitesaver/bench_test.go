package sqlitesaver_test

import (
	"context"
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/checkpoint/checkpointtest"
	"github.com/trellis-go/trellis/checkpoint/sqlitesaver"
)

// fileBytes is the database's size in pages in use, after folding the WAL into the file.
func fileBytes(b *testing.B, s *sqlitesaver.Saver) int64 {
	b.Helper()
	var pages, free, size int64
	db := s.DB()
	if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		b.Fatal(err)
	}
	for q, v := range map[string]*int64{"PRAGMA page_count": &pages, "PRAGMA freelist_count": &free, "PRAGMA page_size": &size} {
		if err := db.QueryRow(q).Scan(v); err != nil {
			b.Fatal(err)
		}
	}
	return (pages - free) * size
}

func open(b *testing.B, sync string) *sqlitesaver.Saver {
	s, err := sqlitesaver.Open(context.Background(), b.TempDir()+"/bench.db", &sqlitesaver.Options{Synchronous: sync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkPutDelta measures a put that appends one message as a delta, at the default
// synchronous=FULL (every put is durable when it returns) and at NORMAL, and the bytes each
// checkpoint adds.
func BenchmarkPutDelta(b *testing.B) {
	for _, sync := range []string{"FULL", "NORMAL"} {
		b.Run("synchronous="+sync, func(b *testing.B) {
			s := open(b, sync)
			checkpointtest.BenchPutDelta(b, s, func() int64 { return fileBytes(b, s) })
		})
	}
}

// BenchmarkGetLongChain measures Get of the newest checkpoint of a thread whose messages
// channel is a chain of deltas as long as the thread.
func BenchmarkGetLongChain(b *testing.B) {
	checkpointtest.BenchGetLongChain(b, func(b *testing.B) checkpoint.Saver { return open(b, "OFF") })
}
