package analyst

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/trellis-go/trellis/agent"
	"github.com/trellis-go/trellis/apps/analyst/pack"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
)

var allowAll = agent.InboxConfig{AllowIgnore: true, AllowRespond: true, AllowEdit: true, AllowAccept: true}

func chatRequest(system, user string) *model.Request {
	return &model.Request{Messages: []message.Message{message.System(system), message.User(user)}}
}

// clearKeys writes the zero value of each key.
func clearKeys(ctx context.Context, keys ...string) error {
	for _, k := range keys {
		if err := graph.Overwrite(ctx, k, nil); err != nil {
			return err
		}
	}
	return nil
}

// clearingGateError runs a gate and, when it applied the answer (no GateError to ask again with),
// clears the previous answer's error: gate_error takes one write per step, so a gate that asks
// again writes only its new error and a gate that applied the answer only the clearing.
func clearingGateError(gate func(context.Context, State) (State, error)) func(context.Context, State) (State, error) {
	return func(ctx context.Context, s State) (State, error) {
		out, err := gate(ctx, s)
		if err != nil || out.GateError != "" || s.GateError == "" {
			return out, err
		}
		return out, clearKeys(ctx, "gate_error")
	}
}

// askGate pauses the run at a gate with req and returns the person's answer. An answer the gate
// does not take (not an inbox response, a type req.Config does not allow, a response without
// text, an edit without an object) does not fail the run: problem says what was wrong, and the
// gate asks again with it. The server refuses such answers before they reach the run
// (server/resume_check.go); this covers every other way a resume arrives.
func askGate(ctx context.Context, req agent.HumanInterrupt) (resp agent.HumanResponse, problem string, err error) {
	if req.ActionRequest.Args == nil {
		req.ActionRequest.Args = map[string]any{}
	}
	raw, err := graph.Interrupt(ctx, []agent.HumanInterrupt{req})
	if err != nil {
		return resp, "", err
	}
	allowed := gateTypes(req.Config)
	resp, perr := agent.ParseHumanResponse(raw)
	if perr != nil {
		return resp, sentence("gate_unreadable", map[string]any{"Error": perr.Error(), "Types": strings.Join(allowed, ", ")}), nil
	}
	if !slices.Contains(allowed, resp.Type) {
		return resp, sentence("gate_type", map[string]any{"Type": resp.Type, "Types": strings.Join(allowed, ", ")}), nil
	}
	switch resp.Type {
	case agent.ResponseRespond:
		var s string
		if json.Unmarshal(resp.Args, &s) != nil {
			return resp, sentence("gate_response_args", nil), nil
		}
	case agent.ResponseEdit:
		var m map[string]any
		if json.Unmarshal(resp.Args, &m) != nil || m == nil {
			return resp, sentence("gate_edit_args", nil), nil
		}
	}
	return resp, "", nil
}

// gateTypes lists the response types cfg allows.
func gateTypes(cfg agent.InboxConfig) []string {
	var out []string
	for _, t := range []struct {
		name string
		ok   bool
	}{{agent.ResponseAccept, cfg.AllowAccept}, {agent.ResponseEdit, cfg.AllowEdit}, {agent.ResponseRespond, cfg.AllowRespond}, {agent.ResponseIgnore, cfg.AllowIgnore}} {
		if t.ok {
			out = append(out, t.name)
		}
	}
	return out
}

func responseText(r agent.HumanResponse) string {
	var s string
	if err := json.Unmarshal(r.Args, &s); err != nil {
		return strings.TrimSpace(string(r.Args))
	}
	return strings.TrimSpace(s)
}

func editArgs(r agent.HumanResponse) (map[string]any, error) {
	var ar agent.ActionRequest
	if err := json.Unmarshal(r.Args, &ar); err != nil {
		return nil, fmt.Errorf("analyst: %s: %w", sentence("gate_edit_args", nil), err)
	}
	if ar.Args == nil {
		return map[string]any{}, nil
	}
	return ar.Args, nil
}

func remarshal(in, out any) error {
	raw, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

// planGate is HITL gate 1: accept starts the research, edit and respond re-plan, ignore stops.
func (a *Analyst) planGate(ctx context.Context, s State) (State, error) {
	if s.ResearchPlan == nil {
		return State{}, fmt.Errorf("analyst: the plan gate has no plan")
	}
	resp, problem, err := askGate(ctx, agent.HumanInterrupt{
		ActionRequest: agent.ActionRequest{Action: "Review research plan", Args: map[string]any{"plan": s.ResearchPlan}},
		Config:        allowAll, Description: gateErrorNote(s) + planMarkdown(s.ResearchPlan, s.PlanVersion)})
	if err != nil {
		return State{}, err
	}
	retry := func(err error) (State, error) { return State{GateError: err.Error(), Next: NodePlanGate}, nil }
	if problem != "" {
		return retry(fmt.Errorf("analyst: %s", problem))
	}
	user, _ := who(ctx, s)
	topic := clip(s.ResearchPlan.Topic, 80)
	switch resp.Type {
	case "accept":
		if err := a.mem.Note(ctx, user, "plan accepted", sentence("note_plan_accepted", map[string]any{"Topic": topic, "Count": len(s.ResearchPlan.SubQuestions)})); err != nil {
			return State{}, err
		}
		if err := clearKeys(ctx, "research_tasks", "plan_feedback", "plan_edited"); err != nil {
			return State{}, err
		}
		return State{PlanApproved: true, Next: NodeResearch, HITLResponseType: "accept", CurrentPhase: "research",
			Messages: []message.Message{message.Assistant(sentence("plan_accepted", nil))}}, nil
	case "edit":
		args, err := editArgs(resp)
		if err != nil {
			return retry(err)
		}
		var p Plan
		src := any(args)
		if v, ok := args["plan"]; ok {
			src = v
		}
		if err := remarshal(src, &p); err != nil || len(p.SubQuestions) == 0 {
			return retry(fmt.Errorf("analyst: %s", sentence("gate_plan_edit", map[string]any{"Got": clip(toJSON(args), 200)})))
		}
		if p.Topic == "" {
			p.Topic = s.ResearchPlan.Topic
		}
		for i := range p.SubQuestions {
			p.SubQuestions[i].FromUser = true
		}
		if _, err := a.mem.Update(ctx, user, NSPreferences, "the user edited the plan", []message.Message{message.User("Edited plan: " + planSummary(&p))}); err != nil {
			return State{}, err
		}
		if err := a.mem.Note(ctx, user, "plan edited", sentence("note_plan_edited", map[string]any{"Topic": topic, "Count": len(p.SubQuestions)})); err != nil {
			return State{}, err
		}
		if err := clearKeys(ctx, "plan_feedback"); err != nil {
			return State{}, err
		}
		return State{PlanEdited: &p, Next: NodePlanner, HITLResponseType: "edit"}, nil
	case "response":
		text := responseText(resp)
		if text == "" {
			return retry(fmt.Errorf("analyst: %s", sentence("gate_plan_text", nil)))
		}
		if _, err := a.mem.Update(ctx, user, NSPreferences, "feedback on the plan", []message.Message{message.User(text)}); err != nil {
			return State{}, err
		}
		if err := a.mem.Note(ctx, user, "plan feedback", sentence("note_plan_feedback", map[string]any{"Topic": topic, "Text": clip(text, 120)})); err != nil {
			return State{}, err
		}
		if err := clearKeys(ctx, "plan_edited"); err != nil {
			return State{}, err
		}
		return State{PlanFeedback: text, Next: NodePlanner, HITLResponseType: "response", Messages: []message.Message{message.User(text)}}, nil
	default: // ignore
		if err := a.mem.Note(ctx, user, "plan ignored", sentence("note_plan_ignored", map[string]any{"Topic": topic})); err != nil {
			return State{}, err
		}
		return State{Next: "end", HITLResponseType: "ignore", CurrentPhase: "end",
			Messages: []message.Message{message.Assistant(sentence("plan_stopped", nil))}}, nil
	}
}

func planSummary(p *Plan) string {
	var qs []string
	for _, q := range p.SubQuestions {
		qs = append(qs, q.Question)
	}
	return strings.Join(qs, " | ")
}

func discoveryMarkdown(s State) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n\n", sentence("discoveries_title", map[string]any{"Round": s.ResearchRounds}), s.SupervisorSummary)
	ignored := setOf(s.IgnoredFindings)
	for _, d := range s.Discoveries {
		if ignored[d.ID] {
			continue
		}
		fmt.Fprintf(&b, "- %s\n", sentence("discoveries_item", map[string]any{"ID": d.ID, "Kind": d.Kind, "Headline": d.Headline}))
	}
	if len(s.FollowUpQuestions) > 0 {
		fmt.Fprintf(&b, "\n## %s\n\n", sentence("discoveries_questions_heading", nil))
		for _, q := range s.FollowUpQuestions {
			fmt.Fprintf(&b, "- %s\n", q)
		}
	}
	fmt.Fprintf(&b, "\n_%s_", sentence("discoveries_hint", nil))
	return b.String()
}

func setOf(xs []string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// discoveryGate is HITL gate 2: follow-up directions dispatch targeted task agents, accept goes
// to the report, ignore drops a discovery (noted in episodic memory); it loops until accepted.
func (a *Analyst) discoveryGate(ctx context.Context, s State) (State, error) {
	ignored := setOf(s.IgnoredFindings)
	focus := ""
	for _, d := range s.Discoveries {
		if !ignored[d.ID] {
			focus = d.ID
			break
		}
	}
	resp, problem, err := askGate(ctx, agent.HumanInterrupt{
		ActionRequest: agent.ActionRequest{Action: "Review discoveries", Args: map[string]any{"discoveries": s.Discoveries,
			"follow_up_questions": s.FollowUpQuestions, "focus": focus, "ignore": []string{}, "follow_ups": []string{}}},
		Config: allowAll, Description: gateErrorNote(s) + discoveryMarkdown(s)})
	if err != nil {
		return State{}, err
	}
	retry := func(err error) (State, error) { return State{GateError: err.Error(), Next: NodeDiscoveryGate}, nil }
	if problem != "" {
		return retry(fmt.Errorf("analyst: %s", problem))
	}
	user, _ := who(ctx, s)
	var ignore, follow []string
	switch resp.Type {
	case "accept":
		if err := a.mem.Note(ctx, user, "discoveries accepted", sentence("note_discoveries_accepted", map[string]any{"Query": clip(s.Query, 80), "Rounds": s.ResearchRounds})); err != nil {
			return State{}, err
		}
		if err := clearKeys(ctx, "research_tasks"); err != nil {
			return State{}, err
		}
		return State{Next: NodeReport, HITLResponseType: "accept", CurrentPhase: "report",
			Messages: []message.Message{message.Assistant(sentence("discoveries_approved", nil))}}, nil
	case "ignore":
		if focus == "" {
			return retry(fmt.Errorf("analyst: %s", sentence("gate_nothing_to_ignore", nil)))
		}
		ignore = []string{focus}
	case "edit":
		args, err := editArgs(resp)
		if err != nil {
			return retry(err)
		}
		var e struct {
			Ignore    []string `json:"ignore"`
			FollowUps []string `json:"follow_ups"`
		}
		if err := remarshal(args, &e); err != nil || len(e.Ignore)+len(e.FollowUps) == 0 {
			return retry(fmt.Errorf("analyst: %s", sentence("gate_discoveries_edit", nil)))
		}
		ignore, follow = e.Ignore, e.FollowUps
	case "response":
		text := responseText(resp)
		if text == "" {
			return retry(fmt.Errorf("analyst: %s", sentence("gate_discoveries_text", nil)))
		}
		r, err := a.readDiscoveryReply(ctx, text)
		if err != nil {
			return State{}, err
		}
		ignore = r.ignore
		if r.affirm && len(s.FollowUpQuestions) > 0 {
			follow = append(follow, followUpTask(s.FollowUpQuestions[0]))
		}
		for _, d := range r.directions {
			follow = append(follow, questionOf(d))
		}
		if _, err := a.mem.Update(ctx, user, NSPreferences, "feedback on the discoveries", []message.Message{message.User(text)}); err != nil {
			return State{}, err
		}
	}
	// Ignore IDs are matched without regard to case; a finding's task ID names its discovery too.
	known := map[string]string{}
	for _, d := range s.Discoveries {
		if d.TaskID != "" {
			known[strings.ToLower(d.TaskID)] = d.ID
		}
	}
	for _, d := range s.Discoveries {
		known[strings.ToLower(d.ID)] = d.ID
	}
	var ign []string
	for _, id := range ignore {
		if k, ok := known[strings.ToLower(id)]; ok {
			if !slices.Contains(ign, k) && !slices.Contains(s.IgnoredFindings, k) {
				ign = append(ign, k)
			}
		} else {
			return retry(fmt.Errorf("analyst: %s", sentence("gate_unknown_discovery", map[string]any{"ID": id, "IDs": strings.Join(discoveryIDs(s.Discoveries), ", ")})))
		}
	}
	for _, id := range ign {
		var head string
		for _, d := range s.Discoveries {
			if d.ID == id {
				head = d.Headline
			}
		}
		if err := a.mem.Note(ctx, user, "discovery ignored", sentence("note_discovery_ignored", map[string]any{"ID": id, "Headline": clip(head, 120), "Query": clip(s.Query, 60)})); err != nil {
			return State{}, err
		}
	}
	out := State{HITLResponseType: resp.Type, IgnoredFindings: append(append([]string(nil), s.IgnoredFindings...), ign...)}
	if len(follow) == 0 {
		out.Next = NodeDiscoveryGate
		if len(ign) > 0 {
			out.Messages = []message.Message{message.Assistant(sentence("discoveries_set_aside", map[string]any{"IDs": strings.Join(ign, ", ")}))}
		}
		return out, nil
	}
	var tasks []Task
	own := map[string]bool{} // questions the analyst wrote itself
	for _, q := range s.FollowUpQuestions {
		own[followUpTask(q)] = true
	}
	for i, q := range follow {
		tasks = append(tasks, Task{ID: fmt.Sprintf("f%d-%d", s.ResearchRounds+1, i+1), Question: q, Sources: []string{"company_db", "web"}, FromUser: !own[q]})
	}
	if err := a.mem.Note(ctx, user, "follow-up research", sentence("note_follow_up", map[string]any{"Questions": clip(strings.Join(follow, " | "), 160)})); err != nil {
		return State{}, err
	}
	out.ResearchTasks, out.Next, out.CurrentPhase = tasks, NodeResearch, "research"
	out.Messages = []message.Message{message.Assistant(sentence("follow_ups_dispatched", map[string]any{"Count": len(tasks)}))}
	return out, nil
}

var replySchema = schema("discovery_reply", "What one part of a reply to the discoveries asks for.", `{
  "type": "object",
  "properties": {"reply": {"type": "string", "enum": ["affirm", "ignore", "direction"], "default": "direction"}},
  "required": ["reply"]
}`)

// discoveryReply is what a reply to the discoveries asks: discoveries to set aside (their IDs as
// written), a yes to the analyst's first follow-up question, and directions of the user's own.
type discoveryReply struct {
	ignore     []string
	affirm     bool
	directions []string
}

// replyParts splits a reply into its sentences and lines.
var replyParts = regexp.MustCompile(`[;\n]+|\.\s+`)

// readDiscoveryReply reads a reply to the discoveries, one sentence at a time: the fast role (a
// real model, or the offline model with the pack's "reply" choices) says whether it agrees to
// the follow-up question, sets discoveries aside or gives a direction; the pack's words for that
// answer are taken off to leave its subject (the IDs, or what to research).
func (a *Analyst) readDiscoveryReply(ctx context.Context, text string) (discoveryReply, error) {
	var r discoveryReply
	sys := prompt("discovery_reply", nil, nil)
	for _, part := range replyParts.Split(text, -1) {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		var out struct {
			Reply string `json:"reply"`
		}
		if err := structured(ctx, a.fast, replySchema, sys, part, &out); err != nil {
			return r, fmt.Errorf("analyst: reading the reply to the discoveries: %w", err)
		}
		if cued, ok := dropCue(part, out.Reply == "direction"); ok && strings.ContainsAny(cued, "0123456789") {
			out.Reply = "ignore" // "no need for D2", "no need to follow up on D2"
		}
		subject := part
		switch out.Reply {
		case "ignore":
			// The IDs are the words with a digit; the rest of the subject may be a direction.
			ids := 0
			for _, tok := range strings.Fields(part) {
				if id := strings.Trim(tok, ",;:.!()"); strings.ContainsAny(id, "0123456789") {
					r.ignore = append(r.ignore, strings.ToUpper(id[:1])+id[1:])
					ids++
				}
			}
			if ids > 0 {
				var rest []string
				for _, tok := range strings.Fields(choiceSubject("reply", "ignore", part)) {
					if !strings.ContainsAny(tok, "0123456789") {
						rest = append(rest, tok)
					}
				}
				subject = strings.Join(rest, " ")
			} // else nothing is named to set aside: a direction
		case "affirm":
			if subject = choiceSubject("reply", "affirm", part); len(contentWords(subject)) == 0 {
				r.affirm = true
				continue
			}
			r.directions = append(r.directions, subject) // "yes, and look at X"
			continue
		}
		if before, after := pack.Subject("reply", "affirm", part); out.Reply == "direction" && before == "" && after == "" {
			r.affirm = true // only the pack's words for a yes ("do it", "go for it")
			continue
		}
		if len(contentWords(subject)) >= 2 || (subject == part && len(strings.Fields(part)) >= 2) {
			r.directions = append(r.directions, subject)
		}
	}
	return r, nil
}

// choiceSubject is what text is about once the pack's words for value of field are taken out: what
// follows them, or what precedes them when nothing does ("the rival: drop it").
func choiceSubject(field, value, text string) string {
	before, after := pack.Subject(field, value, text)
	if len(contentWords(after)) == 0 && len(contentWords(before)) > 0 {
		return before
	}
	return after
}

func discoveryIDs(ds []Discovery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}

// followUpTask turns a follow-up question the supervisor asked into a research question.
func followUpTask(q string) string {
	if i := strings.Index(q, "\""); i >= 0 {
		if j := strings.Index(q[i+1:], "\""); j > 0 {
			title := q[i+1 : i+1+j]
			return sentence("follow_up_task", map[string]any{"Title": title})
		}
	}
	return strings.TrimSuffix(q, "?") + "?"
}

var routeSchema = schema("final_route", "Where the user's reply to the final report goes.", `{
  "type": "object",
  "properties": {"route": {"type": "string", "enum": ["approve", "question", "research", "replan"], "default": "question"},
    "format": {"type": "string", "enum": ["markdown", "json", "pdf", "docx", ""]}},
  "required": ["route"]
}`)

// reportFormats are the formats a report is saved in.
var reportFormats = []string{"markdown", "json", "pdf", "docx"}

// routeFinal classifies a reply to the final report with the fast role: a real model, or the
// offline model with the analyst's pack (its choices teach it what each route sounds like).
func (a *Analyst) routeFinal(ctx context.Context, text string) (route, format string, err error) {
	var out struct {
		Route  string `json:"route"`
		Format string `json:"format"`
	}
	sys := prompt("final_route", nil, nil)
	if err := structured(ctx, a.fast, routeSchema, sys, text, &out); err != nil {
		return "", "", fmt.Errorf("analyst: routing the reply: %w", err)
	}
	return out.Route, out.Format, nil
}

func finalMarkdown(s State) string {
	var b strings.Builder
	if s.LastAnswer != "" {
		answer := sentence("final_answer", map[string]any{"Answer": s.LastAnswer})
		fmt.Fprintf(&b, "> %s\n\n---\n\n", strings.ReplaceAll(answer, "\n", "\n> "))
	}
	b.WriteString(s.ReportDraft)
	fmt.Fprintf(&b, "\n\n---\n_%s_", sentence("final_hint", map[string]any{"Format": orDefault(s.ReportFormat, "markdown")}))
	return b.String()
}

// finalGate is HITL gate 3: approve with a format saves, a question is answered from the
// research, a new direction re-researches, "re-plan" goes back to the planner, ignore ends.
func (a *Analyst) finalGate(ctx context.Context, s State) (State, error) {
	resp, problem, err := askGate(ctx, agent.HumanInterrupt{
		ActionRequest: agent.ActionRequest{Action: "Review final report", Args: map[string]any{"format": orDefault(s.ReportFormat, "markdown"), "report": s.ReportDraft}},
		Config:        allowAll, Description: gateErrorNote(s) + finalMarkdown(s)})
	if err != nil {
		return State{}, err
	}
	retry := func(err error) (State, error) { return State{GateError: err.Error(), Next: NodeFinalGate}, nil }
	if problem != "" {
		return retry(fmt.Errorf("analyst: %s", problem))
	}
	user, _ := who(ctx, s)
	approve := func(format, report string, how string) (State, error) {
		if format == "" {
			format = orDefault(s.ReportFormat, "markdown")
		}
		if !slices.Contains(reportFormats, format) {
			return retry(fmt.Errorf("analyst: %s", sentence("gate_format", map[string]any{"Format": format, "Formats": strings.Join(reportFormats, ", ")})))
		}
		mem, err := a.mem.Load(ctx, user, NSPreferences)
		if err != nil {
			return State{}, err
		}
		if _, err := a.mem.Apply(ctx, user, NSPreferences, "report format chosen at approval", withoutNoop(mem, TypedOp(mem, "format", "report", format))); err != nil {
			return State{}, err
		}
		final := report
		if final == "" {
			final = s.ReportDraft
		}
		if format == "json" {
			final = toJSON(s.ReportJSON)
		}
		return State{FinalReport: final, ReportFormat: format, Next: NodeSaveReport, HITLResponseType: how, CurrentPhase: "final"}, nil
	}
	switch resp.Type {
	case "accept":
		return approve("", "", "accept")
	case "edit":
		args, err := editArgs(resp)
		if err != nil {
			return retry(err)
		}
		format, _ := args["format"].(string)
		report, _ := args["report"].(string)
		if report == s.ReportDraft {
			report = ""
		}
		return approve(strings.ToLower(format), report, "edit")
	case "ignore":
		if err := a.mem.Note(ctx, user, "report ignored", sentence("note_report_ignored", map[string]any{"Query": clip(s.Query, 80)})); err != nil {
			return State{}, err
		}
		return State{Next: "end", HITLResponseType: "ignore", CurrentPhase: "end",
			Messages: []message.Message{message.Assistant(sentence("report_closed", nil))}}, nil
	}
	text := responseText(resp)
	if text == "" {
		return retry(fmt.Errorf("analyst: %s", sentence("gate_report_text", nil)))
	}
	route, format, err := a.routeFinal(ctx, text)
	if err != nil {
		return State{}, err
	}
	if _, err := a.mem.Update(ctx, user, NSPreferences, "feedback on the report", []message.Message{message.User(text)}); err != nil {
		return State{}, err
	}
	switch route {
	case "approve":
		return approve(format, "", "response")
	case "replan":
		if err := a.mem.Note(ctx, user, "re-plan", sentence("note_replan", map[string]any{"Query": clip(s.Query, 60), "Text": clip(text, 120)})); err != nil {
			return State{}, err
		}
		return State{PlanFeedback: text, Next: NodePlanner, HITLResponseType: "response", CurrentPhase: "planning",
			Messages: []message.Message{message.User(text), message.Assistant(sentence("back_to_planning", nil))}}, nil
	case "research":
		if err := a.mem.Note(ctx, user, "re-research", sentence("note_reresearch", map[string]any{"Query": clip(s.Query, 60), "Text": clip(text, 120)})); err != nil {
			return State{}, err
		}
		t := Task{ID: fmt.Sprintf("r%d-1", s.ResearchRounds+1), Question: questionOf(choiceSubject("route", "research", text)), Sources: []string{"company_db", "web"}, FromUser: true}
		return State{ResearchTasks: []Task{t}, Next: NodeResearch, HITLResponseType: "response", CurrentPhase: "research",
			Messages: []message.Message{message.User(text), message.Assistant(sentence("back_to_research", nil))}}, nil
	}
	answer, err := a.answer(ctx, s, text)
	if err != nil {
		return State{}, err
	}
	if err := a.mem.Note(ctx, user, "question on report", sentence("note_question", map[string]any{"Query": clip(s.Query, 60), "Text": clip(text, 120)})); err != nil {
		return State{}, err
	}
	return State{LastAnswer: answer, Next: NodeFinalGate, HITLResponseType: "response",
		Messages: []message.Message{message.User(text), message.Assistant(answer)}}, nil
}

func withoutNoop(doc memoryDoc, op memoryOp) []memoryOp {
	if op.Op == "correct" {
		if f, ok := doc.Find(op.ID); ok && f.Text == op.Text {
			return nil
		}
	}
	return []memoryOp{op}
}

// answer answers a question about the report from the research context: the findings' sources
// ranked by the question's words (rules), or the strong model with the whole research.
func (a *Analyst) answer(ctx context.Context, s State, q string) (string, error) {
	var fs []Finding
	for _, f := range s.ResearchFindings {
		fs = append(fs, f)
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].TaskID < fs[j].TaskID })
	if !a.strongRule {
		user, _ := who(ctx, s)
		mem, err := a.mem.LoadAll(ctx, user)
		if err != nil {
			return "", err
		}
		sys := prompt("report_question", mem, nil)
		resp, err := a.strong.Generate(ctx, chatRequest(sys, "Findings:\n"+toJSON(fs)+"\nSummary: "+s.SupervisorSummary+"\n\nQuestion: "+q))
		if err != nil {
			return "", fmt.Errorf("analyst: answering: %w", err)
		}
		return strings.TrimSpace(resp.Message.Text()), nil
	}
	terms := contentWords(q)
	type cand struct {
		text  string
		score float64
	}
	var cs []cand
	seen := map[string]bool{}
	for _, f := range fs {
		for _, src := range f.Sources {
			if src.Quote == "" || seen[src.Quote] {
				continue
			}
			seen[src.Quote] = true
			if sc := share(terms, src.Quote+" "+src.Title); sc > 0 {
				cs = append(cs, cand{fmt.Sprintf("%s (%s, %s)", strings.TrimSuffix(src.Quote, "."), src.Title, src.Date), sc})
			}
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].score > cs[j].score })
	if len(cs) == 0 {
		return sentence("answer_none", map[string]any{"Question": clip(q, 60)}), nil
	}
	var parts []string
	for i, c := range cs {
		if i == 2 {
			break
		}
		parts = append(parts, c.text)
	}
	return sentence("answer_found", map[string]any{"Quotes": strings.Join(parts, ". ")}), nil
}

func gateErrorNote(s State) string {
	if s.GateError == "" {
		return ""
	}
	return "> " + sentence("gate_error", map[string]any{"Error": s.GateError}) + "\n\n"
}
