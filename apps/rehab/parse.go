package rehab

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/trellis-go/trellis/apps/rehab/nlu"
	"github.com/trellis-go/trellis/apps/rehab/pack"
	"github.com/trellis-go/trellis/apps/rehab/reno"
)

// Amounts reads the money amounts of a pt-PT text (see nlu.Amounts).
func Amounts(text string) []float64 { return nlu.Amounts(text) }

// The words ExtractSection looks for are the pack's (pack.Words, words.json).
var (
	said       = pack.Words
	ageRE      = regexp.MustCompile(`(?i)\b(\d{2})\s*(?:` + nlu.Alt(said.AgeUnit) + `)`)
	typologyRE = regexp.MustCompile(`\b(?:` + strings.ToUpper(nlu.Prefixes(said.Typology)) + `)(\d)\b`)
)

// mentions reports whether low holds one of the words.
func mentions(low string, words []string) bool {
	return slices.ContainsFunc(words, func(w string) bool { return strings.Contains(low, w) })
}

// chosen is the value of the first choice low mentions, or "".
func chosen(low string, cs []pack.Choice) string {
	for _, c := range cs {
		if mentions(low, c.Words) {
			return c.Value
		}
	}
	return ""
}

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
			if mentions(low, said.RenovationBudget) {
				d["renovacao_max"] = a[0]
			} else {
				d["max"] = a[0]
			}
		}
	case "fiscal":
		if mentions(low, said.FirstHome) {
			d["primeira_habitacao"] = true
			d["habitacao_propria_permanente"] = true
		}
		if mentions(low, said.OwnHome) {
			d["habitacao_propria_permanente"] = true
		}
		if mentions(low, said.NotOwnHome) {
			d["habitacao_propria_permanente"] = false
		}
		if m := ageRE.FindStringSubmatch(text); m != nil {
			n, _ := strconv.Atoi(m[1])
			d["idade"] = float64(n)
		}
		if r := chosen(low, said.Regimes); r != "" {
			d["regime"] = r
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
		if q := chosen(low, said.Qualities); q != "" {
			d["qualidade"] = q
		}
		var rooms []any
		for _, r := range said.Rooms {
			if mentions(low, r.Words) {
				rooms = append(rooms, r.Value)
			}
		}
		if len(rooms) > 0 {
			if mentions(low, said.RoomsLeft) {
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
