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
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden/ with what the tests read")

// goldenCase is one stream read by a golden test.
type goldenCase struct {
	name string
	body string
}

// txtar is a minimal txtar archive: a comment and named sections. golang.org/x/tools/txtar is
// not a dependency of the module, and this is all the tests need.
type txtar struct {
	comment  string
	sections []goldenCase
}

func (a txtar) format() []byte {
	var buf bytes.Buffer
	buf.WriteString(a.comment)
	if a.comment != "" && !strings.HasSuffix(a.comment, "\n") {
		buf.WriteByte('\n')
	}
	for _, s := range a.sections {
		fmt.Fprintf(&buf, "-- %s --\n", s.name)
		buf.WriteString(s.body)
		if s.body != "" && !strings.HasSuffix(s.body, "\n") {
			buf.WriteByte('\n')
		}
	}
	return buf.Bytes()
}

func parseTxtar(data []byte) txtar {
	var a txtar
	var cur *goldenCase
	var body strings.Builder
	flush := func() {
		if cur != nil {
			cur.body = body.String()
			a.sections = append(a.sections, *cur)
		}
		body.Reset()
	}
	for _, line := range strings.SplitAfter(string(data), "\n") {
		t := strings.TrimSuffix(line, "\n")
		if strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") && len(t) >= 6 {
			flush()
			cur = &goldenCase{name: strings.TrimSpace(t[3 : len(t)-3])}
			body.Reset()
			continue
		}
		if cur == nil {
			a.comment += line
		} else {
			body.WriteString(line)
		}
	}
	flush()
	return a
}

func TestGoldenTxtarRoundTrip(t *testing.T) {
	a := txtar{comment: "a comment\n", sections: []goldenCase{{"one", "x\ny\n"}, {"two", ""}, {"three", "-- not a header\n"}}}
	b := parseTxtar(a.format())
	if b.comment != a.comment || len(b.sections) != 3 {
		t.Fatalf("parsed %+v from %q", b, a.format())
	}
	for i := range a.sections {
		if a.sections[i] != b.sections[i] {
			t.Errorf("section %d: %+v, want %+v", i, b.sections[i], a.sections[i])
		}
	}
}

var (
	goldenUUID = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	goldenTime = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
	// goldenToken catches the other generated IDs: run--<uuid> message IDs are covered by
	// goldenUUID; tool call IDs and the like are prefixed words with a random tail.
	goldenToken = regexp.MustCompile(`\b(call|toolu|msg|run|chatcmpl)_[0-9A-Za-z]{6,}\b`)
	// goldenHex catches message IDs (32 hex digits), task IDs (16, with a clock in them) and
	// checkpoint IDs (16, a dash and 8 random ones).
	goldenHex = regexp.MustCompile(`\b[0-9a-f]{16}(-[0-9a-f]{8}|[0-9a-f]{16})?\b`)
)

// normaliser replaces IDs by placeholders in order of first appearance.
type normaliser struct {
	ids map[string]string
}

func (n *normaliser) apply(s string) string {
	if n.ids == nil {
		n.ids = map[string]string{}
	}
	repl := func(m string) string {
		if p, ok := n.ids[m]; ok {
			return p
		}
		p := fmt.Sprintf("<id%d>", len(n.ids)+1)
		n.ids[m] = p
		return p
	}
	s = goldenTime.ReplaceAllString(s, "<time>")
	s = goldenUUID.ReplaceAllStringFunc(s, repl)
	s = goldenToken.ReplaceAllStringFunc(s, repl)
	s = goldenHex.ReplaceAllStringFunc(s, repl)
	return s
}

// checkGolden compares cases with testdata/golden/<file>, or rewrites it under -update.
func checkGolden(t *testing.T, file, comment string, cases []goldenCase) {
	t.Helper()
	path := filepath.Join("testdata", "golden", file)
	got := txtar{comment: comment, sections: cases}
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got.format(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./server/ -run TestGolden -update to write it)", err)
	}
	want := parseTxtar(data)
	wantBy := map[string]string{}
	for _, s := range want.sections {
		wantBy[s.name] = s.body
	}
	for _, c := range cases {
		w, ok := wantBy[c.name]
		if !ok {
			t.Errorf("%s: no section %q (run with -update to add it)", path, c.name)
			continue
		}
		if w != c.body {
			t.Errorf("%s: section %q differs (run with -update if the change is intended)\n--- got\n%s--- want\n%s", path, c.name, c.body, w)
		}
		delete(wantBy, c.name)
	}
	for name := range wantBy {
		t.Errorf("%s: section %q is no longer produced (run with -update to drop it)", path, name)
	}
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
		var n normaliser // placeholders numbered per section, so sections do not depend on each other
		cases = append(cases, goldenCase{name, n.apply(text)})
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
	b := setup(t, setupOpts{extra: []GraphSpec{{ID: "nested", Build: buildNested}}})
	checkGolden(t, "sse.txtar", goldenSSEComment, goldenSSECases(t, b))
}

// The same streams on Postgres give the same golden file.
func TestGoldenSSEPostgres(t *testing.T) {
	if *update {
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
	var n normaliser // one for the session: the thread and assistant keep their placeholders
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
				return n.apply(out.String())
			}
		}
	}
	return []goldenCase{
		{"run", exchange(map[string]any{"type": "run", "assistant_id": "flow", "input": map[string]any{"topic": "golden"}, "stream_mode": []string{"updates", "custom"}})},
		{"resume", exchange(map[string]any{"type": "resume", "assistant_id": "flow", "resume": "yes", "stream_mode": []string{"values"}})},
		{"bad message", exchange(map[string]any{"type": "dance"})},
	}
}

const goldenWSComment = `Messages of the thread WebSocket (GET /threads/{id}/ws) running the flow graph:
"> " is what the client sent, "< " what it read. IDs are <idN>; timestamps are <time>.
Regenerate: go test ./server/ -run TestGolden -update
`

func TestGoldenWebSocket(t *testing.T) {
	b := setup(t)
	checkGolden(t, "ws.txtar", goldenWSComment, b.wsSession(t))
}

// The same session on Postgres gives the same golden file.
func TestGoldenWebSocketPostgres(t *testing.T) {
	if *update {
		t.Skip("the golden file is written by TestGoldenWebSocket (SQLite)")
	}
	b := setup(t, setupOpts{cfg: Config{DatabaseURL: pgURL(t)}})
	checkGolden(t, "ws.txtar", goldenWSComment, b.wsSession(t))
}
