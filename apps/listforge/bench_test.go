package listforge_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/trellis-go/trellis/apps/listforge"
	"github.com/trellis-go/trellis/apps/listforge/catalog"
)

const key = "key-acme-ana-0000000"

// perConn is how many messages a benchmark sends on one WebSocket before it dials another: the
// app stream kit lets a connection send 20 messages a second with a burst of 40
// (appstream.DefaultMessageRate), and a benchmark that sent faster would measure the limiter's
// waits rather than the app.
const perConn = 30

func p99(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[(len(ds)*99+99)/100-1]
}

// BenchmarkResearchJob measures a research job end to end, offline on SQLite: from the POST
// that starts it to job_complete on the WebSocket (the UPC path: eight nodes, the catalogue
// through the eBay client, research and evidence saved). Reports p50 and p99.
func BenchmarkResearchJob(b *testing.B) {
	e := serve(b, b.TempDir(), "", listforge.Options{})
	it := e.demoItem(key, catalog.DemoUPC).ID
	var c *websocket.Conn
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%perConn == 0 {
			if c != nil {
				c.CloseNow()
			}
			c = e.dial(key, listforge.ResearchPath)
		}
		start := time.Now()
		var started struct{ JobID string }
		if code := e.do(key, "POST", "/api/v1/items/"+it+"/research", nil, &started); code != 202 {
			b.Fatalf("start: %d", code)
		}
		send(b, c, "subscribe_job", map[string]string{"jobId": started.JobID})
		for {
			f := read(b, c)
			if f.Event == "job_complete" {
				var done listforge.JobComplete
				_ = json.Unmarshal(f.Data, &done)
				if done.Status != "success" {
					b.Fatalf("job %+v", done)
				}
				break
			}
		}
		ds = append(ds, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(float64(p99(ds).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
}

// BenchmarkChatFirstToken measures a chat answer's first token, offline on SQLite: from
// send_message to the first token frame (the user's message recorded and echoed, the
// ChatGraph run started through the run queue, context loaded, intent routed, the answer's
// first words streamed). Reports p50 and p99.
func BenchmarkChatFirstToken(b *testing.B) {
	e := serve(b, b.TempDir(), "", listforge.Options{})
	it := e.demoItem(key, catalog.DemoLabels).ID
	var started struct{ JobID string }
	e.do(key, "POST", "/api/v1/items/"+it+"/research", nil, &started)
	rc := e.dial(key, listforge.ResearchPath)
	send(b, rc, "subscribe_job", map[string]string{"jobId": started.JobID})
	for read(b, rc).Event != "job_complete" {
	}
	var sess struct{ SessionID string }
	e.do(key, "POST", "/api/v1/items/"+it+"/chat/sessions", nil, &sess)
	var c *websocket.Conn
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%perConn == 0 {
			if c != nil {
				c.CloseNow()
			}
			c = e.dial(key, listforge.ChatWSPath)
			send(b, c, "join_session", map[string]string{"sessionId": sess.SessionID})
			read(b, c)
		}
		start := time.Now()
		send(b, c, "send_message", map[string]string{"sessionId": sess.SessionID, "content": "What price should I list this for?"})
		first := time.Duration(0)
		for {
			f := read(b, c)
			if f.Event == "token" && first == 0 {
				first = time.Since(start)
			}
			if f.Event == "message" {
				var m struct{ Role string }
				_ = json.Unmarshal(f.Data, &m)
				if m.Role == "assistant" {
					break
				}
			}
			if f.Event == "error" {
				b.Fatalf("%s", f.Data)
			}
		}
		ds = append(ds, first)
	}
	b.StopTimer()
	b.ReportMetric(float64(p99(ds).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
}
