package kb

import (
	"fmt"
	"strings"

	"github.com/trellis-go/trellis/apps/rehab/reno"
	"github.com/trellis-go/trellis/apps/rehab/store"
)

// Template summaries: deterministic, no model call.

// SectionSummary is a profile section's short description (IRS | 1ª habitação).
func SectionSummary(section string, d map[string]any) string {
	if len(d) == 0 {
		return "por preencher"
	}
	switch section {
	case "fiscal":
		var parts []string
		if r := str(d, "regime"); r != "" {
			parts = append(parts, r)
		}
		if b, ok := d["primeira_habitacao"].(bool); ok && b {
			parts = append(parts, "1ª habitação")
		}
		if b, ok := d["habitacao_propria_permanente"].(bool); ok && !b {
			parts = append(parts, "outra habitação")
		}
		if n, ok := num(d["idade"]); ok && n > 0 {
			if n <= 35 {
				parts = append(parts, fmt.Sprintf("jovem (%d anos)", int(n)))
			} else {
				parts = append(parts, fmt.Sprintf("%d anos", int(n)))
			}
		}
		if len(parts) == 0 {
			return "dados fiscais parciais"
		}
		return strings.Join(parts, " | ")
	case "budget":
		lo, okLo := num(d["min"])
		hi, okHi := num(d["max"])
		s := ""
		switch {
		case okLo && okHi && lo > 0:
			s = "Orçamento: " + EuroRange(lo, hi)
		case okHi:
			s = "Orçamento: até " + Euro(hi)
		default:
			s = "Orçamento por definir"
		}
		if r, ok := num(d["renovacao_max"]); ok && r > 0 {
			s += " | obras até " + Euro(r)
		}
		return s
	case "renovation":
		var parts []string
		if sk := strs(d["diy_skills"]); len(sk) > 0 {
			parts = append(parts, "DIY: "+strings.Join(sk, ", "))
		}
		if q := str(d, "qualidade"); q != "" {
			parts = append(parts, "acabamentos "+q)
		}
		if sk := strs(d["prioridades"]); len(sk) > 0 {
			parts = append(parts, "prioridade: "+strings.Join(sk, ", "))
		}
		if len(parts) == 0 {
			return "preferências de obra parciais"
		}
		return strings.Join(parts, " | ")
	case "preferences":
		var parts []string
		if z := strs(d["zonas"]); len(z) > 0 {
			parts = append(parts, "Zonas: "+strings.Join(z, ", "))
		}
		if t := str(d, "tipologia"); t != "" {
			parts = append(parts, t)
		}
		if len(parts) == 0 {
			return "preferências parciais"
		}
		return strings.Join(parts, " | ")
	case "goals":
		if g := str(d, "objetivo"); g != "" {
			return "Objetivo: " + g
		}
		return "objetivos parciais"
	}
	return ""
}

// NoProfile is the profile's summary before the user said anything about themselves, and
// EmptyPortfolio the portfolio index's summary when it has no property.
const (
	NoProfile      = "Perfil não configurado"
	EmptyPortfolio = "Portfólio vazio"
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
	parts = append(parts, fmt.Sprintf("%d/%d secções completas", n, len(store.ProfileSections)))
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
		parts = append(parts, "reno "+RangeShort(renoMin, renoMax))
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
	b.WriteString("Obras: " + EuroRange(r.TotalMin, r.TotalMax))
	if r.Price > 0 {
		b.WriteString(" | Total: " + EuroRange(r.Price+r.TotalMin, r.Price+r.TotalMax))
	}
	if pr := reno.Priority(r.Rooms); len(pr) > 0 {
		var names []string
		for _, x := range pr {
			if len(names) == 3 {
				break
			}
			names = append(names, fmt.Sprintf("%s (%s)", reno.RoomLabel(x.Type), reno.ConditionLabel(x.Condition)))
		}
		b.WriteString("\nPrioridades: " + strings.Join(names, ", "))
	}
	return b.String()
}

// DetailSummary is the chat summary followed by every room.
func DetailSummary(r *reno.Result) string {
	var b strings.Builder
	b.WriteString(ChatSummary(r))
	b.WriteString("\nDivisões:")
	for _, x := range r.Rooms {
		fmt.Fprintf(&b, "\n- %s", reno.RoomLabel(x.Type))
		if x.AreaM2 > 0 {
			fmt.Fprintf(&b, " (%s)", Area(x.AreaM2))
		}
		fmt.Fprintf(&b, ": %s, %s", reno.ConditionLabel(x.Condition), EuroRange(x.Min, x.Max))
		if len(x.Issues) > 0 {
			fmt.Fprintf(&b, "; problemas: %s", strings.Join(x.Issues, ", "))
		}
		if x.DIYSaving > 0 {
			fmt.Fprintf(&b, "; DIY poupa %d%%", int(x.DIYSaving*100))
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
