package realty_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkSearchTurn is one offline search turn through POST /chat (a new session each time:
// the run, the offline model, a worker call to the offline API, memory, hints), as the server
// answers it on loopback. Run it with -benchtime=100x; it reports p50 and p99.
func BenchmarkSearchTurn(b *testing.B) {
	_, base := serveB(b)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		body := fmt.Sprintf(`{"session_id": "bench-%d", "message": "Find 3 bedroom homes in Denver under $900k"}`, i)
		t0 := time.Now()
		resp, err := http.Post(base+"/chat", "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		lat = append(lat, time.Since(t0))
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}
