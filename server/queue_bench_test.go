package server

import (
	"testing"
)

// BenchmarkRunWait measures one short run through POST /runs/wait (create, queue, execute,
// answer) on SQLite, with the durable River queue and with the in-memory queue.
func BenchmarkRunWait(b *testing.B) {
	for _, c := range []struct {
		name  string
		local bool
	}{{"river", false}, {"local", true}} {
		b.Run(c.name, func(b *testing.B) {
			cfg := Config{}
			if c.local {
				cfg.Queue = NewLocalQueue(8)
			}
			bb := setup(b, setupOpts{cfg: cfg})
			body := map[string]any{"assistant_id": "flow", "input": map[string]any{"topic": "bench"}}
			for b.Loop() {
				var out map[string]any
				bb.mustDo("POST", "/runs/wait", body, &out, 200)
			}
		})
	}
}
