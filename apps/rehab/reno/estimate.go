// Package reno is the renovation pipeline behind trigger_property_analysis: the listing is
// fetched, each room's photos are classified by a vision model (room type, condition,
// features), and a cost range per room is estimated from its area, its condition and the
// user's DIY skills and preferences. The room features are cached, so recalculating costs
// after a preference changes needs neither a fetch nor a model call (Estimate is pure).
package reno

import (
	"math"
	"sort"
	"strings"

	"github.com/trellis-go/trellis/apps/rehab/pack"
	"github.com/trellis-go/trellis/fold"
)

// Conditions a room can be in, best first.
const (
	Good            = "good"
	Fair            = "fair"
	NeedsRenovation = "needs_renovation"
	Poor            = "poor"
)

// Conditions lists them, for schemas.
var Conditions = []string{Good, Fair, NeedsRenovation, Poor}

// RoomTypes the classifier may name.
var RoomTypes = []string{"kitchen", "bathroom", "living_room", "bedroom", "hallway", "balcony", "exterior", "other"}

// ConditionLabel is the pt-PT words for a condition (pack.Words.ConditionLabels; its "unknown"
// for a condition it does not name).
func ConditionLabel(c string) string {
	if l, ok := pack.Words.ConditionLabels[c]; ok {
		return l
	}
	return pack.Words.ConditionLabels["unknown"]
}

// RoomLabel is the pt-PT name of a room type (pack.Words.RoomLabels; its "other" for a type it
// does not name).
func RoomLabel(t string) string {
	if l, ok := pack.Words.RoomLabels[t]; ok {
		return l
	}
	return pack.Words.RoomLabels["other"]
}

// Room is one classified room: what the vision model said, and its area.
type Room struct {
	Type      string   `json:"room_type"`
	Index     int      `json:"room_index"`
	AreaM2    float64  `json:"area_m2"`
	Condition string   `json:"condition"`
	Features  []string `json:"features"`
	Photo     string   `json:"photo,omitempty"`
}

// RoomEstimate is a room's cost range.
type RoomEstimate struct {
	Room
	Min    float64  `json:"cost_min"`
	Max    float64  `json:"cost_max"`
	Issues []string `json:"issues,omitempty"`
	// DIYSaving is how much of the range the user's own work saves (0..1).
	DIYSaving float64 `json:"diy_saving,omitempty"`
}

// Result is a renovation analysis.
type Result struct {
	PropertyID string         `json:"property_id"`
	Title      string         `json:"title"`
	Typology   string         `json:"typology"`
	Location   string         `json:"location"`
	Price      float64        `json:"price"`
	AreaM2     float64        `json:"area_m2"`
	Rooms      []RoomEstimate `json:"rooms"`
	TotalMin   float64        `json:"total_min"`
	TotalMax   float64        `json:"total_max"`
	// Quality is the finish level the estimate used (basico, medio, premium).
	Quality string   `json:"quality"`
	Skills  []string `json:"diy_skills,omitempty"`
}

// Preferences are what of the user's profile the estimate uses.
type Preferences struct {
	// Skills are DIY skill categories (see DIYSkills).
	Skills []string
	// Quality is basico, medio (the default) or premium.
	Quality string
	// Skip lists room types the user will not renovate.
	Skip []string
}

// DIYSkills are the skill categories and the share of a room's cost each saves where it applies.
var DIYSkills = map[string]float64{
	"pintura":      0.12, // painting
	"demolicao":    0.08, // demolition
	"pavimentos":   0.10, // flooring
	"carpintaria":  0.08, // carpentry
	"azulejos":     0.10, // tiling
	"canalizacao":  0.10, // plumbing
	"eletricidade": 0.08,
}

// which skills apply to which room types.
var skillRooms = map[string][]string{
	"pintura":      {"*"},
	"demolicao":    {"kitchen", "bathroom"},
	"pavimentos":   {"living_room", "bedroom", "hallway", "kitchen"},
	"carpintaria":  {"kitchen", "bedroom", "living_room"},
	"azulejos":     {"kitchen", "bathroom", "balcony"},
	"canalizacao":  {"kitchen", "bathroom"},
	"eletricidade": {"*"},
}

// costs per m² (low, high) by room kind and condition, at a medium finish, in euros; figures
// of Lisbon and Porto contractors' 2025 price lists, rounded.
var perM2 = map[string]map[string][2]float64{
	"wet": {Good: {0, 60}, Fair: {350, 650}, NeedsRenovation: {700, 1100}, Poor: {1000, 1500}},
	"dry": {Good: {0, 20}, Fair: {40, 90}, NeedsRenovation: {130, 260}, Poor: {260, 420}},
}

// fixed minimum for a wet room that needs work.
var wetMin = map[string][2]float64{"kitchen": {6000, 9000}, "bathroom": {4000, 6500}}

var quality = map[string]float64{"basico": 0.8, "medio": 1, "premium": 1.45}

// NormalizeSkill maps a skill as written (Pintura, demolição, canalização) to its category, or
// "": the first category of the pack's skills (pack.Words.Skills) one of whose words begins it.
func NormalizeSkill(s string) string {
	s = fold.String(strings.TrimSpace(s))
	for _, c := range pack.Words.Skills {
		for _, w := range c.Words {
			if strings.HasPrefix(s, w) {
				return c.Value
			}
		}
	}
	return ""
}

// Estimate computes the cost ranges of rooms. It is pure: the same rooms and preferences give
// the same result.
func Estimate(rooms []Room, p Preferences) []RoomEstimate {
	q := quality[p.Quality]
	if q == 0 {
		q = 1
	}
	skills := map[string]bool{}
	for _, s := range p.Skills {
		if k := NormalizeSkill(s); k != "" {
			skills[k] = true
		}
	}
	skip := map[string]bool{}
	for _, s := range p.Skip {
		skip[s] = true
	}
	out := make([]RoomEstimate, 0, len(rooms))
	for _, r := range rooms {
		e := RoomEstimate{Room: r, Issues: issues(r)}
		if skip[r.Type] {
			out = append(out, e)
			continue
		}
		kind := "dry"
		if r.Type == "kitchen" || r.Type == "bathroom" {
			kind = "wet"
		}
		rate, ok := perM2[kind][r.Condition]
		if !ok {
			rate = perM2[kind][Fair]
		}
		lo, hi := rate[0]*r.AreaM2*q, rate[1]*r.AreaM2*q
		if m, ok := wetMin[r.Type]; ok && (r.Condition == NeedsRenovation || r.Condition == Poor) {
			lo, hi = math.Max(lo, m[0]*q), math.Max(hi, m[1]*q)
		}
		saving := 0.0
		for k := range skills {
			for _, t := range skillRooms[k] {
				if t == "*" || t == r.Type {
					saving += DIYSkills[k]
					break
				}
			}
		}
		saving = math.Min(saving, 0.35)
		e.DIYSaving = math.Round(saving*100) / 100
		e.Min, e.Max = round100(lo*(1-saving)), round100(hi*(1-saving))
		out = append(out, e)
	}
	return out
}

func round100(v float64) float64 { return math.Round(v/100) * 100 }

// issues are the features of a room that name a problem to fix (pack.Words.IssueWords).
func issues(r Room) []string {
	var out []string
	for _, f := range r.Features {
		l := strings.ToLower(f)
		for _, w := range pack.Words.IssueWords {
			if strings.Contains(l, w) {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// Totals sums room estimates.
func Totals(rs []RoomEstimate) (lo, hi float64) {
	for _, r := range rs {
		lo += r.Min
		hi += r.Max
	}
	return lo, hi
}

// Priority returns the rooms that need the most, costliest first (rooms in good state left out).
func Priority(rs []RoomEstimate) []RoomEstimate {
	var out []RoomEstimate
	for _, r := range rs {
		if r.Condition == NeedsRenovation || r.Condition == Poor {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Max > out[j].Max })
	return out
}
