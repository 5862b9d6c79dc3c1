package pack_test

// What analyst asks of the offline model, with its pack (moved here from model/offline's tests).

import (
	"regexp"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/analyst/pack"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline/packtest"
)

var spec = packtest.Spec

// TestPackIsValid: the embedded pack parses and validates.
func TestPackIsValid(t *testing.T) {
	if err := pack.Pack.Validate(); err != nil {
		t.Fatal(err)
	}
}

var analystTools = []model.ToolSpec{
	spec("rag_tool", "Search the company knowledge base documents by similarity.",
		`{"type":"object","properties":{"query":{"type":"string"},"top_k":{"type":"integer","default":5}},"required":["query"]}`),
	spec("web_search_tool", "Search the web for current information.",
		`{"type":"object","properties":{"query":{"type":"string"},"max_results":{"type":"integer","default":5}},"required":["query"]}`),
	spec("Question", "Ask the user a clarifying question.",
		`{"type":"object","properties":{"content":{"type":"string"}},"required":["content"]}`),
}

// TestSeedTools: requests from the specification reach the right tool with their arguments.
func TestSeedTools(t *testing.T) {
	packtest.CheckCalls(t, pack.Pack, []packtest.Case{
		{Name: "analyst web", Tools: analystTools, Msgs: []message.Message{message.User("Search the web for EV charging market share in Europe")},
			Tool: "web_search_tool", Args: `{"query":"EV charging market share in Europe"}`},
	})
}

// TestWords: the embedded vocabulary parses, and a file missing a list or with an unknown field
// is refused with the list's name.
func TestWords(t *testing.T) {
	if len(pack.Vocabulary.LeadInstructions) == 0 || len(pack.Vocabulary.Preferences) == 0 {
		t.Fatalf("words.json read as %+v", pack.Vocabulary)
	}
	for _, c := range []struct{ in, want string }{
		{`{"lead_openers": ["please"]}`, `"lead_instructions" is missing`},
		{`{"leadopeners": []}`, `unknown field`},
		{`{"lead_openers":["a"],"lead_instructions":["a"],"whether":["a"],"auxiliaries":["a"],"clause_starts":["a"],"greetings":["a"],"introductions":["a"],"remember_cues":["a"],"year_prepositions":["a"],"ask_user":["a"],"step_joiners":["a"],"references":["a"],"tail_fillers":["a"],"step_words":{"a":"b"},"drop_cues":["a"],"stopwords":["a"],"preferences":[{"type":"style","name":"verbosity","values":[{"value":"concise"}]}]}`, `every value needs a value and cues`},
	} {
		if _, err := pack.ParseWords([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseWords(%s) = %v, want an error saying %q", c.in, err, c.want)
		}
	}
}

// TestAlternation: phrases become one alternation, longest first, words joined by any spacing.
func TestAlternation(t *testing.T) {
	re := regexp.MustCompile(`^` + pack.Alternation([]string{"check", "check out", "what's up?"}) + `$`)
	for _, s := range []string{"check", "check out", "check   out", "what's up?"} {
		if !re.MatchString(s) {
			t.Errorf("%q does not match %s", s, re)
		}
	}
	if re.MatchString("what's upp") {
		t.Errorf("the phrases are not quoted: %s", re)
	}
}
