package realty

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The app's words (kinds of home, room words, amounts, confirmations) are data, in
// lexicon/en.json; this file only reads text with them.
//
//go:embed lexicon/en.json
var lexiconJSON []byte

// Lexicon is the words the app reads a user's message with.
type Lexicon struct {
	PropertyTypes  map[string][]string `json:"property_types"`
	BedroomWords   []string            `json:"bedroom_words"`
	BathroomWords  []string            `json:"bathroom_words"`
	NumberWords    map[string]float64  `json:"number_words"`
	AmountSuffixes map[string]float64  `json:"amount_suffixes"`
	Confirmations  []string            `json:"confirmations"`
	CeilingWords   []string            `json:"ceiling_words"`
	FloorWords     []string            `json:"floor_words"`
	// BoundFillers may stand between a ceiling or floor word and its amount ("my budget is
	// $650k", "a minimum of 400k").
	BoundFillers []string       `json:"bound_fillers"`
	Ordinals     map[string]int `json:"ordinals"`
	ListNouns    []string       `json:"list_nouns"`
	Superlatives map[string]struct {
		Field string `json:"field"`
		Order string `json:"order"`
	} `json:"superlatives"`
	CheaperWords   []string `json:"cheaper_words"`
	PricierWords   []string `json:"pricier_words"`
	BiggerWords    []string `json:"bigger_words"`
	MoreBathsWords []string `json:"more_baths_words"`
	SwitchWords    []string `json:"switch_words"`
	// OnlyWords narrow the last search to a kind of home ("townhouses only", "just condos").
	OnlyWords      []string       `json:"only_words"`
	CompareWords   []string       `json:"compare_words"`
	PairWords      map[string]int `json:"pair_words"`
	StreetSuffixes []string       `json:"street_suffixes"`
	StopWords      []string       `json:"stop_words"`
	// AddressEnds end an address written inside a sentence ("742 Oak Street, Austin and the
	// one on Elm").
	AddressEnds []string `json:"address_ends"`
	// NotPlaceWords end a place's name after "in" or "about" ("what about the ones there").
	NotPlaceWords []string `json:"not_place_words"`
	// UnsearchableFeatures are features users ask for that the listings do not record (a
	// garage, a pool); UnsearchableAnswer says so, its %s the feature named.
	UnsearchableFeatures []string `json:"unsearchable_features"`
	UnsearchableAnswer   string   `json:"unsearchable_answer"`

	bedRE, bathRE, amountRE *regexp.Regexp
	typeRE                  map[string]*regexp.Regexp
	addressRE, ordinalRE    *regexp.Regexp
}

var lexicon = mustLexicon(lexiconJSON)

func mustLexicon(b []byte) *Lexicon {
	l, err := ParseLexicon(b)
	if err != nil {
		panic(err) // the embedded file is part of the program; a test reads it
	}
	return l
}

// ParseLexicon reads a lexicon file.
func ParseLexicon(b []byte) (*Lexicon, error) {
	var l Lexicon
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("realty: the lexicon is not valid JSON: %w", err)
	}
	if len(l.BedroomWords) == 0 || len(l.BathroomWords) == 0 || len(l.PropertyTypes) == 0 ||
		len(l.FloorWords) == 0 || len(l.AddressEnds) == 0 || len(l.NotPlaceWords) == 0 {
		return nil, fmt.Errorf("realty: the lexicon needs bedroom_words, bathroom_words, property_types, floor_words, address_ends and not_place_words")
	}
	nums := []string{`\d+(?:\.\d+)?`}
	for w := range l.NumberWords {
		nums = append(nums, regexp.QuoteMeta(w))
	}
	sort.Slice(nums[1:], func(i, j int) bool { return len(nums[1+i]) > len(nums[1+j]) })
	num := "(" + strings.Join(nums, "|") + ")"
	l.bedRE = regexp.MustCompile(`(?i)(?:^|[^a-z0-9])` + num + `\s*\+?\s*-?\s*` + alternation(l.BedroomWords) + `\b`)
	l.bathRE = regexp.MustCompile(`(?i)(?:^|[^a-z0-9])` + num + `\s*\+?\s*-?\s*` + alternation(l.BathroomWords) + `\b`)
	var suf []string
	for w := range l.AmountSuffixes {
		suf = append(suf, w)
	}
	l.amountRE = regexp.MustCompile(`(?i)(\$\s*)?(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*` + alternation(suf) + `?\b`)
	// A street line: a house number, up to four words and a street suffix ("742 Oak Street").
	l.addressRE = regexp.MustCompile(`(?i)\b\d{1,6}\s+(?:[a-z0-9.'-]+\s+){0,4}?` + alternation(l.StreetSuffixes) + `\b`)
	var ords []string
	for w := range l.Ordinals {
		ords = append(ords, w)
	}
	l.ordinalRE = regexp.MustCompile(`(?i)(?:^|[^\w#])` + alternation(ords) + `(?:$|[^\w])|(?:#|\bnumber\s+|\bno\.?\s+|\blisting\s+|\boption\s+|\bresult\s+)(\d{1,2})\b`)
	l.typeRE = map[string]*regexp.Regexp{}
	for t, ws := range l.PropertyTypes {
		l.typeRE[t] = regexp.MustCompile(`(?i)\b` + alternation(ws) + `\b`)
	}
	return &l, nil
}

// Unsearchable is a feature text asks for that the listings do not record, "" when none.
func (l *Lexicon) Unsearchable(text string) string {
	for _, f := range l.UnsearchableFeatures {
		if hasWord(text, []string{f}) {
			return f
		}
	}
	return ""
}

// namesCriteria reports whether text names a search criterion: a kind of home, rooms or an
// amount.
func (l *Lexicon) namesCriteria(text string) bool {
	_, beds := l.Bedrooms(text)
	_, baths := l.Bathrooms(text)
	return beds || baths || len(l.Types(text)) > 0 || len(l.Amounts(text)) > 0
}

// alternation is a group matching any of the words, longest first.
func alternation(words []string) string {
	ws := append([]string{}, words...)
	sort.Slice(ws, func(i, j int) bool { return len(ws[i]) > len(ws[j]) })
	for i, w := range ws {
		ws[i] = strings.ReplaceAll(regexp.QuoteMeta(w), `\ `, `\s+`)
		ws[i] = strings.ReplaceAll(ws[i], " ", `\s+`)
	}
	return "(" + strings.Join(ws, "|") + ")"
}

func (l *Lexicon) number(s string) (float64, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f, true
	}
	f, ok := l.NumberWords[s]
	return f, ok
}

// Bedrooms is the count written before a bedroom word ("3 bedrooms", "three-bed").
func (l *Lexicon) Bedrooms(text string) (float64, bool) { return l.count(l.bedRE, text) }

// Bathrooms is the count written before a bathroom word.
func (l *Lexicon) Bathrooms(text string) (float64, bool) { return l.count(l.bathRE, text) }

func (l *Lexicon) count(re *regexp.Regexp, text string) (float64, bool) {
	m := re.FindStringSubmatch(text)
	if m == nil {
		return 0, false
	}
	return l.number(m[1])
}

// Amount is a sum of money or a number in text, with its position.
type Amount struct {
	Value      float64
	Start, End int
	Dollar     bool // written with $ or a suffix (k, million): certainly money
}

// Amounts lists the numbers in text as amounts ("$1,200,000", "1.2m", "500k", "900 thousand").
func (l *Lexicon) Amounts(text string) []Amount {
	var out []Amount
	for _, m := range l.amountRE.FindAllStringSubmatchIndex(text, -1) {
		digits := strings.ReplaceAll(text[m[4]:m[5]], ",", "")
		f, err := strconv.ParseFloat(digits, 64)
		if err != nil {
			continue
		}
		a := Amount{Value: f, Start: m[0], End: m[1], Dollar: m[2] >= 0}
		if m[6] >= 0 {
			a.Value *= l.AmountSuffixes[strings.ToLower(text[m[6]:m[7]])]
			a.Dollar = true
		}
		out = append(out, a)
	}
	return out
}

// Bound is the end of a price range the words next to amount a give: "max" after a ceiling word
// or before one ("no more than $650k", "$1.2M max", "700k or less"), "min" after or before a floor
// word ("at least 400k", "500k or more"), "" when neither is there. Of a ceiling and a floor
// phrase both ending before the amount, the longer wins ("no more than" over "more than").
func (l *Lexicon) Bound(text string, a Amount) string {
	// The words right before the amount, with the fillers between them and it dropped one by
	// one ("budget is about"), then the words right after it.
	before := strings.ToLower(text[:a.Start])
	for {
		before = strings.TrimRight(before, " \t$")
		if b := bound(endPhrase(before, l.CeilingWords), endPhrase(before, l.FloorWords)); b != "" {
			return b
		}
		n := len(before) - endPhrase(before, l.BoundFillers)
		if n == len(before) {
			break
		}
		before = before[:n]
	}
	after := strings.TrimLeft(strings.ToLower(text[a.End:]), " \t")
	return bound(startPhrase(after, l.CeilingWords), startPhrase(after, l.FloorWords))
}

// bound is "max" or "min" for the longer of a ceiling and a floor phrase found, "" for neither.
func bound(ceil, floor int) string {
	switch {
	case ceil > floor:
		return "max"
	case floor > ceil:
		return "min"
	}
	return ""
}

// PriceRange puts the amounts a model read from text at the ends its words say: an amount
// written as a ceiling is the maximum even when it came as min_price, and a floor the minimum.
// One amount read into both ends is the maximum unless the words make it a floor.
func (l *Lexicon) PriceRange(text string, lo, hi float64) (float64, float64) {
	end := func(v float64) string {
		for _, a := range l.Amounts(text) {
			if math.Abs(a.Value-v) <= math.Max(1, v*0.005) {
				return l.Bound(text, a)
			}
		}
		return ""
	}
	if lo > 0 && lo == hi {
		if end(lo) == "min" {
			return lo, 0
		}
		return 0, hi
	}
	if lo > 0 && end(lo) == "max" && (hi == 0 || end(hi) == "min") {
		lo, hi = hi, lo
	} else if hi > 0 && end(hi) == "min" && lo == 0 {
		lo, hi = hi, 0
	}
	// An end the words state and the model left out ("$700k at most").
	saidLo, saidHi := l.SaidRange(text)
	if lo == 0 && saidLo > 0 && saidLo != hi {
		lo = saidLo
	}
	if hi == 0 && saidHi > 0 && saidHi != lo {
		hi = saidHi
	}
	return lo, hi
}

// SaidRange is the price range text states: each amount (a dollar figure, or a number of 1,000
// or more) next to a ceiling or a floor word, at that end; 0 for an end it does not state.
func (l *Lexicon) SaidRange(text string) (lo, hi float64) {
	for _, a := range l.Amounts(text) {
		if !a.Dollar && a.Value < 1000 {
			continue
		}
		switch l.Bound(text, a) {
		case "min":
			lo = a.Value
		case "max":
			hi = a.Value
		}
	}
	return lo, hi
}

// endPhrase is the length of the longest phrase that text ends with (as whole words), or 0.
func endPhrase(text string, phrases []string) int {
	best := 0
	for _, p := range phrases {
		p = strings.ToLower(p)
		if n := len(text) - len(p); len(p) > best && n >= 0 && text[n:] == p && (n == 0 || !isWordByte(text[n-1])) {
			best = len(p)
		}
	}
	return best
}

// startPhrase is the length of the longest phrase that text starts with (as whole words), or 0.
func startPhrase(text string, phrases []string) int {
	best := 0
	for _, p := range phrases {
		p = strings.ToLower(p)
		if len(p) > best && strings.HasPrefix(text, p) && (len(text) == len(p) || !isWordByte(text[len(p)])) {
			best = len(p)
		}
	}
	return best
}

// SaysAmount reports whether text names the amount v (within a dollar, or 0.5% for a rounded
// "1.2m").
func (l *Lexicon) SaysAmount(text string, v float64) bool {
	for _, a := range l.Amounts(text) {
		if math.Abs(a.Value-v) <= math.Max(1, v*0.005) {
			return true
		}
	}
	return false
}

// Types lists the kinds of home text names, in the lexicon's codes (CONDO, TOWNHOUSE, ...).
func (l *Lexicon) Types(text string) []string {
	var out []string
	for t, re := range l.typeRE {
		if re.MatchString(text) {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// SaysType reports whether text names the kind of home typ.
func (l *Lexicon) SaysType(text, typ string) bool {
	re, ok := l.typeRE[strings.ToUpper(typ)]
	return ok && re.MatchString(text)
}

// SaysPlace reports whether text names the place loc ("Austin, TX": the city is enough).
func SaysPlace(text, loc string) bool {
	city, _, _ := strings.Cut(loc, ",")
	city = strings.TrimSpace(city)
	if city == "" {
		return false
	}
	re, err := regexp.Compile(`(?i)(?:^|[^a-z])` + strings.ReplaceAll(regexp.QuoteMeta(city), " ", `\s+`) + `(?:$|[^a-z])`)
	return err == nil && re.MatchString(text)
}

// IsConfirmation reports a message that accepts what was suggested ("yes", "sounds good, save
// it"): short, and starting with or made of a confirmation.
func (l *Lexicon) IsConfirmation(text string) bool {
	t := strings.ToLower(strings.TrimSpace(text))
	t = strings.TrimRight(t, ".!")
	if len(strings.Fields(t)) > 8 {
		return false
	}
	for _, c := range l.Confirmations {
		if t == c || strings.HasPrefix(t, c+" ") || strings.HasPrefix(t, c+",") || strings.HasPrefix(t, c+"!") || strings.HasPrefix(t, c+".") {
			return true
		}
	}
	return false
}

// wordIndex is where the first of the words (whole words, case aside) starts in text, or -1.
func wordIndex(text string, words []string) int {
	lower := strings.ToLower(text)
	first := -1
	for _, w := range words {
		for from := 0; ; {
			i := strings.Index(lower[from:], strings.ToLower(w))
			if i < 0 {
				break
			}
			i += from
			end := i + len(w)
			if (i == 0 || !isWordByte(lower[i-1])) && (end == len(lower) || !isWordByte(lower[end])) {
				if first < 0 || i < first {
					first = i
				}
				break
			}
			from = i + 1
		}
	}
	return first
}

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b >= 0x80
}

// hasWord reports whether text holds one of the phrases as whole words.
func hasWord(text string, phrases []string) bool {
	t := " " + strings.ToLower(nonWord.ReplaceAllString(text, " ")) + " "
	for _, p := range phrases {
		p = strings.ToLower(nonWord.ReplaceAllString(p, " "))
		if strings.Contains(t, " "+strings.TrimSpace(p)+" ") {
			return true
		}
	}
	return false
}

var nonWord = regexp.MustCompile(`[^\p{L}\p{N}$#']+`)
