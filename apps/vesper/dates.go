package vesper

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// This file reads the periods people name in questions: explicit dates
// (ISO or written out), months with or without a year, quarters, and
// relative periods ("the last 30 days", "last year", "year to date"). A
// month or day written without a year is the latest one not after today.

var monthNames = map[string]time.Month{
	"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
	"may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
	"september": 9, "sept": 9, "sep": 9, "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}

const monthAlt = `january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec`

var (
	isoDateRE = regexp.MustCompile(`\b(20[0-9]{2})-([01][0-9])-([0-3][0-9])\b`)
	isoMonRE  = regexp.MustCompile(`\b(20[0-9]{2})-([01][0-9])\b`)
	// "January 5, 2026", "Jan 5", "5 January 2026", "January 2026", "January"
	// (not "Jan_2025", an As-Of file).
	monthDateRE = regexp.MustCompile(`(?i)\b(?:([0-3]?[0-9])(?:st|nd|rd|th)?\s+(?:of\s+)?)?(` + monthAlt + `)\.?(?:\s+([0-3]?[0-9])(?:st|nd|rd|th)?\b)?(?:,?\s+(20[0-9]{2}))?\b([^_]|$)`)
	quarterRE   = regexp.MustCompile(`(?i)\b(?:q([1-4])|(first|second|third|fourth) quarter)(?:\s+(?:of\s+)?(20[0-9]{2}))?\b([^_]|$)`)
	lastNRE     = regexp.MustCompile(`(?i)\b(?:last|past|previous)\s+([0-9]{1,3})\s+(day|week|month)s?\b`)
)

// period is a date range; a zero end means "to today".
type period struct {
	start, end time.Time
	month      int // set when the period is one calendar month
	// months and year, when set, are the months of one year the period
	// means for prices (a season); otherwise they follow from start and end.
	months []int
	year   int
}

// seasons are the months of each season people name (meteorological
// seasons). Winter's months are December, January and February: for
// prices, those months of the year named; for usage, the winter that ends
// in that year (December of the year before to February).
var seasons = map[string][]int{
	"winter": {12, 1, 2}, "spring": {3, 4, 5}, "summer": {6, 7, 8}, "fall": {9, 10, 11}, "autumn": {9, 10, 11},
}

var seasonRE = regexp.MustCompile(`(?i)\b(winter|spring|summer|fall|autumn)(?:\s+(?:of\s+)?(20[0-9]{2}))?\b`)

// monthsOfYear returns the year and the months of it the period covers
// when it is whole months of one year (a month, a quarter, a season), and
// year 0 otherwise. Twelve months are the whole year: no months.
func (p period) monthsOfYear() (int, []int) {
	if p.year != 0 {
		return p.year, p.months
	}
	if p.end.IsZero() || p.start.Day() != 1 || p.start.Year() != p.end.Year() || !p.end.Equal(endOfMonth(p.end)) {
		return 0, nil
	}
	var months []int
	for m := p.start.Month(); m <= p.end.Month(); m++ {
		months = append(months, int(m))
	}
	if len(months) == 12 {
		return p.start.Year(), nil
	}
	return p.start.Year(), months
}

// readSeason reads a season ("summer 2025", "last winter", "this
// summer"): without a year, the latest one that has begun.
func readSeason(text string, today time.Time) (period, bool) {
	loc := seasonRE.FindStringSubmatchIndex(text)
	if loc == nil {
		return period{}, false
	}
	m := []string{text[loc[0]:loc[1]], text[loc[2]:loc[3]], ""}
	if loc[4] >= 0 {
		m[2] = text[loc[4]:loc[5]]
	}
	// "fall" is a season only with a year or after this, last, in, during
	// ("did prices fall" is not autumn).
	if strings.EqualFold(m[1], "fall") && m[2] == "" && !hasSuffixWord(strings.ToLower(text[:loc[0]]), "this", "last", "in", "during", "over") {
		return period{}, false
	}
	months := seasons[strings.ToLower(m[1])]
	first := time.Month(months[0])
	year := today.Year()
	if m[2] != "" {
		year, _ = strconv.Atoi(m[2])
	} else {
		// the season's start this year (winter starts in the December before)
		start := time.Date(year, first, 1, 0, 0, 0, 0, time.UTC)
		if first == time.December {
			start = start.AddDate(-1, 0, 0)
		}
		if start.After(today) {
			year--
		}
	}
	start := time.Date(year, first, 1, 0, 0, 0, 0, time.UTC)
	if first == time.December {
		start = start.AddDate(-1, 0, 0)
	}
	end := start.AddDate(0, 3, -1)
	sorted := append([]int{}, months...)
	slices.Sort(sorted)
	return period{start: start, end: end, months: sorted, year: year}, true
}

// datePoint is a date named in the text, with how precisely it was named.
type datePoint struct {
	at       time.Time
	pos      int
	monthly  bool // a month without a day: the whole month
	hasYear  bool
	monthNum time.Month
}

// readPeriod finds the period a text names, relative to today. ok is false
// when it names none.
func readPeriod(text string, today time.Time) (period, bool) {
	lower := strings.ToLower(text)
	points := datePoints(text, today)
	switch {
	case len(points) >= 2:
		a, b := points[0], points[1]
		start, end := a.at, b.at
		if b.monthly {
			end = endOfMonth(b.at)
		}
		// "from November to February" runs into the next year.
		if end.Before(start) && !b.hasYear {
			end = end.AddDate(1, 0, 0)
		}
		if end.Before(start) {
			start, end = end, start
		}
		return period{start: start, end: end}, true
	case len(points) == 1:
		p := points[0]
		before := lower[:p.pos]
		switch {
		case hasSuffixWord(before, "since", "after", "from"):
			return period{start: p.at}, true
		case hasSuffixWord(before, "until", "before", "through", "to"):
			return period{start: p.at.AddDate(0, 0, -30), end: p.at}, true
		case p.monthly:
			return period{start: p.at, end: endOfMonth(p.at), month: int(p.monthNum)}, true
		}
		return period{start: p.at, end: p.at}, true
	}
	if p, ok := readSeason(text, today); ok {
		return p, true
	}
	if m := quarterRE.FindStringSubmatch(text); m != nil {
		q := 0
		if m[1] != "" {
			q, _ = strconv.Atoi(m[1])
		} else {
			q = map[string]int{"first": 1, "second": 2, "third": 3, "fourth": 4}[strings.ToLower(m[2])]
		}
		year := today.Year()
		if m[3] != "" {
			year, _ = strconv.Atoi(m[3])
		} else if time.Month(3*q-2) > today.Month() {
			year-- // a quarter not yet begun this year is last year's
		}
		start := time.Date(year, time.Month(3*q-2), 1, 0, 0, 0, 0, time.UTC)
		return period{start: start, end: start.AddDate(0, 3, -1)}, true
	}
	if m := lastNRE.FindStringSubmatch(lower); m != nil {
		n, _ := strconv.Atoi(m[1])
		switch m[2] {
		case "day":
			return period{start: today.AddDate(0, 0, -n), end: today}, true
		case "week":
			return period{start: today.AddDate(0, 0, -7*n), end: today}, true
		default:
			return period{start: today.AddDate(0, -n, 0), end: today}, true
		}
	}
	switch {
	case strings.Contains(lower, "yesterday"):
		d := today.AddDate(0, 0, -1)
		return period{start: d, end: d}, true
	case strings.Contains(lower, "today"):
		return period{start: today, end: today}, true
	case strings.Contains(lower, "last week") || strings.Contains(lower, "last 7 days") || strings.Contains(lower, "this week") || strings.Contains(lower, "past week"):
		return period{start: today.AddDate(0, 0, -7), end: today}, true
	case strings.Contains(lower, "last month") || strings.Contains(lower, "previous month"):
		first := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC)
		return period{start: first.AddDate(0, -1, 0), end: first.AddDate(0, 0, -1), month: int(first.AddDate(0, -1, 0).Month())}, true
	case strings.Contains(lower, "this month") || strings.Contains(lower, "month to date") || strings.Contains(lower, "mtd"):
		return period{start: time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC), end: today}, true
	case strings.Contains(lower, "this quarter") || strings.Contains(lower, "quarter to date"):
		q := (int(today.Month()) - 1) / 3 * 3
		return period{start: time.Date(today.Year(), time.Month(q+1), 1, 0, 0, 0, 0, time.UTC), end: today}, true
	case strings.Contains(lower, "last quarter") || strings.Contains(lower, "previous quarter"):
		q := (int(today.Month()) - 1) / 3 * 3
		start := time.Date(today.Year(), time.Month(q+1), 1, 0, 0, 0, 0, time.UTC).AddDate(0, -3, 0)
		return period{start: start, end: start.AddDate(0, 3, -1)}, true
	case strings.Contains(lower, "this year") || strings.Contains(lower, "year to date") || strings.Contains(lower, "ytd"):
		return period{start: time.Date(today.Year(), 1, 1, 0, 0, 0, 0, time.UTC), end: today}, true
	case strings.Contains(lower, "last year") || strings.Contains(lower, "previous year"):
		y := today.Year() - 1
		return period{start: time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC), end: time.Date(y, 12, 31, 0, 0, 0, 0, time.UTC)}, true
	}
	return period{}, false
}

// datePoints are the dates a text names, in order.
func datePoints(text string, today time.Time) []datePoint {
	var out []datePoint
	taken := make([]bool, len(text)+1)
	take := func(a, b int) {
		for i := a; i < b; i++ {
			taken[i] = true
		}
	}
	for _, m := range isoDateRE.FindAllStringSubmatchIndex(text, -1) {
		y, _ := strconv.Atoi(text[m[2]:m[3]])
		mo, _ := strconv.Atoi(text[m[4]:m[5]])
		d, _ := strconv.Atoi(text[m[6]:m[7]])
		if mo < 1 || mo > 12 || d < 1 || d > 31 {
			continue
		}
		out = append(out, datePoint{at: time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC), pos: m[0], hasYear: true, monthNum: time.Month(mo)})
		take(m[0], m[1])
	}
	for _, m := range isoMonRE.FindAllStringSubmatchIndex(text, -1) {
		if taken[m[0]] {
			continue
		}
		y, _ := strconv.Atoi(text[m[2]:m[3]])
		mo, _ := strconv.Atoi(text[m[4]:m[5]])
		if mo < 1 || mo > 12 {
			continue
		}
		out = append(out, datePoint{at: time.Date(y, time.Month(mo), 1, 0, 0, 0, 0, time.UTC), pos: m[0], monthly: true, hasYear: true, monthNum: time.Month(mo)})
		take(m[0], m[1])
	}
	for _, m := range monthDateRE.FindAllStringSubmatchIndex(text, -1) {
		if taken[m[0]] {
			continue
		}
		word := strings.ToLower(text[m[4]:m[5]])
		mo := monthNames[word]
		day := 0
		if m[2] >= 0 {
			day, _ = strconv.Atoi(text[m[2]:m[3]])
		} else if m[6] >= 0 {
			day, _ = strconv.Atoi(text[m[6]:m[7]])
		}
		year := 0
		if m[8] >= 0 {
			year, _ = strconv.Atoi(text[m[8]:m[9]])
		}
		// "may" is a month only with a day or a year, or after in/of/since.
		if word == "may" && day == 0 && year == 0 && !hasSuffixWord(strings.ToLower(text[:m[4]]), "in", "of", "since", "from", "until", "to", "and", "during") {
			continue
		}
		if day > 31 {
			day = 0
		}
		p := datePoint{pos: m[0], hasYear: year != 0, monthNum: mo}
		if year == 0 {
			year = today.Year()
			probe := time.Date(year, mo, max(day, 1), 0, 0, 0, 0, time.UTC)
			if probe.After(today) {
				year--
			}
		}
		if day == 0 {
			p.at, p.monthly = time.Date(year, mo, 1, 0, 0, 0, 0, time.UTC), true
		} else {
			p.at = time.Date(year, mo, day, 0, 0, 0, 0, time.UTC)
		}
		out = append(out, p)
		take(m[0], m[1])
	}
	// in the order they were written
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].pos < out[j-1].pos; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func endOfMonth(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, 1, -1)
}

// hasSuffixWord reports whether text ends with one of the words (ignoring
// trailing blanks and "the").
func hasSuffixWord(text string, words ...string) bool {
	fs := strings.Fields(text)
	for len(fs) > 0 && (fs[len(fs)-1] == "the" || fs[len(fs)-1] == "of" && len(fs) > 1 && fs[len(fs)-2] == "start") {
		fs = fs[:len(fs)-1]
	}
	if len(fs) == 0 {
		return false
	}
	last := fs[len(fs)-1]
	for _, w := range words {
		if last == w {
			return true
		}
	}
	return false
}
