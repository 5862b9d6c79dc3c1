package analyst

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/trellis-go/trellis/message"

	"github.com/trellis-go/trellis/apps/analyst/pack"
)

var planSchema = schema("research_plan", "A structured research plan.", `{
  "type": "object",
  "properties": {
    "topic": {"type": "string"},
    "sub_questions": {"type": "array", "minItems": 1, "maxItems": 8, "items": {"type": "object",
      "properties": {"id": {"type": "string"}, "question": {"type": "string"},
        "sources": {"type": "array", "items": {"type": "string", "enum": ["company_db", "web"]}, "minItems": 1}},
      "required": ["question", "sources"]}},
    "output_format": {"type": "string", "enum": ["markdown", "json"]},
    "frameworks": {"type": "array", "items": {"type": "string"}},
    "rationale": {"type": "string"}
  },
  "required": ["topic", "sub_questions", "output_format", "rationale"]
}`)

// planner writes the research plan: the strong model with structured output, or the rules.
func (a *Analyst) planner(ctx context.Context, s State) (State, error) {
	user, _ := who(ctx, s)
	mem, err := a.mem.LoadAll(ctx, user)
	if err != nil {
		return State{}, err
	}
	var p Plan
	if a.strongRule {
		if p, err = a.planByRule(ctx, s.Query, mem, s.RetrievedContext, s.ResearchPlan, s.PlanFeedback, s.PlanEdited); err != nil {
			return State{}, err
		}
	} else {
		data := map[string]any{"Previous": "", "Edited": "", "Feedback": s.PlanFeedback}
		if s.ResearchPlan != nil {
			data["Previous"] = toJSON(s.ResearchPlan)
		}
		if s.PlanEdited != nil {
			data["Edited"] = toJSON(s.PlanEdited)
		}
		sys := prompt("planner", mem, data)
		if err := structured(ctx, a.strong, planSchema, sys, "Request: "+s.Query+"\n\nRetrieved context:\n"+chunkList(s.RetrievedContext, 8), &p); err != nil {
			return State{}, fmt.Errorf("analyst: planning: %w", err)
		}
		normalizePlan(&p, mem)
	}
	return State{ResearchPlan: &p, PlanVersion: s.PlanVersion + 1, CurrentPhase: "planning",
		Messages: []message.Message{message.Assistant(sentence("plan_ready", map[string]any{"Version": s.PlanVersion + 1, "Count": len(p.SubQuestions)}))}}, nil
}

func chunkList(cs []Chunk, n int) string {
	var b strings.Builder
	for i, c := range cs {
		if i == n {
			break
		}
		fmt.Fprintf(&b, "- [%s, %.2f] %s\n", c.Title(), c.Score, clip(c.Content, 300))
	}
	return b.String()
}

func normalizePlan(p *Plan, mem Mem) {
	seen := map[string]bool{}
	for i := range p.SubQuestions {
		q := &p.SubQuestions[i]
		if q.ID == "" || seen[q.ID] {
			q.ID = fmt.Sprintf("q%d", i+1)
		}
		seen[q.ID] = true
		if len(q.Sources) == 0 {
			q.Sources = []string{"company_db", "web"}
		}
	}
	if p.OutputFormat == "" {
		p.OutputFormat = orDefault(mem.Typed(NSPreferences, "format", "report"), "markdown")
	}
	if len(p.Frameworks) == 0 {
		p.Frameworks = []string{orDefault(mem.Typed(NSPreferences, "framework", "preferred"), "SWOT")}
	}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// planByRule is the deterministic planner of the offline model: sub-questions from the
// competitors, projects and themes named in the request, revised by the user's feedback.
func (a *Analyst) planByRule(ctx context.Context, query string, mem Mem, ctxChunks []Chunk, prev *Plan, feedback string, edited *Plan) (Plan, error) {
	if edited != nil {
		p := *edited
		p.SubQuestions = append([]SubQuestion(nil), edited.SubQuestions...)
		normalizePlan(&p, mem)
		if note := sentence("plan_edited", nil); !strings.Contains(p.Rationale, note) {
			p.Rationale = strings.TrimSpace(p.Rationale + " " + note)
		}
		return p, nil
	}
	var p Plan
	if prev != nil && feedback != "" {
		p = *prev
		p.SubQuestions = append([]SubQuestion(nil), prev.SubQuestions...)
	} else {
		p = basePlan(query, mem, ctxChunks)
	}
	if feedback != "" {
		var err error
		if p, err = a.revise(ctx, p, feedback); err != nil {
			return Plan{}, err
		}
	}
	normalizePlan(&p, mem)
	return p, nil
}

func basePlan(query string, mem Mem, ctxChunks []Chunk) Plan {
	ents := entitiesOf(query)
	scope := ""
	if ents.Theme == "" {
		// A request that names no theme is planned within the theme of a standing note
		// ("keep in mind that I only care about B2B").
		for _, n := range mem.standingNotes() {
			if t := entitiesOf(n).Theme; t != "" {
				ents.Theme, scope = t, n
				break
			}
		}
	}
	topic := strings.TrimRight(clip(query, 90), "?.!")
	subject := sentence("plan_default_subject", nil)
	if ents.Theme != "" {
		subject = ents.Theme
	}
	var qs []SubQuestion
	named := ents.Competitors
	// The questions are written around what the request names (its competitors and theme),
	// never around the user's sentence itself.
	own := subject
	if ents.Theme == "" && len(named) > 0 {
		own = joinAnd(named)
	} else if ents.Theme == "" {
		own = sentence("plan_default_own", nil)
	}
	qs = append(qs, SubQuestion{Question: sentence("plan_own", map[string]any{"Subject": own}), Sources: []string{"company_db"}})
	for _, c := range named {
		if len(qs) >= 3 {
			break
		}
		qs = append(qs, SubQuestion{Question: sentence("plan_competitor", map[string]any{"Competitor": c, "Subject": subject}), Sources: []string{"web", "company_db"}})
	}
	for _, name := range ents.Projects {
		qs = append(qs, SubQuestion{Question: sentence("plan_project", map[string]any{"Project": name, "Subject": subject}), Sources: []string{"company_db", "web"}})
	}
	qs = append(qs, SubQuestion{Question: sentence("plan_assumptions", map[string]any{"Subject": subject}), Sources: []string{"web", "company_db"}})
	if mem.Typed(NSPreferences, "style", "verbosity") == "detailed" || len(named) == 0 {
		qs = append(qs, SubQuestion{Question: sentence("plan_market", map[string]any{"Subject": subject}), Sources: []string{"company_db", "web"}})
	}
	if len(qs) > 6 {
		qs = qs[:6]
	}
	var titles []string
	for i, c := range ctxChunks {
		if i == 3 {
			break
		}
		titles = append(titles, c.Title())
	}
	rationale := sentence("plan_rationale", map[string]any{"Titles": strings.Join(titles, "; "),
		"Project": mem.Typed(NSUserProfile, "project", "active"), "Scope": scope})
	return Plan{Topic: topic, SubQuestions: qs, Rationale: rationale,
		OutputFormat: orDefault(mem.Typed(NSPreferences, "format", "report"), "markdown"),
		Frameworks:   []string{orDefault(mem.Typed(NSPreferences, "framework", "preferred"), "SWOT")}}
}

var changeSchema = schema("plan_change", "How one sentence of feedback changes a research plan.", `{
  "type": "object",
  "properties": {"change": {"type": "string", "enum": ["add", "drop", "focus", "other"], "default": "other"}},
  "required": ["change"]
}`)

// revise applies feedback, one sentence at a time: the strong role (the offline model, with the
// pack's "change" choices) says whether it adds a sub-question, drops the sub-questions it names
// or puts one first; the pack's words for that change are taken off to leave its subject. Any
// other feedback becomes a sub-question of its own.
func (a *Analyst) revise(ctx context.Context, p Plan, feedback string) (Plan, error) {
	applied := false
	sys := prompt("plan_change", nil, nil)
	prev := ""
	for _, part := range feedbackParts.Split(feedback, -1) {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		var out struct {
			Change string `json:"change"`
		}
		if err := structured(ctx, a.strong, changeSchema, sys, part, &out); err != nil {
			return Plan{}, fmt.Errorf("analyst: reading the feedback on the plan: %w", err)
		}
		if out.Change == "other" && prev != "" && len(entitiesOf(part).names()) > 0 {
			out.Change = prev // the next item of a list the last clause began ("add X, Y, and Z")
		}
		subject := choiceSubject("change", out.Change, part)
		if cued, ok := dropCue(part, out.Change == "other"); ok {
			out.Change, subject = "drop", cued // "no need for X", "no need to research X"
		}
		if out.Change != "drop" {
			subject = resolveSubject(subject, part, feedback)
		}
		if out.Change == "other" || len(contentWords(subject)) == 0 {
			prev = ""
			continue
		}
		applied, prev = true, out.Change
		switch out.Change {
		case "drop":
			p.SubQuestions = dropNamed(p.SubQuestions, contentWords(subject))
		case "focus":
			q := SubQuestion{ID: nextQuestionID(p.SubQuestions), Question: questionOf(subject), Sources: []string{"company_db", "web"}, FromUser: true}
			p.SubQuestions = append([]SubQuestion{q}, p.SubQuestions...)
		case "add":
			p.SubQuestions = append(p.SubQuestions, SubQuestion{ID: nextQuestionID(p.SubQuestions), Question: questionOf(subject), Sources: []string{"company_db", "web"}, FromUser: true})
		}
	}
	if !applied && len(preferencesIn(feedback)) == 0 {
		// Feedback the model does not read as a change is a sub-question of its own, without the
		// words of an addition the model missed ("we also need ...").
		p.SubQuestions = append(p.SubQuestions, SubQuestion{ID: nextQuestionID(p.SubQuestions), Question: questionOf(choiceSubject("change", "add", feedback)), Sources: []string{"company_db", "web"}, FromUser: true})
	}
	if pr := preferencesIn(feedback); len(pr) > 0 {
		for _, x := range pr {
			if x[0] == "framework" {
				p.Frameworks = []string{x[2]}
			}
			if x[0] == "format" {
				p.OutputFormat = x[2]
			}
		}
	}
	p.Rationale = strings.TrimSpace(p.Rationale + " " + sentence("plan_revised", map[string]any{"Feedback": clip(feedback, 200)}))
	return p, nil
}

// nextQuestionID is an ID no sub-question of qs has: one past the highest "q<n>" among them (the
// count would give a dropped question's successor the ID of one still in the plan).
func nextQuestionID(qs []SubQuestion) string {
	n := len(qs)
	for _, q := range qs {
		var k int
		if _, err := fmt.Sscanf(q.ID, "q%d", &k); err == nil {
			n = max(n, k)
		}
	}
	return fmt.Sprintf("q%d", n+1)
}

// tailFillerRe is one of the pack's tail fillers at the end of a subject ("... in too").
var tailFillerRe = regexp.MustCompile(`(?i)[\s,]+` + pack.Alternation(words.TailFillers) + `[\s,.!]*$`)

// referenceWords are the pack's words that point back at something named before ("them").
var referenceWords = setOf(words.References)

// resolveSubject is the subject of an addition without the pack's tail fillers, and, when what is
// left only points back ("include them too"), what the clause (or else the whole feedback)
// names from the corpus.
func resolveSubject(subject, part, feedback string) string {
	for {
		trimmed := tailFillerRe.ReplaceAllString(" "+subject, "")
		if trimmed = strings.TrimSpace(trimmed); trimmed == subject || trimmed == "" {
			break
		}
		subject = trimmed
	}
	for _, w := range strings.FieldsFunc(strings.ToLower(subject), notWordRune) {
		if !referenceWords[w] && !stopwords[w] {
			return subject
		}
	}
	for _, text := range []string{part, feedback} {
		if named := entitiesOf(text).subject(); named != "" {
			return named
		}
	}
	return subject
}

// feedbackParts splits feedback into its sentences, lines and steps (the pack's step joiners,
// "and then").
var feedbackParts = regexp.MustCompile(`(?i)[.;\n]+|\b` + pack.Alternation(words.StepJoiners) + `\b`)

// dropCueRe is a phrase that marks what follows it as not wanted (the pack's drop cues, "no need
// for"), what precedes it and what follows it.
var dropCueRe = regexp.MustCompile(`(?i)^(.*?)(?:^|[^\pL\pN'])` + pack.Alternation(words.DropCues) + `(?:$|[^\pL\pN'])\s*(.*)$`)

// openersRe is one of the pack's lead openers ("please", "i think").
var openersRe = regexp.MustCompile(`(?i)\b` + pack.Alternation(words.LeadOpeners) + `\b`)

// dropCue is what text says is not wanted: the words after the first of the pack's drop cues it
// holds. A cue overrides what the model heard when it opens the text (nothing but stopwords and
// the pack's lead openers before it: "no need to research X" is no addition) or when the model heard nothing else
// (unheard); ok is false without such a cue or without words after it.
func dropCue(text string, unheard bool) (string, bool) {
	m := dropCueRe.FindStringSubmatch(text)
	if m == nil || (!unheard && len(contentWords(openersRe.ReplaceAllString(m[1], " "))) > 0) {
		return "", false
	}
	after := strings.Trim(m[2], " ,;:.!?")
	return after, after != ""
}

// dropNamed removes the sub-questions that share the most of words (at least one); it keeps them
// all when none does, or when every one would go.
func dropNamed(qs []SubQuestion, words []string) []SubQuestion {
	shared := func(q SubQuestion) int {
		n := 0
		have := setOf(contentWords(q.Question))
		for _, w := range words {
			if have[w] {
				n++
			}
		}
		return n
	}
	most := 0
	for _, q := range qs {
		most = max(most, shared(q))
	}
	if most == 0 {
		return qs
	}
	var kept []SubQuestion
	for _, q := range qs {
		if shared(q) < most {
			kept = append(kept, q)
		}
	}
	if len(kept) == 0 {
		return qs
	}
	return kept
}

// words is the vocabulary of the analyst's rules (the pack's words.json).
var words = pack.Vocabulary

// leadRe is the instruction a direction starts with ("please look into", "research", "can you
// check", "I think we should find out": the pack's lead openers and instructions), dropped when
// the direction becomes a question.
var leadRe = regexp.MustCompile(`(?i)^(?:` + pack.Alternation(words.LeadOpeners) + `[\s,]+)*` + pack.Alternation(words.LeadInstructions) + `\s+`)

// whetherRe reads an indirect yes/no question ("whether the rival is hiring sales staff"): the
// subject, the auxiliary verb and the rest.
var whetherRe = regexp.MustCompile(`(?i)^` + pack.Alternation(words.Whether) + `\s+(.+?)\s+(` + pack.Alternation(words.Auxiliaries) + `)\s+(.+)$`)

// clauseRe is a direction that is still a clause after its instruction words ("we are losing
// share", "that prices rise"): no noun phrase to ask about.
var clauseRe = regexp.MustCompile(`(?i)^` + pack.Alternation(words.ClauseStarts) + `\b`)

// questionOf writes a user's direction as a research question: a question stays as it is; an
// instruction becomes a question about its subject ("look into X" → "What do we know about
// X?", "check whether X is Y" → "Is X Y?"); a clause names its subject by the entities it
// names. The user's sentence is never put into a template whole.
func questionOf(s string) string {
	s = strings.TrimSpace(strings.TrimRight(s, ".!"))
	if s == "" {
		return s
	}
	if strings.HasSuffix(s, "?") {
		return strings.ToUpper(s[:1]) + s[1:]
	}
	s = strings.TrimSpace(leadRe.ReplaceAllString(s, ""))
	if len(contentWords(s)) == 0 || slices.ContainsFunc(words.LeadOpeners, func(o string) bool { return strings.EqualFold(s, o) }) {
		return sentence("question_else", nil)
	}
	if m := whetherRe.FindStringSubmatch(s); m != nil {
		return sentence("question_whether", map[string]any{"Aux": strings.ToLower(m[2]), "Subject": lowerCommon(m[1]), "Rest": m[3]})
	}
	if clauseRe.MatchString(s) || len(strings.Fields(s)) > 12 {
		if subj := entitiesOf(s).subject(); subj != "" {
			return sentence("question_about", map[string]any{"Subject": subj})
		}
		return sentence("question_else", nil)
	}
	return sentence("question_about", map[string]any{"Subject": lowerCommon(s)})
}

// lowerCommon lowers the first letter of a phrase that starts with a common word ("The ..."
// reads "the ..."); names keep their capital.
func lowerCommon(s string) string {
	if first, _, _ := strings.Cut(s, " "); s != "" && len(contentWords(first)) == 0 {
		return strings.ToLower(s[:1]) + s[1:]
	}
	return s
}

// planMarkdown renders a plan for the plan gate.
func planMarkdown(p *Plan, version int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n## %s\n\n", sentence("plan_title", map[string]any{"Version": version, "Topic": p.Topic}), sentence("plan_questions_heading", nil))
	for _, q := range p.SubQuestions {
		fmt.Fprintf(&b, "%s\n", sentence("plan_question", map[string]any{"ID": q.ID, "Question": q.Question, "Sources": strings.Join(q.Sources, ", ")}))
	}
	fmt.Fprintf(&b, "\n%s  \n%s\n\n## %s\n\n%s\n\n", sentence("plan_format", map[string]any{"Format": p.OutputFormat}),
		sentence("plan_frameworks", map[string]any{"Frameworks": strings.Join(p.Frameworks, ", ")}), sentence("plan_rationale_heading", nil), p.Rationale)
	fmt.Fprintf(&b, "_%s_", sentence("plan_hint", nil))
	return b.String()
}
