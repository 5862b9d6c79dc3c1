package offline

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/trellis-go/trellis/fold"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/period"
)

// filler fills JSON Schemas from what the user wrote.
type filler struct {
	v       *vocab // what the model knows, with its packs
	tool    string // the tool whose arguments are filled ("" for structured output)
	root    map[string]any
	msgs    []message.Message // the whole conversation
	primary string            // the latest user message
	context []string          // every other message's text, newest first, system prompts last
	system  string            // the system prompts, for the meaning of enum values
	now     time.Time
	lang    lang // the language of primary, for the fixed phrases
	// images holds what the pictures of the user's last message carry.
	images []imageInfo
	// data holds JSON from tool results and the user's message, for structured output.
	data []any
	// dataFirst reads data before words (a nested object taken from the data).
	dataFirst bool
	// resultsFirst reads data before words, then words: a structured answer after tool results.
	resultsFirst bool
	// complete fills every required property, with a plausible value when nothing gives one
	// (structured output must validate); tool arguments ask for what is missing instead.
	complete bool
}

// object fills an object schema. missing lists required properties it could not fill.
func (f *filler) object(s map[string]any) (map[string]any, []string) {
	s = f.deref(s)
	props, _ := s["properties"].(map[string]any)
	required := map[string]bool{}
	for _, r := range asSlice(s["required"]) {
		if name, ok := r.(string); ok {
			required[name] = true
		}
	}
	out := map[string]any{}
	var missing []string
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	sort.Strings(names)
	// Properties that share an enum ("from" and "to" over the same units) take different values
	// the user named, in the order named, unless the user said which one is the target.
	taken := map[string][]any{}
	for _, name := range names {
		ps, _ := props[name].(map[string]any)
		if ps == nil {
			continue
		}
		ps = f.deref(ps)
		var v any
		ok := false
		if f.dataFirst || f.resultsFirst {
			v, ok = f.fromData(name, ps)
		}
		if !ok {
			v, ok = f.choice(name, ps)
		}
		if !ok {
			v, ok = f.packValue(name, ps)
		}
		if !ok {
			v, ok = f.sharedEnum(name, ps, taken)
		}
		if !ok && !f.dataFirst {
			v, ok = f.value(name, ps)
		}
		if !ok && len(f.data) > 0 && !f.dataFirst {
			v, ok = f.fromData(name, ps)
		}
		switch {
		case ok:
			out[name] = v
		case required[name]:
			if d, has := ps["default"]; has {
				out[name] = d
			} else if _, nullable := schemaType(ps); nullable {
				out[name] = nil
			} else if v, ok := f.fallback(name, ps); ok {
				out[name] = v
			} else if f.complete {
				out[name] = f.plausible(name, ps)
			} else {
				missing = append(missing, name)
			}
		}
	}
	return out, missing
}

// packValue fills a property from the words the packs' Values give its values, converted to the
// property's type; a value outside its enum, or that does not convert, is not taken.
func (f *filler) packValue(name string, s map[string]any) (any, bool) {
	val, ok := f.v.argValue(f.tool, name, f.primary)
	if !ok {
		return nil, false
	}
	if enum := asSlice(s["enum"]); len(enum) > 0 {
		for _, e := range enum {
			if fmt.Sprint(e) == val {
				return e, true
			}
		}
		return nil, false
	}
	typ, _ := schemaType(s)
	switch typ {
	case "string", "":
		return val, true
	case "integer":
		n, err := strconv.ParseInt(val, 10, 64)
		return n, err == nil
	case "number":
		n, err := strconv.ParseFloat(val, 64)
		return n, err == nil
	case "boolean":
		b, err := strconv.ParseBool(val)
		return b, err == nil
	case "array":
		return []any{val}, true
	}
	return nil, false
}

// sharedEnum fills an enum property with a value the user named that no earlier property with
// the same enum took. A property named as a target ("to", "target", "into") takes the value
// written after "to", "into" or "in" when there is one.
func (f *filler) sharedEnum(name string, s map[string]any, taken map[string][]any) (any, bool) {
	enum := asSlice(s["enum"])
	if len(enum) < 2 {
		return nil, false
	}
	key := fmt.Sprint(enum)
	mentions := f.enumMentions(enum)
	if len(mentions) < 2 {
		return nil, false
	}
	pick := func(v any) (any, bool) {
		taken[key] = append(taken[key], v)
		return v, true
	}
	if target[fold.String(name)] {
		pw := words(f.primary)
		for i := 1; i < len(pw); i++ {
			if pw[i-1] != "to" && pw[i-1] != "into" && pw[i-1] != "in" {
				continue
			}
			for _, m := range f.enumMentionsIn(enum, pw[i:i+1]) {
				if !slices.Contains(taken[key], m) {
					return pick(m)
				}
			}
		}
	}
	for _, m := range mentions {
		if !slices.Contains(taken[key], m) && !(f.targetTakes(m, enum, s) && !target[fold.String(name)]) {
			return pick(m)
		}
	}
	return nil, false
}

var target = setOf("to target into destination dest")

// targetTakes reports whether m is the value written after "to", "into" or "in", which a target
// property will take.
func (f *filler) targetTakes(m any, enum []any, _ map[string]any) bool {
	pw := words(f.primary)
	for i := 1; i < len(pw); i++ {
		if pw[i-1] == "to" || pw[i-1] == "into" || pw[i-1] == "in" {
			if slices.Contains(f.enumMentionsIn(enum, pw[i:i+1]), m) {
				return true
			}
		}
	}
	return false
}

// enumMentionsIn is enumMentions over the words ws instead of the user's message.
func (f *filler) enumMentionsIn(enum []any, ws []string) []any {
	g := *f
	g.primary = strings.Join(ws, " ")
	return g.enumMentions(enum)
}

// unitSymbols maps units written out to the symbols enums use for them.
var unitSymbols = map[string]string{
	"mile": "mi", "miles": "mi", "milhas": "mi", "millas": "mi",
	"kilometre": "km", "kilometres": "km", "kilometer": "km", "kilometers": "km", "quilometros": "km", "kilometros": "km",
	"kilogram": "kg", "kilograms": "kg", "kilogramme": "kg", "kilos": "kg", "quilos": "kg",
	"pound": "lb", "pounds": "lb", "lbs": "lb", "libras": "lb",
	"celsius": "c", "centigrade": "c", "fahrenheit": "f",
	"metre": "m", "metres": "m", "meter": "m", "meters": "m",
	"foot": "ft", "feet": "ft", "inch": "in", "inches": "in",
	"hour": "h", "hours": "h", "minute": "min", "minutes": "min", "second": "s", "seconds": "s",
}

// fallback gives a required property a value when the text names none: the first enum value that
// means "nothing in particular", an empty list, or the user's own words for free text.
func (f *filler) fallback(name string, s map[string]any) (any, bool) {
	typ, _ := schemaType(s)
	if enum := asSlice(s["enum"]); len(enum) > 0 {
		for _, e := range enum {
			if str, ok := e.(string); ok && neutral[fold.String(str)] {
				return e, true
			}
		}
		return enum[0], true
	}
	switch typ {
	case "string":
		if isFormat(s, "date", "date-time", "uri", "url", "uuid", "email") || isDateField(name, s) || f.v.isIDField(name, s) {
			return nil, false
		}
		return truncate(f.primary, 500), true
	case "array":
		if n, _ := s["minItems"].(float64); n > 0 {
			return nil, false
		}
		return []any{}, true
	case "boolean":
		return false, true
	case "object":
		o, missing := f.object(s)
		return o, len(missing) == 0
	case "":
		return truncate(f.primary, 500), true
	}
	return nil, false
}

var neutral = setOf("general other none unknown default auto normal any all misc n/a")

// value fills one property from the text; ok is false when the text says nothing about it.
func (f *filler) value(name string, s map[string]any) (any, bool) {
	desc, _ := s["description"].(string)
	typ, _ := schemaType(s)
	if c, ok := s["const"]; ok {
		return c, true
	}
	if enum := asSlice(s["enum"]); len(enum) > 0 {
		return f.enum(enum)
	}
	switch typ {
	case "string":
		return f.str(name, desc, s)
	case "integer", "number":
		n, ok := f.number(name, desc, s)
		if !ok {
			return nil, false
		}
		if typ == "integer" {
			return int64(math.Round(n)), true
		}
		return n, true
	case "boolean":
		return f.boolean(name)
	case "array":
		return f.array(name, desc, s)
	case "object":
		if _, hasProps := s["properties"]; !hasProps {
			return nil, false
		}
		o, missing := f.object(s)
		if len(o) == 0 || len(missing) > 0 {
			return nil, false
		}
		return o, true
	case "":
		// an untyped value ("any"): a quoted string, else a number
		if q := quoted(f.primary); len(q) > 0 {
			return q[len(q)-1], true
		}
		if _, nums := numbersIn(f.primary); len(nums) > 0 {
			return nums[len(nums)-1].v, true
		}
	}
	return nil, false
}

// enum picks the enum value the user named, or else the one whose description in the system
// prompt best matches the user's words.
func (f *filler) enum(enum []any) (any, bool) {
	if v := f.enumMentions(enum); len(v) > 0 {
		return v[0], true
	}
	if v := f.enumByMeaning(enum, false); len(v) > 0 {
		return v[0], true
	}
	return nil, false
}

// enumMentions returns the enum values that appear in the user's message, in order of appearance.
func (f *filler) enumMentions(enum []any) []any {
	pw := words(f.primary)
	type hit struct {
		at int
		v  any
	}
	var hits []hit
	for _, e := range enum {
		str, ok := e.(string)
		if !ok {
			if n, isNum := e.(float64); isNum && containsPhrase(pw, strconv.FormatFloat(n, 'f', -1, 64)) >= 0 {
				hits = append(hits, hit{containsPhrase(pw, strconv.FormatFloat(n, 'f', -1, 64)), e})
			}
			continue
		}
		if at := containsPhrase(pw, str); at >= 0 {
			hits = append(hits, hit{at, e})
			continue
		}
		// a unit written out in full where the enum has its symbol ("miles" for "mi")
		if at := slices.IndexFunc(pw, func(w string) bool { return unitSymbols[w] == fold.String(str) }); at >= 0 {
			hits = append(hits, hit{at, e})
			continue
		}
		// a single-word value may be written in the plural or with a shared stem
		if ew := words(str); len(ew) == 1 && len(ew[0]) >= 4 {
			for i, w := range pw {
				if similar(w, ew[0]) == 1 {
					hits = append(hits, hit{i, e})
					break
				}
			}
		}
	}
	// a word whose synonyms name a value ("orçamento" for budget, "show" for list), when
	// nothing matched exactly
	if len(hits) == 0 {
		for _, e := range enum {
			str, ok := e.(string)
			if !ok {
				continue
			}
			for i, w := range pw {
				if slices.Contains(f.v.synonyms[w], fold.String(str)) {
					hits = append(hits, hit{i, e})
					break
				}
			}
		}
	}
	// names written with a typo, when nothing matched exactly
	if len(hits) == 0 {
		exact := map[string]bool{}
		for _, e := range enum {
			if str, ok := e.(string); ok {
				exact[strings.Join(words(str), " ")] = true
			}
		}
		for _, e := range enum {
			if str, ok := e.(string); ok {
				if at := typoMention(pw, str, exact); at >= 0 {
					hits = append(hits, hit{at, e})
				}
			}
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].at < hits[j].at })
	out := make([]any, 0, len(hits))
	for _, h := range hits {
		out = append(out, h.v)
	}
	return out
}

// enumByMeaning scores each enum value by the overlap between the user's words and the text that
// describes the value in the system prompt (the paragraph where the value is named). With many,
// it returns every value scoring at least half the best; otherwise only the best.
func (f *filler) enumByMeaning(enum []any, many bool) []any {
	if f.system == "" {
		return nil
	}
	user := f.v.terms(f.primary)
	scores := make([]float64, len(enum))
	best := 0.0
	for i, e := range enum {
		str, ok := e.(string)
		if !ok {
			continue
		}
		profile := words(str)
		for _, variant := range variants(str) {
			profile = append(profile, words(describedIn(f.system, variant))...)
		}
		set := map[string]bool{}
		for _, p := range profile {
			if !stop[p] && len(p) >= 3 {
				set[p] = true
			}
		}
		for _, u := range user {
			m := 0.0
			for p := range set {
				m = max(m, similar(u, p))
			}
			scores[i] += m
		}
		best = max(best, scores[i])
	}
	if best < 1 {
		return nil
	}
	var out []any
	for i, e := range enum {
		if scores[i] == best || (many && scores[i] >= best/2) {
			out = append(out, e)
			if !many {
				break
			}
		}
	}
	return out
}

// variants lists the ways a system prompt may name an enum value: as written, with spaces for
// separators, and without a trailing "_agent", "_node" or "_tool".
func variants(v string) []string {
	out := []string{v}
	for _, suf := range []string{"_agent", "_node", "_tool", "-agent", "Agent"} {
		if t, ok := strings.CutSuffix(v, suf); ok && t != "" {
			out = append(out, t)
		}
	}
	if sp := strings.NewReplacer("_", " ", "-", " ").Replace(v); sp != v {
		out = append(out, sp)
	}
	return out
}

// describedIn returns the text that follows each mention of name in doc, up to a blank line or
// a heading, at most 600 bytes per mention.
func describedIn(doc, name string) string {
	if name == "" {
		return ""
	}
	lower, key := strings.ToLower(doc), strings.ToLower(name)
	var b strings.Builder
	for from := 0; ; {
		i := strings.Index(lower[from:], key)
		if i < 0 {
			break
		}
		start := from + i
		// only whole-word mentions
		if start > 0 && isWordByte(lower[start-1]) || start+len(key) < len(lower) && isWordByte(lower[start+len(key)]) {
			from = start + len(key)
			continue
		}
		rest := doc[start:min(len(doc), start+600)]
		end := len(rest)
		for _, stopAt := range []string{"\n\n", "\n#"} {
			if j := strings.Index(rest[len(key):], stopAt); j >= 0 && len(key)+j < end {
				end = len(key) + j
			}
		}
		b.WriteString(rest[:end])
		b.WriteByte(' ')
		from = start + len(key)
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
}

// candidates returns the example values a description quotes, like 'W12' and 'W15' in
// "Warehouse: e.g. 'W12', 'W15'".
func candidates(desc string) []any {
	var out []any
	for _, q := range quoted(desc) {
		if len(q) <= 40 && !strings.Contains(q, " ") || len(strings.Fields(q)) <= 3 && len(q) <= 40 {
			out = append(out, q)
		}
	}
	return out
}

var (
	urlWords   = setOf("url uri link href website site page")
	textWords  = setOf("query question q search prompt content text message input instruction request topic subquestion keywords term terms")
	nameWords  = setOf("name title project report item entity company location city address place neighborhood neighbourhood area region zone subject product brand model")
	reasonWds  = setOf("reason rationale why justification explanation note notes")
	summaryWds = setOf("summary synopsis overview recap abstract")
	hintWords  = setOf("hint hints followup followups follow suggestions suggestion questions")
)

func anyWord(name string, set map[string]bool) bool {
	for _, w := range words(name) {
		if set[w] {
			return true
		}
	}
	return false
}

func isFormat(s map[string]any, formats ...string) bool {
	f, _ := s["format"].(string)
	return f != "" && slices.Contains(formats, f)
}

func isDateField(name string, s map[string]any) bool {
	if isFormat(s, "date", "date-time") {
		return true
	}
	desc, _ := s["description"].(string)
	for _, w := range words(name) {
		if w == "date" || w == "since" || w == "until" || w == "data" || w == "day" {
			return true
		}
	}
	return strings.Contains(strings.ToLower(desc), "iso date")
}

func (v *vocab) isIDField(name string, s map[string]any) bool {
	if isFormat(s, "uuid") {
		return true
	}
	w := words(name)
	return len(w) > 0 && v.idFields[w[len(w)-1]]
}

func (f *filler) texts() []string { return append([]string{f.primary}, f.context...) }

func (f *filler) str(name, desc string, s map[string]any) (any, bool) {
	if v, ok := f.v.entityFor(name, f.primary); ok {
		return v, true
	}
	switch {
	case isDateField(name, s):
		p, ok := period.Read(f.primary, f.now)
		if !ok {
			return nil, false
		}
		start, end := p.Start, p.End
		if end.IsZero() { // "since March 1": to today
			end = time.Date(f.now.Year(), f.now.Month(), f.now.Day(), 0, 0, 0, 0, time.UTC)
		}
		d := start
		for _, w := range words(name) {
			if w == "end" || w == "to" || w == "until" || w == "stop" || w == "fim" {
				d = end
			}
		}
		if isFormat(s, "date-time") {
			return d.Format(time.RFC3339), true
		}
		return d.Format(time.DateOnly), true
	case isFormat(s, "uri", "url") || anyWord(name, urlWords):
		for _, t := range f.texts() {
			if u := reURL.FindString(t); u != "" {
				return strings.TrimRight(u, ".,;!?"), true
			}
		}
		return nil, false
	case isFormat(s, "email") || anyWord(name, setOf("email mail")):
		for _, t := range f.texts() {
			if e := reEmail.FindString(t); e != "" {
				return e, true
			}
		}
		return nil, false
	case f.v.isIDField(name, s):
		for _, t := range f.texts() {
			if id := reUUID.FindString(t); id != "" {
				return id, true
			}
		}
		if isFormat(s, "uuid") {
			return nil, false
		}
		// an id written after its name: "order 12345", "ref: 2077" (packs add their words)
		fields := strings.Fields(f.primary)
		for i := 0; i+1 < len(fields); i++ {
			if anyWord(fields[i], f.v.idWords) && hasDigit(fields[i+1]) {
				return strings.Trim(fields[i+1], ".,;:!?#()"), true
			}
		}
		// an item a tool listed earlier, pointed at: "the second one", "the oldest"
		if id, ok := f.reference(name); ok {
			return id, true
		}
		return nil, false
	}
	if c := candidates(desc); len(c) > 0 {
		if v := f.mentioned(c); len(v) > 0 {
			return v[0], true
		}
	}
	switch {
	case anyWord(name, hintWords):
		return f.followUps()[0], true
	case anyWord(name, summaryWds):
		return f.summarize(), true
	case anyWord(name, setOf("title headline")):
		if q := quoted(f.primary); len(q) > 0 {
			return q[0], true
		}
		return f.makeTitle(), true
	case anyWord(name, reasonWds):
		return "Requested by the user: " + truncate(f.primary, 200), true
	case anyWord(name, nameWords):
		if q := quoted(f.primary); len(q) > 0 {
			return q[0], true
		}
		phrases := capitalPhrases(f.primary)
		if anyWord(name, placeWords) {
			// a place is not a code such as "B2" or "W15"
			phrases = slices.DeleteFunc(phrases, hasDigit)
		}
		if len(phrases) > 0 {
			return f.knownName(phrases[0]), true
		}
		if anyWord(name, placeWords) {
			if loc := after(f.primary, "in", "em", "near", "perto", "around", "at"); loc != "" {
				return loc, true
			}
		}
		return nil, false
	case anyWord(name, textWords):
		if q := quoted(f.primary); len(q) > 0 && anyWord(name, setOf("query search term terms keywords q")) {
			return q[0], true
		}
		text := strings.TrimSpace(reURL.ReplaceAllString(f.primary, ""))
		if anyWord(name, setOf("query search term terms keywords q topic")) {
			text = subject(text)
		}
		return text, true
	}
	if q := quoted(f.primary); len(q) > 0 {
		return q[0], true
	}
	return nil, false
}

// subject drops a leading request such as "Search the web for" or "Look up information about"
// from a search query.
func subject(text string) string {
	fields := strings.Fields(text)
	for i := 0; i < len(fields) && i < 7; i++ {
		switch fold.String(fields[i]) {
		case "for", "about", "on", "regarding", "sobre":
			if rest := strings.Join(fields[i+1:], " "); len(rest) >= 3 {
				return strings.TrimRight(rest, "?.!")
			}
		}
	}
	return text
}

// notAfterPrep are words that make a preposition part of a quantity ("at least", "at most"),
// never the start of a place.
var notAfterPrep = setOf("least most")

// after returns the words that follow the first of the given prepositions, up to punctuation.
func after(text string, preps ...string) string {
	fields := strings.Fields(text)
	for i, w := range fields {
		if slices.Contains(preps, fold.String(w)) && i+1 < len(fields) {
			// "at least 2 baths", "at most 400k": a quantity, not a place
			if next := fold.String(strings.TrimRight(fields[i+1], ".,;:!?")); notAfterPrep[next] {
				continue
			}
			var out []string
			for _, x := range fields[i+1:] {
				t := strings.TrimRight(x, ".,;:!?")
				out = append(out, t)
				if t != x || len(out) == 4 {
					break
				}
			}
			return strings.Join(out, " ")
		}
	}
	return ""
}

// mentioned returns the candidate strings the user wrote (case and separators ignored), in the
// candidates' canonical spelling.
func (f *filler) mentioned(cands []any) []any { return f.enumMentions(cands) }

// reAddress matches web addresses (with a scheme or starting www.) and email addresses.
var reAddress = regexp.MustCompile(`(?i)(?:https?://|\bwww\.)[^\s<>"'\)\]]+|[\w.+-]+@[\w-]+\.[\w.-]+`)

// numbers lists the numbers in a text with their positions among its whitespace-separated fields.
type num struct {
	at int
	v  float64
}

func numbersIn(text string) ([]string, []num) {
	// A web address or an email holds digits that are no amount (an item's ID in its URL).
	text = reAddress.ReplaceAllString(text, " ")
	fields := strings.Fields(strings.ToLower(joinSpacedThousands(text)))
	var out []num
	for i, f := range fields {
		core := strings.Trim(f, "€$£.,;:!?()[]\"'")
		if core == "" || !hasDigit(core) {
			continue
		}
		if reISODate.MatchString(core) || reUUID.MatchString(core) {
			continue
		}
		next := ""
		if i+1 < len(fields) {
			next = fold.String(fields[i+1])
		}
		v, _, ok := parseAmount(f, next)
		if !ok {
			continue
		}
		out = append(out, num{i, v})
	}
	return fields, out
}

func (f *filler) number(name, desc string, s map[string]any) (float64, bool) {
	if v, ok := f.v.entityFor(name, f.primary); ok {
		if _, nums := numbersIn(v); len(nums) > 0 {
			return nums[0].v, true
		}
	}
	nw := words(name)
	fields, nums := numbersIn(f.primary)
	inRange := func(v float64) bool {
		if lo, ok := s["minimum"].(float64); ok && v < lo {
			return false
		}
		if hi, ok := s["maximum"].(float64); ok && v > hi {
			return false
		}
		return true
	}
	has := func(ws ...string) bool {
		for _, w := range nw {
			if slices.Contains(ws, w) {
				return true
			}
		}
		return false
	}
	lowerDesc := strings.ToLower(desc)
	switch {
	case has("year", "ano", "yr") || strings.Contains(lowerDesc, "year"):
		for _, n := range nums {
			if n.v >= 1900 && n.v <= 2100 && n.v == math.Trunc(n.v) {
				return n.v, true
			}
		}
		w := words(f.primary)
		for i := 0; i+1 < len(w); i++ {
			if w[i+1] == "year" || w[i+1] == "ano" {
				switch w[i] {
				case "this", "current", "este":
					return float64(f.now.Year()), true
				case "next", "proximo":
					return float64(f.now.Year() + 1), true
				case "last", "previous", "passado":
					return float64(f.now.Year() - 1), true
				}
			}
		}
		return 0, false
	case has("month", "mes"):
		for _, w := range words(f.primary) {
			if m, ok := period.MonthOf(w); ok && len(w) > 3 {
				return float64(m), true
			}
		}
	case has("hour", "hora"):
		for i, fl := range fields {
			core := strings.Trim(fl, ".,;:!?()")
			if h, ok := strings.CutSuffix(core, "pm"); ok {
				if v, err := strconv.Atoi(strings.TrimSuffix(h, ":00")); err == nil && v < 12 {
					return float64(v + 12), true
				}
			}
			if h, ok := strings.CutSuffix(core, "am"); ok {
				if v, err := strconv.Atoi(strings.TrimSuffix(h, ":00")); err == nil && v <= 12 {
					return float64(v % 12), true
				}
			}
			if h, ok := strings.CutSuffix(core, ":00"); ok {
				if v, err := strconv.Atoi(h); err == nil && v < 24 {
					return float64(v), true
				}
			}
			_ = i
		}
	}
	isCount := has("top", "limit", "k", "n", "count", "max", "results", "num", "number", "size", "first")
	for _, n := range nums {
		// a number written next to one of the property's words: "top 5", "3 stops", "limit 20"
		for d := -2; d <= 2; d++ {
			j := n.at + d
			if d == 0 || j < 0 || j >= len(fields) {
				continue
			}
			w := words(fields[j])
			if len(w) == 0 {
				continue
			}
			near := w[0]
			match := false
			for _, x := range nw {
				if similar(x, near) > 0 && len(x) >= 3 {
					match = true
				}
			}
			if isCount && (near == "top" || near == "first" || near == "limit" || near == "primeiros" || near == "results" || near == "resultados") {
				match = true
			}
			if match && inRange(n.v) {
				return n.v, true
			}
		}
	}
	// an amount the text gives as its only number: "convert 20 to EUR", or a number from an
	// earlier step's result
	if has("amount", "value", "quantity", "sum", "price", "cost", "budget", "total", "valor", "quantia", "montante", "preco", "custo", "orcamento", "cantidad", "importe", "precio", "montant", "valeur", "prix", "betrag", "menge", "wert", "preis") && len(nums) == 1 && inRange(nums[0].v) {
		return nums[0].v, true
	}
	// a bound written as "under 300k" or "at least 2"
	isMax, isMin := has("max", "maximum", "upper", "below"), has("min", "minimum", "lower", "least")
	if isMax || isMin {
		for _, n := range nums {
			if n.at == 0 {
				continue
			}
			prev := fields[n.at-1]
			if n.at >= 2 {
				prev = fields[n.at-2] + " " + prev
			}
			up := strings.Contains(prev, "under") || strings.Contains(prev, "below") || strings.Contains(prev, "less than") || strings.Contains(prev, "max") || strings.Contains(prev, "até") || strings.Contains(prev, "up to")
			down := strings.Contains(prev, "over") || strings.Contains(prev, "above") || strings.Contains(prev, "least") || strings.Contains(prev, "more than") || strings.Contains(prev, "min") || strings.Contains(prev, "from")
			if (isMax && up || isMin && down) && inRange(n.v) {
				return n.v, true
			}
		}
	}
	return 0, false
}

func (f *filler) boolean(name string) (any, bool) {
	pw := words(f.primary)
	for _, w := range words(name) {
		if len(w) < 3 || stop[w] {
			continue
		}
		for i, x := range pw {
			if similar(w, x) == 1 {
				neg := i > 0 && (pw[i-1] == "not" || pw[i-1] == "no" || pw[i-1] == "nao" || pw[i-1] == "without")
				return !neg, true
			}
		}
	}
	return nil, false
}

func (f *filler) array(name, desc string, s map[string]any) (any, bool) {
	items, _ := s["items"].(map[string]any)
	items = f.deref(items)
	if items == nil {
		items = map[string]any{}
	}
	idesc, _ := items["description"].(string)
	itype, _ := schemaType(items)
	limit := 0
	if n, ok := s["maxItems"].(float64); ok {
		limit = int(n)
	}
	cap_ := func(v []any) []any {
		if limit > 0 && len(v) > limit {
			return v[:limit]
		}
		return v
	}
	if enum := asSlice(items["enum"]); len(enum) > 0 {
		v := f.enumMentions(enum)
		if len(v) == 0 {
			v = f.enumByMeaning(enum, true)
		}
		return cap_(v), len(v) > 0
	}
	if itype == "string" {
		if c := append(candidates(desc), candidates(idesc)...); len(c) > 0 {
			if v := f.mentioned(c); len(v) > 0 {
				return cap_(v), true
			}
		}
		if anyWord(name, hintWords) {
			out := []any{}
			for _, h := range f.followUps() {
				out = append(out, h)
			}
			return cap_(out), true
		}
		if q := quoted(f.primary); len(q) > 0 {
			out := []any{}
			for _, x := range q {
				out = append(out, x)
			}
			return cap_(out), true
		}
		if anyWord(name, nameWords) {
			out := []any{}
			for _, p := range capitalPhrases(f.primary) {
				out = append(out, p)
			}
			return cap_(out), len(out) > 0
		}
		return nil, false
	}
	if itype == "object" {
		o, missing := f.object(items)
		if len(missing) == 0 && len(o) > 0 {
			return []any{o}, true
		}
	}
	return nil, false
}

// deref follows a local "$ref" ("#/$defs/X" or "#/definitions/X").
func (f *filler) deref(s map[string]any) map[string]any {
	for range 8 {
		ref, ok := s["$ref"].(string)
		if !ok || f.root == nil {
			return s
		}
		var next map[string]any
		cur := f.root
		for _, p := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			n, _ := cur[p].(map[string]any)
			if n == nil {
				return s
			}
			cur, next = n, n
		}
		if next == nil {
			return s
		}
		s = next
	}
	return s
}

// schemaType returns the JSON type of a schema and whether null is also allowed, looking through
// type lists and anyOf/oneOf.
func schemaType(s map[string]any) (string, bool) {
	switch t := s["type"].(type) {
	case string:
		return t, false
	case []any:
		typ, nullable := "", false
		for _, x := range t {
			if x == "null" {
				nullable = true
			} else if str, ok := x.(string); ok && typ == "" {
				typ = str
			}
		}
		return typ, nullable
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		typ, nullable := "", false
		for _, alt := range asSlice(s[key]) {
			m, _ := alt.(map[string]any)
			if m == nil {
				continue
			}
			if m["type"] == "null" {
				nullable = true
			} else if t, _ := schemaType(m); t != "" && typ == "" {
				typ = t
				for k, v := range m { // let the chosen branch's keywords be seen
					if _, exists := s[k]; !exists {
						s[k] = v
					}
				}
			}
		}
		if typ != "" || nullable {
			return typ, nullable
		}
	}
	if _, ok := s["properties"]; ok {
		return "object", false
	}
	if _, ok := s["enum"]; ok {
		return "string", false
	}
	return "", false
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func decodeSchema(raw json.RawMessage) map[string]any {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// knownName returns the name the conversation already holds (in earlier messages, tool results
// or the system prompt) that name is a typo of, or name itself.
func (f *filler) knownName(name string) string {
	target := words(name)
	if len(target) == 0 {
		return name
	}
	for _, t := range f.context {
		for _, cand := range append(quoted(t), capitalPhrases(t)...) {
			cw := words(cand)
			if len(cw) == len(target) && closeName(target, strings.Join(cw, " ")) {
				return cand
			}
		}
	}
	return name
}

var placeWords = setOf("location city address place neighborhood neighbourhood area region localizacao cidade morada zona")
