package realty_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/realty"
)

func TestREPL(t *testing.T) {
	t.Parallel()
	hs, _ := serve(t)
	var out strings.Builder
	in := strings.NewReader("Find condos in Miami under $500k\nshow me the details of the first one\nexit\nnever read\n")
	if err := realty.Chat(context.Background(), realty.ChatOptions{URL: hs.URL, In: in, Out: &out}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	m := regexp.MustCompile(`Session: ([0-9a-f-]{36})`).FindStringSubmatch(got)
	if m == nil || strings.Contains(got, "Resume session") {
		t.Fatalf("no session ID, or a resume offer with no sessions:\n%s", got)
	}
	if !strings.Contains(got, "zpid        address") || !strings.Contains(got, "Miami, FL") || !strings.Contains(got, "You could ask:\n  1. ") {
		t.Errorf("no listings table or hints:\n%s", got)
	}
	t.Log(got)

	// A second run offers the session back.
	out.Reset()
	if err := realty.Chat(context.Background(), realty.ChatOptions{URL: hs.URL, In: strings.NewReader("y\n"), Out: &out}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Resume session "+m[1]+"? (y/n) ") || !strings.Contains(out.String(), "Session: "+m[1]) {
		t.Errorf("resume:\n%s", out.String())
	}
	out.Reset()
	if err := realty.Chat(context.Background(), realty.ChatOptions{URL: hs.URL, In: strings.NewReader("n\nquit\n"), Out: &out}); err != nil || strings.Contains(out.String(), "Session: "+m[1]) {
		t.Errorf("a new session: %v\n%s", err, out.String())
	}

	// A server that went away ends it.
	hs.Close()
	err := realty.Chat(context.Background(), realty.ChatOptions{URL: hs.URL, In: strings.NewReader("hello\n"), Out: &out})
	if !errors.Is(err, realty.ErrLostConnection) {
		t.Errorf("lost connection: %v", err)
	}
}
