package agent_test

import (
	"testing"

	"github.com/trellis-go/trellis/agent"
)

func TestParseHumanResponse(t *testing.T) {
	t.Parallel()
	for _, v := range []any{
		[]any{map[string]any{"type": "accept"}},
		map[string]any{"type": "accept"},
		`[{"type":"accept"}]`,
		[]agent.HumanResponse{{Type: "accept"}},
	} {
		r, err := agent.ParseHumanResponse(v)
		if err != nil || r.Type != "accept" {
			t.Errorf("%#v: %+v, %v", v, r, err)
		}
	}
	if _, err := agent.ParseHumanResponse([]any{}); err == nil {
		t.Errorf("an empty list was accepted")
	}
}
