package rehab

import (
	"strings"
	"testing"
)

func TestParseLanguages(t *testing.T) {
	if len(ReplyLanguages) < 4 || ReplyLanguages["en"].Instruction == "" || PortugueseReminder == "" || FallbackReply == "" {
		t.Fatalf("languages.json read as %+v", ReplyLanguages)
	}
	for _, c := range []struct{ in, want string }{
		{`{"en": {"instruction": "i", "reminder": "r", "fallback": "f"}}`, `"pt" is missing`},
		{`{"pt": {"reminder": "r"}}`, `"pt" needs a reminder and a fallback`},
		{`{"pt": {"reminder": "r", "fallback": "f"}, "de": {"reminder": "r", "fallback": "f"}}`, `"de" needs an instruction`},
		{`{"pt": {"reminder": "r", "fallback": "f", "tone": "x"}}`, `unknown field "tone"`},
		{`[]`, `cannot unmarshal array`},
	} {
		if _, err := parseLanguages([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseLanguages(%s) = %v, want an error saying %q", c.in, err, c.want)
		}
	}
}
