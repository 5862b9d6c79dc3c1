package rehab_test

// A golden file of the chat's SSE wire format (POST /apps/rehab/api/v1/chat), in the txtar
// layout of server/testdata/golden/: a comment, then "-- name --" and the frames of one stream.
// IDs become <idN> in order of first appearance within a section, timestamps <time>.
// Regenerate with
//
//	go test ./apps/rehab/ -run TestGolden -update

import (
	"bufio"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/internal/golden"
	"github.com/trellis-go/trellis/server"
)

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
	const comment = "SSE frames of POST /apps/rehab/api/v1/chat on the offline model and the demo data.\n" +
		"IDs are <idN> in order of first appearance within a section; timestamps are <time>.\n" +
		"Regenerate: go test ./apps/rehab/ -run TestGolden -update\n"
	var sections []golden.Section
	section := func(name, text string) {
		var n golden.Normaliser // placeholders numbered per section
		sections = append(sections, golden.Section{Name: name, Body: n.Apply(text)})
	}
	section("greeting", rawChat(t, hs.URL, `{"message":"olá"}`))
	ask := rawChat(t, hs.URL, `{"message":"Remove o de Alfama da carteira"}`)
	conv := regexp.MustCompile(`"conversation_id":"([^"]+)"`).FindStringSubmatch(ask)
	if conv == nil {
		t.Fatalf("no conversation_id in the stream:\n%s", ask)
	}
	// The consent question and its answer share a conversation: one section, so its ID keeps
	// its placeholder.
	section("consent asked and given", ask+"\n"+rawChat(t, hs.URL, `{"message":"sim","conversation_id":"`+conv[1]+`"}`))
	golden.Check(t, filepath.Join("testdata", "golden", "chat.txtar"), comment, "go test ./apps/rehab/ -run TestGolden -update", sections)
}
