package rehab_test

import (
	"sort"
	"testing"
	"time"

	"github.com/trellis-go/trellis/server"
)

// BenchmarkChatTurn measures a chat turn offline through the server (POST /api/v1/chat to the
// last SSE event, over loopback): hydration (three queries), the graph's five nodes with one
// checkpoint per superstep, the messages persisted. It reports p50 and p99.
//
//	go test -run '^$' -bench ChatTurn -benchtime 200x ./apps/rehab/
func BenchmarkChatTurn(b *testing.B) {
	for _, c := range []struct{ name, msg string }{
		{"greeting", "olá"},
		{"budget", "O meu orçamento é 240.000€"},
	} {
		b.Run(c.name, func(b *testing.B) {
			hs := serve(b, server.Config{Dev: true})
			_, _, evs := chat(b, hs.URL, "", `{"message":"olá"}`)
			conv := convOf(evs)
			body := `{"message":"` + c.msg + `","conversation_id":"` + conv + `"}`
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				code, out, evs := chat(b, hs.URL, "", body)
				lat = append(lat, time.Since(start))
				if code != 200 || len(evs) == 0 {
					b.Fatalf("%d %s", code, out)
				}
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			p := func(q float64) float64 {
				return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Microseconds()) / 1000
			}
			b.ReportMetric(p(0.5), "p50-ms")
			b.ReportMetric(p(0.99), "p99-ms")
		})
	}
}
