package cli

import (
	"context"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/apps/realty"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/servertest"
)

// setupRealty serves the realty app (offline: no key, generated listings, workers that are this
// test binary) in process.
func setupRealty(t *testing.T) *chatBundle {
	t.Helper()
	s := servertest.Start(t, server.Config{Apps: []server.App{realty.App()}, Dev: true})
	return &chatBundle{dir: t.TempDir(), hs: s.HTTP, url: s.URL}
}

// The realty assistant through `trellis chat`: the session's thread is printed, the listings a
// property tool found (its structured result, in the tool message's response_metadata) are a
// table, the three hints (a custom event) follow the answer, quit ends the chat, and the next
// chat offers to resume the session.
func TestChatRealtyListingsHintsAndResume(t *testing.T) {
	b := setupRealty(t)
	out, err := b.chat(t, "Find condos in Miami under $500k\nquit\nnever sent\n", "--assistant", "realty")
	if err != nil {
		t.Fatalf("chat: %v\n%s", err, out)
	}
	s := out.String()
	t.Logf("transcript:\n%s", s)
	thread := b.lastThread(t, "realty")
	if thread == "" || !strings.Contains(s, "session (thread) "+thread+"\n") {
		t.Errorf("the session's thread %q is not printed:\n%s", thread, s)
	}
	table := regexp.MustCompile(`(?m)^ +price +beds +baths +area +address\n( +\$[0-9,]+ +[0-9.]+ +[0-9.]+ +[0-9,]+ ft² +.+, Miami, FL, \d{5}\n)+`)
	rows := table.FindString(s)
	if rows == "" {
		t.Fatalf("no listings table:\n%s", s)
	}
	if !strings.Contains(rows, "$298,000") || !strings.Contains(rows, "702 Sunset Court, Miami, FL, 33107") {
		t.Errorf("the table lacks the cheapest Miami condo:\n%s", rows)
	}
	hints := regexp.MustCompile(`You could ask:\n  1\. .+\n  2\. .+\n  3\. .+\n`).FindStringIndex(s)
	if hints == nil {
		t.Fatalf("no three hints:\n%s", s)
	}
	if answer := strings.Index(s, "Here is what I found"); answer < 0 || answer > hints[0] {
		t.Errorf("the hints do not follow the answer:\n%s", s)
	}
	if strings.Contains(s, "never sent") {
		t.Errorf("the chat went on after quit:\n%s", s)
	}

	out, err = b.chat(t, "y\nexit\n", "--assistant", "realty")
	if err != nil {
		t.Fatalf("chat: %v\n%s", err, out)
	}
	if s := out.String(); !strings.Contains(s, "resume your last conversation") || !strings.Contains(s, "resumed thread "+thread) {
		t.Errorf("the second chat did not offer to resume %s:\n%s", thread, s)
	}
}

func TestChatEndsOnALostConnection(t *testing.T) {
	b := setupRealty(t)
	pr, pw := io.Pipe()
	defer pw.Close()
	sigs := make(chan os.Signal, 1)
	out := &writes{}
	in := newPlainReader(pr, out, sigs)
	defer in.close()
	done := make(chan error, 1)
	go func() {
		done <- chat(context.Background(), chatOptions{URL: b.url, Assistant: "realty", ConfigDir: b.dir, In: in, Out: out, Interrupts: sigs})
	}()
	if _, err := io.WriteString(pw, "Find homes in Austin\n"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, out, "You could ask:")
	b.hs.CloseClientConnections()
	b.hs.Close()
	if _, err := io.WriteString(pw, "and in Denver?\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(out.String(), "lost the connection to "+b.url) {
			t.Errorf("chat ended with %v:\n%s", err, out)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the chat did not end when the server went away:\n%s", out)
	}
}
