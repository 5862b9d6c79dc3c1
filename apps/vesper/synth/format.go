package synth

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/trellis-go/trellis/numfmt"
)

// Money formats dollars with K, M or B units: $950, $620K, $2.1M, $12.5M.
func Money(v float64) string {
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	unit := func(x float64, u string) string {
		s := strconv.FormatFloat(math.Round(x*10)/10, 'f', -1, 64)
		return sign + "$" + s + u
	}
	switch {
	case v >= 1e9:
		return unit(v/1e9, "B")
	case v >= 1e6:
		return unit(v/1e6, "M")
	case v >= 1e3:
		return unit(v/1e3, "K")
	}
	return sign + "$" + strconv.FormatFloat(math.Round(v), 'f', 0, 64)
}

// Price formats a price in dollars with two decimals: $48.73.
func Price(v float64) string {
	if v < 0 {
		return "-$" + strconv.FormatFloat(-v, 'f', 2, 64)
	}
	return "$" + strconv.FormatFloat(v, 'f', 2, 64)
}

// PerMWh formats a price per megawatt-hour: $48.73/MWh.
func PerMWh(v float64) string { return Price(v) + "/MWh" }

// Int formats a count with thousands separators: 8,760.
func Int(n int64) string { return numfmt.Group(n, ",") }

// Percent formats a share in percent with at most one decimal: 5.1%.
func Percent(v float64) string {
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) + "%"
}

func parseDay(s string) (time.Time, bool) {
	if len(s) >= 10 {
		s = s[:10]
	}
	t, err := time.Parse("2006-01-02", s)
	return t, err == nil
}

// MonthYear writes a date as "March 2026"; "" for no date.
func MonthYear(s string) string {
	t, ok := parseDay(s)
	if !ok {
		return s
	}
	return t.Format("January 2006")
}

// ShortMonthYear writes a date as "Mar 2026", for tables.
func ShortMonthYear(s string) string {
	t, ok := parseDay(s)
	if !ok {
		return s
	}
	return t.Format("Jan 2006")
}

// Day writes a date as "Feb 26" in the reference year and "Feb 26, 2025"
// in any other.
func Day(s string, now time.Time) string {
	t, ok := parseDay(s)
	if !ok {
		return s
	}
	if t.Year() == now.Year() {
		return t.Format("Jan 2")
	}
	return t.Format("Jan 2, 2006")
}

// FullDay writes a date as "February 26, 2026".
func FullDay(s string) string {
	t, ok := parseDay(s)
	if !ok {
		return s
	}
	return t.Format("January 2, 2006")
}

// HealthBadge is the colour emoji and name of a health colour.
func HealthBadge(color string) string {
	c := strings.ToLower(strings.TrimSpace(color))
	if _, ok := colourStatus[c]; ok {
		return label("badge_" + c)
	}
	return label("badge_none")
}

// colourStatus maps a health colour code to its status code; statusCodes are the status codes,
// each written by the label of that name (texts.json).
var (
	colourStatus = map[string]string{"green": "on_track", "yellow": "at_risk", "red": "off_track", "blue": "on_hold"}
	statusCodes  = []string{"on_track", "at_risk", "off_track", "on_hold"}
)

// Status is a project status in words with its emoji: "off track 🔴".
func Status(statusType string) string {
	s := strings.ToLower(strings.TrimSpace(statusType))
	if st, ok := colourStatus[s]; ok {
		s = st
	}
	if slices.Contains(statusCodes, s) {
		return label(s)
	}
	return strings.ReplaceAll(statusType, "_", " ")
}

// StatusBold writes a status with its words in bold and the emoji after:
// "**off track** 🔴".
func StatusBold(statusType string) string {
	s := Status(statusType)
	if i := strings.LastIndexByte(s, ' '); i > 0 && !strings.ContainsFunc(s[i+1:], unicode.IsLetter) {
		return "**" + s[:i] + "**" + s[i:]
	}
	return "**" + s + "**"
}

// StageWords writes "Stage 4 Pre-Con & Finance" as "Stage 4 (Pre-Con & Finance)".
func StageWords(stage string) string {
	var n int
	var rest string
	if _, err := fmt.Sscanf(stage, "Stage %d", &n); err != nil {
		return stage
	}
	rest = strings.TrimSpace(strings.TrimPrefix(stage, fmt.Sprintf("Stage %d", n)))
	if rest == "" {
		return stage
	}
	return fmt.Sprintf("Stage %d (%s)", n, rest)
}

// StageShort writes "Stage 4 Pre-Con & Finance" as "Stage 4".
func StageShort(stage string) string {
	var n int
	if _, err := fmt.Sscanf(stage, "Stage %d", &n); err != nil {
		return stage
	}
	return fmt.Sprintf("Stage %d", n)
}

// HourEnding writes hour of day 0-23 as hour-ending "HE 1".."HE 24".
func HourEnding(h int) string { return say("hour_ending", "hour", strconv.Itoa(h+1)) }

// Shift describes how far a date moved: "+3 months", "-2 weeks", "No
// change (re-confirmed)".
func Shift(from, to string) string {
	a, ok1 := parseDay(from)
	b, ok2 := parseDay(to)
	if !ok1 || !ok2 {
		return ""
	}
	if a.Equal(b) {
		return label("no_change")
	}
	months := (b.Year()-a.Year())*12 + int(b.Month()) - int(a.Month())
	shift := func(n int, unit string) string { return sayN(n, "shift_"+unit, "count", fmt.Sprintf("%+d", n)) }
	if months != 0 && math.Abs(b.Sub(a).Hours()/24) >= 25 {
		return shift(months, "month")
	}
	days := int(math.Round(b.Sub(a).Hours() / 24))
	if days%7 == 0 {
		return shift(days/7, "week")
	}
	return shift(days, "day")
}

// Table is tabular data before it is written out.
type Table struct {
	Headers []string
	Rows    [][]string
}

// Markdown writes the table, at most max rows (0: all) with a line saying
// how many were left out. Cells have their pipes escaped.
func (t *Table) Markdown(max int) string {
	var b strings.Builder
	esc := func(s string) string {
		s = strings.ReplaceAll(s, "|", `\|`)
		s = strings.ReplaceAll(s, "\n", " ")
		if strings.TrimSpace(s) == "" {
			return "—"
		}
		return s
	}
	b.WriteString("|")
	for _, h := range t.Headers {
		b.WriteString(" " + esc(h) + " |")
	}
	b.WriteString("\n|")
	for range t.Headers {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	n := len(t.Rows)
	if max > 0 && n > max {
		n = max
	}
	for _, r := range t.Rows[:n] {
		b.WriteString("|")
		for _, c := range r {
			b.WriteString(" " + esc(c) + " |")
		}
		b.WriteString("\n")
	}
	if n < len(t.Rows) {
		b.WriteString("\n" + sayN(len(t.Rows)-n, "more_rows", "count", strconv.Itoa(len(t.Rows)-n)) + "\n")
	}
	return b.String()
}

// Bullets writes up to three rows as a list, "Header: value" joined per row.
func (t *Table) Bullets() string {
	var b strings.Builder
	for _, r := range t.Rows {
		var parts []string
		for i, c := range r {
			if strings.TrimSpace(c) == "" || c == "—" {
				continue
			}
			if i == 0 {
				parts = append(parts, "**"+c+"**")
			} else {
				parts = append(parts, t.Headers[i]+": "+c)
			}
		}
		b.WriteString("- " + strings.Join(parts, " · ") + "\n")
	}
	return b.String()
}
