package analyst

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/trellis-go/trellis/memory"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
)

// isOffline reports whether m is the offline rule-based model, for which the analyst decides by
// deterministic rules instead (planning, review, writing from the corpus).
func isOffline(m model.Model) bool {
	return model.IsOffline(m)
}

// xmlPrompt builds a system prompt in the specification's XML sections, with the user's memory
// injected (mem may be nil for prompts that carry no memory).
func xmlPrompt(role string, mem Mem, instructions, rules string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<Role>\n%s\n</Role>\n", role)
	if mem != nil {
		fmt.Fprintf(&b, "<Background>\n%s\n</Background>\n", mem.Text(NSUserProfile))
		fmt.Fprintf(&b, "<CompanyContext>\n%s\n</CompanyContext>\n", mem.Text(NSCompanyProfile))
		fmt.Fprintf(&b, "<Preferences>\n%s\n</Preferences>\n", mem.Text(NSPreferences))
		fmt.Fprintf(&b, "<EpisodicContext>\n%s\n</EpisodicContext>\n", lastLines(mem.Text(NSEpisodic), 12))
	}
	fmt.Fprintf(&b, "<Instructions>\n%s\n</Instructions>\n<Rules>\n%s\n</Rules>", instructions, rules)
	return b.String()
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// structured asks m for JSON matching schema and decodes it into out.
func structured(ctx context.Context, m model.Model, schema *model.Schema, system, user string, out any) error {
	resp, err := m.Generate(ctx, &model.Request{Schema: schema, Messages: []message.Message{message.System(system), message.User(user)}})
	if err != nil {
		return err
	}
	raw := resp.Structured
	if len(raw) == 0 {
		raw = model.ExtractJSON(resp.Message.Text())
	}
	if len(raw) == 0 {
		return fmt.Errorf("analyst: the model answered %q where JSON for %s was expected", clip(resp.Message.Text(), 120), schema.Name)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("analyst: the model's %s does not decode: %w", schema.Name, err)
	}
	return nil
}

func schema(name, desc, js string) *model.Schema {
	return &model.Schema{Name: name, Description: desc, JSON: json.RawMessage(js)}
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndex(s[:n], " ")
	if cut < n/2 {
		cut = n
	}
	return s[:cut] + "…"
}

func toJSON(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

type (
	memoryDoc = memory.FactDoc
	memoryOp  = memory.Op
)
