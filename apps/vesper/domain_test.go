package vesper

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/trellis-go/trellis/apps/vesper/synth"
)

// outages is the result of the added domain's tool; it formats itself.
type outages struct{ Lines []string }

func (o outages) Block() synth.Block {
	return synth.Block{Lead: fmt.Sprintf("There are **%d planned transmission outages**.", len(o.Lines)), ReportKey: ""}
}

// A new domain is registered through Options.Domains: no change to the
// supervisor, the router or the synthesizer.
func TestAddingADomain(t *testing.T) {
	t.Parallel()
	transmission := Domain{
		Name: "transmission_agent", Intent: "transmission",
		Description: "Transmission outages and congestion on the grid.",
		Examples:    []string{"Which transmission outages are planned?"},
		Prompt:      "You are the transmission specialist.",
		Keywords:    []string{"transmission", "outage", "congestion"},
		Permissions: map[string]string{"get_outages": "chat:read_transmission"},
		Tools: map[string]ToolFunc{"get_outages": func(ctx context.Context, args json.RawMessage) (any, error) {
			return outages{Lines: []string{"Path 15", "Path 26"}}, nil
		}},
		Plan: func(string, Filters) []Call {
			return []Call{{Tool: "get_outages", Args: json.RawMessage(`{}`)}}
		},
	}
	a := setup(t, assistantConfig{Domains: []Domain{transmission}})
	st := ask(t, a, caller("vesper"), "Which transmission outages are planned?")
	if st.Intent != "transmission" || len(st.Agents) != 1 || st.Agents[0] != "transmission_agent" {
		t.Fatalf("routed to %s %v", st.Intent, st.Agents)
	}
	contains(t, st.Answer, "There are **2 planned transmission outages**.")

	// Its permission is enforced and explained like the built-in ones.
	st = ask(t, a, caller("vesper", "chat:read_project_data"), "Which transmission outages are planned?")
	contains(t, st.Answer, "You don't have access to get_outages", "chat:read_transmission")

	// The built-in domains still work beside it, and a mixed question runs both.
	st = ask(t, a, caller("vesper"), "What is the health status of Nazareth Solar and which transmission outages are planned?")
	if len(st.Agents) != 2 {
		t.Fatalf("agents %v, want per_agent and transmission_agent", st.Agents)
	}
	contains(t, st.Answer, "**Nazareth Solar** is currently in", "planned transmission outages")

	if _, err := newAssistant(assistantConfig{Toolkit: a.Toolkit(), Domains: []Domain{{Name: "x_agent", Description: "x"}}}); err == nil {
		t.Fatal("a domain without Plan was accepted")
	}
}
