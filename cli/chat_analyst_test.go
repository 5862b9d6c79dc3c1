package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/analyst"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/servertest"
)

// The analyst's three gates (plan, discovery, final) are Agent Inbox interrupts that `trellis
// chat` shows and answers: accepting each in turn ends with the report saved and its ID given.
func TestChatAnswersTheAnalystsGates(t *testing.T) {
	s := servertest.Start(t, server.Config{Apps: []server.App{analyst.App()}, Dev: true})
	b := &chatBundle{dir: t.TempDir(), hs: s.HTTP, url: s.URL}
	out, err := b.chat(t, "What is the market opportunity for our analytics platform in Spain?\naccept\naccept\naccept\nquit\n", "--assistant", "analyst", "--new")
	if err != nil {
		t.Fatalf("chat: %v\n%s", err, out)
	}
	tr := out.String()
	t.Logf("transcript:\n%s", tr)
	if n := strings.Count(tr, "== approval needed: "); n != 3 {
		t.Fatalf("%d approvals asked, want the three gates:\n%s", n, tr)
	}
	for _, want := range []string{"== approval needed: Review discoveries ==", "== approval needed: Review final report =="} {
		if !strings.Contains(tr, want) {
			t.Errorf("no %q:\n%s", want, tr)
		}
	}
	if !regexp.MustCompile("Saved your report .+ \\(reference ID `[0-9a-f-]{8,}`").MatchString(tr) {
		t.Errorf("no saved report with its ID after the final gate:\n%s", tr)
	}
}
