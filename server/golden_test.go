package server

// Golden files of the stream wire formats. Each file in testdata/golden/ is a txtar archive: a
// comment, then one section per case ("-- name --" on a line of its own, then the frames the
// client read). IDs (runs, threads, checkpoints, messages, tasks, tool calls) are replaced by
// placeholders numbered in order of first appearance, and timestamps by <time>, so a file is the
// same on every run and on SQLite and Postgres. Regenerate with
//
//	go test ./server/ -run TestGolden -update

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/trellis-go/trellis/internal/golden"
)

// goldenCase is one stream read by a golden test.
type goldenCase = golden.Section

// checkGolden compares cases with testdata/golden/<file>, or rewrites it under -update.
func checkGolden(t *testing.T, file, comment string, cases []goldenCase) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "golden", file), comment, "go test ./server/ -run TestGolden -update", cases)
}

// rawSSE posts a run and returns its SSE answer as the frames read, one "event: ... / data: ..."
// pair per frame, without heartbeats.
func (b *bundle) rawSSE(path string, body any) string {
	b.t.Helper()
	data, _ := json.Marshal(body)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", b.http.URL+path, bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b.t.Fatalf("POST %s: status %d", path, resp.StatusCode)
	}
	var out strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, ":") {
			continue // heartbeats
		}
		if line == "" && strings.HasSuffix(out.String(), "\n\n") {
			continue
		}
		out.WriteString(line + "\n")
	}
	if err := sc.Err(); err != nil {
		b.t.Fatalf("reading the stream of %s: %v", path, err)
	}
	return strings.TrimRight(out.String(), "\n") + "\n"
}

// goldenSSECases streams the test graphs with every stream mode.
func goldenSSECases(t *testing.T, b *bundle) []goldenCase {
	var cases []goldenCase
	add := func(name, text string) {
		var n golden.Normaliser // placeholders numbered per section, so sections do not depend on each other
		cases = append(cases, goldenCase{Name: name, Body: n.Apply(text)})
	}

	for _, mode := range []string{"values", "updates", "custom", "tasks", "checkpoints", "debug"} {
		tid := b.newThread(nil)
		add("flow "+mode, b.rawSSE("/threads/"+tid+"/runs/stream", map[string]any{
			"assistant_id": "flow", "input": map[string]any{"topic": "golden"}, "stream_mode": []string{mode}}))
		add("flow "+mode+" resume", b.rawSSE("/threads/"+tid+"/runs/stream", map[string]any{
			"assistant_id": "flow", "command": map[string]any{"resume": "yes"}, "stream_mode": []string{mode}}))
	}
	for _, mode := range []string{"messages-tuple", "messages", "updates", "events"} {
		tid := b.newThread(nil)
		add("example "+mode, b.rawSSE("/threads/"+tid+"/runs/stream", map[string]any{
			"assistant_id": "example", "input": map[string]any{"messages": []map[string]any{{"role": "user", "content": "convert 10 km to miles"}}},
			"stream_mode": []string{mode}}))
	}
	for _, mode := range []string{"values", "updates"} {
		tid := b.newThread(nil)
		add("nested "+mode+" stream_subgraphs", b.rawSSE("/threads/"+tid+"/runs/stream", map[string]any{
			"assistant_id": "nested", "input": map[string]any{"topic": "golden"}, "stream_mode": []string{mode}, "stream_subgraphs": true}))
	}
	return cases
}

const goldenSSEComment = `SSE frames of POST /threads/{id}/runs/stream, one section per graph and stream mode.
IDs are <idN> in order of first appearance; timestamps are <time>.
Regenerate: go test ./server/ -run TestGolden -update
`

func TestGoldenSSE(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{extra: []GraphSpec{{ID: "nested", Build: buildNested}}})
	checkGolden(t, "sse.txtar", goldenSSEComment, goldenSSECases(t, b))
}

// The same streams on Postgres give the same golden file.
func TestGoldenSSEPostgres(t *testing.T) {
	t.Parallel()
	if *golden.Update {
		t.Skip("the golden file is written by TestGoldenSSE (SQLite)")
	}
	b := setup(t, setupOpts{cfg: Config{DatabaseURL: pgURL(t)}, extra: []GraphSpec{{ID: "nested", Build: buildNested}}})
	checkGolden(t, "sse.txtar", goldenSSEComment, goldenSSECases(t, b))
}

// wsSession runs the flow graph over the thread WebSocket: a run that interrupts, then a resume,
// and returns the messages read (one JSON message a line, as sent).
func (b *bundle) wsSession(t *testing.T) []goldenCase {
	tid := b.newThread(nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(b.http.URL, "http")+"/threads/"+tid+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	var n golden.Normaliser // one for the session: the thread and assistant keep their placeholders
	exchange := func(msg map[string]any) string {
		data, _ := json.Marshal(msg)
		if err := c.Write(ctx, websocket.MessageText, data); err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		out.WriteString("> " + string(data) + "\n")
		for {
			_, got, err := c.Read(ctx)
			if err != nil {
				t.Fatalf("reading the WebSocket: %v", err)
			}
			out.WriteString("< " + string(got) + "\n")
			var m wsOut
			if err := json.Unmarshal(got, &m); err != nil {
				t.Fatalf("a WebSocket message is not JSON: %v: %s", err, got)
			}
			if m.Type == "done" || m.Type == "error" {
				return n.Apply(out.String())
			}
		}
	}
	return []goldenCase{
		{Name: "run", Body: exchange(map[string]any{"type": "run", "assistant_id": "flow", "input": map[string]any{"topic": "golden"}, "stream_mode": []string{"updates", "custom"}})},
		{Name: "resume", Body: exchange(map[string]any{"type": "resume", "assistant_id": "flow", "resume": "yes", "stream_mode": []string{"values"}})},
		{Name: "bad message", Body: exchange(map[string]any{"type": "dance"})},
	}
}

const goldenWSComment = `Messages of the thread WebSocket (GET /threads/{id}/ws) running the flow graph:
"> " is what the client sent, "< " what it read. IDs are <idN>; timestamps are <time>.
Regenerate: go test ./server/ -run TestGolden -update
`

func TestGoldenWebSocket(t *testing.T) {
	t.Parallel()
	b := setup(t)
	checkGolden(t, "ws.txtar", goldenWSComment, b.wsSession(t))
}

// The same session on Postgres gives the same golden file.
func TestGoldenWebSocketPostgres(t *testing.T) {
	t.Parallel()
	if *golden.Update {
		t.Skip("the golden file is written by TestGoldenWebSocket (SQLite)")
	}
	b := setup(t, setupOpts{cfg: Config{DatabaseURL: pgURL(t)}})
	checkGolden(t, "ws.txtar", goldenWSComment, b.wsSession(t))
}
