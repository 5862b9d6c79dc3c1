package analyst_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/analyst"
	"github.com/trellis-go/trellis/apps/example"
	"github.com/trellis-go/trellis/cli"
	"github.com/trellis-go/trellis/server"
)

// `trellis chat` answers the three gates' inbox requests, from the request to the saved report.
func TestTrellisChatAnswersTheGates(t *testing.T) {
	t.Parallel()
	hs := served(t, analyst.Options{})
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stdin := voltraQuestion + "\nrespond\nAdd a question on Spinlane\naccept\naccept\naccept\n"
	err := cli.Run(ctx, []string{"chat", "--url", hs.URL, "--config-dir", t.TempDir(), "--assistant", "analyst", "--new"}, strings.NewReader(stdin), &out, &errb)
	if err != nil {
		t.Fatalf("chat: %v\n%s\n%s", err, out.String(), errb.String())
	}
	s := out.String()
	for _, want := range []string{"Review research plan", "# Research plan (v2)", "What do we know about Spinlane?", "Review discoveries", "Review final report", "Saved your report"} {
		if !strings.Contains(s, want) {
			t.Errorf("the transcript lacks %q:\n%s", want, s)
		}
	}
}

// The analyst shares a server with another app, and answers "hello" through /runs/wait as the
// registry's test asks of every graph.
func TestServesBesideAnotherApp(t *testing.T) {
	t.Parallel()
	s, err := server.New(server.Config{Apps: []server.App{example.App(), analyst.App()}, DataDir: t.TempDir(), Dev: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := httptestServer(t, s)
	for _, g := range []string{"example", "analyst"} {
		v := call(t, "", "POST", hs+"/runs/wait", map[string]any{"assistant_id": g, "input": map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hello"}}}})
		if g == "analyst" && !strings.Contains(messageText(v, -1), "What would you like to research today?") {
			t.Errorf("analyst: %v", messageText(v, -1))
		}
	}
}
