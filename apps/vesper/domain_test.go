package vesper

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/vesper/pack"
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
	plan := func(string, Filters) []Call { return nil }
	_, err := newAssistant(assistantConfig{Toolkit: a.Toolkit(), Domains: []Domain{{Name: "x_agent", Plan: plan,
		Boosts: []pack.Boost{{When: []string{"project"}, Add: 2}}}}})
	if err == nil || !strings.Contains(err.Error(), `"project"`) || !strings.Contains(err.Error(), "project_name") {
		t.Fatalf("a boost reading an unknown filter: %v", err)
	}
}

// TestBoosts: a domain's score follows its boosts (pack/words.json for the built-in domains)
// by the filters a request names, with no Go written for a domain's name.
func TestBoosts(t *testing.T) {
	t.Parallel()
	counts := filterCounts(Filters{ProjectName: "Nazareth Solar", HubZones: []string{"NP15", "SP15"}, HubZone: "NP15", Year: 2025})
	if counts["project_name"] != 1 || counts["hub_zones"] != 2 || counts["year"] != 1 || counts["market"] != 0 {
		t.Fatalf("counts %v", counts)
	}
	for _, c := range []struct {
		b    pack.Boost
		want int
	}{
		{pack.Boost{When: []string{"sponsor", "project_name"}, Add: 2}, 3},
		{pack.Boost{When: []string{"hub_zones"}, AtLeast: 2, Add: 3}, 4},
		{pack.Boost{When: []string{"hub_zones"}, AtLeast: 3, Add: 3}, 1},
		{pack.Boost{When: []string{"project_name"}, Unless: []string{"hub_zone"}, Veto: true}, 1},
		{pack.Boost{When: []string{"project_name"}, Unless: []string{"market"}, Veto: true}, 0},
	} {
		if got := boosted(1, []pack.Boost{c.b}, counts); got != c.want {
			t.Errorf("%+v: score %d, want %d", c.b, got, c.want)
		}
	}
	for _, d := range BuiltinDomains() {
		if err := checkRouting(&d); err != nil {
			t.Error(err)
		}
	}
	for in, want := range map[string]string{"red": "off_track", "Off Track": "off_track", "yellow": "at_risk", "on_hold": "on_hold", "green": "on_track", "purple": "purple"} {
		if got := statusColor(in); got != want {
			t.Errorf("statusColor(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestToolWords: a tool is named to a person by pack/words.json, without its verb.
func TestToolWords(t *testing.T) {
	for name, want := range map[string]string{"get_project_health": "Looking up project health",
		"list_available_curves": "Looking up available curves", "general_sql_query": "Advanced SQL", "outages": "Looking up outages"} {
		if got := toolWords(name); got != want {
			t.Errorf("toolWords(%q) = %q, want %q", name, got, want)
		}
	}
}
