package analyst_test

import (
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/analyst"
)

// planToDiscovery runs n sessions through the server on SQLite with the offline model, from the
// question to the accepted plan (the resume request) and the run paused at the discovery gate;
// it returns each session's time from the resume to the gate, and checks that the gate shows
// the contradicted assumption.
func planToDiscovery(t testing.TB, hs *httptest.Server, n int) []time.Duration {
	var d []time.Duration
	for i := 0; i < n; i++ {
		s := newSession(t, hs, "")
		s.ask(voltraQuestion, dana)
		start := time.Now()
		s.resume("accept", nil)
		d = append(d, time.Since(start))
		s.wantGate("Review discoveries")
		found := false
		disc, _ := s.values["discoveries"].([]any)
		for _, x := range disc {
			m, _ := x.(map[string]any)
			found = found || (m["kind"] == "contradiction" && m["assumption"] == "A1")
		}
		if !found {
			t.Fatalf("the discovery gate does not show assumption A1 contradicted: %v", disc)
		}
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

// BenchmarkPlanToDiscovery measures a session from the question to the discovery gate (ns/op)
// and reports p50 and p99 of the approved plan to the gate (the target is p99 under 300 ms):
// go test -run '^$' -bench PlanToDiscovery ./apps/analyst/
func BenchmarkPlanToDiscovery(b *testing.B) {
	hs := served(b, analyst.Options{})
	b.ResetTimer()
	d := planToDiscovery(b, hs, b.N)
	b.ReportMetric(float64(pct(d, 0.5).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(pct(d, 0.99).Microseconds())/1000, "p99-ms")
}

// The approved plan reaches the discovery gate with the right discoveries, session after
// session on one server (the benchmark measures the time).
func TestPlanToDiscovery(t *testing.T) {
	t.Parallel()
	planToDiscovery(t, served(t, analyst.Options{}), 3)
}
