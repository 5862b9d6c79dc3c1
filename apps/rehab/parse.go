package rehab

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/trellis-go/trellis/apps/rehab/nlu"
	"github.com/trellis-go/trellis/apps/rehab/reno"
)

// Amounts reads the money amounts of a pt-PT text (see nlu.Amounts).
func Amounts(text string) []float64 { return nlu.Amounts(text) }

var (
	ageRE      = regexp.MustCompile(`(?i)\b(\d{2})\s*anos\b`)
	typologyRE = regexp.MustCompile(`\bT(\d)\b`)
)

// ExtractSection reads a profile section's data from the user's words, for the implicit
// updates the offline model (or a terse model) leaves without data.
func ExtractSection(section, text string) map[string]any {
	low := strings.ToLower(text)
	d := map[string]any{}
	switch section {
	case "budget":
		a := Amounts(text)
		switch {
		case len(a) >= 2:
			lo, hi := math.Min(a[0], a[1]), math.Max(a[0], a[1])
			d["min"], d["max"] = lo, hi
		case len(a) == 1:
			if strings.Contains(low, "obra") || strings.Contains(low, "remodela") {
				d["renovacao_max"] = a[0]
			} else {
				d["max"] = a[0]
			}
		}
	case "fiscal":
		if strings.Contains(low, "primeira habita") || strings.Contains(low, "1ª habita") || strings.Contains(low, "primeira casa") {
			d["primeira_habitacao"] = true
			d["habitacao_propria_permanente"] = true
		}
		if strings.Contains(low, "permanente") || strings.Contains(low, "para viver") || strings.Contains(low, "morar") {
			d["habitacao_propria_permanente"] = true
		}
		if strings.Contains(low, "investimento") || strings.Contains(low, "secundária") || strings.Contains(low, "arrendar") {
			d["habitacao_propria_permanente"] = false
		}
		if m := ageRE.FindStringSubmatch(text); m != nil {
			n, _ := strconv.Atoi(m[1])
			d["idade"] = float64(n)
		}
		if strings.Contains(low, "irs") {
			d["regime"] = "IRS"
		}
	case "renovation":
		var skills []any
		for _, w := range strings.FieldsFunc(low, func(r rune) bool { return r == ' ' || r == ',' || r == '.' || r == ';' }) {
			if k := reno.NormalizeSkill(w); k != "" && len(w) >= 5 {
				dup := false
				for _, s := range skills {
					dup = dup || s == k
				}
				if !dup {
					skills = append(skills, k)
				}
			}
		}
		if len(skills) > 0 {
			d["diy_skills"] = skills
		}
		switch {
		case strings.Contains(low, "premium") || strings.Contains(low, "luxo") || strings.Contains(low, "alta qualidade"):
			d["qualidade"] = "premium"
		case strings.Contains(low, "básic") || strings.Contains(low, "basic") || strings.Contains(low, "económic") || strings.Contains(low, "barat"):
			d["qualidade"] = "basico"
		case strings.Contains(low, "médi"):
			d["qualidade"] = "medio"
		}
		var rooms []any
		for _, r := range []struct{ word, room string }{{"cozinha", "kitchen"}, {"casa de banho", "bathroom"}, {"wc", "bathroom"}, {"sala", "living_room"}, {"quarto", "bedroom"}} {
			if strings.Contains(low, r.word) {
				rooms = append(rooms, r.room)
			}
		}
		if len(rooms) > 0 {
			if strings.Contains(low, "não vou") || strings.Contains(low, "sem mexer") || strings.Contains(low, "deixar") {
				d["excluir"] = rooms
			} else {
				d["prioridades"] = rooms
			}
		}
	case "preferences":
		var zones []any
		for _, n := range Neighbourhoods {
			if strings.Contains(low, strings.ToLower(n)) {
				zones = append(zones, n)
			}
		}
		if len(zones) > 0 {
			d["zonas"] = zones
		}
		if m := typologyRE.FindStringSubmatch(text); m != nil {
			d["tipologia"] = "T" + m[1]
		}
	case "goals":
		if t := strings.TrimSpace(text); t != "" {
			d["objetivo"] = t
		}
	}
	return d
}
