// The benchmarks measure Vesper's server-side latency for the
// questions of Appendix B with the offline model: the whole graph
// (supervisor, agents, tools, synthesizer, deep links) on the generated
// data, on SQLite and on Postgres. Goal: p99 under 50 ms on the project's
// two-core machine.
//
//	go test -run '^$' -bench AppendixB -benchtime 500x ./apps/vesper/
//
// Each benchmark reports the p50 and p99 of one question (the five asked in
// turn) and, per question, its p50 and p99.
package vesper

import (
	"context"
	"github.com/trellis-go/trellis/appdb/appdbtest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/trellis-go/trellis/agent/supervisor"
	"github.com/trellis-go/trellis/apps/vesper/reports"
	"github.com/trellis-go/trellis/apps/vesper/tools"
	"github.com/trellis-go/trellis/apps/vesper/warehouse"
	"github.com/trellis-go/trellis/apps/vesper/warehousetest"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/tool"
)

var benchQuestions = []struct{ name, text string }{
	{"B1", "What was the average day-ahead price for NP15 in CAISO for 2025 from Ascend?"},
	{"B2", "What is the health status of Nazareth Solar?"},
	{"B3", "Show me all projects that are off track (red)"},
	{"B4", "Compare Ascend vs Hitachi day-ahead prices for SP15 in CAISO for 2025"},
	{"B5", "What milestone dates changed in the last week?"},
}

// benchBuild assembles the app over w as the server does (menu, linker, the
// data's clock, the tool switches).
func benchBuild(b *testing.B, w *warehouse.Warehouse) *assistant {
	b.Helper()
	ctx := context.Background()
	db := appdbtest.SQLite(b, "vesper")
	menu, err := reports.NewMenu(ctx, db)
	if err != nil {
		b.Fatal(err)
	}
	for _, it := range reports.DefaultItems(warehouse.TenantVesper) {
		if err := menu.Put(ctx, it); err != nil {
			b.Fatal(err)
		}
	}
	settings, err := tools.NewSettings(ctx, db)
	if err != nil {
		b.Fatal(err)
	}
	now, err := w.Clock(ctx)
	if err != nil {
		b.Fatal(err)
	}
	a, err := newAssistant(assistantConfig{Toolkit: tools.New(w, &tools.Options{Now: now}), Settings: settings,
		Linker: &reports.Linker{Menu: menu}, Now: now})
	if err != nil {
		b.Fatal(err)
	}
	return a
}

func benchRun(b *testing.B, a *assistant) {
	ctx := tool.WithCallInfo(context.Background(), tool.CallInfo{Tenant: warehouse.TenantVesper, User: "bench", Permissions: []string{"*"}})
	ask := func(q string) {
		st, err := a.Graph.Invoke(ctx, supervisor.State{Messages: []message.Message{message.User(q)}})
		if err != nil || st.Answer == "" || len(st.Results) != 1 {
			b.Fatalf("%q: %v (%d results) %q", q, err, len(st.Results), st.Answer)
		}
	}
	for _, q := range benchQuestions { // warm the caches and the parser, as a running server is
		ask(q.text)
	}
	all := make([]time.Duration, 0, b.N)
	per := map[string][]time.Duration{}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		q := benchQuestions[i%len(benchQuestions)]
		start := time.Now()
		ask(q.text)
		d := time.Since(start)
		all = append(all, d)
		per[q.name] = append(per[q.name], d)
	}
	b.StopTimer()
	b.ReportMetric(quantile(all, 0.50), "p50-ms")
	b.ReportMetric(quantile(all, 0.99), "p99-ms")
	for _, q := range benchQuestions {
		if len(per[q.name]) > 0 {
			b.ReportMetric(quantile(per[q.name], 0.50), q.name+"-p50-ms")
			b.ReportMetric(quantile(per[q.name], 0.99), q.name+"-p99-ms")
		}
	}
}

// quantile is the p-quantile of ds in milliseconds (nearest rank).
func quantile(ds []time.Duration, p float64) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p*float64(len(s))+0.999999) - 1
	i = max(0, min(i, len(s)-1))
	return float64(s[i].Microseconds()) / 1000
}

// BenchmarkAppendixB runs the five questions in turn on SQLite, the
// embedded default (a warehouse file loaded on first start).
func BenchmarkAppendixB(b *testing.B) {
	w, err := warehouse.Open(context.Background(), warehouse.Config{DSN: filepath.Join(b.TempDir(), "vesper.db"), Data: warehousetest.Data()})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	benchRun(b, benchBuild(b, w))
}

// BenchmarkAppendixBPostgres runs them on Postgres (a schema of its own;
// skipped when Postgres is unreachable).
func BenchmarkAppendixBPostgres(b *testing.B) {
	benchRun(b, benchBuild(b, warehousetest.Postgres(b, warehouse.Config{})))
}

func TestQuantile(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	if p50, p99 := quantile(ds, 0.5), quantile(ds, 0.99); p50 != 50 || p99 != 99 {
		t.Fatalf("p50 %v p99 %v, want 50 and 99", p50, p99)
	}
	if got := quantile(ds[:1], 0.99); got != 1 {
		t.Fatalf("one sample: %v", got)
	}
}
