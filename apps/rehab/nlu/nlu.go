// Package nlu is what Rehabify reads of a Portuguese buyer's message besides the tool it asks
// for, for the runs on the offline model: the facts of the user's profile it mentions in passing,
// the amounts and places it names, and its words without the cues of its intent (what a task or a
// note is about). Which tool a message asks for is the offline model's answer, from the cues of
// rehab's pack (apps/rehab/pack), which also holds the phrases of the profile facts
// (pack.Facts, facts.txt there), its spellings (pack.Spellings: pt-BR spellings and abbreviations),
// its words never read as typos (the pack's exact words), its places (pack.Places) and the words
// of the readers here (pack.Words, words.json there: what makes a number an age, a birth year, a
// count or an amount, the negations), from which this package builds its regular expressions.
// Only the filler words are this package's own: words.txt.
//
// Text is compared in lower case without accents, word by word, with the offline model's typo
// matcher (offline.WordsMatch): a word of five letters or more that is not itself a known word
// matches a cue word within one edit (two from nine letters), so "detalhs", "comprar" and
// "recalcla" are read as a person meant them.
package nlu

import (
	"bufio"
	"embed"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/trellis-go/trellis/apps/rehab/pack"
	"github.com/trellis-go/trellis/apps/rehab/reno"
	"github.com/trellis-go/trellis/fold"
	"github.com/trellis-go/trellis/model/offline"
)

//go:embed words.txt
var files embed.FS

// cue is a sequence of words; a word ending in '*' matches any ending.
type cue struct {
	words  []string
	ids    []int // the words' places in the lexicon's vocabulary
	weight float64
	text   string
}

type rule struct {
	intent string
	cue
}

type fact struct {
	section, field, value string
	confidence            float64
	cue
}

type lexicon struct {
	rules   []rule
	facts   []fact
	rewrite map[string]string
	known   map[string]bool
	filler  map[string]bool
	places  []string
	vocab   []string
	vocabID map[string]int
}

var lex = mustLoad()

func mustLoad() *lexicon {
	l, err := load()
	if err != nil {
		// The files are part of the binary: a mistake in them is caught by the package's tests.
		panic(err)
	}
	return l
}

func lines(name string, each func(n int, fields []string) error) error {
	f, err := files.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := each(n, strings.Fields(line)); err != nil {
			return fmt.Errorf("nlu: %s:%d: %w", name, n, err)
		}
	}
	return sc.Err()
}

func load() (*lexicon, error) {
	l := &lexicon{vocabID: map[string]int{}, rewrite: map[string]string{}, known: map[string]bool{}, filler: map[string]bool{}}
	err := lines("words.txt", func(_ int, f []string) error {
		if len(f) != 2 || f[0] != "-" {
			return fmt.Errorf("want - <word>, got %q", strings.Join(f, " "))
		}
		l.filler[fold.String(f[1])] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The spellings, the exact words and the places are the pack's.
	for w, as := range pack.Spellings {
		l.rewrite[w] = as
		for _, x := range strings.Fields(as) {
			l.known[x] = true
		}
	}
	for _, w := range pack.Pack.Exact {
		for _, x := range strings.Fields(fold.String(w)) {
			l.known[x] = true
		}
	}
	for _, p := range pack.Places {
		l.places = append(l.places, p.Name)
	}
	parseCue := func(words []string, weight float64) cue {
		c := cue{weight: weight, text: strings.Join(words, " ")}
		for _, w := range words {
			c.words = append(c.words, fold.String(w))
			id, ok := l.vocabID[fold.String(w)]
			if !ok {
				id = len(l.vocab)
				l.vocabID[fold.String(w)] = id
				l.vocab = append(l.vocab, fold.String(w))
			}
			c.ids = append(c.ids, id)
			if !strings.HasSuffix(w, "*") {
				l.known[fold.String(w)] = true
			}
		}
		return c
	}
	// The intents' cues are the pack's (apps/rehab/pack): Content drops them from a message.
	for _, in := range pack.Pack.Intents {
		name := in.Tool
		if a, ok := in.Args["action"].(string); ok && in.Tool == "manage_todos" {
			name = "todo_" + a
		}
		for _, c := range in.Cues {
			l.rules = append(l.rules, rule{intent: name, cue: parseCue(strings.Fields(strings.ReplaceAll(c, "<url>", "urlidealista")), in.Weight)})
		}
	}
	// The profile facts are the pack's too (apps/rehab/pack/facts.txt).
	for _, f := range pack.Facts {
		l.facts = append(l.facts, fact{section: f.Section, field: f.Field, value: f.Value, confidence: f.Confidence, cue: parseCue(strings.Fields(f.Cue), 1)})
	}
	return l, nil
}

var (
	idealistaURL = regexp.MustCompile(`(?i)https?://[^\s]*idealista\.[a-z]+/[^\s]*`)
	anyURL       = regexp.MustCompile(`(?i)https?://[^\s]+`)
)

// Words is a text as the cues see it: lower case, no accents, an Idealista link as the word
// "urlidealista", pt-BR spellings and abbreviations rewritten.
func Words(text string) []string {
	text = idealistaURL.ReplaceAllString(text, " urlidealista ")
	text = anyURL.ReplaceAllString(text, " url ")
	raw := strings.FieldsFunc(fold.String(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	out := make([]string, 0, len(raw))
	for _, w := range raw {
		if r, ok := lex.rewrite[w]; ok {
			w = r
		}
		out = append(out, strings.Fields(w)...)
	}
	return out
}

// matcher memoises offline.WordsMatch for the words of one text.
type matcher struct {
	words []string
	known []bool
	memo  []int8 // by word index × vocabulary id: 0 unknown, 1 no, 2 yes
}

func newMatcher(words []string) *matcher {
	m := &matcher{words: words, known: make([]bool, len(words)), memo: make([]int8, len(words)*len(lex.vocab))}
	for i, w := range words {
		m.known[i] = lex.known[w]
	}
	return m
}

func (m *matcher) match(i, id int) bool {
	k := i*len(lex.vocab) + id
	if m.memo[k] == 0 {
		m.memo[k] = 1
		if offline.WordsMatch(m.words[i], lex.vocab[id], m.known[i]) {
			m.memo[k] = 2
		}
	}
	return m.memo[k] == 2
}

// find returns the index of the first place the cue matches in words, or -1.
func (c cue) find(m *matcher) int {
	for i := 0; i+len(c.ids) <= len(m.words); i++ {
		ok := true
		for j, id := range c.ids {
			if !m.match(i+j, id) {
				ok = false
				break
			}
		}
		if ok {
			return i
		}
	}
	return -1
}

// Asks is whether the text holds a cue of an intent (a positive one of the pack's): "o selo,
// quanto é" does, "se fosse 1,2 milhões" does not.
func Asks(text string) bool {
	m := newMatcher(Words(text))
	for _, r := range lex.rules {
		if r.weight > 0 && r.find(m) >= 0 {
			return true
		}
	}
	return false
}

// Content is the message's words that are about something: without the words of the cues of
// the given intents that matched, without filler words and numbers. "Marca a do canalizador
// como feita" gives [canalizador] for todo_complete.
func Content(text string, intents ...string) []string {
	words := Words(text)
	m := newMatcher(words)
	drop := make([]bool, len(words))
	for _, r := range lex.rules {
		want := false
		for _, in := range intents {
			want = want || in == r.intent
		}
		if !want {
			continue
		}
		if i := r.find(m); i >= 0 {
			for j := range r.words {
				drop[i+j] = true
			}
		}
	}
	var out []string
	for i, w := range words {
		if drop[i] || lex.filler[w] || len(w) < 3 || w == "urlidealista" || w == "url" {
			continue
		}
		if _, err := strconv.Atoi(w); err == nil {
			continue
		}
		out = append(out, w)
	}
	return out
}

// Fact is a fact of the user's profile read from a message.
type Fact struct {
	Section    string
	Field      string
	Value      any
	Confidence float64
	// Cue is the words that said it.
	Cue string
}

// The readers' patterns are built from the pack's words (pack.Words, words.json); Go keeps
// only their shape (digits, spaces, the order of the parts).
var (
	vocabulary = pack.Words
	ageRE      = regexp.MustCompile(`\b(?:` + Alt(vocabulary.AgeLead) + `)\s+(\d{2})\s+(?:` + Alt(vocabulary.AgeUnit) + `)\b|\b(\d{2})\s+(?:` + Alt(vocabulary.AgeUnit) + `)\s+(?:` + Alt(vocabulary.AgeTail) + `)\b`)
	bornRE     = regexp.MustCompile(`\b(?:` + Alt(vocabulary.Born) + `)\s+(?:(?:` + Alt(vocabulary.BornIn) + `)\s+)?(?:\d{1,2}\s+(?:` + Alt(vocabulary.DateOf) + `)\s+\w+\s+(?:` + Alt(vocabulary.DateOf) + `)\s+)?(19\d\d|20\d\d)\b`)
	typologyRE = regexp.MustCompile(`\b(?:` + Prefixes(vocabulary.Typology) + `)([0-9])\b`)
	amountRE   = regexp.MustCompile(`(?i)(\d{1,3}(?:[.\s\x{00A0}]\d{3})+|\d+(?:[.,]\d+)?|\b(?:` + Alt(vocabulary.Half) + `))\s*(` + Alt(append(slices.Clone(vocabulary.Thousand), vocabulary.Million...)) + `)?\s*(` + Alt(vocabulary.Currency) + `)?`)
	negations  = set(vocabulary.Negations)
	thousand   = set(vocabulary.Thousand)
	million    = set(vocabulary.Million)
	half       = set(vocabulary.Half)
)

// Alt is a regular expression's alternatives for the words, as the readers here build their
// patterns from the pack's words: longest first (so that "milhões" is tried before "mil"), each
// quoted, its spaces any spaces, and a word ending in a letter or a digit ending at a word
// boundary. Put it in a group: "(?:" + Alt(ws) + ")".
func Alt(ws []string) string { return alternatives(ws, true) }

// Prefixes is Alt without the word boundaries, for words written joined to what follows ("t2").
func Prefixes(ws []string) string { return alternatives(ws, false) }

func alternatives(ws []string, bounded bool) string {
	ws = slices.Clone(ws)
	slices.SortStableFunc(ws, func(a, b string) int { return len(b) - len(a) })
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		if w == "" {
			continue
		}
		q := strings.ReplaceAll(regexp.QuoteMeta(w), " ", `\s+`)
		if c := w[len(w)-1]; bounded && c < 0x80 && (unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c))) {
			q += `\b`
		}
		out = append(out, q)
	}
	return strings.Join(out, "|")
}

// set is the words, lower case.
func set(ws []string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[strings.ToLower(w)] = true
	}
	return m
}

// isWord reports whether w is one of the words; a word ending in '*' matches any ending.
func isWord(w string, ws []string) bool {
	for _, x := range ws {
		if x == w || strings.HasSuffix(x, "*") && strings.HasPrefix(w, strings.TrimSuffix(x, "*")) {
			return true
		}
	}
	return false
}

// Amounts reads the money amounts of a pt-PT text: 180.000€, 180 000 €, 180k€, 180 mil euros,
// 1,2 milhões, meio milhão. Numbers that are not money (a year, a T2, an age) are left out: an
// amount is written with a currency, a thousands group, or a k/mil/milhões suffix. An amount
// written below zero ("-50 mil") is left out too (SignedAmounts has it).
func Amounts(text string) []float64 {
	var out []float64
	for _, a := range amountsIn(text) {
		if a.value > 0 {
			out = append(out, a.value)
		}
	}
	return out
}

// SignedAmounts are the money amounts of a text as Amounts reads them, with those written below
// zero ("-50 mil": a minus sign before the number, after a space or at the start).
func SignedAmounts(text string) []float64 {
	var out []float64
	for _, a := range amountsIn(text) {
		out = append(out, a.value)
	}
	return out
}

// amount is a money amount of a text and the index of its first word in Words(text).
type amount struct {
	value float64
	word  int
}

func amountsIn(text string) []amount {
	var out []amount
	for _, m := range amountRE.FindAllStringSubmatchIndex(text, -1) {
		num, suf, cur := text[m[2]:m[3]], "", ""
		if m[4] >= 0 {
			suf = strings.ToLower(text[m[4]:m[5]])
		}
		if m[6] >= 0 {
			cur = text[m[6]:m[7]]
		}
		grouped := strings.ContainsAny(num, ". \u00a0") && groupedRE.MatchString(num)
		if suf == "" && cur == "" && !grouped {
			continue
		}
		var v float64
		switch {
		case half[strings.ToLower(num)]:
			v = 0.5
		case grouped:
			v, _ = strconv.ParseFloat(strings.NewReplacer(".", "", " ", "", "\u00a0", "").Replace(num), 64)
		default:
			v, _ = strconv.ParseFloat(strings.Replace(num, ",", ".", 1), 64)
		}
		switch {
		case thousand[suf]:
			v *= 1000
		case million[suf]:
			v *= 1_000_000
		}
		if v < 100 {
			continue
		}
		if start := m[2]; start > 0 && text[start-1] == '-' && (start == 1 || strings.ContainsRune(" \t\n(", rune(text[start-2]))) {
			v = -v
		}
		out = append(out, amount{math.Round(v), len(Words(text[:m[0]]))})
	}
	return out
}

// nearest is the amount written closest to the words from..to (a cue): "300 mil no máximo e
// 40 mil de entrada" gives 300 000 for "no máximo" and 40 000 for "de entrada". On a tie the
// amount after the cue wins.
func nearest(amounts []amount, from, to int) (float64, bool) {
	best, bestDist := 0.0, -1
	for _, a := range amounts {
		if a.value <= 0 {
			continue
		}
		d := from - a.word
		if a.word > to {
			d = a.word - to
		} else if a.word >= from {
			d = 0
		}
		if bestDist < 0 || d < bestDist || d == bestDist && a.word > to {
			best, bestDist = a.value, d
		}
	}
	return best, bestDist >= 0
}

var groupedRE = regexp.MustCompile(`[.\s\x{00A0}]\d{3}$`)

// Facts reads the profile facts a message mentions, one per field (the most confident cue
// wins; on a tie the later one); now turns a birth year into an age.
func Facts(text string, now time.Time) []Fact {
	words := Words(text)
	return facts(text, words, now, newMatcher(words))
}

func facts(text string, words []string, now time.Time, m *matcher) []Fact {
	places := lex.places
	joined := " " + strings.Join(words, " ") + " "
	type key struct{ s, f string }
	best := map[key]Fact{}
	var order []key
	for _, f := range lex.facts {
		// A fact said the other way round in the same message ("não é para arrendar") is not read.
		if f.find(m) < 0 || negated(words, f.cue, m) {
			continue
		}
		v, ok := readValue(f.value, text, joined, words, now, places, f.cue, m)
		if !ok {
			continue
		}
		k := key{f.section, f.field}
		old, had := best[k]
		if !had {
			order = append(order, k)
		}
		if !had || f.confidence >= old.Confidence {
			best[k] = Fact{Section: f.section, Field: f.field, Value: v, Confidence: f.confidence, Cue: f.text}
		}
	}
	out := make([]Fact, 0, len(order))
	for _, k := range order {
		out = append(out, best[k])
	}
	return out
}

// negated reports whether the cue is preceded by a negation (pack.Words.Negations: "não", or
// English's "not" and "don't" for the cues said in English) within two words.
func negated(words []string, c cue, m *matcher) bool {
	i := c.find(m)
	for j := i - 1; j >= 0 && j >= i-2; j-- {
		if negations[words[j]] && !(len(c.words) > 0 && c.words[0] == words[j]) {
			return true
		}
	}
	return false
}

func readValue(v, text, joined string, words []string, now time.Time, places []string, c cue, m *matcher) (any, bool) {
	switch v {
	case "true":
		return true, true
	case "false":
		return false, true
	case "@age":
		if m := ageRE.FindStringSubmatch(joined); m != nil {
			s := m[1] + m[2]
			n, _ := strconv.Atoi(s)
			if n >= 16 && n <= 99 {
				return float64(n), true
			}
		}
		if m := bornRE.FindStringSubmatch(joined); m != nil {
			y, _ := strconv.Atoi(m[1])
			if age := now.Year() - y; age >= 16 && age <= 99 {
				return float64(age), true
			}
		}
		return nil, false
	case "@amount":
		at := c.find(m)
		if a, ok := nearest(amountsIn(text), at, at+len(c.words)-1); ok {
			return a, true
		}
		return nil, false
	case "@count":
		for i, w := range words {
			if !isWord(w, vocabulary.Counted) {
				continue
			}
			if i == 0 {
				return nil, false
			}
			if n, err := strconv.Atoi(words[i-1]); err == nil && n >= 0 && n < 20 {
				return float64(n), true
			}
			if n, ok := vocabulary.Numbers[words[i-1]]; ok {
				return float64(n), true
			}
			if isWord(words[i-1], vocabulary.None) {
				return float64(0), true
			}
		}
		return nil, false
	case "@zones":
		var zones []any
		for _, p := range places {
			if strings.Contains(joined, " "+fold.String(p)+" ") {
				zones = append(zones, p)
			}
		}
		return zones, len(zones) > 0
	case "@typology":
		if m := typologyRE.FindStringSubmatch(joined); m != nil {
			return "T" + m[1], true
		}
		return nil, false
	case "@skills":
		var skills []any
		seen := map[string]bool{}
		for _, w := range words {
			if k := reno.NormalizeSkill(w); k != "" && len(w) >= 5 && !seen[k] {
				seen[k] = true
				skills = append(skills, k)
			}
		}
		return skills, len(skills) > 0
	}
	return v, true
}
