package kb

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/trellis-go/trellis/apps/rehab/nlu"
	"github.com/trellis-go/trellis/apps/rehab/prompts"
	"github.com/trellis-go/trellis/apps/rehab/reno"
	"github.com/trellis-go/trellis/apps/rehab/store"
)

// Template summaries: deterministic, no model call; their words are prompts/answers.json's.

// answer is the sentence name of prompts/answers.json, filled (prompts.Say).
func answer(name string, pairs ...string) string { return prompts.Say(name, pairs...) }

// WorksRange reads the works' cost range back from an analysis's chat summary (ChatSummary's
// chat_works line); a single amount is both ends.
func WorksRange(summary string) (lo, hi float64, ok bool) {
	lead := prompts.Lead("chat_works")
	for _, l := range strings.Split(summary, "\n") {
		if !strings.HasPrefix(l, lead) {
			continue
		}
		field, _, _ := strings.Cut(strings.TrimPrefix(l, lead), " |")
		from, to, found := strings.Cut(field, "–")
		if !found {
			to = from
		}
		a, b := nlu.Amounts(from), nlu.Amounts(to)
		switch {
		case len(a) == 1 && len(b) == 1:
			return a[0], b[0], true
		case len(a) == 1:
			return a[0], a[0], true
		}
	}
	return 0, 0, false
}

// SectionSummary is a profile section's short description (IRS | 1ª habitação).
func SectionSummary(section string, d map[string]any) string {
	if len(d) == 0 {
		return answer("summary_none")
	}
	switch section {
	case "fiscal":
		var parts []string
		if r := str(d, "regime"); r != "" {
			parts = append(parts, r)
		}
		if b, ok := d["primeira_habitacao"].(bool); ok && b {
			parts = append(parts, answer("fiscal_first_home"))
		}
		if b, ok := d["habitacao_propria_permanente"].(bool); ok && !b {
			parts = append(parts, answer("fiscal_other_home"))
		}
		if n, ok := num(d["idade"]); ok && n > 0 {
			if n <= 35 {
				parts = append(parts, answer("fiscal_young", "age", strconv.Itoa(int(n))))
			} else {
				parts = append(parts, answer("fiscal_age", "age", strconv.Itoa(int(n))))
			}
		}
		if len(parts) == 0 {
			return answer("fiscal_partial")
		}
		return strings.Join(parts, " | ")
	case "budget":
		lo, okLo := num(d["min"])
		hi, okHi := num(d["max"])
		s := ""
		switch {
		case okLo && okHi && lo > 0:
			s = answer("budget_range", "range", EuroRange(lo, hi))
		case okHi:
			s = answer("budget_up_to", "max", Euro(hi))
		default:
			s = answer("budget_unset")
		}
		if r, ok := num(d["renovacao_max"]); ok && r > 0 {
			s += " | " + answer("budget_works", "max", Euro(r))
		}
		return s
	case "renovation":
		var parts []string
		if sk := strs(d["diy_skills"]); len(sk) > 0 {
			parts = append(parts, answer("renovation_diy", "skills", strings.Join(sk, ", ")))
		}
		if q := str(d, "qualidade"); q != "" {
			parts = append(parts, answer("renovation_finish", "quality", q))
		}
		if sk := strs(d["prioridades"]); len(sk) > 0 {
			parts = append(parts, answer("renovation_priority", "rooms", strings.Join(sk, ", ")))
		}
		if len(parts) == 0 {
			return answer("renovation_partial")
		}
		return strings.Join(parts, " | ")
	case "preferences":
		var parts []string
		if z := strs(d["zonas"]); len(z) > 0 {
			parts = append(parts, answer("preferences_zones", "zones", strings.Join(z, ", ")))
		}
		if t := str(d, "tipologia"); t != "" {
			parts = append(parts, t)
		}
		if len(parts) == 0 {
			return answer("preferences_partial")
		}
		return strings.Join(parts, " | ")
	case "goals":
		if g := str(d, "objetivo"); g != "" {
			return answer("goals_goal", "goal", g)
		}
		return answer("goals_partial")
	}
	return ""
}

// NoProfile is the profile's summary before the user said anything about themselves, and
// EmptyPortfolio the portfolio index's summary when it has no property.
var (
	NoProfile      = answer("no_profile")
	EmptyPortfolio = answer("empty_portfolio")
)

// MasterSummary is the profile's compact identity: João Silva | Lisboa | 3/5 secções completas.
func MasterSummary(p *store.Profile) string {
	if p == nil || !p.Exists {
		return NoProfile
	}
	var parts []string
	if p.Name != "" {
		parts = append(parts, p.Name)
	}
	if p.Location != "" {
		parts = append(parts, p.Location)
	}
	n := 0
	for _, s := range store.ProfileSections {
		if len(p.Sections[s]) > 0 {
			n++
		}
	}
	parts = append(parts, answer("profile_sections_done", "done", strconv.Itoa(n), "all", strconv.Itoa(len(store.ProfileSections))))
	return strings.Join(parts, " | ")
}

// Summarize gives store.ProfileUpdate.Summarize for a section.
func Summarize(section string) func(p *store.Profile) (string, string) {
	return func(p *store.Profile) (string, string) {
		return SectionSummary(section, p.Sections[section]), MasterSummary(p)
	}
}

// Neighbourhood is the short place name of a location ("Alfama, Lisboa" gives Alfama).
func Neighbourhood(loc string) string {
	if i := strings.Index(loc, ","); i > 0 {
		return strings.TrimSpace(loc[:i])
	}
	return strings.TrimSpace(loc)
}

// IndexLine is a portfolio item's one-liner: T2 Alfama, 180k€, reno 15-25k€.
func IndexLine(p store.Property, renoMin, renoMax float64) string {
	var parts []string
	head := strings.TrimSpace(p.Typology + " " + Neighbourhood(p.Location))
	if head != "" {
		parts = append(parts, head)
	}
	if p.Price > 0 {
		parts = append(parts, EuroShort(p.Price))
	}
	if renoMax > 0 {
		parts = append(parts, answer("index_works", "range", RangeShort(renoMin, renoMax)))
	}
	return strings.Join(parts, ", ")
}

// ChatSummary is the scannable summary of an analysis.
func ChatSummary(r *reno.Result) string {
	var b strings.Builder
	title := strings.TrimSpace(r.Typology + " " + Neighbourhood(r.Location))
	if title != "" {
		b.WriteString(title + "\n")
	}
	b.WriteString(Compact(r.Price, r.AreaM2) + "\n")
	b.WriteString(answer("chat_works", "range", EuroRange(r.TotalMin, r.TotalMax)))
	if r.Price > 0 {
		b.WriteString(" | " + answer("chat_total", "range", EuroRange(r.Price+r.TotalMin, r.Price+r.TotalMax)))
	}
	if pr := reno.Priority(r.Rooms); len(pr) > 0 {
		var names []string
		for _, x := range pr {
			if len(names) == 3 {
				break
			}
			names = append(names, answer("chat_room", "room", reno.RoomLabel(x.Type), "condition", reno.ConditionLabel(x.Condition)))
		}
		b.WriteString("\n" + answer("chat_priorities", "rooms", strings.Join(names, ", ")))
	}
	return b.String()
}

// DetailSummary is the chat summary followed by every room.
func DetailSummary(r *reno.Result) string {
	var b strings.Builder
	b.WriteString(ChatSummary(r))
	b.WriteString("\n" + answer("detail_rooms"))
	for _, x := range r.Rooms {
		fmt.Fprintf(&b, "\n- %s", reno.RoomLabel(x.Type))
		if x.AreaM2 > 0 {
			fmt.Fprintf(&b, " (%s)", Area(x.AreaM2))
		}
		fmt.Fprintf(&b, ": %s, %s", reno.ConditionLabel(x.Condition), EuroRange(x.Min, x.Max))
		if len(x.Issues) > 0 {
			b.WriteString("; " + answer("detail_issues", "issues", strings.Join(x.Issues, ", ")))
		}
		if x.DIYSaving > 0 {
			b.WriteString("; " + answer("detail_diy", "percent", strconv.Itoa(int(x.DIYSaving*100))))
		}
	}
	return b.String()
}

func str(d map[string]any, k string) string {
	if v, ok := d[k].(string); ok {
		return strings.TrimSpace(v)
	}
	return ""
}

func num(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

func strs(v any) []string {
	switch x := v.(type) {
	case []string:
		return x
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	case string:
		if x == "" {
			return nil
		}
		var out []string
		for _, p := range strings.Split(x, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	return nil
}

// Num reads a JSON number (exported for the tools).
func Num(v any) (float64, bool) { return num(v) }

// Strings reads a list of strings, or a comma list (exported for the tools).
func Strings(v any) []string { return strs(v) }
