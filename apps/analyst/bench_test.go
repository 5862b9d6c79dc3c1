package analyst_test

import (
	"slices"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/analyst"
)

// planToDiscovery measures, through the server on SQLite with the offline model, the time from
// the accepted plan (the resume request) to the run paused at the discovery gate.
func planToDiscovery(t testing.TB, n int) []time.Duration {
	hs := served(t, analyst.Config{})
	var d []time.Duration
	for i := 0; i < n; i++ {
		s := newSession(t, hs, "")
		s.ask(voltraQuestion, dana)
		start := time.Now()
		s.resume("accept", nil)
		d = append(d, time.Since(start))
		s.wantGate("Review discoveries")
	}
	slices.Sort(d)
	return d
}

func pct(d []time.Duration, p float64) time.Duration {
	i := int(float64(len(d))*p+0.5) - 1
	if i < 0 {
		i = 0
	}
	return d[min(i, len(d)-1)]
}

// BenchmarkPlanToDiscovery reports p50 and p99 of the approved plan to the first discovery gate
// (the target is p99 under 300 ms): go test -run '^$' -bench PlanToDiscovery ./apps/analyst/
func BenchmarkPlanToDiscovery(b *testing.B) {
	b.StopTimer()
	d := planToDiscovery(b, max(b.N, 100))
	b.ReportMetric(float64(pct(d, 0.5).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(pct(d, 0.99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(0, "ns/op")
}

// A loose bound that holds under the race detector too; the benchmark measures the target.
func TestPlanToDiscoveryLatency(t *testing.T) {
	t.Parallel()
	d := planToDiscovery(t, 10)
	t.Logf("plan to discovery gate: p50 %v, max %v", pct(d, 0.5), d[len(d)-1])
	if p := pct(d, 0.5); p > 2*time.Second {
		t.Fatalf("p50 %v", p)
	}
}
