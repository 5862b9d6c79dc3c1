package period

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/trellis-go/trellis/fold"
)

// Period is a range of calendar days.
type Period struct {
	// Start is the first day.
	Start time.Time
	// End is the last day; zero when the text gives only a start ("since March 1"): to today.
	End time.Time
	// Month is set when the period is one calendar month named ("March", "last month").
	Month time.Month
	// Year and Months, when Year is set, are the months of one year the period means (a
	// season: "winter 2025" is December, January and February of 2025 for monthly figures,
	// while Start and End run from December 2024 to February 2025).
	Year   int
	Months []int
}

// MonthsOfYear returns the year and the months of it the period covers when it is whole
// months of one year (a month, a quarter, a season), and year 0 otherwise. The twelve months
// of a year give that year and no months.
func (p Period) MonthsOfYear() (int, []int) {
	if p.Year != 0 {
		return p.Year, p.Months
	}
	if p.End.IsZero() || p.Start.Day() != 1 || p.Start.Year() != p.End.Year() || !p.End.Equal(EndOfMonth(p.End)) {
		return 0, nil
	}
	var months []int
	for m := p.Start.Month(); m <= p.End.Month(); m++ {
		months = append(months, int(m))
	}
	if len(months) == 12 {
		return p.Start.Year(), nil
	}
	return p.Start.Year(), months
}

// Date is one date a text names.
type Date struct {
	// At is the day, or the first day of the month when Monthly.
	At time.Time
	// Monthly is set for a month named without a day ("March 2025", "2025-03").
	Monthly bool
	// HasYear is set when the text wrote the year.
	HasYear bool
	// pos orders dates as written; at is the index of the first word after the ones
	// before the date.
	pos int
}

// Options change how Read reads. The zero value is the default.
type Options struct {
	// RollingWeeks makes "this week", "last week", "past week" and "previous week" the seven
	// days up to today. By default they are calendar weeks starting on Monday: this week is
	// Monday to today, last week the Monday to Sunday before.
	RollingWeeks bool
}

// Read finds the period text names, relative to today, with the default options.
func Read(text string, today time.Time) (Period, bool) { return Options{}.Read(text, today) }

// Read finds the period text names, relative to today (only its date counts). ok is false when
// the text names none.
func (o Options) Read(text string, today time.Time) (Period, bool) {
	day := time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC)
	s := scan(text)
	points := s.dates(day)
	switch {
	case len(points) >= 2:
		a, b := points[0], points[1]
		start, end := a.At, b.At
		if b.Monthly {
			end = EndOfMonth(b.At)
		}
		// "from November to February" runs into the next year.
		if end.Before(start) && !b.HasYear {
			end = end.AddDate(1, 0, 0)
		}
		if end.Before(start) {
			start, end = end, start
		}
		return Period{Start: start, End: end}, true
	case len(points) == 1:
		p := points[0]
		switch {
		case s.endsWith(p.pos, lex.since):
			return Period{Start: p.At}, true
		case s.endsWith(p.pos, lex.until):
			return Period{Start: p.At.AddDate(0, 0, -30), End: p.At}, true
		case p.Monthly:
			return Period{Start: p.At, End: EndOfMonth(p.At), Month: p.At.Month()}, true
		}
		return Period{Start: p.At, End: p.At}, true
	}
	if p, ok := s.season(day); ok {
		return p, true
	}
	if p, ok := s.quarter(day); ok {
		return p, true
	}
	if p, ok := s.lastN(day); ok {
		return p, true
	}
	return s.relative(day, o.RollingWeeks)
}

// Dates returns the dates text names, in the order written, a month or day without a year
// being the latest one not after today.
func Dates(text string, today time.Time) []Date {
	day := time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC)
	return scan(text).dates(day)
}

// MonthOf returns the month a word names in any language the package reads ("March", "mar",
// "março"), case and accents ignored.
func MonthOf(word string) (time.Month, bool) {
	m, ok := lex.months[fold.String(strings.TrimSuffix(strings.TrimSpace(word), "."))]
	return m, ok
}

// EndOfMonth returns the last day of t's month.
func EndOfMonth(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, 1, -1)
}

// ---- the words

//go:embed words.json
var wordsJSON []byte

// language is one language's entry of words.json.
type language struct {
	Months           map[string]int    `json:"months"`
	AmbiguousMonths  []string          `json:"ambiguous_months"`
	MonthCues        []string          `json:"month_cues"`
	DaySuffixes      []string          `json:"day_suffixes"`
	Of               []string          `json:"of"`
	Fillers          []string          `json:"fillers"`
	StartOf          []string          `json:"start_of"`
	Since            []string          `json:"since"`
	Until            []string          `json:"until"`
	Seasons          map[string][]int  `json:"seasons"`
	AmbiguousSeasons []string          `json:"ambiguous_seasons"`
	SeasonCues       []string          `json:"season_cues"`
	QuarterWords     []string          `json:"quarter_words"`
	QuarterPrefixes  []string          `json:"quarter_prefixes"`
	Ordinals         map[string]int    `json:"ordinals"`
	Units            map[string]string `json:"units"`
	This             []string          `json:"this"`
	Last             []string          `json:"last"`
	LastAfter        []string          `json:"last_after"`
	Today            []string          `json:"today"`
	Yesterday        []string          `json:"yesterday"`
	Tomorrow         []string          `json:"tomorrow"`
	ToDate           map[string]string `json:"to_date"`
}

// lexicon is every language's words together.
type lexicon struct {
	months                                            map[string]time.Month
	ambiguousMonths, monthCues, of, fillers           set
	ambiguousSeasons, seasonCues, quarterWords        set
	this, last, lastAfter, today, yesterday, tomorrow set
	daySuffixes, quarterPrefixes                      []string
	startOf, since, until                             [][]string
	seasons                                           map[string][]int
	ordinals                                          map[string]int
	units                                             map[string]string
	toDate                                            map[string]string // phrase (words joined by a space) -> unit
	toDatePhrases                                     [][]string
}

type set map[string]bool

func (s set) add(ws []string) {
	for _, w := range ws {
		s[fold.String(w)] = true
	}
}

var lex = mustLexicon(wordsJSON)

func mustLexicon(data []byte) *lexicon {
	l, err := newLexicon(data)
	if err != nil {
		panic(err) // the embedded file is part of the package; its tests read it
	}
	return l
}

func newLexicon(data []byte) (*lexicon, error) {
	var langs map[string]language
	if err := json.Unmarshal(data, &langs); err != nil {
		return nil, fmt.Errorf("period: words.json: %w", err)
	}
	l := &lexicon{months: map[string]time.Month{}, seasons: map[string][]int{}, ordinals: map[string]int{},
		units: map[string]string{}, toDate: map[string]string{}}
	for _, p := range []*set{&l.ambiguousMonths, &l.monthCues, &l.of, &l.fillers, &l.ambiguousSeasons, &l.seasonCues,
		&l.quarterWords, &l.this, &l.last, &l.lastAfter, &l.today, &l.yesterday, &l.tomorrow} {
		*p = set{}
	}
	phrases := func(ps []string) (out [][]string) {
		for _, p := range ps {
			out = append(out, strings.Fields(fold.String(p)))
		}
		return out
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range langs {
			if !yield(k) {
				return
			}
		}
	})
	for _, name := range names {
		g := langs[name]
		for w, m := range g.Months {
			if m < 1 || m > 12 {
				return nil, fmt.Errorf("period: words.json: %s month %q is %d, want 1 to 12", name, w, m)
			}
			l.months[fold.String(w)] = time.Month(m)
		}
		for w, ms := range g.Seasons {
			if len(ms) != 3 || ms[1] != ms[0]%12+1 || ms[2] != ms[1]%12+1 {
				return nil, fmt.Errorf("period: words.json: %s season %q has months %v, want three consecutive months", name, w, ms)
			}
			l.seasons[fold.String(w)] = ms
		}
		for w, q := range g.Ordinals {
			l.ordinals[fold.String(w)] = q
		}
		for w, u := range g.Units {
			l.units[fold.String(w)] = u
		}
		for p, u := range g.ToDate {
			l.toDate[strings.Join(strings.Fields(fold.String(p)), " ")] = u
		}
		l.toDatePhrases = append(l.toDatePhrases, phrases(slices.Sorted(func(yield func(string) bool) {
			for k := range g.ToDate {
				if !yield(k) {
					return
				}
			}
		}))...)
		l.ambiguousMonths.add(g.AmbiguousMonths)
		l.monthCues.add(g.MonthCues)
		l.of.add(g.Of)
		l.fillers.add(g.Fillers)
		l.ambiguousSeasons.add(g.AmbiguousSeasons)
		l.seasonCues.add(g.SeasonCues)
		l.quarterWords.add(g.QuarterWords)
		l.this.add(g.This)
		l.last.add(g.Last)
		l.lastAfter.add(g.LastAfter)
		l.today.add(g.Today)
		l.yesterday.add(g.Yesterday)
		l.tomorrow.add(g.Tomorrow)
		l.daySuffixes = append(l.daySuffixes, g.DaySuffixes...)
		l.quarterPrefixes = append(l.quarterPrefixes, g.QuarterPrefixes...)
		l.startOf = append(l.startOf, phrases(g.StartOf)...)
		l.since = append(l.since, phrases(g.Since)...)
		l.until = append(l.until, phrases(g.Until)...)
	}
	for _, u := range l.units {
		if u != "day" && u != "week" && u != "month" && u != "quarter" && u != "year" {
			return nil, fmt.Errorf("period: words.json: unit %q, want day, week, month, quarter or year", u)
		}
	}
	for p, u := range l.toDate {
		if u != "month" && u != "quarter" && u != "year" {
			return nil, fmt.Errorf("period: words.json: to_date %q is %q, want month, quarter or year", p, u)
		}
	}
	return l, nil
}

// ---- the text

// token is one word of the folded text: letters, digits and underscores ("jan_2025", an
// identifier, is no month).
type token struct {
	w          string
	start, end int
	iso        bool // inside an ISO date
}

type scanned struct {
	text string // folded
	toks []token
	iso  []Date // ISO dates and months, pos set
}

var (
	isoDateRE  = regexp.MustCompile(`\b((?:19|20)[0-9]{2})-([01][0-9])-([0-3][0-9])\b`)
	isoMonthRE = regexp.MustCompile(`\b((?:19|20)[0-9]{2})-([01][0-9])\b`)
)

func scan(text string) *scanned {
	s := &scanned{text: fold.String(text)}
	t := s.text
	var spans [][2]int
	inSpan := func(i int) bool {
		for _, sp := range spans {
			if i >= sp[0] && i < sp[1] {
				return true
			}
		}
		return false
	}
	for _, m := range isoDateRE.FindAllStringSubmatchIndex(t, -1) {
		y, _ := strconv.Atoi(t[m[2]:m[3]])
		mo, _ := strconv.Atoi(t[m[4]:m[5]])
		d, _ := strconv.Atoi(t[m[6]:m[7]])
		spans = append(spans, [2]int{m[0], m[1]})
		at := time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC)
		if mo < 1 || mo > 12 || at.Day() != d {
			continue // 2025-13-01 or 2025-02-30: no date
		}
		s.iso = append(s.iso, Date{At: at, HasYear: true, pos: m[0]})
	}
	for _, m := range isoMonthRE.FindAllStringSubmatchIndex(t, -1) {
		if inSpan(m[0]) {
			continue
		}
		spans = append(spans, [2]int{m[0], m[1]})
		y, _ := strconv.Atoi(t[m[2]:m[3]])
		mo, _ := strconv.Atoi(t[m[4]:m[5]])
		if mo < 1 || mo > 12 {
			continue
		}
		s.iso = append(s.iso, Date{At: time.Date(y, time.Month(mo), 1, 0, 0, 0, 0, time.UTC), Monthly: true, HasYear: true, pos: m[0]})
	}
	start := -1
	for i, r := range t + " " {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			s.toks = append(s.toks, token{w: t[start:i], start: start, end: i, iso: inSpan(start)})
			start = -1
		}
	}
	return s
}

// word returns the i-th token's word, "" outside the text or inside an ISO date.
func (s *scanned) word(i int) string {
	if i < 0 || i >= len(s.toks) || s.toks[i].iso {
		return ""
	}
	return s.toks[i].w
}

// before returns the words before byte offset pos, less trailing fillers ("the") and "start
// of" phrases.
func (s *scanned) before(pos int) []string {
	var ws []string
	for _, t := range s.toks {
		if t.end > pos {
			break
		}
		ws = append(ws, t.w)
	}
	for changed := true; changed && len(ws) > 0; {
		changed = false
		if lex.fillers[ws[len(ws)-1]] {
			ws, changed = ws[:len(ws)-1], true
			continue
		}
		for _, p := range lex.startOf {
			if hasSuffix(ws, p) {
				ws, changed = ws[:len(ws)-len(p)], true
				break
			}
		}
	}
	return ws
}

// endsWith reports whether the words before pos end with one of the phrases.
func (s *scanned) endsWith(pos int, phrases [][]string) bool {
	ws := s.before(pos)
	for _, p := range phrases {
		if hasSuffix(ws, p) {
			return true
		}
	}
	return false
}

// lastIn reports whether the last word before pos is in the set.
func (s *scanned) lastIn(pos int, words set) bool {
	ws := s.before(pos)
	return len(ws) > 0 && words[ws[len(ws)-1]]
}

func hasSuffix(ws, p []string) bool {
	return len(p) > 0 && len(ws) >= len(p) && slices.Equal(ws[len(ws)-len(p):], p)
}

// dates are the ISO and written dates of the text in the order written.
func (s *scanned) dates(today time.Time) []Date {
	out := append([]Date(nil), s.iso...)
	for i := 0; i < len(s.toks); i++ {
		w := s.word(i)
		mo, ok := lex.months[w]
		if !ok {
			continue
		}
		pos := s.toks[i].start
		dayNum := 0
		// "5 January", "15 de janeiro", "3rd of March"
		j := i - 1
		if lex.of[s.word(j)] {
			j--
		}
		if n := s.dayNum(j); n > 0 {
			dayNum, pos = n, s.toks[j].start
		}
		next := i + 1
		if dayNum == 0 {
			if n := s.dayNum(i + 1); n > 0 { // "January 5"
				dayNum, next = n, i+2
			}
		}
		year, yearAt := s.yearAt(next)
		if lex.ambiguousMonths[w] && dayNum == 0 && year == 0 && !s.lastIn(s.toks[i].start, lex.monthCues) {
			continue // "may" is a month in "May 5", "May 2025", "in May"
		}
		d := Date{pos: pos, HasYear: year != 0}
		if year == 0 {
			year = today.Year()
			if time.Date(year, mo, max(dayNum, 1), 0, 0, 0, 0, time.UTC).After(today) {
				year--
			}
		}
		if dayNum > 0 && time.Date(year, mo, dayNum, 0, 0, 0, 0, time.UTC).Month() != mo {
			dayNum = 0 // "February 30": the month
		}
		if dayNum == 0 {
			d.At, d.Monthly = time.Date(year, mo, 1, 0, 0, 0, 0, time.UTC), true
		} else {
			d.At = time.Date(year, mo, dayNum, 0, 0, 0, 0, time.UTC)
		}
		out = append(out, d)
		if yearAt > 0 {
			i = yearAt
		} else if next > i+1 {
			i = next - 1
		}
	}
	slices.SortStableFunc(out, func(a, b Date) int { return a.pos - b.pos })
	return out
}

// dayNum returns the day of the month token i writes ("5", "05", "3rd", "1o"), 0 when none.
func (s *scanned) dayNum(i int) int {
	w := s.word(i)
	if w == "" || w[0] < '0' || w[0] > '9' {
		return 0
	}
	for _, suf := range lex.daySuffixes {
		if c, ok := strings.CutSuffix(w, suf); ok && c != "" {
			w = c
			break
		}
	}
	if len(w) > 2 {
		return 0
	}
	n, err := strconv.Atoi(w)
	if err != nil || n < 1 || n > 31 {
		return 0
	}
	return n
}

// yearAt returns the year written at token i, or after "of"/"de" there, and its index.
func (s *scanned) yearAt(i int) (int, int) {
	if lex.of[s.word(i)] {
		i++
	}
	if y := year(s.word(i)); y != 0 {
		return y, i
	}
	return 0, 0
}

// year returns the year a word writes (1900 to 2100), 0 when none.
func year(w string) int {
	if len(w) != 4 {
		return 0
	}
	n, err := strconv.Atoi(w)
	if err != nil || n < 1900 || n > 2100 {
		return 0
	}
	return n
}

// season reads "summer 2025", "last winter", "o verão": without a year, the latest one that
// has begun.
func (s *scanned) season(today time.Time) (Period, bool) {
	for i := range s.toks {
		w := s.word(i)
		months, ok := lex.seasons[w]
		if !ok {
			continue
		}
		y, _ := s.yearAt(i + 1)
		// "fall" is a season only with a year or after a cue ("did prices fall" is no autumn).
		if lex.ambiguousSeasons[w] && y == 0 && !s.lastIn(s.toks[i].start, lex.seasonCues) {
			continue
		}
		first := time.Month(months[0])
		// A season whose first month is late in the year (winter's December) starts in the
		// year before the one it is named by.
		startOf := func(year int) time.Time {
			start := time.Date(year, first, 1, 0, 0, 0, 0, time.UTC)
			if months[2] < months[0] {
				start = start.AddDate(-1, 0, 0)
			}
			return start
		}
		if y == 0 {
			y = today.Year()
			if startOf(y).After(today) {
				y--
			}
		}
		start := startOf(y)
		sorted := slices.Clone(months)
		slices.Sort(sorted)
		return Period{Start: start, End: start.AddDate(0, 3, -1), Year: y, Months: sorted}, true
	}
	return Period{}, false
}

// quarter reads "Q3", "Q1 2025", "the second quarter of 2024", "primeiro trimestre": without a
// year, the latest one that has begun.
func (s *scanned) quarter(today time.Time) (Period, bool) {
	for i := range s.toks {
		w := s.word(i)
		q, next := 0, i+1
		for _, p := range lex.quarterPrefixes {
			if rest, ok := strings.CutPrefix(w, p); ok && len(rest) == 1 && rest >= "1" && rest <= "4" {
				q = int(rest[0] - '0')
			}
		}
		if n, ok := lex.ordinals[w]; ok && n >= 1 && n <= 4 && lex.quarterWords[s.word(i+1)] {
			q, next = n, i+2
		}
		if q == 0 {
			continue
		}
		y, _ := s.yearAt(next)
		if y == 0 {
			y = today.Year()
			if time.Month(3*q-2) > today.Month() {
				y-- // a quarter not yet begun this year is last year's
			}
		}
		start := time.Date(y, time.Month(3*q-2), 1, 0, 0, 0, 0, time.UTC)
		return Period{Start: start, End: start.AddDate(0, 3, -1)}, true
	}
	return Period{}, false
}

// lastN reads "the last 30 days", "past 2 weeks", "últimos 3 meses", "3 meses passados".
func (s *scanned) lastN(today time.Time) (Period, bool) {
	for i := range s.toks {
		n, err := strconv.Atoi(s.word(i))
		if err != nil || n < 0 || n > 999 || len(s.word(i)) > 3 {
			continue
		}
		unit, ok := lex.units[s.word(i+1)]
		if !ok || !(lex.last[s.word(i-1)] || lex.lastAfter[s.word(i+2)]) {
			continue
		}
		return Period{Start: back(today, unit, n), End: today}, true
	}
	return Period{}, false
}

// back returns today less n units.
func back(today time.Time, unit string, n int) time.Time {
	switch unit {
	case "day":
		return today.AddDate(0, 0, -n)
	case "week":
		return today.AddDate(0, 0, -7*n)
	case "month":
		return today.AddDate(0, -n, 0)
	case "quarter":
		return today.AddDate(0, -3*n, 0)
	}
	return today.AddDate(-n, 0, 0)
}

// relative reads today, yesterday, tomorrow, this/last week, month, quarter or year and the
// "to date" phrases. When a text has several, the day words come first, then weeks, months,
// quarters and years.
func (s *scanned) relative(today time.Time, rollingWeeks bool) (Period, bool) {
	found := map[string]bool{} // "today", "this week", "last month", ...
	for i := range s.toks {
		w := s.word(i)
		switch {
		case lex.today[w]:
			found["today"] = true
		case lex.yesterday[w]:
			found["yesterday"] = true
		case lex.tomorrow[w]:
			found["tomorrow"] = true
		}
		if u, ok := lex.units[s.word(i+1)]; ok {
			switch {
			case lex.this[w]:
				found["this "+u] = true
			case lex.last[w]:
				found["last "+u] = true
			}
		}
		if u, ok := lex.units[w]; ok && lex.lastAfter[s.word(i+1)] {
			found["last "+u] = true // "semana passada", "mês anterior"
		}
		for _, p := range lex.toDatePhrases {
			if i+len(p) <= len(s.toks) && slices.EqualFunc(p, s.toks[i:i+len(p)], func(a string, t token) bool { return !t.iso && a == t.w }) {
				found["this "+lex.toDate[strings.Join(p, " ")]] = true
			}
		}
	}
	monthStart := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC)
	quarterStart := time.Date(today.Year(), time.Month((int(today.Month())-1)/3*3+1), 1, 0, 0, 0, 0, time.UTC)
	yearStart := time.Date(today.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	weekStart := today.AddDate(0, 0, -((int(today.Weekday()) + 6) % 7)) // Monday
	switch {
	case found["yesterday"]:
		d := today.AddDate(0, 0, -1)
		return Period{Start: d, End: d}, true
	case found["today"]:
		return Period{Start: today, End: today}, true
	case found["tomorrow"]:
		d := today.AddDate(0, 0, 1)
		return Period{Start: d, End: d}, true
	case rollingWeeks && (found["this week"] || found["last week"]):
		return Period{Start: today.AddDate(0, 0, -7), End: today}, true
	case found["last week"]:
		return Period{Start: weekStart.AddDate(0, 0, -7), End: weekStart.AddDate(0, 0, -1)}, true
	case found["this week"]:
		return Period{Start: weekStart, End: today}, true
	case found["last month"]:
		start := monthStart.AddDate(0, -1, 0)
		return Period{Start: start, End: monthStart.AddDate(0, 0, -1), Month: start.Month()}, true
	case found["this month"]:
		return Period{Start: monthStart, End: today}, true
	case found["this quarter"]:
		return Period{Start: quarterStart, End: today}, true
	case found["last quarter"]:
		return Period{Start: quarterStart.AddDate(0, -3, 0), End: quarterStart.AddDate(0, 0, -1)}, true
	case found["this year"]:
		return Period{Start: yearStart, End: today}, true
	case found["last year"]:
		return Period{Start: yearStart.AddDate(-1, 0, 0), End: yearStart.AddDate(0, 0, -1)}, true
	}
	return Period{}, false
}
