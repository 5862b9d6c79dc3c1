package rehab_test

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/rehab"
	"github.com/trellis-go/trellis/server"
)

func serve(t testing.TB, cfg server.Config) *httptest.Server {
	t.Helper()
	if cfg.Apps == nil {
		cfg.Apps = []server.App{rehab.App()}
	}
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	cfg.Logger = slog.New(slog.DiscardHandler)
	s, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		hs.Close()
		s.Close()
	})
	return hs
}

type sseEvent struct {
	Name string
	rehab.Event
}

func chat(t testing.TB, base, token, body string) (int, []sseEvent) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/apps/rehab/api/v1/chat", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Logf("status %d: %s", resp.StatusCode, b)
		return resp.StatusCode, nil
	}
	var out []sseEvent
	sc := bufio.NewScanner(resp.Body)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var e rehab.Event
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &e); err != nil {
				t.Fatalf("bad event %q: %v", line, err)
			}
			out = append(out, sseEvent{Name: name, Event: e})
		}
	}
	return resp.StatusCode, out
}

func answerOf(evs []sseEvent) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Type == "message" && e.Content != nil {
			b.WriteString(*e.Content)
		}
	}
	return b.String()
}

func TestDebugFlow(t *testing.T) {
	hs := serve(t, server.Config{Dev: true})
	for _, msg := range []string{"olá", "Analisa este imóvel: https://www.idealista.pt/imovel/50112233/", "O meu orçamento é 200.000€", "Remove o de Alfama da carteira", "sim"} {
		code, evs := chat(t, hs.URL, "", `{"message": "`+msg+`", "conversation_id": "`+conv+`"}`)
		t.Logf("== %s (%d)", msg, code)
		for _, e := range evs {
			b, _ := json.Marshal(e.Event)
			if e.Type != "message" || (e.Done != nil && *e.Done) {
				t.Logf("%s %s", e.Name, b)
			}
			if e.ConversationID != "" {
				conv = e.ConversationID
			}
		}
		t.Logf("answer: %s", answerOf(evs))
	}
}

var conv string
