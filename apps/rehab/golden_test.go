package rehab_test

// A golden file of the chat's SSE wire format (POST /apps/rehab/api/v1/chat), in the txtar
// layout of server/testdata/golden/: a comment, then "-- name --" and the frames of one stream.
// IDs become <idN> in order of first appearance within a section, timestamps <time>.
// Regenerate with
//
//	go test ./apps/rehab/ -run TestGolden -update

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/server"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/ with what the golden tests read")

var (
	goldenUUID = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	goldenTime = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
	goldenHex  = regexp.MustCompile(`\b[0-9a-f]{16}(-[0-9a-f]{8}|[0-9a-f]{16})?\b`)
)

func normalise(s string) string {
	ids := map[string]string{}
	repl := func(m string) string {
		if p, ok := ids[m]; ok {
			return p
		}
		p := fmt.Sprintf("<id%d>", len(ids)+1)
		ids[m] = p
		return p
	}
	s = goldenTime.ReplaceAllString(s, "<time>")
	s = goldenUUID.ReplaceAllStringFunc(s, repl)
	return goldenHex.ReplaceAllStringFunc(s, repl)
}

// rawChat posts one chat message and returns the SSE frames read, as sent.
func rawChat(t *testing.T, base, body string) string {
	t.Helper()
	resp, err := http.Post(base+"/apps/rehab/api/v1/chat", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("chat %s: status %d", body, resp.StatusCode)
	}
	var out strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if line := sc.Text(); !strings.HasPrefix(line, ":") {
			out.WriteString(line + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Trim(out.String(), "\n") + "\n"
}

func TestGoldenChatSSE(t *testing.T) {
	hs := serve(t, server.Config{Dev: true})
	var buf bytes.Buffer
	buf.WriteString("SSE frames of POST /apps/rehab/api/v1/chat on the offline model and the demo data.\n" +
		"IDs are <idN> in order of first appearance within a section; timestamps are <time>.\n" +
		"Regenerate: go test ./apps/rehab/ -run TestGolden -update\n")
	section := func(name, text string) { fmt.Fprintf(&buf, "-- %s --\n%s", name, normalise(text)) }
	section("greeting", rawChat(t, hs.URL, `{"message":"olá"}`))
	ask := rawChat(t, hs.URL, `{"message":"Remove o de Alfama da carteira"}`)
	conv := regexp.MustCompile(`"conversation_id":"([^"]+)"`).FindStringSubmatch(ask)
	if conv == nil {
		t.Fatalf("no conversation_id in the stream:\n%s", ask)
	}
	// The consent question and its answer share a conversation: one section, so its ID keeps
	// its placeholder.
	section("consent asked and given", ask+"\n"+rawChat(t, hs.URL, `{"message":"sim","conversation_id":"`+conv[1]+`"}`))

	path := filepath.Join("testdata", "golden", "chat.txtar")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./apps/rehab/ -run TestGolden -update to write it)", err)
	}
	if got := buf.String(); got != string(want) {
		t.Errorf("%s differs (run with -update if the change is intended)\n--- got\n%s--- want\n%s", path, got, want)
	}
}
