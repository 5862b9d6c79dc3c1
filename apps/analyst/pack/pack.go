// Package pack is the analyst's domain pack for the offline model: the words its users write for
// the company's documents, which its knowledge-base tool (rag_tool) searches, and what each
// answer to its gates sounds like (the choices of its classification schemas: the final gate's
// route, the discovery gate's reply, the plan gate's change). The server gives it to the offline
// model of every role the analyst uses (server.App.Pack).
//
// words.json holds the rest of the analyst's language, which its own rules read rather than the
// offline model: the instruction words a direction starts with, the words of a greeting, of an
// indirect question and of a stylistic preference, the cues of what a user does not want ("no
// need for"), the stopwords of its searches, the step words a task brief rewrites ([Words]). The
// Go code keeps the mechanics; the sentences the analyst writes are its
// prompts/offline/sentences.md and prompts/messages/messages.md.
package pack

import (
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/trellis-go/trellis/model/offline"
)

//go:embed pack.json
var data []byte

// Pack is the analyst's pack, read from pack.json.
var Pack = offline.MustParsePack(data)

//go:embed words.json
var wordsData []byte

// Words is the vocabulary the analyst's rules read (words.json), lower case. Phrases of several
// words match with any spacing between them.
type Words struct {
	// LeadOpeners may precede a direction's instruction ("please", "can you", "we should").
	LeadOpeners []string `json:"lead_openers"`
	// LeadInstructions start a direction ("look into", "research"); they are dropped when the
	// direction becomes a research question about what follows them.
	LeadInstructions []string `json:"lead_instructions"`
	// Whether start an indirect yes/no question ("whether the rival is hiring").
	Whether []string `json:"whether"`
	// Auxiliaries are the verbs an indirect question turns around ("is", "has", "will").
	Auxiliaries []string `json:"auxiliaries"`
	// ClauseStarts start a clause rather than a noun phrase ("we are losing share").
	ClauseStarts []string `json:"clause_starts"`
	// Greetings are the words of a bare greeting, which is not a research request.
	Greetings []string `json:"greetings"`
	// Introductions start a sentence in which users give their name ("I'm Priya", "call me
	// Sam"): the capitalised words after one are the name.
	Introductions []string `json:"introductions"`
	// RememberCues start a sentence the user wants kept for later sessions ("keep in mind that
	// I only care about B2B"): what follows is a standing note in the preferences.
	RememberCues []string `json:"remember_cues"`
	// YearPrepositions precede a year a question names as its period ("in 2025").
	YearPrepositions []string `json:"year_prepositions"`
	// AskUser start a brief to ask the user a question, taken off to leave the question.
	AskUser []string `json:"ask_user"`
	// StepJoiners join the steps of feedback on the plan ("add X and then drop Y") and the
	// clauses of one sentence that each make a change ("skip X, and bring Y in", "fine but drop X").
	StepJoiners []string `json:"step_joiners"`
	// References are the words that point back at something the sentence named before ("add
	// them too"): a change whose subject is only such words is about what the sentence names.
	References []string `json:"references"`
	// TailFillers are words an addition may end with that say nothing of its subject ("the rival
	// in too", "the rival into the comparison as well"); they are taken off its end.
	TailFillers []string `json:"tail_fillers"`
	// StepWords are the words that would make a question read as a step of a task brief to the
	// offline model ("then"), each with the word written in its place ("next").
	StepWords map[string]string `json:"step_words"`
	// DropCues are phrases that mark the words after them as what the user does not want ("no
	// need for X", "we can do without X"): feedback on the plan drops the sub-questions on X, a
	// reply to the discoveries sets the discoveries X names aside. They are read where the
	// model hears no change, for phrasings all of whose words are stopwords to it.
	DropCues []string `json:"drop_cues"`
	// Stopwords carry no meaning for a search or a match: function words, and the words of the
	// questions the planner writes ("assumptions", "evidence").
	Stopwords []string `json:"stopwords"`
	// Preferences are the stylistic preferences a user's words state, each a typed fact.
	Preferences []Preference `json:"preferences"`
}

// Preference is a typed preference ("[STYLE] verbosity: concise") and the values it may take,
// in order: the first value one of whose cues the text holds is the preference.
type Preference struct {
	Type   string            `json:"type"`
	Name   string            `json:"name"`
	Values []PreferenceValue `json:"values"`
}

// PreferenceValue is one value of a preference and the cues (substrings, lower case) that state it.
type PreferenceValue struct {
	Value string   `json:"value"`
	Cues  []string `json:"cues"`
}

// Vocabulary is the analyst's vocabulary, read from words.json.
var Vocabulary = mustWords(wordsData)

// ParseWords reads a vocabulary file: every list must be given, and no unknown field.
func ParseWords(b []byte) (*Words, error) {
	var w Words
	if err := offline.ParseWords(b, &w); err != nil {
		return nil, fmt.Errorf("analyst pack: words.json: %w", err)
	}
	for i, p := range w.Preferences {
		if p.Type == "" || p.Name == "" || len(p.Values) == 0 {
			return nil, fmt.Errorf("analyst pack: words.json: preference %d needs a type, a name and values", i+1)
		}
		for _, v := range p.Values {
			if v.Value == "" || len(v.Cues) == 0 {
				return nil, fmt.Errorf("analyst pack: words.json: preference %s.%s: every value needs a value and cues", p.Type, p.Name)
			}
		}
	}
	return &w, nil
}

func mustWords(b []byte) *Words {
	w, err := ParseWords(b)
	if err != nil {
		panic(err)
	}
	return w
}

// Alternation is phrases as a regular expression alternation, longest first (so "check out" is
// tried before "check"), each phrase's words joined by any spacing: for building the rules'
// patterns from the vocabulary.
func Alternation(phrases []string) string {
	ps := slices.Clone(phrases)
	slices.SortStableFunc(ps, func(a, b string) int { return len(b) - len(a) })
	quoted := make([]string, len(ps))
	for i, p := range ps {
		ws := strings.Fields(p)
		for j, w := range ws {
			ws[j] = regexp.QuoteMeta(w)
		}
		quoted[i] = strings.Join(ws, `\s+`)
	}
	return "(?:" + strings.Join(quoted, "|") + ")"
}

// words splits s into lower-case words of letters and digits ("re-plan" is "re", "plan").
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// choiceWords are the words of the examples the pack gives for value of field (all), and the
// words those examples start with (first).
func choiceWords(field, value string) (all, first map[string]bool) {
	all, first = map[string]bool{}, map[string]bool{}
	for _, c := range Pack.Choices {
		if c.Field != field || c.Value != value {
			continue
		}
		for _, ex := range c.Examples {
			for i, w := range words(ex) {
				all[w] = true
				if i == 0 {
					first[w] = true
				}
			}
		}
	}
	return all, first
}

// Subject is what text is about once the words that made it the value of field are taken out:
// for the plan change "add", "Add a question on the city tender" is about "city tender", and
// "Re-plan: focus on battery costs" is about "battery costs" for "focus". The words taken out are
// the first run of the value's example words (pack.json) that starts with a word an example
// starts with (a word may be a synonym the pack gives for one, or have a typo the offline model
// forgives, offline.Near);
// after is what follows the run and before what precedes it ("the rival: drop it"), each with
// text's own spelling. Text without such a run is its own after.
func Subject(field, value, text string) (before, after string) {
	all, first := choiceWords(field, value)
	toks := strings.Fields(text)
	in := func(tok string, set map[string]bool) bool {
		ws := words(tok)
		for _, w := range ws {
			if !known(w, set) {
				return false
			}
		}
		return len(ws) > 0
	}
	trim := func(ts []string) string { return strings.Trim(strings.Join(ts, " "), " ,;:.!") }
	for i, tok := range toks {
		if !in(tok, all) {
			continue
		}
		if ws := words(tok); !known(ws[0], first) {
			continue
		}
		j := i + 1
		for j < len(toks) && in(toks[j], all) {
			j++
		}
		return trim(toks[:i]), trim(toks[j:])
	}
	return "", trim(toks)
}

// known reports whether w is a word of set, a synonym the pack gives for one (a misspelling it
// knows, "remvoe" for "remove"), or one but for a typo the offline model forgives.
func known(w string, set map[string]bool) bool {
	if set[w] {
		return true
	}
	for _, syn := range Pack.Synonyms[w] {
		if set[syn] {
			return true
		}
	}
	return nearAny(w, set)
}

// nearAny reports whether w is a word of set but for a typo the offline model forgives.
func nearAny(w string, set map[string]bool) bool {
	for x := range set {
		if offline.Near(w, x) {
			return true
		}
	}
	return false
}
