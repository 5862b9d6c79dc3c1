// Package pack is vesper's domain pack for the offline model: the words its users write for
// report usage (views, the most popular reports), hourly price shapes and project milestones and
// risks, and each domain's example phrasings and cue words. The server gives it to the offline
// model of every role vesper uses (server.App.Pack).
//
// words.json holds the rest of vesper's vocabulary, which its own rules read rather than the
// offline model: the words that say a question is about usage, offtake or hourly prices, stage
// and milestone names, report aliases, the verbs of a request to change data, and the built-in
// domains' descriptions, example phrasings and the sentences the rules write ([Words]).
package pack

import (
	_ "embed"
	"fmt"

	"github.com/trellis-go/trellis/model/offline"
)

//go:embed pack.json
var data []byte

// Pack is vesper's pack, read from pack.json.
var Pack = offline.MustParsePack(data)

//go:embed words.json
var wordsData []byte

// Words is the vocabulary vesper's rules read (words.json), lower case. A deployment with other
// stage names, milestones or report names changes the file, not the rules.
type Words struct {
	// Usage say that a question is about report usage, so a report's name in it is a filter.
	Usage []string `json:"usage"`
	// Offtake say that a question is about a PPA's offtaker.
	Offtake []string `json:"offtake"`
	// ProjectEnds end a project's name ("Foobar Wind").
	ProjectEnds []string `json:"project_ends"`
	// Hour ask for prices by hour of day, or for peak and off-peak.
	Hour []string `json:"hour"`
	// WriteVerbs begin a request to change data, which the read-only tools refuse.
	WriteVerbs []string `json:"write_verbs"`
	// Viewer ask how many people, or who, rather than how many views.
	Viewer []string `json:"viewer"`
	// ByViewers ask for reports ranked by their viewers.
	ByViewers []string `json:"by_viewers"`
	// MilestoneDates ask for a project's dates without naming one milestone.
	MilestoneDates []string `json:"milestone_dates"`
	// StageNumbers are the number words and Roman numerals people write after "stage".
	StageNumbers map[string]string `json:"stage_numbers"`
	// StagePhrases name a stage without its number ("under construction": 5).
	StagePhrases map[string]int `json:"stage_phrases"`
	// Milestones map what people call a milestone to the portfolio snapshot's column.
	Milestones []Milestone `json:"milestones"`
	// KeyMilestones are the dates listed when a question asks for milestones in general.
	KeyMilestones []string `json:"key_milestones"`
	// ReportAliases map short names people use for reports to the reports' names.
	ReportAliases map[string]string `json:"report_aliases"`
	// Cues are the named phrase lists vesper's rules look for in a lower-cased question
	// (as substrings: "chang" finds "changed" and "changes"). The rules use the names of
	// [CueNames]; each must be given.
	Cues map[string][]string `json:"cues"`
	// StatusColors map the words of a project's health to its status colour, the first
	// that matches winning.
	StatusColors []StatusColor `json:"status_colors"`
	// RiskLevels map a risk level as written to the warehouse's ("high": "High").
	RiskLevels map[string]string `json:"risk_levels"`
	// RiskLevelBefore follow a level ("high risk", "high priority risk"), RiskLevelAfter
	// precede it ("risk level is high").
	RiskLevelBefore []string `json:"risk_level_before"`
	RiskLevelAfter  []string `json:"risk_level_after"`
	// NameStopWords begin a capitalised run of words without being part of a project's name
	// ("Show", "What", "Power BI").
	NameStopWords []string `json:"name_stop_words"`
	// Domains are the built-in domains' texts by agent name (the graph node, e.g.
	// "dayahead_agent"): what the classifier routes by and the greeting lists.
	Domains map[string]DomainText `json:"domains"`
	// ToolVerbs begin a tool's name without saying what it looks up ("get" of
	// "get_project_health"): a tool is named to a person without them.
	ToolVerbs []string `json:"tool_verbs"`
	// Texts are the sentences vesper's rules write that belong to no tool's answer.
	Texts Texts `json:"texts"`
}

// DomainText is one domain's description and example phrasings, both required, and how the
// offline router weighs the filters a request names for it.
type DomainText struct {
	Description string   `json:"description"`
	Examples    []string `json:"examples"`
	// Boosts change the domain's score by the filters extracted from a request.
	Boosts []Boost `json:"boosts,omitempty"`
	// Fallback names filters that send a question (one ending in "?") to this domain when no
	// domain scores: a vendor or a hub-zone alone is about prices.
	Fallback []string `json:"fallback,omitempty"`
}

// Boost is one rule of the offline router's score: when any filter of When (the JSON names of
// vesper's Filters, e.g. "project_name") holds at least AtLeast values (1 when 0; a list holds
// its length, any other value one) and no filter of Unless holds a value, the domain's score
// gains Add, or, with Veto, is 0 whatever else it gained.
type Boost struct {
	When    []string `json:"when"`
	AtLeast int      `json:"at_least,omitempty"`
	Unless  []string `json:"unless,omitempty"`
	Add     int      `json:"add,omitempty"`
	Veto    bool     `json:"veto,omitempty"`
}

// Filters returns every filter name the boost reads.
func (b Boost) Filters() []string { return append(append([]string{}, b.When...), b.Unless...) }

// Texts are the sentences vesper's offline rules write, each required. A placeholder in braces
// ("{description}") is filled by the rule that writes the text.
type Texts struct {
	// PriceClarify asks which market and hub-zone a price question means, when it names none.
	PriceClarify string `json:"price_clarify"`
	// Greeting opens the answer to a request no domain takes; GreetingDomain follows it once
	// per domain, with {description} and {example} (the domain's first example).
	Greeting       string `json:"greeting"`
	GreetingDomain string `json:"greeting_domain"`
	// WriteRefusal answers a request to change data, which the read-only tools refuse.
	WriteRefusal string `json:"write_refusal"`
	// NotAgentTool answers a call of a tool that is not the agent's; ToolDisabled one switched
	// off for the tenant ({tool}: the tool as a person reads it); NoAccess one the caller may not
	// run ({tool}, {permission}); AgentFailed an agent that failed ({agent}, {error}).
	NotAgentTool string `json:"not_agent_tool"`
	ToolDisabled string `json:"tool_disabled"`
	NoAccess     string `json:"no_access"`
	AgentFailed  string `json:"agent_failed"`
	// LookingUp names a tool for a person ({what}: its name as words, without a tool verb);
	// ToolNames name the tools that read otherwise ("general_sql_query": "Advanced SQL").
	LookingUp string            `json:"looking_up"`
	ToolNames map[string]string `json:"tool_names,omitempty"`
	// TurnFailed tells the chat a question could not be answered ({error}); EarlierTurnFailed
	// the same of the question before it, when finishing that one failed.
	TurnFailed        string `json:"turn_failed"`
	EarlierTurnFailed string `json:"earlier_turn_failed"`
}

// StatusColor is one status colour and the phrases that name it.
type StatusColor struct {
	Status  string   `json:"status"`
	Phrases []string `json:"phrases"`
}

// CueNames are the cue lists vesper's rules read (Words.Cues).
var CueNames = []string{"compare", "list_curves", "curve_files", "trend", "weekly", "last_week", "changed", "risk",
	"at_risk", "offtake_terms", "health", "milestone_asked", "budget", "task", "sponsor", "buyer_link", "report", "view",
	"asks_date", "project", "sql_named", "cod", "milestone", "milestone_moved", "top_n", "stage", "follow_up", "polite_opening"}

// Milestone is one milestone column and the phrases that name it.
type Milestone struct {
	Milestone string   `json:"milestone"`
	Phrases   []string `json:"phrases"`
}

// Vocabulary is vesper's vocabulary, read from words.json.
var Vocabulary = MustRead("vesper pack: words.json", wordsData, checkWords)

// ParseWords reads a vocabulary file; every list must be given, and no unknown field.
func ParseWords(b []byte) (*Words, error) { return Read("vesper pack: words.json", b, checkWords) }

func checkWords(w *Words) error {
	for _, name := range CueNames {
		if len(w.Cues[name]) == 0 {
			return fmt.Errorf("cue list %q is missing or empty; the rules read every name of pack.CueNames", name)
		}
	}
	for name, d := range w.Domains {
		if d.Description == "" || len(d.Examples) == 0 {
			return fmt.Errorf("domain %q needs a description and at least one example", name)
		}
		for i, b := range d.Boosts {
			if len(b.When) == 0 || b.Add == 0 && !b.Veto || b.Add != 0 && b.Veto || b.AtLeast < 0 {
				return fmt.Errorf("domain %q boost %d: give \"when\" (filter names) and either \"add\" (a score, not 0) or \"veto\": true; \"at_least\" is 1 or more when given", name, i)
			}
		}
	}
	for field, text := range map[string]string{"price_clarify": w.Texts.PriceClarify, "greeting": w.Texts.Greeting,
		"greeting_domain": w.Texts.GreetingDomain, "write_refusal": w.Texts.WriteRefusal, "not_agent_tool": w.Texts.NotAgentTool,
		"tool_disabled": w.Texts.ToolDisabled, "no_access": w.Texts.NoAccess, "agent_failed": w.Texts.AgentFailed,
		"looking_up": w.Texts.LookingUp, "turn_failed": w.Texts.TurnFailed, "earlier_turn_failed": w.Texts.EarlierTurnFailed} {
		if text == "" {
			return fmt.Errorf("texts.%s is missing or empty; give the sentence the rules write", field)
		}
	}
	return nil
}
