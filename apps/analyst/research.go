package analyst

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/apps/analyst/corpus"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
)

// ResearchState is the research subgraph's state.
type ResearchState struct {
	UserID   string             `json:"user_id"`
	Tenant   string             `json:"tenant"`
	Query    string             `json:"query"`
	Plan     *Plan              `json:"plan,omitempty"`
	Context  []Chunk            `json:"context,omitempty"`
	Tasks    []Task             `json:"tasks,omitempty"` // to dispatch now
	Task     Task               `json:"task,omitempty"`  // a task agent's payload
	Returned []Finding          `json:"returned,omitempty" reduce:"append"`
	Findings map[string]Finding `json:"findings,omitempty" reduce:"merge"`
	Earlier  map[string]Finding `json:"earlier,omitempty"` // findings of earlier rounds
	Round    int                `json:"round,omitempty"`
	Ignored  []string           `json:"ignored,omitempty"`
	// Prev are the discoveries shown so far, whose IDs the new round keeps.
	Prev []Discovery `json:"prev,omitempty"`

	Summary        string          `json:"summary,omitempty"`
	Discoveries    []Discovery     `json:"discoveries,omitempty"`
	Contradictions []Contradiction `json:"contradictions,omitempty"`
	FollowUps      []string        `json:"follow_ups,omitempty"`
}

func (a *Analyst) researchIn(s State) ResearchState {
	tasks := s.ResearchTasks
	if len(tasks) == 0 && s.ResearchPlan != nil {
		for _, q := range s.ResearchPlan.SubQuestions {
			tasks = append(tasks, Task{ID: q.ID, Question: q.Question, Sources: q.Sources, FromUser: q.FromUser})
		}
	}
	return ResearchState{UserID: s.UserID, Query: s.Query, Plan: s.ResearchPlan, Context: s.RetrievedContext,
		Tasks: tasks, Earlier: s.ResearchFindings, Round: s.ResearchRounds + 1, Ignored: s.IgnoredFindings, Prev: s.Discoveries}
}

func (a *Analyst) researchOut(r ResearchState) State {
	all := map[string]Finding{}
	for k, v := range r.Earlier {
		all[k] = v
	}
	for k, v := range r.Findings {
		all[k] = v
	}
	return State{ResearchFindings: all, SupervisorSummary: r.Summary, Discoveries: r.Discoveries, Contradictions: r.Contradictions,
		FollowUpQuestions: r.FollowUps, ResearchRounds: r.Round, CurrentPhase: "research"}
}

// researchSupervisor prepares a round: it gives each task the context passages relevant to it,
// then runs as a tool-calling agent (rag_tool, web_search_tool, memory_search_tool,
// write_memory_tool, Question, Done): it asks the user, through an inbox interrupt, what a vague
// sub-question should answer (the answer becomes the question), and looks up the user's
// preferences on the topic, which the task agents get as guidance.
func (a *Analyst) researchSupervisor(ctx context.Context, s ResearchState) (ResearchState, error) {
	if s.Tenant == "" {
		_, s.Tenant = who(ctx, State{UserID: s.UserID})
	}
	tasks := make([]Task, len(s.Tasks))
	for i, t := range s.Tasks {
		terms := contentWords(t.Question)
		for _, c := range s.Context {
			if share(terms, c.Content) >= 0.3 {
				t.Context = append(t.Context, c)
			}
		}
		if t.Attempt == 0 {
			t.Attempt = 1
		}
		tasks[i] = t
	}
	if len(tasks) == 0 {
		return ResearchState{Tasks: tasks, Tenant: s.Tenant}, nil
	}
	topic := s.Query
	if s.Plan != nil && s.Plan.Topic != "" {
		topic = s.Plan.Topic
	}
	mem, err := a.mem.LoadAll(ctx, s.UserID)
	if err != nil {
		return ResearchState{}, err
	}
	var given strings.Builder
	fmt.Fprintf(&given, "%s\n", sentence("research_given", map[string]any{"Round": s.Round, "Topic": topic}))
	for _, t := range tasks {
		fmt.Fprintf(&given, "- %s\n", sentence("research_given_task", map[string]any{"ID": t.ID, "Question": t.Question, "Sources": strings.Join(t.Sources, ", ")}))
	}
	brief, asked := researchBrief(topic, tasks)
	res, err := a.supervise(ctx, s.UserID, prompt("supervisor_research", mem, map[string]any{"Given": given.String()}),
		brief, researchSupervisorTools)
	if err != nil {
		return ResearchState{}, err
	}
	if asked >= 0 && len(res.Answers) > 0 {
		if ans := strings.TrimSpace(res.Answers[0]); ans != "" && ans != noAnswer {
			if vague(ans) {
				// A short answer narrows the question it answers: "pricing" and "Berlin" ask
				// what we know about pricing, in Berlin.
				if subj := subjectOf(tasks[asked].Question); subj != "" {
					ans = sentence("subject_specifically", map[string]any{"Subject": strings.TrimRight(subj, "?.! "), "Detail": strings.TrimRight(ans, "?.! ")})
				}
				tasks[asked].Question = sentence("question_about", map[string]any{"Subject": strings.TrimRight(ans, "?.! ")})
			} else {
				tasks[asked].Question = questionOf(ans)
			}
		}
	}
	var guidance []string
	for _, r := range res.results("memory_search_tool") {
		if !strings.HasPrefix(r, "Nothing in ") {
			guidance = append(guidance, r)
		}
	}
	if len(guidance) > 0 {
		for i := range tasks {
			tasks[i].Guidance = clip(strings.Join(guidance, "\n"), 600)
		}
	}
	return ResearchState{Tasks: tasks, Tenant: s.Tenant}, nil
}

const ragMinScore = 0.25

// taskAgent answers one sub-question from the knowledge base and the web. A first attempt
// searches the task's first source only; one sent back with a critique searches every source
// the task lists, more widely.
func (a *Analyst) taskAgent(ctx context.Context, s ResearchState) (ResearchState, error) {
	t := s.Task
	if !a.strongRule {
		f, err := a.taskWithModel(ctx, t)
		if err != nil {
			return ResearchState{}, err
		}
		return ResearchState{Returned: []Finding{f}}, nil
	}
	f, err := a.taskByRule(ctx, t)
	if err != nil {
		return ResearchState{}, err
	}
	return ResearchState{Returned: []Finding{f}}, nil
}

// taskByRule runs the task agent on the offline model as a tool-calling agent with rag_tool and
// web_search_tool: its brief asks for the task's first source on a first attempt (three
// results), for every source it lists when sent back (five each, in parallel), and the offline
// model calls those tools from their schemas; the answer quotes the best sentences of what they
// returned.
func (a *Analyst) taskByRule(ctx context.Context, t Task) (Finding, error) {
	kinds, k := t.Sources, 5
	if t.Attempt <= 1 && len(kinds) > 1 {
		kinds, k = kinds[:1], 3
	}
	var steps []string
	quoted := quote(stepless(t.Question))
	for _, kind := range kinds {
		data := map[string]any{"K": k, "Question": quoted}
		if kind == "web" {
			steps = append(steps, sentence("task_step_web", data))
		} else {
			steps = append(steps, sentence("task_step_kb", data))
		}
	}
	brief := sentence("task_brief", map[string]any{"Steps": steps})
	brief = strings.ToUpper(brief[:1]) + brief[1:]
	res, err := a.toolLoop(ctx, a.strong, prompt("task_brief", nil, nil), brief, []string{"rag_tool", "web_search_tool"})
	if err != nil {
		return Finding{}, err
	}
	q := rewrite(t.Question, a.now())
	var sources []Source
	for _, c := range res.Calls {
		if c.IsError {
			return Finding{}, fmt.Errorf("analyst: %s: %s", c.Tool, c.Result)
		}
		sources = append(sources, a.sourcesOf(c.Tool, c.Result, q)...)
	}
	f := Finding{TaskID: t.ID, Question: t.Question, Sources: rankSources(sources), Attempts: t.Attempt}
	if t.Critique != "" {
		f.Critiques = []string{t.Critique}
	}
	composeByRule(&f)
	return f, nil
}

// distinctSources keeps the first source of each document or page: a document found by two
// searches, or a saved report found through several of its chunks, is cited once.
func distinctSources(ss []Source) []Source {
	seen := map[string]bool{}
	var out []Source
	for _, s := range ss {
		k := s.Ref
		if k == "" {
			k = s.Title
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, s)
	}
	return out
}

// stepless keeps a question from reading as a step of the brief to the offline model: each of
// the pack's step words ("then") is written as the word it gives in its place ("next").
func stepless(q string) string {
	ws := strings.Fields(q)
	for i, w := range ws {
		if to, ok := words.StepWords[strings.ToLower(strings.Trim(w, ",.;:"))]; ok {
			ws[i] = to
		}
	}
	return strings.Join(ws, " ")
}

// sourcesOf turns a rag_tool or web_search_tool result (its JSON) into sources, each with the
// sentence that best answers q and a score that ranks the knowledge base's passages and the
// web's pages together: q's relevance, the same for both, and a tenth of the engine's own score.
func (a *Analyst) sourcesOf(tool, result string, q searchQuery) []Source {
	var out []Source
	switch tool {
	case "rag_tool":
		var cs []Chunk
		if json.Unmarshal([]byte(result), &cs) != nil {
			return nil
		}
		for _, c := range cs {
			if c.Score < ragMinScore {
				continue
			}
			kind := "company_db"
			if c.Metadata["document_type"] == "report" {
				kind = "report"
			}
			ref, _ := c.Metadata["source"].(string)
			date, _ := c.Metadata["date"].(string)
			out = append(out, Source{Kind: kind, Title: c.Title(), Ref: ref, Date: date, Score: joint(q, c.Title(), c.Content, date, c.Score), Quote: bestSentence(q, c.Content)})
		}
	case "web_search_tool":
		var rs []WebResult
		if json.Unmarshal([]byte(result), &rs) != nil {
			return nil
		}
		for _, r := range rs {
			date := a.webDate(r.URL)
			out = append(out, Source{Kind: "web", Title: r.Title, Ref: r.URL, Date: date, Score: joint(q, r.Title, r.Content, date, r.Score), Quote: bestSentence(q, r.Content)})
		}
	}
	return out
}

// joint is a source's score in the joint ranking of knowledge base and web results.
func joint(q searchQuery, title, text, date string, engine float64) float64 {
	sc := q.relevance(title, text, date) + 0.1*min(max(engine, 0), 1)
	return float64(int(sc*1000)) / 1000
}

// rankSources orders a finding's sources, the knowledge base's and the web's together, by their
// joint score, keeps one source per document or page, and at most one saved report: a report is
// one source among others.
func rankSources(ss []Source) []Source {
	ss = append([]Source(nil), ss...)
	sort.SliceStable(ss, func(i, j int) bool { return ss[i].Score > ss[j].Score })
	var out []Source
	reports := 0
	for _, s := range distinctSources(ss) {
		if s.Kind == "report" {
			if reports++; reports > 1 {
				continue
			}
		}
		out = append(out, s)
	}
	return out
}

// webDate is the publication date the search engine gave a URL, remembered from its results.
func (a *Analyst) webDate(url string) string {
	v, _ := a.dates.Load(url)
	s, _ := v.(string)
	return s
}

func bestSentence(q searchQuery, text string) string {
	best, bs := "", -1.0
	for _, s := range sentences(text) {
		if sc := q.shareOf(s) + q.namedShare(s); sc > bs { // a sentence on what the question names first
			best, bs = s, sc
		}
	}
	return clip(best, 280)
}

func composeByRule(f *Finding) {
	if len(f.Sources) == 0 {
		f.Answer = sentence("finding_none", nil)
		f.Confidence = 0
		return
	}
	var parts []string
	seen := map[string]bool{}
	for _, s := range f.Sources {
		if s.Quote == "" || seen[s.Quote] {
			continue
		}
		seen[s.Quote] = true
		if len(f.KeyQuotes) < 3 {
			f.KeyQuotes = append(f.KeyQuotes, s.Quote)
		}
		if len(parts) < 3 {
			parts = append(parts, fmt.Sprintf("%s (%s)", strings.TrimSuffix(s.Quote, "."), s.Title))
		}
	}
	f.Answer = strings.Join(parts, ". ") + "."
	c := 0.2 + 0.15*float64(len(f.Sources))
	kinds := map[string]bool{}
	for _, s := range f.Sources {
		kinds[s.Kind] = true
	}
	if len(kinds) > 1 {
		c += 0.15
	}
	if c > 0.95 {
		c = 0.95
	}
	f.Confidence = float64(int(c*100)) / 100
}

var findingSchema = schema("finding", "A task agent's answer to its sub-question.", `{
  "type": "object",
  "properties": {"answer": {"type": "string"}, "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    "key_quotes": {"type": "array", "items": {"type": "string"}}},
  "required": ["answer", "confidence", "key_quotes"]
}`)

// taskWithModel runs the task agent as a ReAct agent on the strong model: it chooses its own
// rag_tool and web_search_tool calls, then answers in the finding schema. The sources are the
// tools' results.
func (a *Analyst) taskWithModel(ctx context.Context, t Task) (Finding, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", sentence("task_input", map[string]any{"Question": t.Question, "Sources": strings.Join(t.Sources, ", ")}))
	for i, c := range t.Context {
		if i == 3 {
			break
		}
		fmt.Fprintf(&b, "%s\n", sentence("task_input_context", map[string]any{"Title": c.Title(), "Content": clip(c.Content, 300)}))
	}
	if t.Critique != "" {
		fmt.Fprintf(&b, "%s\n", sentence("task_input_critique", map[string]any{"Critique": t.Critique}))
	}
	if t.Guidance != "" {
		fmt.Fprintf(&b, "%s\n", sentence("task_input_guidance", map[string]any{"Guidance": t.Guidance}))
	}
	info, _ := graph.InfoFrom(ctx)
	out, err := a.taskReact.Invoke(ctx, react.State{Messages: []message.Message{message.User(b.String())}}, graph.WithConfig(info.Config))
	if err != nil {
		return Finding{}, fmt.Errorf("analyst: task %s: %w", t.ID, err)
	}
	f := Finding{TaskID: t.ID, Question: t.Question, Attempts: t.Attempt}
	if t.Critique != "" {
		f.Critiques = []string{t.Critique}
	}
	q := rewrite(t.Question, a.now())
	for _, m := range out.Messages {
		if m.Role == message.RoleTool && !m.IsError {
			f.Sources = append(f.Sources, a.sourcesOf(m.Name, m.Text(), q)...)
		}
	}
	var ans struct {
		Answer     string   `json:"answer"`
		Confidence float64  `json:"confidence"`
		KeyQuotes  []string `json:"key_quotes"`
	}
	if len(out.Structured) > 0 {
		if err := json.Unmarshal(out.Structured, &ans); err != nil {
			return Finding{}, fmt.Errorf("analyst: task %s: the answer does not decode: %w", t.ID, err)
		}
	} else if n := len(out.Messages); n > 0 {
		ans.Answer = out.Messages[n-1].Text()
	}
	f.Sources = rankSources(f.Sources)
	f.Answer, f.Confidence, f.KeyQuotes = ans.Answer, ans.Confidence, ans.KeyQuotes
	return f, nil
}

var verdictSchema = schema("verdict", "The supervisor's review of a finding.", `{
  "type": "object",
  "properties": {"approved": {"type": "boolean"}, "critique": {"type": "string"}},
  "required": ["approved", "critique"]
}`)

// supervisorReview approves each returned finding or sends it back with a critique, at most
// maxAttempts times; a question nothing answers is approved as a gap in the evidence.
func (a *Analyst) supervisorReview(ctx context.Context, s ResearchState) (ResearchState, error) {
	approved := map[string]Finding{}
	var again []Task
	for _, f := range s.Returned {
		if prev, ok := s.Findings[f.TaskID]; ok && prev.Approved {
			continue
		}
		task := taskOf(s, f)
		ok, critique, err := a.review(ctx, f, task)
		if err != nil {
			return ResearchState{}, err
		}
		switch {
		case ok:
			f.Approved = true
		case f.Attempts >= a.maxAttempts:
			f.Approved = true
			if len(f.Sources) == 0 {
				f.Gap = true
			}
			f.Critiques = append(f.Critiques, sentence("critique_accepted", map[string]any{"Attempts": f.Attempts, "Critique": critique}))
		default:
			f.Critiques = append(f.Critiques, critique)
			again = append(again, Task{ID: f.TaskID, Question: f.Question, Sources: task.Sources, Attempt: f.Attempts + 1, Critique: critique})
			continue
		}
		f.Round = s.Round
		approved[f.TaskID] = f
	}
	if err := graph.Overwrite(ctx, "returned", []Finding{}); err != nil {
		return ResearchState{}, err
	}
	if err := graph.Write(ctx, "tasks", again); err != nil {
		return ResearchState{}, err
	}
	return ResearchState{Findings: approved}, nil
}

func taskOf(s ResearchState, f Finding) Task {
	for _, t := range s.Tasks {
		if t.ID == f.TaskID {
			return t
		}
	}
	if s.Plan != nil {
		for _, q := range s.Plan.SubQuestions {
			if q.ID == f.TaskID {
				return Task{ID: q.ID, Question: q.Question, Sources: q.Sources}
			}
		}
	}
	return Task{ID: f.TaskID, Question: f.Question, Sources: []string{"company_db", "web"}}
}

func (a *Analyst) review(ctx context.Context, f Finding, t Task) (bool, string, error) {
	if len(f.Sources) == 0 {
		return false, sentence("review_no_evidence", nil), nil
	}
	if a.strongRule {
		kinds := map[string]bool{}
		for _, s := range f.Sources {
			kinds[s.Kind] = true
		}
		for _, want := range t.Sources {
			if !kinds[want] && !(want == "company_db" && kinds["report"]) {
				return false, sentence("review_one_kind", map[string]any{"Have": joinAnd(keys(kinds)), "Want": sourceName(want)}), nil
			}
		}
		if len(f.Sources) < 2 {
			return false, sentence("review_one_source", nil), nil
		}
		return true, "", nil
	}
	sys := prompt("review", nil, nil)
	var v struct {
		Approved bool   `json:"approved"`
		Critique string `json:"critique"`
	}
	if err := structured(ctx, a.strong, verdictSchema, sys, "Sub-question: "+f.Question+"\nFinding:\n"+toJSON(f), &v); err != nil {
		return false, "", fmt.Errorf("analyst: reviewing %s: %w", f.TaskID, err)
	}
	if !v.Approved && v.Critique == "" {
		v.Critique = sentence("review_insufficient", nil)
	}
	return v.Approved, v.Critique, nil
}

func sourceName(k string) string {
	if k == "web" {
		return sentence("source_web", nil)
	}
	return sentence("source_kb", nil)
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// contradictionsIn finds web sources among the findings that contradict an assumption.
func (a *Analyst) contradictionsIn(findings []Finding) []Contradiction {
	var out []Contradiction
	seen := map[string]bool{}
	for _, f := range findings {
		for _, s := range f.Sources {
			if s.Kind != "web" {
				continue
			}
			text := strings.ToLower(s.Title + " " + s.Quote)
			for _, as := range a.assumptions {
				if seen[as.ID+s.Ref] || !matchesAll(text, as.Subject) || !containsAny(text, as.ContradictedBy) {
					continue
				}
				seen[as.ID+s.Ref] = true
				out = append(out, Contradiction{Assumption: as.ID, Statement: as.Statement, Source: s, Evidence: s.Quote})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Assumption < out[j].Assumption })
	return out
}

func matchesAll(text string, groups [][]string) bool {
	for _, g := range groups {
		if !containsAny(text, g) {
			return false
		}
	}
	return true
}

func containsAny(text string, ws []string) bool {
	for _, w := range ws {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

var synthesisSchema = schema("discoveries", "The research supervisor's synthesis.", `{
  "type": "object",
  "properties": {"summary": {"type": "string"}, "follow_up_questions": {"type": "array", "items": {"type": "string"}, "maxItems": 4},
    "contradictions": {"type": "array", "items": {"type": "object",
      "properties": {"assumption": {"type": "string"}, "source": {"type": "string"}, "evidence": {"type": "string"}},
      "required": ["assumption", "source", "evidence"]}}},
  "required": ["summary", "follow_up_questions"]
}`)

// modelContradiction is a contradiction as the model names it: the assumption's ID, the
// source's reference or title, and the evidence.
type modelContradiction struct {
	Assumption string `json:"assumption"`
	Source     string `json:"source"`
	Evidence   string `json:"evidence"`
}

// contradictionsFrom keeps the model's contradictions that name a known assumption and a source
// of the findings, each pair once.
func (a *Analyst) contradictionsFrom(mc []modelContradiction, findings []Finding) []Contradiction {
	var out []Contradiction
	seen := map[string]bool{}
	for _, c := range mc {
		var as *corpus.Assumption
		for i := range a.assumptions {
			if strings.EqualFold(a.assumptions[i].ID, strings.TrimSpace(c.Assumption)) {
				as = &a.assumptions[i]
			}
		}
		if as == nil {
			continue
		}
		var src *Source
		for _, f := range findings {
			for i := range f.Sources {
				if s := &f.Sources[i]; src == nil && (s.Ref == c.Source || strings.EqualFold(s.Title, strings.TrimSpace(c.Source))) {
					src = s
				}
			}
		}
		if src == nil || seen[as.ID+src.Ref] {
			continue
		}
		seen[as.ID+src.Ref] = true
		ev := strings.TrimSpace(c.Evidence)
		if ev == "" {
			ev = src.Quote
		}
		out = append(out, Contradiction{Assumption: as.ID, Statement: as.Statement, Source: *src, Evidence: ev})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Assumption < out[j].Assumption })
	return out
}

// assumptionList is the firm's assumptions, one a line, for a prompt.
func (a *Analyst) assumptionList() string {
	var b strings.Builder
	for _, as := range a.assumptions {
		fmt.Fprintf(&b, "- %s: %s (stated in %s)\n", as.ID, as.Statement, as.Source)
	}
	return b.String()
}

// synthesise builds the discoveries, the follow-up questions and the summary, and writes the key
// findings to episodic memory.
func (a *Analyst) synthesise(ctx context.Context, s ResearchState) (ResearchState, error) {
	all := map[string]Finding{}
	for k, v := range s.Earlier {
		all[k] = v
	}
	for k, v := range s.Findings {
		all[k] = v
	}
	ignored := ignoredKeys(s.Prev, s.Ignored)
	var every, list []Finding
	for _, f := range all {
		every = append(every, f)
		if !findingIgnored(ignored, f) {
			list = append(list, f)
		}
	}
	sort.Slice(every, func(i, j int) bool { return every[i].TaskID < every[j].TaskID })
	sort.Slice(list, func(i, j int) bool { return list[i].TaskID < list[j].TaskID })
	// The contradictions of the firm's assumptions: offline, the corpus's contradiction signals
	// (assumptions.json); with a model, the model's reading of the findings against the
	// assumptions' statements, with the summary and follow-up questions.
	var contraAll []Contradiction
	var summary string
	var follow []string
	modelWrote := false
	if a.strongRule {
		contraAll = a.contradictionsIn(every)
	} else if len(list) > 0 {
		user := s.UserID
		mem, err := a.mem.LoadAll(ctx, user)
		if err != nil {
			return ResearchState{}, err
		}
		sys := prompt("synthesis", mem, nil)
		var out struct {
			Summary        string               `json:"summary"`
			FollowUps      []string             `json:"follow_up_questions"`
			Contradictions []modelContradiction `json:"contradictions"`
		}
		if err := structured(ctx, a.strong, synthesisSchema, sys, "Findings:\n"+toJSON(list)+"\nThe firm's planning assumptions:\n"+a.assumptionList(), &out); err != nil {
			return ResearchState{}, fmt.Errorf("analyst: synthesising: %w", err)
		}
		contraAll = a.contradictionsFrom(out.Contradictions, list)
		summary, follow, modelWrote = out.Summary, out.FollowUps, true
	}
	// Every discovery is listed, the ignored ones too (the gate hides them), so that each keeps
	// its ID.
	var disc []Discovery
	for _, c := range contraAll {
		disc = append(disc, Discovery{Kind: "contradiction", Assumption: c.Assumption, Ref: c.Source.Ref,
			Headline: sentence("discovery_contradiction", map[string]any{"Title": c.Source.Title, "Assumption": c.Assumption, "Statement": c.Statement})})
	}
	for _, f := range every {
		kind := "finding"
		if f.Gap {
			kind = "gap"
		}
		disc = append(disc, Discovery{Kind: kind, TaskID: f.TaskID, Headline: headline(f)})
	}
	disc = numberDiscoveries(s.Prev, disc)
	var contra []Contradiction
	for _, c := range contraAll {
		if !contradictionIgnored(ignored, c) {
			contra = append(contra, c)
		}
	}
	var strong, weak *Finding
	for i := range list {
		f := &list[i]
		if !f.Gap && (strong == nil || f.Confidence > strong.Confidence) {
			strong = f
		}
		if weak == nil || f.Confidence < weak.Confidence {
			weak = f
		}
	}
	if !modelWrote {
		summary = summaryByRule(list, contra)
		for i, c := range contra {
			if i == 2 {
				break
			}
			follow = append(follow, sentence("follow_contradiction", map[string]any{"Title": c.Source.Title, "Assumption": c.Assumption, "Statement": c.Statement}))
		}
		if strong != nil {
			follow = append(follow, sentence("follow_strong", map[string]any{"Subject": subjectOrQuote(strong.Question), "Discovery": discoveryOf(disc, strong.TaskID)}))
		}
		if weak != nil && strong != nil && weak.TaskID != strong.TaskID && weak.Confidence < 0.5 {
			ws, ss := subjectOrQuote(weak.Question), subjectOrQuote(strong.Question)
			if ws != ss {
				follow = append(follow, sentence("follow_prioritise", map[string]any{"Strong": ss, "Weak": ws}))
			}
		}
	}
	// Episodic memory: the supervisor writes the key findings of this round with
	// write_memory_tool (written here directly if it did not).
	var notes []string
	for _, c := range contra {
		if len(notes) == 2 {
			break
		}
		notes = append(notes, sentence("note_contradiction", map[string]any{"Title": c.Source.Title, "Assumption": c.Assumption, "Statement": c.Statement}))
	}
	if strong != nil {
		notes = append(notes, sentence("note_found", map[string]any{"Query": clip(s.Query, 80), "Headline": clip(headline(*strong), 200)}))
	}
	if len(notes) > 0 {
		if err := a.writeEpisodic(ctx, s.UserID, summary, notes); err != nil {
			return ResearchState{}, err
		}
	}
	return ResearchState{Summary: summary, Discoveries: disc, Contradictions: contra, FollowUps: follow}, nil
}

// writeEpisodic has the research supervisor write notes to episodic memory through its tool loop;
// the notes it did not write are written directly, so the key findings are always remembered.
func (a *Analyst) writeEpisodic(ctx context.Context, user, summary string, notes []string) error {
	var quoted []string
	for i, n := range notes {
		notes[i] = quotable(n)
		quoted = append(quoted, quote(n))
	}
	mem, err := a.mem.LoadAll(ctx, user)
	if err != nil {
		return err
	}
	brief := sentence("episodic_brief", map[string]any{"Notes": strings.Join(quoted, " ")})
	if _, err := a.supervise(ctx, user, prompt("supervisor_episodic", mem, map[string]any{"Summary": summary}), brief, researchSupervisorTools); err != nil {
		return err
	}
	after, err := a.mem.Load(ctx, user, NSEpisodic)
	if err != nil {
		return err
	}
	for _, n := range notes {
		written := false
		for _, f := range after.Facts {
			written = written || strings.HasSuffix(f.Text, n)
		}
		if !written {
			if err := a.mem.Note(ctx, user, "research finding", n); err != nil {
				return err
			}
		}
	}
	return nil
}

// discoveryOf is the ID of the discovery of task's finding.
func discoveryOf(ds []Discovery, task string) string {
	for _, d := range ds {
		if d.TaskID == task {
			return d.ID
		}
	}
	return task
}

func headline(f Finding) string {
	if f.Gap || len(f.KeyQuotes) == 0 {
		return clip(f.Answer, 220)
	}
	return clip(f.KeyQuotes[0], 220)
}

func summaryByRule(list []Finding, contra []Contradiction) string {
	gaps := 0
	for _, f := range list {
		if f.Gap {
			gaps++
		}
	}
	return sentence("summary", map[string]any{"Approved": len(list), "Contradicted": len(contra), "Gaps": gaps})
}
