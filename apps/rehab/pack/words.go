package pack

import (
	_ "embed"
	"fmt"

	"github.com/trellis-go/trellis/model/offline"
)

//go:embed words.json
var wordsJSON []byte

// Vocabulary is the words rehab's readers of a message (package nlu) need beside the cues:
// words.json, read with offline.ParseWords. Words are lower case; the ones compared with a
// message's words (all but the amounts') are written without accents, as the message is read.
type Vocabulary struct {
	// AgeLead are the words before "<n> <unit>" that make it an age ("tenho 30 anos").
	AgeLead []string `json:"age_lead"`
	// AgeUnit are the words for years after an age ("anos").
	AgeUnit []string `json:"age_unit"`
	// AgeTail are the phrases after "<n> <unit>" that make it an age without a lead ("de idade").
	AgeTail []string `json:"age_tail"`
	// Born are the words before a birth year ("nasci"), BornIn the optional word between
	// ("em"), DateOf the word of a written date's parts ("12 de maio de 1994").
	Born   []string `json:"born"`
	BornIn []string `json:"born_in"`
	DateOf []string `json:"date_of"`
	// Counted are the words counted by @count ("filh*": "*" matches any ending), None the word
	// before them for zero ("sem filhos"), Numbers the counts written as words.
	Counted []string       `json:"counted"`
	None    []string       `json:"none"`
	Numbers map[string]int `json:"numbers"`
	// Negations turn a fact's cue around when one is within two words before it ("não é para
	// arrendar"); "t" is what is left of "don't".
	Negations []string `json:"negations"`
	// Typology are the letters before a typology's digit ("t2").
	Typology []string `json:"typology"`
	// Thousand and Million are the suffixes of an amount ("180 mil", "1,2 milhões", "200k"),
	// Currency the words and signs of the currency ("€", "euros"); matched without case.
	Thousand []string `json:"thousand"`
	// Half are the words for a half before a suffix ("meio milhão").
	Half     []string `json:"half"`
	Million  []string `json:"million"`
	Currency []string `json:"currency"`

	// The rest are read by rehab.ExtractSection, which fills a profile section from the words of
	// a message the model gave no data for: each is a piece of the message in lower case, accents
	// as written ("primeira habita" is in "primeira habitação").
	//
	// RenovationBudget make a budget's single amount the renovation's ("para a obra").
	RenovationBudget []string `json:"renovation_budget"`
	// FirstHome say a first home (and so an own and permanent one), OwnHome an own and
	// permanent home, NotOwnHome a home that is not (an investment, a home to let).
	FirstHome  []string `json:"first_home"`
	OwnHome    []string `json:"own_home"`
	NotOwnHome []string `json:"not_own_home"`
	// Regimes are the fiscal regimes and their words; Qualities the renovation's finishing
	// qualities, the first one named wins; Rooms the rooms and their words.
	Regimes   []Choice `json:"regimes"`
	Qualities []Choice `json:"qualities"`
	Rooms     []Choice `json:"rooms"`
	// RoomsLeft make the rooms named ones to leave as they are ("não vou mexer na sala")
	// instead of the priorities.
	RoomsLeft []string `json:"rooms_left"`
	// Skills are the DIY skill categories (reno.DIYSkills) and the beginnings of the words that
	// name them ("pint" for pintura, "paint" for painting), folded (no accents, lower case).
	Skills []Choice `json:"skills"`
	// IssueWords make a room's feature, as the listing or the vision model describes it, a
	// problem to fix ("humidade", "azulejos antigos"); pieces of the feature in lower case.
	IssueWords []string `json:"issue_words"`
	// RoomLabels are how the user reads a room type (reno.RoomTypes: "kitchen" is "Cozinha"),
	// ConditionLabels a room's condition (reno.Conditions, and "unknown" for any other).
	RoomLabels      map[string]string `json:"room_labels"`
	ConditionLabels map[string]string `json:"condition_labels"`

	// FunctionWords are common short words of each language a reply may be in (folded, without
	// accents), by language; a word two languages share counts for both. rehab.InLanguage counts
	// them.
	FunctionWords map[string][]string `json:"function_words"`
	// ScoreWords name a relevance score, which rehab.Sanitize removes from a reply with its
	// number ("(relevância: 0.82)"); matched without case.
	ScoreWords []string `json:"score_words"`
	// KBParts are how a reply names a property's part of the knowledge base instead of its path
	// ("portfolio/<id>/analise" is "a análise").
	KBParts map[string]string `json:"kb_parts"`

	// A resumed interrupt's text (rehab.Consented) is a no when it starts with one of Refusals
	// or holds one of RefusalWords, else a yes when it starts with or holds one of Consents;
	// lower case.
	Refusals     []string `json:"refusals"`
	RefusalWords []string `json:"refusal_words"`
	Consents     []string `json:"consents"`
	// Superlatives are the portfolio questions search_portfolio answers from the numbers ("o
	// mais barato"), the first one the question holds (lower case) wins.
	Superlatives []Superlative `json:"superlatives"`
	// TaskLeadIns are the requests a task's text may start with ("adiciona a tarefa "), dropped
	// from it; lower case, with their trailing space.
	TaskLeadIns []string `json:"task_lead_ins"`
	// FollowUps are the words a message starts with when it goes on from the previous request
	// ("e se fosse 1,2 milhões?", "e também pedir a caderneta", "what about…"); folded, whole
	// words. Such a message that asks for nothing else in its other words asks the same again.
	FollowUps []string `json:"follow_ups"`
}

// Superlative is a question for the portfolio's extreme by a number: the property with the
// least or the most (Order "least" or "most") price or area (By "price" or "area"), answered
// "<Says>: <the property>.".
type Superlative struct {
	Words []string `json:"words"`
	By    string   `json:"by"`
	Order string   `json:"order"`
	Says  string   `json:"says"`
}

// Choice is a value of a profile field and the words that choose it.
type Choice struct {
	Value string   `json:"value"`
	Words []string `json:"words"`
}

// Words is words.json.
var Words = must(parseVocabulary(wordsJSON))

func parseVocabulary(b []byte) (Vocabulary, error) {
	var v Vocabulary
	if err := offline.ParseWords(b, &v); err != nil {
		return v, fmt.Errorf("rehab pack: words.json: %w", err)
	}
	for name, cs := range map[string][]Choice{"regimes": v.Regimes, "qualities": v.Qualities, "rooms": v.Rooms, "skills": v.Skills} {
		for i, c := range cs {
			if c.Value == "" || len(c.Words) == 0 {
				return v, fmt.Errorf("rehab pack: words.json: %s[%d] needs a value and its words, as {\"value\": \"premium\", \"words\": [\"luxo\"]}", name, i)
			}
		}
	}
	if v.RoomLabels["other"] == "" || v.ConditionLabels["unknown"] == "" {
		return v, fmt.Errorf(`rehab pack: words.json: room_labels needs "other" and condition_labels "unknown", the labels of a room type or condition not named`)
	}
	for i, sp := range v.Superlatives {
		if len(sp.Words) == 0 || sp.Says == "" || (sp.By != "price" && sp.By != "area") || (sp.Order != "least" && sp.Order != "most") {
			return v, fmt.Errorf("rehab pack: words.json: superlatives[%d] needs words, says, by \"price\" or \"area\" and order \"least\" or \"most\"", i)
		}
	}
	return v, nil
}
