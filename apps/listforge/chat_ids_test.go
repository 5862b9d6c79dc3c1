package listforge_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/listforge"
	"github.com/trellis-go/trellis/apps/listforge/catalog"
)

// TestChatChunksShareTheAnswersID: through the Agent Protocol (as trellis chat and the SDK see
// it), the chat graph's streamed tokens carry the ID of the assistant message the turn ends
// with, so a client that appends chunks by ID and then takes the final state shows one answer.
func TestChatChunksShareTheAnswersID(t *testing.T) {
	t.Parallel()
	e := serve(t, t.TempDir(), "", listforge.Options{})
	key := "key-acme-ana-0000000"
	it := e.demoItem(key, catalog.DemoLabels)
	for _, q := range []string{"What should I ask for it?", "Set the price to $289"} {
		body, _ := json.Marshal(map[string]any{"assistant_id": listforge.ChatGraphID, "input": map[string]any{"itemId": it.ID, "userMessage": q},
			"stream_mode": []string{"messages-tuple", "values"}})
		req, _ := http.NewRequest("POST", e.url+"/runs/stream", bytes.NewReader(body))
		req.Header.Set("x-api-key", key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		chunkIDs := map[string]bool{}
		var last struct {
			Messages []struct{ ID, Role, Content string }
		}
		var event string
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<22)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && event == "messages":
				var tuple []json.RawMessage
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &tuple)
				var msg struct{ ID, Type string }
				if len(tuple) == 2 && json.Unmarshal(tuple[0], &msg) == nil && (msg.Type == "AIMessageChunk" || msg.Type == "ai") {
					chunkIDs[msg.ID] = true
				}
			case strings.HasPrefix(line, "data: ") && event == "values":
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &last)
			case strings.HasPrefix(line, "data: ") && event == "error":
				t.Fatalf("%q: %s", q, line)
			}
		}
		resp.Body.Close()
		if len(last.Messages) == 0 {
			t.Fatalf("%q: no messages in the final state", q)
		}
		answer := last.Messages[len(last.Messages)-1]
		if len(chunkIDs) != 1 || !chunkIDs[answer.ID] {
			t.Fatalf("%q: chunks streamed as %v, the answer %q is %q", q, chunkIDs, answer.Content, answer.ID)
		}
	}
}
