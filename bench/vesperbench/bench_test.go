// Package vesperbench measures Vesper's server-side latency for the
// questions of Appendix B with the offline model: the graph (supervisor,
// agents, tools on SQLite, synthesizer) and the WebSocket turn (records
// included). Run: go test -run '^$' -bench . ./bench/vesperbench/
package vesperbench

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/trellis-go/trellis/agent"
	"github.com/trellis-go/trellis/apps/vesper/vesperserve"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/tool"
)

var questions = []string{
	"What was the average day-ahead price for NP15 in CAISO for 2025 from Ascend?",
	"What is the health status of Nazareth Solar?",
	"Show me all projects that are off track (red)",
	"Compare Ascend vs Hitachi day-ahead prices for SP15 in CAISO for 2025",
	"What milestone dates changed in the last week?",
}

// BenchmarkAppendixB runs the five questions in turn and reports the p50
// and p99 latency of one question (goal: p99 under 50 ms).
func BenchmarkAppendixB(b *testing.B) {
	ctx := context.Background()
	o, err := vesperserve.Open(ctx, filepath.Join(b.TempDir(), "data"), "", graph.CompileOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer o.Warehouse.Close()
	rctx := tool.WithCallInfo(ctx, tool.CallInfo{Tenant: "vesper", User: "bench", Permissions: []string{"*"}})
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		st, err := o.App.Graph.Invoke(rctx, agent.SupervisorState{Messages: []message.Message{message.User(questions[i%len(questions)])}})
		if err != nil || st.Answer == "" {
			b.Fatalf("%v %q", err, st.Answer)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}
