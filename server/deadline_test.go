package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/trellis-go/trellis/graph"
)

// floodState is the state of the "flood" graph, whose one node sends floodEvents custom events
// of 64 KiB: more than a loopback socket's buffers hold, so a client that stops reading makes
// the server's writes block.
type floodState struct {
	N int `json:"n"`
}

const floodEvents = 512

func buildFlood(deps Deps) (graph.Runnable, error) {
	g := graph.New[floodState]()
	chunk := strings.Repeat("z", 64<<10)
	g.AddNode("flood", func(ctx context.Context, s floodState) (floodState, error) {
		for i := range floodEvents {
			graph.Emit(ctx, map[string]any{"i": i, "chunk": chunk})
		}
		return floodState{N: floodEvents}, nil
	})
	g.AddEdge(graph.START, "flood").AddEdge("flood", graph.END)
	return graph.Erase(g.Compile(graph.CompileOptions{Name: "flood", Saver: deps.Saver}))
}

// openStreams reads trellis_streams_open from /metrics.
func (b *bundle) openStreams() string {
	resp, err := http.Get(b.http.URL + "/metrics")
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "trellis_streams_open "); ok {
			return v
		}
	}
	return "?"
}

// waitStreams waits until n streams are open, for at most 30 seconds.
func (b *bundle) waitStreams(n string) {
	b.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for b.openStreams() != n {
		if time.Now().After(deadline) {
			b.t.Fatalf("%s streams open after 30 s, want %s: a client that stopped reading still holds its stream", b.openStreams(), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An SSE client that stops reading without closing is cut off once a write has not gone
// through within Config.StreamWriteTimeout: its handler returns (the stream gauge drops) and
// the server closes the connection.
func TestSSEClientThatStopsReadingIsCutOff(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{cfg: Config{StreamWriteTimeout: 300 * time.Millisecond}, extra: []GraphSpec{{ID: "flood", Build: buildFlood}}})
	tid := b.newThread(nil)
	body, _ := json.Marshal(map[string]any{"assistant_id": "flood", "input": map[string]any{}, "stream_mode": []string{"custom"}})
	conn, err := net.Dial("tcp", strings.TrimPrefix(b.http.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /threads/%s/runs/stream HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", tid, len(body), body)
	// The client reads nothing. The stream opens, then must close although the client never
	// closed its end.
	b.waitStreams("1")
	b.waitStreams("0")
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	n, err := io.Copy(io.Discard, conn)
	if err != nil {
		t.Fatalf("the server did not close the connection of a client that stopped reading (read %d bytes): %v", n, err)
	}
	if n >= floodEvents*64<<10 {
		t.Fatalf("the client got the whole stream (%d bytes): the test did not fill the socket's buffers", n)
	}
}

// The same for a WebSocket client.
func TestWebSocketClientThatStopsReadingIsCutOff(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{cfg: Config{StreamWriteTimeout: 300 * time.Millisecond, WebSocketBuffer: 4}, extra: []GraphSpec{{ID: "flood", Build: buildFlood}}})
	tid := b.newThread(nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(b.http.URL, "http")+"/threads/"+tid+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	msg, _ := json.Marshal(map[string]any{"type": "run", "assistant_id": "flood", "input": map[string]any{}, "stream_mode": []string{"custom"}})
	if err := c.Write(ctx, websocket.MessageText, msg); err != nil {
		t.Fatal(err)
	}
	// The client reads nothing from here on.
	b.waitStreams("1")
	b.waitStreams("0")
}

// A quiet stream (its run waiting in a node) sends heartbeat comments, so that proxies and
// clients that reconnect on idleness keep it.
func TestSSEHeartbeatOnAQuietStream(t *testing.T) {
	old := heartbeat
	heartbeat = 50 * time.Millisecond
	t.Cleanup(func() { heartbeat = old })
	b := setup(t)
	tid := b.newThread(nil)
	body, _ := json.Marshal(map[string]any{"assistant_id": "slow", "input": map[string]any{"topic": "quiet"}})
	resp, err := http.Post(b.http.URL+"/threads/"+tid+"/runs/stream", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	<-b.gates.started
	rd := bufio.NewReader(resp.Body)
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended without a heartbeat: %v", err)
		}
		if strings.HasPrefix(line, ": heartbeat") {
			break
		}
	}
	b.gates.release <- struct{}{}
}
