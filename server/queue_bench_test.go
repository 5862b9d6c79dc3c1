package server

import (
	"testing"

	"github.com/trellis-go/trellis/server/internal/dbtest"
)

// BenchmarkRunWait measures one short run through POST /runs/wait (create, queue, execute,
// answer) on SQLite, with the durable River queue and with the in-memory queue, and the bench's
// two-node short graph (serverbench's) on SQLite and on Postgres with River. -benchmem gives the
// allocations of a run, client included.
func BenchmarkRunWait(b *testing.B) {
	for _, c := range []struct {
		name  string
		local bool
		graph string
		pg    bool
	}{{"river", false, "flow", false}, {"local", true, "flow", false}, {"short-sqlite", false, "short", false}, {"short-postgres", false, "short", true}} {
		b.Run(c.name, func(b *testing.B) {
			cfg := Config{}
			if c.local {
				cfg.Queue = NewLocalQueue(8)
			}
			if c.pg {
				cfg.DatabaseURL = dbtest.PostgresURL(b, "srvbench")
			}
			bb := setup(b, setupOpts{cfg: cfg, extra: []GraphSpec{{ID: "short", Build: buildPgShort}}})
			body := map[string]any{"assistant_id": c.graph, "input": map[string]any{"topic": "bench"}}
			for b.Loop() {
				var out map[string]any
				bb.mustDo("POST", "/runs/wait", body, &out, 200)
			}
		})
	}
}
