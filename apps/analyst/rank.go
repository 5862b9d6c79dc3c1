package analyst

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/trellis-go/trellis/apps/analyst/pack"
)

// searchQuery is a question rewritten for search: its content words (the question's wording and
// its time frame dropped), each with its synonyms from the corpus's vocabulary, and the period
// its time frame names.
type searchQuery struct {
	Terms    []string
	Groups   [][]string // each term with its synonyms
	From, To time.Time  // the time frame [From, To); zero when the question names none
	Named    []string   // the corpus's competitors and projects the question names
}

// yearRe finds a year the question names as its period ("in 2025", "during 2024": the pack's
// year prepositions).
var yearRe = regexp.MustCompile(`(?i)\b` + pack.Alternation(words.YearPrepositions) + `\s+((?:19|20)\d\d)\b`)

// rewrite turns a question into a search query, reading its time frame relative to now.
func rewrite(question string, now time.Time) searchQuery {
	var q searchQuery
	text := " " + strings.Join(strings.FieldsFunc(strings.ToLower(question), notWordRune), " ") + " "
	d := domain()
	if d != nil {
	frames:
		for _, tf := range d.Vocabulary.TimeFrames {
			for _, w := range tf.Words {
				p := " " + strings.ToLower(w) + " "
				if strings.Contains(text, p) {
					q.From, q.To = period(now, tf.Unit, tf.Back, tf.UntilNow)
					text = strings.Replace(text, p, " ", 1)
					break frames
				}
			}
		}
	}
	if q.From.IsZero() {
		if m := yearRe.FindStringSubmatch(question); m != nil {
			y, _ := strconv.Atoi(m[1])
			q.From, q.To = time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(y+1, 1, 1, 0, 0, 0, 0, time.UTC)
		}
	}
	q.Terms = contentWords(text)
	q.Named = entitiesOf(question).names()
	for _, t := range q.Terms {
		g := []string{t}
		if d != nil {
			for _, syn := range d.Vocabulary.Synonyms {
				if containsWord(syn, t) {
					for _, s := range syn {
						if s != t {
							g = append(g, s)
						}
					}
				}
			}
		}
		q.Groups = append(q.Groups, g)
	}
	return q
}

func containsWord(ws []string, w string) bool {
	for _, x := range ws {
		if strings.EqualFold(x, w) {
			return true
		}
	}
	return false
}

// period is the unit (year, quarter, month) back units before now's: the whole unit, or from its
// start until now.
func period(now time.Time, unit string, back int, untilNow bool) (time.Time, time.Time) {
	now = now.UTC()
	var from time.Time
	var next func(time.Time) time.Time
	switch unit {
	case "year":
		from = time.Date(now.Year()-back, 1, 1, 0, 0, 0, 0, time.UTC)
		next = func(t time.Time) time.Time { return t.AddDate(1, 0, 0) }
	case "quarter":
		q := (int(now.Month()) - 1) / 3
		from = time.Date(now.Year(), time.Month(q*3+1), 1, 0, 0, 0, 0, time.UTC).AddDate(0, -3*back, 0)
		next = func(t time.Time) time.Time { return t.AddDate(0, 3, 0) }
	default:
		from = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, -back, 0)
		next = func(t time.Time) time.Time { return t.AddDate(0, 1, 0) }
	}
	if untilNow {
		return from, now.AddDate(0, 0, 1)
	}
	return from, next(from)
}

// text is the query to send to a search engine: the terms, and the time frame's year when it
// names one.
func (q searchQuery) text() string {
	parts := append([]string(nil), q.Terms...)
	if !q.From.IsZero() && q.To.Sub(q.From) <= 366*24*time.Hour {
		if y := strconv.Itoa(q.From.Year()); !containsWord(parts, y) {
			parts = append(parts, y)
		}
	}
	return strings.Join(parts, " ")
}

// inFrame reports whether a document dated date (YYYY-MM-DD), or its text naming a year of the
// time frame, falls in the query's time frame.
func (q searchQuery) inFrame(date, text string) bool {
	if q.From.IsZero() {
		return false
	}
	if t, err := time.Parse("2006-01-02", date); err == nil && !t.Before(q.From) && t.Before(q.To) {
		return true
	}
	words := contentWords(text)
	for y := q.From.Year(); y <= q.To.Add(-time.Nanosecond).Year(); y++ {
		if containsWord(words, strconv.Itoa(y)) {
			return true
		}
	}
	return false
}

// shareOf is the share of the query's term groups found in text: a term counts when it or one of
// its synonyms is there (as words or word prefixes of 5+ letters).
func (q searchQuery) shareOf(text string) float64 {
	if len(q.Groups) == 0 {
		return 0
	}
	words := contentWords(text)
	n := 0
	for _, g := range q.Groups {
	group:
		for _, t := range g {
			for _, w := range words {
				if w == t || (len(t) >= 5 && len(w) >= 5 && (strings.HasPrefix(w, t[:5]) && strings.HasPrefix(t, w[:5]))) {
					n++
					break group
				}
			}
		}
	}
	return float64(n) / float64(len(q.Groups))
}

// relevance scores a passage or page for the query, the same way for the knowledge base and the
// web so that their results rank together: the share of the query's terms (or synonyms) in the
// title and in the text, and a bonus for the time frame.
func (q searchQuery) relevance(title, text, date string) float64 {
	// What the question names is scored by namedShare; the rest of its terms by their share.
	rest := q
	if len(q.Named) > 0 {
		named := map[string]bool{}
		for _, n := range q.Named {
			for _, w := range contentWords(n) {
				named[w] = true
			}
		}
		rest.Groups = nil
		for _, g := range q.Groups {
			if !named[g[0]] {
				rest.Groups = append(rest.Groups, g)
			}
		}
	}
	sc := 0.35*rest.shareOf(title) + 0.5*rest.shareOf(text)
	if q.inFrame(date, text) {
		sc += 0.15
	}
	// A question about a competitor or project is about it first: a passage gains the share of
	// those it names, so one on the theme alone does not answer for them.
	return sc + q.namedShare(title+" "+text)
}

// namedShare is the share of the competitors and projects the question names that text names,
// times the share they are of all those text names: a passage listing every competitor is less
// about one of them than a note on it (0 when the question names none).
func (q searchQuery) namedShare(text string) float64 {
	if len(q.Named) == 0 {
		return 0
	}
	n := float64(len(namedIn(text, q.Named)))
	if n == 0 {
		return 0
	}
	all := max(float64(len(entitiesOf(text).names())), n)
	return n / float64(len(q.Named)) * n / all
}
