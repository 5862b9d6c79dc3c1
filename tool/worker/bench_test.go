package worker_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"
)

// BenchmarkWarmCall measures what a call through a subprocess worker adds (the echo tool does
// no work), each worker replaced after its call. "warm" paces the calls so that a fresh worker
// is always waiting (the latency of the call itself); "200/s" asks for 200 calls a second, where
// the rate at which the machine can start processes decides. Run it with -benchtime=40x: it
// reports the latency's p50 and p99 and the rate it kept.
func BenchmarkWarmCall(b *testing.B) {
	for _, c := range []struct {
		name string
		size int
		gap  time.Duration
	}{{"warm", 4, 250 * time.Millisecond}, {"200/s", 8, 5 * time.Millisecond}} {
		b.Run(c.name, func(b *testing.B) {
			p, _ := startPool(b, c.size, 0)
			params := json.RawMessage(`{"text":"x"}`)
			lat := make([]time.Duration, 0, b.N)
			tick := time.NewTicker(c.gap)
			defer tick.Stop()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				<-tick.C
				t0 := time.Now()
				if _, err := p.Execute(context.Background(), "testskill", "echo", params, 0); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			elapsed := time.Since(start)
			b.StopTimer()
			slices.Sort(lat)
			pct := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
			b.ReportMetric(pct(0.5), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
		})
	}
}
