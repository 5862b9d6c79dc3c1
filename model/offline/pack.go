package offline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/trellis-go/trellis/model"
)

// Pack is what an application teaches the offline model about its domain: the words its users
// write for the things its tools name, the phrasings of its intents, how its identifiers look,
// how its users point at items the conversation has shown, and how its answers open. The
// offline model itself knows only what is language-general (stopwords, everyday verbs, numbers,
// dates, the five languages); everything else arrives in packs, through [Options].Packs or
// [Extend].
//
// A pack is data: build it as a Go value, or keep it in a JSON file the app embeds and read it
// with [ParsePack]. Words are matched with case and accents ignored.
//
//	{
//	  "name": "library",
//	  "synonyms": {"novel": ["book"], "livro": ["book"]},
//	  "intents": [{"tool": "renew_loan", "examples": ["keep the book longer", "extend my loan"]}],
//	  "id_words": ["isbn"],
//	  "entities": [{"arg": "shelf", "pattern": "\\bshelf ([A-Z]\\d+)"}],
//	  "references": {"superlatives": {"oldest": {"field": "year", "lowest": true}}},
//	  "answers": {"list_loans": {"en": "Your loans:", "pt": "Os seus empréstimos:"}}
//	}
type Pack struct {
	// Name says whose pack it is, for errors and logs.
	Name string `json:"name"`
	// Synonyms maps a word users write (in any language) to the words the app's tool names,
	// descriptions and enum values use: "livro" to "book". They add to the model's own.
	Synonyms map[string][]string `json:"synonyms,omitempty"`
	// Languages adds words that mark a message as written in a language, keyed by the language's
	// code: "en", "pt", "es", "fr" or "de". The offline model answers in the language detected.
	Languages map[string][]string `json:"languages,omitempty"`
	// Intents are example phrasings of requests, each mapped to the tool it asks for: a message
	// close to an example raises that tool's score (see [Intent]).
	Intents []Intent `json:"intents,omitempty"`
	// Exact are words that cues never read as a typo of another word (names, places, words close
	// to a cue's but meaning something else: "renew" is not "review").
	Exact []string `json:"exact,omitempty"`
	// IDWords are the words after which users write an identifier ("order 8812", "isbn 978…"):
	// an ID argument takes the token that follows one.
	IDWords []string `json:"id_words,omitempty"`
	// IDFields are argument-name words, besides "id" and "uuid", that name an identifier.
	IDFields []string `json:"id_fields,omitempty"`
	// Entities fill arguments from patterns in the user's message (see [Entity]).
	Entities []Entity `json:"entities,omitempty"`
	// References say how users point at the items a tool listed earlier in the conversation.
	References References `json:"references,omitzero"`
	// Answers give, per tool name and language code, the line that opens the answer written from
	// that tool's results, in place of "Here is what I found for %q." It may hold one %q (the
	// user's request).
	Answers map[string]map[string]string `json:"answers,omitempty"`
	// Choices are example phrasings of the values of an enum in a structured-output schema, for
	// apps that ask the model to classify a message (see [Choice]).
	Choices []Choice `json:"choices,omitempty"`
	// Values are the words that name an argument's values: keyed by the argument's name (any
	// tool's argument of that name) or by "tool.argument" (that tool's only, tried first), each
	// value the argument takes and the phrases users write for it, in any language:
	//
	//	"values": {"renew_loan.weeks": {"2": ["fortnight", "quinzena"]}, "genre": {"crime": ["detective*", "!true crime"]}}
	//
	// Phrases are matched as cues are (words in order, case and accents ignored, "*" for any
	// ending, typos forgiven from five letters, the pack's one-word synonyms counting); a phrase
	// starting with "!" rules its value out when the message holds it. The value whose phrase
	// starts earliest in the message fills the argument (the longer phrase where two start at
	// the same word), converted to the argument's type; a value outside the argument's enum is
	// not taken. Read them beside the model with [NewValueReader].
	Values map[string]map[string][]string `json:"values,omitempty"`
}

// Intent maps example phrasings, or cue phrases, to a tool. A message whose content words cover
// at least half of an example's (synonyms, plurals and shared stems count) adds up to four points
// to the tool's score, in proportion; each of its Cues found in the message adds Weight (words in
// order, case and accents ignored; "explic*" for any ending, "#" for a number, "<url>" for a
// link, a leading "^" for the message's start; typos forgiven from five letters, never for a word
// another cue spells; the pack's one-word synonyms count). Args are then the defaults of the
// call's arguments, but the Args of the intent whose cues match best (intents with the same Args
// adding up) override what the words gave.
type Intent struct {
	Tool     string         `json:"tool"`
	Examples []string       `json:"examples,omitempty"`
	Args     map[string]any `json:"args,omitempty"`
	// Cues are phrases that point to the tool wherever they appear, stopwords included ("how
	// many", "why", "is # ok"); an intent needs examples, cues or both.
	Cues []string `json:"cues,omitempty"`
	// Weight is the points each cue found adds to the tool's score; 0 means 3. A negative weight
	// counts against the tool (a cue that points elsewhere).
	Weight float64 `json:"weight,omitempty"`
}

// Entity fills an argument from a pattern: an argument whose name is Arg, or whose name's last
// word is Arg ("shelf" for "from_shelf"), takes the pattern's first group (or the whole
// match) from the user's message, converted to the argument's type. Pattern is Go regexp syntax.
type Entity struct {
	Arg     string `json:"arg"`
	Pattern string `json:"pattern"`
}

// References say how users point at items a tool listed earlier in the conversation, to fill an
// ID argument the message does not give. Ordinals ("the second one", "o terceiro", "the last")
// are language-general and built in; packs add their own words and the domain's superlatives.
type References struct {
	// Ordinals add ordinal words: "penthouse": 1 is not one, "fifth": 5 is. -1 means the last.
	Ordinals map[string]int `json:"ordinals,omitempty"`
	// Superlatives map a word ("oldest", "the older one", "mais antigo") to the field whose
	// lowest (or highest) value picks the item.
	Superlatives map[string]Superlative `json:"superlatives,omitempty"`
	// This are the words that point at the one item shown ("that one", "esse"): the last item the
	// assistant named, or the only one listed.
	This []string `json:"this,omitempty"`
}

// Superlative picks the item with the lowest or highest value of Field.
type Superlative struct {
	Field  string `json:"field"`
	Lowest bool   `json:"lowest,omitempty"`
}

// ParsePack reads a pack from JSON, refusing unknown fields, and checks it with [Pack.Validate].
func ParsePack(data []byte) (*Pack, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Pack
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("offline: reading a pack: %w (see offline.Pack for its fields)", err)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// MustParsePack is [ParsePack] for a pack embedded in the program (a file under go:embed, checked
// by the app's tests): it panics when the pack is invalid.
func MustParsePack(data []byte) *Pack {
	p, err := ParsePack(data)
	if err != nil {
		panic(err)
	}
	return p
}

var langCodes = map[string]lang{"en": langEN, "pt": langPT, "es": langES, "fr": langFR, "de": langDE}

// Validate reports what is wrong with a pack: a language code other than en, pt, es, fr and de,
// an intent without a tool or examples, an entity without an argument or with a pattern that
// does not compile, a superlative without a field, a value without a name or without a phrase
// that means it.
func (p *Pack) Validate() error {
	if p == nil {
		return errors.New("offline: a nil pack: give a *offline.Pack or leave it out")
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("offline: pack %q: %s", p.Name, fmt.Sprintf(format, args...))
	}
	for code := range p.Languages {
		if _, ok := langCodes[code]; !ok {
			return bad("language %q is not one of en, pt, es, fr, de", code)
		}
	}
	for tool, byLang := range p.Answers {
		for code := range byLang {
			if _, ok := langCodes[code]; !ok {
				return bad("answers of %q: language %q is not one of en, pt, es, fr, de", tool, code)
			}
		}
	}
	for i, in := range p.Intents {
		if in.Tool == "" {
			return bad("intent %d has no tool: name the tool it asks for", i)
		}
		if len(in.Examples) == 0 && len(in.Cues) == 0 {
			return bad("intent %d (%s) has no examples or cues: give at least one phrasing", i, in.Tool)
		}
	}
	for i, e := range p.Entities {
		if e.Arg == "" {
			return bad("entity %d has no arg: name the argument it fills", i)
		}
		if _, err := regexp.Compile(e.Pattern); err != nil || e.Pattern == "" {
			return bad("entity %d (%s): pattern %q does not compile (Go regexp syntax): %v", i, e.Arg, e.Pattern, err)
		}
	}
	for w, s := range p.References.Superlatives {
		if s.Field == "" {
			return bad("superlative %q has no field: name the field whose value picks the item", w)
		}
	}
	for i, c := range p.Choices {
		if c.Value == "" {
			return bad("choice %d has no value: name the enum value it picks", i)
		}
		if len(c.Examples) == 0 {
			return bad("choice %d (%s) has no examples: give at least one phrasing", i, c.Value)
		}
	}
	for _, key := range sortedKeys(p.Values) {
		if err := validValues(key, p.Values[key]); err != nil {
			return bad("%v", err)
		}
	}
	return nil
}

// validValues checks the values of one key of [Pack].Values.
func validValues(key string, byValue map[string][]string) error {
	tool, arg, scoped := strings.Cut(key, ".")
	if !scoped {
		tool, arg = "", key
	}
	if strings.TrimSpace(arg) == "" || scoped && strings.TrimSpace(tool) == "" || strings.Contains(arg, ".") {
		return fmt.Errorf("values: key %q: want an argument's name or \"tool.argument\"", key)
	}
	if len(byValue) == 0 {
		return fmt.Errorf("values of %q: none given: map each value to the phrases that mean it", key)
	}
	for _, val := range sortedKeys(byValue) {
		if strings.TrimSpace(val) == "" {
			return fmt.Errorf("values of %q: an empty value: name the value the phrases mean", key)
		}
		means := 0
		for _, phrase := range byValue[val] {
			not := strings.HasPrefix(strings.TrimSpace(phrase), "!")
			if _, ok := newCue(strings.TrimPrefix(strings.TrimSpace(phrase), "!"), 1); !ok {
				return fmt.Errorf("values of %q: value %q: phrase %q has no words", key, val, phrase)
			}
			if !not {
				means++
			}
		}
		if means == 0 {
			return fmt.Errorf("values of %q: value %q has no phrase that means it (phrases starting with \"!\" only rule it out)", key, val)
		}
	}
	return nil
}

// Extend returns the offline model m with packs added to the ones it has, and false when m is
// not the offline model itself (a real model, or a wrapper: extend the offline model before
// wrapping it, as the server does for each app's roles). Invalid packs are refused.
func Extend(m model.Model, packs ...*Pack) (model.Model, bool, error) {
	om, ok := m.(*Model)
	if !ok {
		return m, false, nil
	}
	for _, p := range packs {
		if err := p.Validate(); err != nil {
			return m, true, err
		}
	}
	out := *om
	out.packs = append(slices.Clone(om.packs), packs...)
	out.v = buildVocab(out.packs)
	return &out, true, nil
}

// PacksOf returns the packs the offline model m (or the offline model a wrapper holds) was given,
// for a program that builds another offline model with other options but the same knowledge.
func PacksOf(m model.Model) []*Pack {
	for range 16 {
		if om, ok := m.(*Model); ok {
			return slices.Clone(om.packs)
		}
		u, ok := m.(interface{ Unwrap() model.Model })
		if !ok {
			return nil
		}
		if m = u.Unwrap(); m == nil {
			return nil
		}
	}
	return nil
}

// vocab is what the model knows: its own language-general tables merged with its packs.
type vocab struct {
	synonyms     map[string][]string
	langWords    [len(langWords)]map[string]bool
	intents      []intent
	idWords      map[string]bool
	idFields     map[string]bool
	entities     []entity
	ordinals     map[string]int // folded phrase → position (1-based; -1 the last)
	superlatives map[string]Superlative
	this         []string
	answers      map[string][len(langWords)]string
	cueSpelled   map[string]bool // words some cue spells exactly (not taken for typos)
	choices      []choice
	values       map[string][]argValue // by "tool.argument" or argument, sorted by value
}

// argValue is a value of an argument and the phrases that mean it, or rule it out.
type argValue struct {
	value string
	cues  []cue
	not   []cue
}

type intent struct {
	tool     string
	examples [][]string // content words of each example
	args     map[string]any
	cues     []cue
}

type entity struct {
	arg string
	re  *regexp.Regexp
}

var base = buildVocab(nil)

// buildVocab merges packs into the model's own tables. Invalid entries are skipped (New takes
// packs without an error; Extend and ParsePack refuse them).
func buildVocab(packs []*Pack) *vocab {
	v := &vocab{synonyms: map[string][]string{}, idWords: setOf(generalIDWords), idFields: setOf("id uuid"),
		ordinals: map[string]int{}, superlatives: map[string]Superlative{}, this: slices.Clone(generalThis),
		answers: map[string][len(langWords)]string{}, cueSpelled: map[string]bool{}}
	for w, syn := range synonyms {
		v.synonyms[w] = syn
	}
	v.langWords = langWords
	for w, n := range generalOrdinals {
		v.ordinals[w] = n
	}
	for _, p := range packs {
		if p == nil {
			continue
		}
		for w, syn := range p.Synonyms {
			k := strings.Join(words(w), " ")
			for _, s := range syn {
				s = strings.Join(words(s), " ")
				if s != "" && !slices.Contains(v.synonyms[k], s) {
					v.synonyms[k] = append(slices.Clone(v.synonyms[k]), s)
				}
			}
		}
		for code, ws := range p.Languages {
			l, ok := langCodes[code]
			if !ok {
				continue
			}
			set := make(map[string]bool, len(v.langWords[l])+len(ws))
			for w := range v.langWords[l] {
				set[w] = true
			}
			for _, w := range ws {
				for _, x := range words(w) {
					set[x] = true
				}
			}
			v.langWords[l] = set
		}
		for _, in := range p.Intents {
			if in.Tool == "" {
				continue
			}
			it := intent{tool: in.Tool, args: in.Args}
			for _, ex := range in.Examples {
				if ws := contentWords(ex); len(ws) > 0 {
					it.examples = append(it.examples, ws)
				}
			}
			w := in.Weight
			if w == 0 {
				w = 3
			}
			for _, phrase := range in.Cues {
				if c, ok := newCue(phrase, w); ok {
					it.cues = append(it.cues, c)
					for _, cw := range c.words {
						if !strings.HasSuffix(cw, "*") {
							v.cueSpelled[cw] = true
						}
					}
				}
			}
			v.intents = append(v.intents, it)
		}
		for _, w := range p.Exact {
			for _, x := range words(w) {
				v.cueSpelled[x] = true
			}
		}
		for _, w := range p.IDWords {
			for _, x := range words(w) {
				v.idWords[x] = true
			}
		}
		for _, w := range p.IDFields {
			for _, x := range words(w) {
				v.idFields[x] = true
			}
		}
		for _, e := range p.Entities {
			re, err := regexp.Compile(e.Pattern)
			if err != nil || e.Arg == "" || e.Pattern == "" {
				continue
			}
			v.entities = append(v.entities, entity{arg: strings.Join(words(e.Arg), "_"), re: re})
		}
		for w, n := range p.References.Ordinals {
			v.ordinals[strings.Join(words(w), " ")] = n
		}
		for w, s := range p.References.Superlatives {
			if s.Field != "" {
				v.superlatives[strings.Join(words(w), " ")] = s
			}
		}
		for _, w := range p.References.This {
			if k := strings.Join(words(w), " "); k != "" {
				v.this = append(v.this, k)
			}
		}
		v.addChoices(p.Choices)
		v.addValues(p.Values)
		for tool, byLang := range p.Answers {
			a := v.answers[tool]
			for code, text := range byLang {
				if l, ok := langCodes[code]; ok {
					a[l] = text
				}
			}
			v.answers[tool] = a
		}
	}
	return v
}

// addValues merges a pack's Values: a value several packs name keeps every pack's phrases.
func (v *vocab) addValues(values map[string]map[string][]string) {
	for key, byValue := range values {
		if validValues(key, byValue) != nil {
			continue
		}
		key = strings.TrimSpace(key)
		if v.values == nil {
			v.values = map[string][]argValue{}
		}
		vals := slices.Clone(v.values[key])
		for val, phrases := range byValue {
			i := slices.IndexFunc(vals, func(a argValue) bool { return a.value == val })
			if i < 0 {
				vals = append(vals, argValue{value: val})
				i = len(vals) - 1
			}
			for _, phrase := range phrases {
				phrase = strings.TrimSpace(phrase)
				if rest, not := strings.CutPrefix(phrase, "!"); not {
					if c, ok := newCue(rest, 1); ok {
						vals[i].not = append(vals[i].not, c)
					}
				} else if c, ok := newCue(phrase, 1); ok {
					vals[i].cues = append(vals[i].cues, c)
				}
			}
		}
		sort.Slice(vals, func(a, b int) bool { return vals[a].value < vals[b].value })
		v.values[key] = vals
	}
}

// argValue is the value the pack's Values give argument arg of tool in text: the value whose
// phrase starts earliest (the longer phrase at the same word), none of whose "!" phrases the
// text holds.
func (v *vocab) argValue(tool, arg, text string) (string, bool) {
	vals := v.values[arg]
	if scoped := v.values[tool+"."+arg]; tool != "" && len(scoped) > 0 {
		vals = scoped
	}
	if len(vals) == 0 {
		return "", false
	}
	msg := cueWords(text)
	best, bestAt, bestLen := "", -1, 0
	for _, av := range vals {
		if slices.ContainsFunc(av.not, func(c cue) bool { return v.cueAt(c, msg) >= 0 }) {
			continue
		}
		for _, c := range av.cues {
			at := v.cueAt(c, msg)
			if at >= 0 && (bestAt < 0 || at < bestAt || at == bestAt && len(c.words) > bestLen) {
				best, bestAt, bestLen = av.value, at, len(c.words)
			}
		}
	}
	return best, bestAt >= 0
}

// ValueReader reads arguments' values from a user's words by packs' [Pack].Values (and their
// entity patterns), as the offline model does when it fills a call's arguments: for an app that reads its users' words
// beside the model. It is safe for concurrent use.
type ValueReader struct{ v *vocab }

// NewValueReader returns a reader of the packs' Values (matched with the packs' synonyms and
// exact words); invalid packs are refused.
func NewValueReader(packs ...*Pack) (*ValueReader, error) {
	for _, p := range packs {
		if err := p.Validate(); err != nil {
			return nil, err
		}
	}
	return &ValueReader{v: buildVocab(packs)}, nil
}

// Value returns the value text gives argument arg of tool (tool may be empty: then only the
// Values keyed by the argument's name count), and false when it names none.
func (r *ValueReader) Value(tool, arg, text string) (string, bool) {
	if r == nil || r.v == nil {
		return "", false
	}
	return r.v.argValue(tool, arg, text)
}

// Entity returns what the packs' entity patterns for arg (see [Entity]) take from text, as the
// model fills that argument, and false when no pattern matches.
func (r *ValueReader) Entity(arg, text string) (string, bool) {
	if r == nil || r.v == nil {
		return "", false
	}
	return r.v.entityFor(arg, text)
}

// contentWords are the words of s that count for matching: no stopwords, no one- or two-letter
// words but numbers.
func contentWords(s string) []string {
	var out []string
	for _, w := range words(s) {
		if !stop[w] && (len(w) >= 3 || hasDigit(w)) {
			out = append(out, w)
		}
	}
	return out
}

// intentBoost is the points the pack's intents add to tool for the user's words: up to four, in
// proportion to the share of an example's content words the message covers (half at least).
func (v *vocab) intentBoost(tool string, user []string) float64 {
	best := 0.0
	for _, in := range v.intents {
		if in.tool != tool {
			continue
		}
		for _, ex := range in.examples {
			best = max(best, coverage(ex, user))
		}
	}
	if best < 0.5 {
		return 0
	}
	return 4 * best
}

// intentArgs returns the default arguments of the intent of tool the text matches best.
func (v *vocab) intentArgs(tool, text string) map[string]any {
	user := v.terms(text)
	var out map[string]any
	best := 0.0
	for _, in := range v.intents {
		if in.tool != tool || len(in.args) == 0 {
			continue
		}
		for _, ex := range in.examples {
			if c := coverage(ex, user); c >= 0.5 && c > best {
				best, out = c, in.args
			}
		}
	}
	return out
}

// coverage is the share of the example's words the user's terms match.
func coverage(example, user []string) float64 {
	if len(example) == 0 {
		return 0
	}
	got := 0.0
	for _, e := range example {
		b := 0.0
		for _, u := range user {
			b = max(b, similar(u, e))
		}
		got += b
	}
	return got / float64(len(example))
}

// entityFor fills the argument name from a pack's pattern in text.
func (v *vocab) entityFor(name, text string) (string, bool) {
	nw := words(name)
	joined := strings.Join(nw, "_")
	for _, e := range v.entities {
		if e.arg != joined && (len(nw) == 0 || nw[len(nw)-1] != e.arg) {
			continue
		}
		m := e.re.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		for _, g := range m[1:] {
			if g != "" {
				return g, true
			}
		}
		return m[0], true
	}
	return "", false
}

// answerFor returns the pack's opening line for the results of tools in language l.
func (v *vocab) answerFor(tools []string, l lang) string {
	for _, t := range tools {
		if a, ok := v.answers[t]; ok {
			if a[l] != "" {
				return a[l]
			}
			return a[langEN]
		}
	}
	return ""
}

// sortedKeys lists a map's keys longest first, so "the older one" is tried before "older".
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if len(keys[i]) != len(keys[j]) {
			return len(keys[i]) > len(keys[j])
		}
		return keys[i] < keys[j]
	})
	return keys
}
