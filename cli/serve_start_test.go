package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/server"
)

func TestLogFormat(t *testing.T) {
	for _, c := range []struct {
		format string
		json   bool
	}{{"", true}, {"json", true}, {"JSON", true}, {"text", false}} {
		var buf bytes.Buffer // not a terminal: JSON unless told text
		log, err := newLogger(&buf, c.format, slog.LevelInfo)
		if err != nil {
			t.Fatalf("%q: %v", c.format, err)
		}
		log.Info("server started", "addr", "127.0.0.1:2024")
		line := strings.TrimSpace(buf.String())
		isJSON := json.Valid([]byte(line))
		if isJSON != c.json {
			t.Fatalf("--log-format %q wrote %q (JSON %v, want %v)", c.format, line, isJSON, c.json)
		}
		if !c.json && (!strings.Contains(line, `msg="server started"`) || !strings.Contains(line, "addr=127.0.0.1:2024")) {
			t.Fatalf("text line %q", line)
		}
	}
	if _, err := newLogger(&bytes.Buffer{}, "yaml", slog.LevelInfo); err == nil || !strings.Contains(err.Error(), "text or json") || ExitCode(err) != 2 {
		t.Fatalf("--log-format yaml: %v", err)
	}
	var out, errb bytes.Buffer
	err := withExample.Run(context.Background(), []string{"serve", "--dev", "--apps", "example", "--log-format", "xml", "--data-dir", t.TempDir()}, nil, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "--log-format") || ExitCode(err) != 2 {
		t.Fatalf("serve --log-format xml: %v", err)
	}
}

func TestStartSummary(t *testing.T) {
	got := startSummary(summary{URL: "http://127.0.0.1:2024", Dev: true, Database: "SQLite in .trellis", Model: "offline", UI: true,
		Apps: []server.AppInfo{{Name: "realty", Graphs: []string{"realty"}, HasRoutes: true}, {Name: "example", Graphs: []string{"example"}}}})
	for _, want := range []string{
		"trellis is ready on http://127.0.0.1:2024\n",
		"dev (no authentication",
		"web UI:    http://127.0.0.1:2024/\n",
		"database:  SQLite in .trellis\n",
		"model:     offline (rule-based",
		"realty     http://127.0.0.1:2024/ui/apps/realty; API http://127.0.0.1:2024/apps/realty/; assistants realty\n",
		"example    http://127.0.0.1:2024/ui/apps/example; assistants example\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the summary lacks %q:\n%s", want, got)
		}
	}
	got = startSummary(summary{URL: "http://h:1", Database: "Postgres (" + redactURL("postgres://u:secret@db:5432/trellis?sslmode=disable") + ")", Model: "openai:gpt-4o", Fast: "openai:gpt-4o-mini"})
	if strings.Contains(got, "secret") || !strings.Contains(got, "postgres://db:5432/trellis") || !strings.Contains(got, "model:     openai:gpt-4o\n") ||
		!strings.Contains(got, "fast:      openai:gpt-4o-mini") || strings.Contains(got, "dev") || strings.Contains(got, "web UI") || !strings.Contains(got, "apps:      none") {
		t.Fatalf("summary:\n%s", got)
	}
}

// `trellis serve --help` lists every app's settings under their variables.
func TestServeHelpListsAppSettings(t *testing.T) {
	app := server.App{Name: "list-forge", Settings: []server.AppSetting{{Key: "ebay_client_id", Doc: "the eBay API's client ID"}}}
	var out, errb bytes.Buffer
	if err := (Program{Apps: []server.App{app}}).Run(context.Background(), []string{"serve", "--help"}, nil, &out, &errb); err != nil {
		t.Fatal(err)
	}
	help := errb.String()
	for _, want := range []string{"-log-format", "TRELLIS_APP_<APP>_<KEY>", "  list-forge\n", "TRELLIS_APP_LIST_FORGE_EBAY_CLIENT_ID\n        the eBay API's client ID"} {
		if !strings.Contains(help, want) {
			t.Errorf("serve --help lacks %q:\n%s", want, help)
		}
	}
}
