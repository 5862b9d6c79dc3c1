package bench

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/checkpoint/pgsaver"
	"github.com/trellis-go/trellis/checkpoint/sqlitesaver"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
)

// pgURL is the Postgres the saver benchmarks use; TRELLIS_TEST_DATABASE_URL overrides it.
func pgURL() string {
	if u := os.Getenv("TRELLIS_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

// BenchmarkReactAgent100xSaver runs react_agent_100x on each durable saver with durability
// sync (a checkpoint written before every superstep goes on), one thread per run, and reports
// the bytes each thread leaves in the database.
//
// "sqlite" runs SQLite with synchronous=NORMAL in WAL mode, the setting
// @langchain/langgraph-checkpoint-sqlite runs with (better-sqlite3's default), so the comparison
// with LangGraph.js is like with like; "sqlite_full" runs the saver's own default, FULL, which
// syncs the WAL on every commit.
func BenchmarkReactAgent100xSaver(b *testing.B) {
	input := func() react.State { return react.State{Messages: []message.Message{message.User("hi?")}} }
	run := func(b *testing.B, saver checkpoint.Saver, bytesOf func(thread string) int64) {
		g, err := ReactAgent(100, saver)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		var last string
		for b.Loop() {
			last = fmt.Sprint("saver-", threadSeq.Add(1))
			n := 0
			for _, err := range g.Stream(context.Background(), input(), graph.WithThread(last), graph.WithStreamModes(graph.ModeUpdates), graph.WithRecursionLimit(1<<30), graph.WithDurability(graph.DurabilitySync)) {
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			if n != 201 {
				b.Fatalf("%d events, want 201", n)
			}
		}
		b.ReportMetric(float64(bytesOf(last)), "bytes/thread")
	}

	sqliteRun := func(b *testing.B, synchronous string) {
		path := filepath.Join(b.TempDir(), "checkpoints.db")
		s, err := sqlitesaver.Open(context.Background(), path, &sqlitesaver.Options{Synchronous: synchronous})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		run(b, s, func(thread string) int64 {
			var n sql.NullInt64
			err := db.QueryRow(`
SELECT (SELECT coalesce(sum(length(c.id) + length(c.parent_id) + 8 + length(c.source) + 8 + length(c.state) + coalesce(length(c.metadata), 0)), 0)
          FROM trellis_checkpoints c JOIN trellis_checkpoint_spaces s ON s.id = c.space WHERE s.thread_id = ?1)
     + (SELECT coalesce(sum(length(bl.channel) + length(bl.version) + length(bl.base) + length(bl.data)), 0)
          FROM trellis_checkpoint_blobs bl JOIN trellis_checkpoint_spaces s ON s.id = bl.space WHERE s.thread_id = ?1)
     + (SELECT coalesce(sum(length(w.checkpoint_id) + length(w.task_id) + length(w.channel) + coalesce(length(w.value), 0)), 0)
          FROM trellis_checkpoint_writes w JOIN trellis_checkpoint_spaces s ON s.id = w.space WHERE s.thread_id = ?1)`, thread).Scan(&n)
			if err != nil {
				b.Fatal(err)
			}
			return n.Int64
		})
	}
	b.Run("sqlite", func(b *testing.B) { sqliteRun(b, "NORMAL") })
	b.Run("sqlite_full", func(b *testing.B) { sqliteRun(b, "FULL") })

	b.Run("postgres", func(b *testing.B) {
		ctx := context.Background()
		admin, err := pgx.Connect(ctx, pgURL())
		if err != nil {
			b.Skipf("Postgres unreachable at %s, skipping the Postgres saver benchmark: %v", pgURL(), err)
		}
		defer admin.Close(ctx)
		schema := fmt.Sprintf("bench_saver_%d", os.Getpid())
		if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
			b.Fatal(err)
		}
		defer admin.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
		cfg, err := pgxpool.ParseConfig(pgURL())
		if err != nil {
			b.Fatal(err)
		}
		cfg.ConnConfig.RuntimeParams["search_path"] = schema
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer pool.Close()
		s, err := pgsaver.New(ctx, pool, nil)
		if err != nil {
			b.Fatal(err)
		}
		run(b, s, func(thread string) int64 {
			var n int64
			err := pool.QueryRow(ctx, `
SELECT (SELECT coalesce(sum(pg_column_size(c.*)), 0) FROM trellis_checkpoints c JOIN trellis_checkpoint_spaces s ON s.id = c.space WHERE s.thread_id = $1)
     + (SELECT coalesce(sum(pg_column_size(bl.*)), 0) FROM trellis_checkpoint_blobs bl JOIN trellis_checkpoint_spaces s ON s.id = bl.space WHERE s.thread_id = $1)
     + (SELECT coalesce(sum(pg_column_size(w.*)), 0) FROM trellis_checkpoint_writes w JOIN trellis_checkpoint_spaces s ON s.id = w.space WHERE s.thread_id = $1)`, thread).Scan(&n)
			if err != nil {
				b.Fatal(err)
			}
			return n
		})
	})
}
