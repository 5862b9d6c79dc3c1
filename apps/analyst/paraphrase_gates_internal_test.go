package analyst

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/apps/analyst/pack"
	"github.com/trellis-go/trellis/model/offline"
)

// The offline understanding of replies to the discovery gate (affirm, ignore, direction) and of
// feedback to the plan gate (add, drop, focus), in paraphrases: at least thirty per intent, in
// other word orders, with synonyms and typos. Known misses are listed; the test fails when one of
// them is understood (so the list shrinks) or when another paraphrase is missed.

// offlineAnalyst is an analyst whose fast and strong roles are the offline model with the pack.
func offlineAnalyst() *Analyst {
	m := offline.New(&offline.Options{Packs: []*offline.Pack{pack.Pack}})
	return &Analyst{fast: m, strong: m, strongRule: true}
}

// keyed is a paraphrase and the word its subject must keep (the ID to ignore, the subject to add,
// drop or put first).
type keyed struct{ text, key string }

var discoveryReplyPhrases = map[string][]keyed{
	"affirm": {
		{"yes", ""}, {"Yes please", ""}, {"yeah", ""}, {"yep", ""}, {"sure", ""}, {"sure thing", ""}, {"go ahead", ""},
		{"Go for it", ""}, {"do it", ""}, {"yes, do it", ""}, {"yes, investigate", ""}, {"Yes. Investigate.", ""},
		{"please do", ""}, {"ok, go ahead", ""}, {"absolutely", ""}, {"of course", ""}, {"definitely, dig deeper", ""},
		{"dig deeper", ""}, {"deeper please", ""}, {"yes dig deeper", ""}, {"let's do that", ""}, {"proceed", ""},
		{"agreed", ""}, {"yes please investigate", ""}, {"investgate", ""}, {"absolutly", ""}, {"yes, follow up", ""},
		{"Sure, go ahead and investigate", ""}, {"yeah do it", ""}, {"procede", ""},
	},
	"ignore": {
		{"ignore D2", "D2"}, {"Ignore discovery D2", "D2"}, {"drop D2", "D2"}, {"disregard D2", "D2"}, {"skip D2", "D2"},
		{"please ignore D2", "D2"}, {"set D2 aside", "D2"}, {"set aside D2", "D2"}, {"put D2 aside", "D2"},
		{"dismiss D2", "D2"}, {"leave out D2", "D2"}, {"remove D2", "D2"}, {"discard D2", "D2"}, {"forget D2", "D2"},
		{"forget about D2", "D2"}, {"D2 is irrelevant", "D2"}, {"exclude D2", "D2"}, {"we can ignore D2", "D2"},
		{"ignore finding D2", "D2"}, {"ignroe D2", "D2"}, {"disregrad D2", "D2"}, {"drop discovery D2", "D2"},
		{"no need for D2", "D2"}, {"ignore d2", "D2"}, {"Ignore D2 please", "D2"}, {"D2: ignore", "D2"},
		{"skip discovery D2", "D2"}, {"leave D2 out", "D2"}, {"discard D2, it's noise", "D2"}, {"D2 is not relevant", "D2"},
		{"we can do without D2", "D2"}, {"there's no need for D2", "D2"}, {"No need to follow up on D2", "D2"},
	},
	"direction": {
		{"Look at Spinlane's courier battery subscription in Vienna", "Spinlane"}, {"What do couriers pay per month for a leased e-bike?", "couriers"},
		{"investigate battery supply risks", "battery"}, {"check whether Voltra is hiring sales staff", "Voltra"},
		{"dig into the Madrid tender", "Madrid"}, {"find out more about Northstar's partners", "Northstar"},
		{"research the Lisbon city meeting", "Lisbon"}, {"How big is the campus market?", "campus"},
		{"compare Voltra and Spinlane pricing", "Voltra"}, {"what about fleet leasing in Porto", "Porto"},
		{"more on the delivery firm interviews", "delivery"}, {"Can you research the Madrid tender", "Madrid"},
		{"explore subscription pricing in Vienna", "Vienna"}, {"please look into the churn numbers", "churn"},
		{"Is the Tidewater pilot on schedule?", "Tidewater"}, {"we should check the risk register", "risk"},
		{"analyse competitor funding rounds", "funding"}, {"tell me about the Lisbon tender", "Lisbon"},
		{"who supplies Voltra's batteries?", "Voltra"}, {"Find out whether CityGlide raised money", "CityGlide"},
		{"see what the brand tracker says", "brand"}, {"yes, investigate the Madrid tender", "Madrid"},
		{"look deeper at UrbanHop", "UrbanHop"}, {"what are couriers' main complaints?", "complaints"},
		{"research battery swapping costs", "swapping"}, {"investigate further the churn figures", "churn"},
		{"examine the university interviews", "university"}, {"check out Spinlane's Vienna launch", "Spinlane"},
		{"I'd like to know more about fleet insurance costs", "insurance"}, {"dig deeper into charging infrastructure in Madrid", "charging"},
	},
}

// discoveryReplyMisses are the paraphrases the offline model does not understand yet. Phrasings
// all of whose words are stopwords to the model ("no need for D2") are read by the pack's drop
// cues; misspellings beyond its typo allowance ("ignroe", a transposition) are the pack's synonyms.
var discoveryReplyMisses = map[string]bool{}

// replyUnderstood says whether r is what a paraphrase of intent means.
func replyUnderstood(intent, key string, r discoveryReply) bool {
	switch intent {
	case "affirm":
		return r.affirm && len(r.ignore)+len(r.directions) == 0
	case "ignore":
		return slices.Contains(r.ignore, key) && len(r.directions) == 0 && !r.affirm
	default:
		return !r.affirm && len(r.ignore) == 0 && len(r.directions) == 1 && strings.Contains(r.directions[0], key)
	}
}

// checkParaphrases runs understood on every paraphrase of every intent: it says whether the
// paraphrase was understood and what it was read as. It fails on a miss not in misses, on a
// listed miss now understood, and on an intent with fewer than thirty paraphrases; it logs the
// count understood per intent.
func checkParaphrases(t *testing.T, phrases map[string][]keyed, intents []string, misses map[string]bool, understood func(intent string, p keyed) (bool, string)) {
	t.Helper()
	for _, intent := range intents {
		ok := 0
		for _, p := range phrases[intent] {
			switch hit, got := understood(intent, p); {
			case hit:
				ok++
				if misses[p.text] {
					t.Errorf("%q is understood now: take it off the misses", p.text)
				}
			case !misses[p.text]:
				t.Errorf("%q (%s): read as %s", p.text, intent, got)
			}
		}
		if n := len(phrases[intent]); n < 30 {
			t.Errorf("%s has %d paraphrases, want at least 30", intent, n)
		}
		t.Logf("%s: %d of %d understood", intent, ok, len(phrases[intent]))
	}
}

func TestDiscoveryReplyParaphrases(t *testing.T) {
	t.Parallel()
	a := offlineAnalyst()
	checkParaphrases(t, discoveryReplyPhrases, []string{"affirm", "ignore", "direction"}, discoveryReplyMisses, func(intent string, p keyed) (bool, string) {
		r, err := a.readDiscoveryReply(context.Background(), p.text)
		if err != nil {
			t.Fatalf("%q: %v", p.text, err)
		}
		return replyUnderstood(intent, p.key, r), fmt.Sprintf("%+v", r)
	})
}

// revisedPlan is the plan the plan-change paraphrases revise.
var revisedPlan = Plan{Topic: "e-bike leasing", SubQuestions: []SubQuestion{
	{ID: "q1", Question: "What is our own position and plan on e-bike leasing?", Sources: []string{"company_db"}},
	{ID: "q2", Question: "What is Voltra doing in e-bike leasing?", Sources: []string{"web"}},
	{ID: "q3", Question: "What does Project Ember assume about battery costs?", Sources: []string{"company_db", "web"}},
	{ID: "q4", Question: "How large is the market for e-bike leasing and how fast is it growing?", Sources: []string{"web"}},
}}

var planChangePhrases = map[string][]keyed{
	"add": {
		{"Add a question on the Madrid tender", "Madrid"}, {"add a sub-question about the Madrid tender", "Madrid"},
		{"also cover the Madrid tender", "Madrid"}, {"include the Madrid tender", "Madrid"}, {"please add the Madrid tender", "Madrid"},
		{"Add a question on Spinlane", "Spinlane"}, {"add Spinlane", "Spinlane"}, {"also ask about Spinlane's pricing", "Spinlane"},
		{"also look at battery swapping", "swapping"}, {"another question on fleet insurance", "insurance"},
		{"extend the plan with the Lisbon tender", "Lisbon"}, {"cover courier churn too", "churn"},
		{"we also need the university interviews", "university"}, {"add something about charging costs", "charging"},
		{"put in a question on Vienna", "Vienna"}, {"throw in CityGlide's funding", "CityGlide"},
		{"a question about Northstar's partners please", "Northstar"}, {"a new question on UrbanHop", "UrbanHop"},
		{"include regulation in Spain", "regulation"}, {"please include Tidewater", "Tidewater"},
		{"adda question on the Madrid tender", "Madrid"}, {"inclde the Madrid tender", "Madrid"},
		{"also research the brand tracker", "brand"}, {"add one on subscription pricing", "subscription"},
		{"Could you add a question on Porto?", "Porto"}, {"I'd like you to add the delivery firms", "delivery"},
		{"expand to Vienna's courier market", "Vienna"}, {"add a sub-question on the risk register", "risk"},
		{"cover the Q4 finance numbers", "finance"}, {"also cover sustainability", "sustainability"},
	},
	"drop": {
		{"drop Voltra", "Voltra"}, {"drop the Voltra question", "Voltra"}, {"remove the question about Voltra", "Voltra"},
		{"skip Voltra", "Voltra"}, {"without Voltra", "Voltra"}, {"no need for the Voltra question", "Voltra"},
		{"delete the Voltra question", "Voltra"}, {"cut Voltra", "Voltra"}, {"leave out Voltra", "Voltra"},
		{"get rid of the Voltra question", "Voltra"}, {"take out Voltra", "Voltra"}, {"omit Voltra", "Voltra"},
		{"don't research Voltra", "Voltra"}, {"forget about Voltra", "Voltra"}, {"we don't need Voltra", "Voltra"},
		{"drop Project Ember", "Ember"}, {"remove Ember", "Ember"}, {"skip the Ember question", "Ember"},
		{"leave out the market size", "market"}, {"drop the market question", "market"}, {"delete the market sizing", "market"},
		{"please drop Voltra", "Voltra"}, {"Voltra: drop it", "Voltra"}, {"remvoe Voltra", "Voltra"},
		{"omitt the Ember question", "Ember"}, {"cut the question on the market", "market"}, {"drop the one about Voltra", "Voltra"},
		{"take the Ember question out", "Ember"}, {"no need for Ember", "Ember"}, {"remove the Voltra sub-question", "Voltra"},
		{"there is no need for the market question", "market"}, {"we can do without Voltra", "Voltra"},
		{"no need to research Ember", "Ember"}, {"I think there's no need for the Voltra question", "Voltra"},
	},
	"focus": {
		{"focus on battery costs", "battery"}, {"focus more on the Madrid tender", "Madrid"}, {"concentrate on Spinlane", "Spinlane"},
		{"prioritize the Lisbon tender", "Lisbon"}, {"prioritise courier churn", "churn"}, {"emphasize fleet insurance", "insurance"},
		{"put the Madrid tender first", "Madrid"}, {"start with CityGlide's funding", "CityGlide"}, {"zoom in on Vienna", "Vienna"},
		{"mainly on subscription pricing", "subscription"}, {"mostly on university campuses", "university"},
		{"center on the risk register", "risk"}, {"lead with charging costs", "charging"}, {"priority on the brand tracker", "brand"},
		{"main focus: UrbanHop", "UrbanHop"}, {"above all Northstar's partners", "Northstar"},
		{"Re-plan: focus on battery costs for Project Ember", "battery"}, {"let's focus on Porto", "Porto"},
		{"I want to focus on delivery firms", "delivery"}, {"please concentrate on regulation in Spain", "regulation"},
		{"focsu on battery costs", "battery"}, {"concentate on Spinlane", "Spinlane"}, {"prioritze the Lisbon tender", "Lisbon"},
		{"focus the plan on Tidewater", "Tidewater"}, {"emphasise sustainability", "sustainability"},
		{"we should focus on the Q4 finance numbers", "finance"}, {"centre on courier pay", "courier"},
		{"Focus on Madrid's permit tender", "Madrid"}, {"can you focus on fleet leasing costs", "fleet"}, {"first of all, Vienna", "Vienna"},
	},
}

// planChangeMisses are the paraphrases the offline model does not understand yet. "no need for"
// and the like are the pack's drop cues (see discoveryReplyMisses). Transposed letters in a
// short word ("remvoe", "focsu") and a typo of a four-letter word ("omitt"), beyond its typo
// allowance, are the pack's synonyms.
var planChangeMisses = map[string]bool{}

// changeUnderstood says whether revising revisedPlan with a paraphrase of intent did what it means.
func changeUnderstood(intent, key string, p Plan) bool {
	qs, n := p.SubQuestions, len(revisedPlan.SubQuestions)
	has := func(q SubQuestion) bool { return strings.Contains(strings.ToLower(q.Question), strings.ToLower(key)) }
	switch intent {
	case "add":
		return len(qs) == n+1 && has(qs[n]) && qs[n].FromUser
	case "focus":
		return len(qs) == n+1 && has(qs[0]) && qs[0].FromUser
	default:
		return len(qs) < n && !slices.ContainsFunc(qs, has)
	}
}

func TestPlanChangeParaphrases(t *testing.T) {
	t.Parallel()
	a := offlineAnalyst()
	checkParaphrases(t, planChangePhrases, []string{"add", "drop", "focus"}, planChangeMisses, func(intent string, p keyed) (bool, string) {
		base := revisedPlan
		base.SubQuestions = slices.Clone(revisedPlan.SubQuestions)
		got, err := a.revise(context.Background(), base, p.text)
		if err != nil {
			t.Fatalf("%q: %v", p.text, err)
		}
		return changeUnderstood(intent, p.key, got), planSummary(&got)
	})
}

// TestDropCue: a drop cue gives the words after it; it overrides what the model heard only when
// it opens the text, and gives nothing without words after it.
func TestDropCue(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		text    string
		unheard bool
		want    string
		ok      bool
	}{
		{"no need for Ember", false, "Ember", true},
		{"Please, no need to research Voltra.", false, "research Voltra", true},
		{"focus on battery costs, no need for the market question", false, "", false},
		{"focus on battery costs, no need for the market question", true, "the market question", true},
		{"no need for", true, "", false},
		{"knowneed for Ember", true, "", false},
	} {
		if got, ok := dropCue(c.text, c.unheard); got != c.want || ok != c.ok {
			t.Errorf("dropCue(%q, %v) = %q, %v; want %q, %v", c.text, c.unheard, got, ok, c.want, c.ok)
		}
	}
}
