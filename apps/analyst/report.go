package analyst

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
)

// Prefs are the report preferences read from memory.
type Prefs struct {
	Name       string `json:"name"`
	Project    string `json:"project"`
	Verbosity  string `json:"verbosity"` // concise, detailed
	Citation   string `json:"citation"`  // numeric, author-date, footnotes
	Framework  string `json:"framework"` // SWOT, Porter's five forces, gap analysis
	Format     string `json:"format"`    // markdown, json, pdf
	StyleNotes string `json:"style_notes"`
}

// SectionPlan is a section the report supervisor assigns to a writer.
type SectionPlan struct {
	Name    string `json:"name"`
	Brief   string `json:"brief"`
	Order   int    `json:"order"`
	Attempt int    `json:"attempt"`
	Note    string `json:"note,omitempty"` // the reviewer's note for a rewrite
	// Findings are the task IDs of the findings a section planned from the findings covers.
	Findings []string `json:"findings,omitempty"`
}

// Section is a written section.
type Section struct {
	Name    string `json:"name"`
	Order   int    `json:"order"`
	Content string `json:"content"`
	Attempt int    `json:"attempt"`
	// Findings are the findings the section covers (a section planned on findings).
	Findings []string `json:"findings,omitempty"`
}

// ReportState is the report subgraph's state.
type ReportState struct {
	UserID         string             `json:"user_id"`
	Topic          string             `json:"topic"`
	Findings       []Finding          `json:"findings,omitempty"`
	Sources        []Source           `json:"sources,omitempty"`
	Contradictions []Contradiction    `json:"contradictions,omitempty"`
	Summary        string             `json:"summary,omitempty"`
	Prefs          Prefs              `json:"prefs"`
	Sections       []SectionPlan      `json:"sections,omitempty"` // to write now
	Section        SectionPlan        `json:"section,omitempty"`  // a writer's payload
	Written        []Section          `json:"written,omitempty" reduce:"append"`
	Approved       map[string]Section `json:"approved,omitempty" reduce:"merge"`
	Draft          string             `json:"draft,omitempty"`
	JSON           map[string]any     `json:"json,omitempty"`
	// Today is the app clock's date (YYYY-MM-DD), for the recommendations' due dates.
	Today string `json:"today,omitempty"`
}

func (a *Analyst) reportIn(s State) ReportState {
	ignored := ignoredKeys(s.Discoveries, s.IgnoredFindings)
	var fs []Finding
	for _, f := range s.ResearchFindings {
		if !findingIgnored(ignored, f) {
			fs = append(fs, f)
		}
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].TaskID < fs[j].TaskID })
	topic := s.Query
	if s.ResearchPlan != nil && s.ResearchPlan.Topic != "" {
		topic = s.ResearchPlan.Topic
	}
	var contra []Contradiction
	for _, c := range s.Contradictions {
		if !contradictionIgnored(ignored, c) {
			contra = append(contra, c)
		}
	}
	return ReportState{UserID: s.UserID, Topic: topic, Findings: fs, Contradictions: contra, Summary: s.SupervisorSummary,
		Today: a.now().UTC().Format("2006-01-02")}
}

func (a *Analyst) reportOut(r ReportState) State {
	sections := map[string]string{}
	for name, sec := range r.Approved {
		sections[name] = sec.Content
	}
	return State{ReportSections: sections, ReportDraft: r.Draft, ReportJSON: r.JSON, ReportFormat: r.Prefs.Format, CurrentPhase: "final"}
}

func prefsOf(mem Mem) Prefs {
	return Prefs{
		Name:       mem.Typed(NSUserProfile, "name", "full"),
		Project:    mem.Typed(NSUserProfile, "project", "active"),
		Verbosity:  orDefault(mem.Typed(NSPreferences, "style", "verbosity"), "concise"),
		Citation:   orDefault(mem.Typed(NSPreferences, "citation", "style"), "numeric"),
		Framework:  orDefault(mem.Typed(NSPreferences, "framework", "preferred"), "SWOT"),
		Format:     orDefault(mem.Typed(NSPreferences, "format", "report"), "markdown"),
		StyleNotes: mem.Text(NSPreferences),
	}
}

// reportSupervisor numbers the sources and plans the sections from the findings and the user's
// preferences. It runs as a tool-calling agent first (memory_search_tool, write_memory_tool,
// Question, Done): it looks up the user's report preferences, and what it learns by a Question
// (answered through an inbox interrupt) or writes to memory shapes the plan.
func (a *Analyst) reportSupervisor(ctx context.Context, s ReportState) (ReportState, error) {
	mem, err := a.mem.LoadAll(ctx, s.UserID)
	if err != nil {
		return ReportState{}, err
	}
	given := sentence("report_given", map[string]any{"Topic": fmt.Sprintf("%q", s.Topic), "Findings": len(s.Findings), "Contradicted": len(s.Contradictions)})
	res, err := a.supervise(ctx, s.UserID, prompt("supervisor_report", mem, map[string]any{"Given": given}),
		sentence("report_supervisor_brief", nil), reportSupervisorTools)
	if err != nil {
		return ReportState{}, err
	}
	changed := len(res.results("write_memory_tool")) > 0
	for _, ans := range res.Answers {
		if ans = strings.TrimSpace(ans); ans != "" && ans != noAnswer {
			if _, err := a.mem.Update(ctx, s.UserID, NSPreferences, "answer to the report supervisor's question", []message.Message{message.User(ans)}); err != nil {
				return ReportState{}, err
			}
			changed = true
		}
	}
	if changed {
		if mem, err = a.mem.LoadAll(ctx, s.UserID); err != nil {
			return ReportState{}, err
		}
	}
	p := prefsOf(mem)
	var sources []Source
	seen := map[string]bool{}
	for _, f := range s.Findings {
		for _, src := range f.Sources {
			if !seen[src.Ref] {
				seen[src.Ref] = true
				sources = append(sources, src)
			}
		}
	}
	groups, err := a.findingSections(ctx, s, mem)
	if err != nil {
		return ReportState{}, err
	}
	plans := []SectionPlan{{Name: secSummary}, {Name: frameworkSection(p.Framework)}}
	plans = append(plans, groups...)
	if len(s.Contradictions) > 0 {
		plans = append(plans, SectionPlan{Name: secChallenged})
	}
	for _, f := range s.Findings {
		if f.Gap {
			plans = append(plans, SectionPlan{Name: secGaps})
			break
		}
	}
	plans = append(plans, SectionPlan{Name: secRecommendations})
	for i := range plans {
		plans[i].Order, plans[i].Attempt = i, 1
		if plans[i].Brief == "" {
			plans[i].Brief = sectionBrief(plans[i].Name, p)
		}
	}
	return ReportState{Prefs: p, Sources: sources, Sections: plans}, nil
}

var outlineSchema = schema("report_outline", "The report's finding sections.", `{
  "type": "object",
  "properties": {"sections": {"type": "array", "minItems": 1, "maxItems": 6, "items": {"type": "object",
    "properties": {"name": {"type": "string"}, "findings": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
    "required": ["name", "findings"]}}},
  "required": ["sections"]
}`)

// findingSections plans the report's sections on the findings: the findings grouped by what they
// are about, one section per group, named for it. Offline, a group is the competitors, projects
// and theme a finding's question names (from the corpus); with a model, the model groups and
// names them. A finding no group takes goes to "Other findings" (section_other); gaps have their
// own section.
func (a *Analyst) findingSections(ctx context.Context, s ReportState, mem Mem) ([]SectionPlan, error) {
	var fs []Finding
	known := map[string]bool{}
	for _, f := range s.Findings {
		if !f.Gap {
			fs = append(fs, f)
			known[f.TaskID] = true
		}
	}
	if len(fs) == 0 {
		return nil, nil
	}
	var out []SectionPlan
	if a.strongRule {
		at := map[string]int{}
		for _, f := range fs {
			name := subjectOf(f.Question)
			if name == "" {
				name = secOther
			}
			name = strings.ToUpper(name[:1]) + name[1:]
			i, ok := at[name]
			if !ok {
				i, at[name] = len(out), len(out)
				out = append(out, SectionPlan{Name: name})
			}
			out[i].Findings = append(out[i].Findings, f.TaskID)
		}
	} else {
		var list strings.Builder
		for _, f := range fs {
			fmt.Fprintf(&list, "- %s: %s (%s)\n", f.TaskID, f.Question, clip(f.Answer, 200))
		}
		sys := prompt("report_outline", mem, map[string]any{"Topic": s.Topic})
		var outline struct {
			Sections []struct {
				Name     string   `json:"name"`
				Findings []string `json:"findings"`
			} `json:"sections"`
		}
		if err := structured(ctx, a.strong, outlineSchema, sys, "Findings:\n"+list.String(), &outline); err != nil {
			return nil, fmt.Errorf("analyst: planning the report's sections: %w", err)
		}
		placed := map[string]bool{}
		names := map[string]bool{}
		for _, sec := range outline.Sections {
			name := strings.TrimSpace(sec.Name)
			if name == "" || names[name] {
				continue
			}
			plan := SectionPlan{Name: name}
			for _, id := range sec.Findings {
				if known[id] && !placed[id] {
					placed[id] = true
					plan.Findings = append(plan.Findings, id)
				}
			}
			if len(plan.Findings) > 0 {
				names[name] = true
				out = append(out, plan)
			}
		}
		var rest []string
		for _, f := range fs {
			if !placed[f.TaskID] {
				rest = append(rest, f.TaskID)
			}
		}
		if len(rest) > 0 {
			out = append(out, SectionPlan{Name: secOther, Findings: rest})
		}
	}
	if len(out) == 1 && out[0].Name == secOther {
		out[0].Name = secFindings // nothing else to be other than
	}
	for i := range out {
		out[i].Brief = sentence("brief_findings", map[string]any{"IDs": strings.Join(out[i].Findings, ", ")})
	}
	return out, nil
}

// The report's section names (prompts/messages/messages.md): its headings, and how the writer
// and the reviewer tell the sections apart.
var (
	secSummary         = sentence("section_summary", nil)
	secSWOT            = sentence("section_swot", nil)
	secPorter          = sentence("section_porter", nil)
	secGap             = sentence("section_gap", nil)
	secChallenged      = sentence("section_challenged", nil)
	secGaps            = sentence("section_gaps", nil)
	secRecommendations = sentence("section_recommendations", nil)
	secOther           = sentence("section_other", nil)
	secFindings        = sentence("section_findings", nil)
	secSources         = sentence("section_sources", nil)
)

// The SWOT section's parts, in order: swotPart's keys and their headings.
var swotParts = []struct{ key, heading string }{
	{"Strengths", sentence("swot_strengths", nil)}, {"Weaknesses", sentence("swot_weaknesses", nil)},
	{"Opportunities", sentence("swot_opportunities", nil)}, {"Threats", sentence("swot_threats", nil)},
}

// frameworkSection is the section a framework preference (words.json's framework values) asks for.
func frameworkSection(fw string) string {
	switch strings.ToLower(fw) {
	case "porter's five forces":
		return secPorter
	case "gap analysis":
		return secGap
	}
	return secSWOT
}

func sectionBrief(name string, p Prefs) string {
	switch name {
	case secSummary:
		return sentence("brief_summary", map[string]any{"Limit": bulletLimit(p)})
	case secRecommendations:
		return sentence("brief_recommendations", nil)
	}
	return sentence("brief_cite", map[string]any{"Citation": p.Citation})
}

func bulletLimit(p Prefs) int {
	if p.Verbosity == "detailed" {
		return 8
	}
	return 5
}

// cite renders a citation of src in the user's style.
func cite(p Prefs, sources []Source, src Source) string {
	n := 0
	for i, s := range sources {
		if s.Ref == src.Ref {
			n = i + 1
		}
	}
	switch p.Citation {
	case "author-date":
		return fmt.Sprintf(" (%s, %s)", clip(src.Title, 50), src.Date)
	case "footnotes":
		return fmt.Sprintf("[^%d]", n)
	}
	return fmt.Sprintf(" [%d]", n)
}

// writer writes one section: the strong model in the user's style, or the rules.
func (a *Analyst) writer(ctx context.Context, s ReportState) (ReportState, error) {
	sec := s.Section
	var content string
	if a.strongRule {
		content = writeByRule(s, sec)
	} else {
		mem, err := a.mem.LoadAll(ctx, s.UserID)
		if err != nil {
			return ReportState{}, err
		}
		var src strings.Builder
		for i, x := range s.Sources {
			fmt.Fprintf(&src, "[%d] %s (%s, %s): %s\n", i+1, x.Title, x.Kind, x.Date, x.Quote)
		}
		sys := prompt("writer", mem, map[string]any{"Section": sec.Name, "Topic": s.Topic, "Brief": sec.Brief,
			"Citation": s.Prefs.Citation, "Framework": s.Prefs.Framework, "Note": sec.Note})
		findings := s.Findings
		if len(sec.Findings) > 0 {
			findings = nil
			for _, f := range s.Findings {
				if slices.Contains(sec.Findings, f.TaskID) {
					findings = append(findings, f)
				}
			}
		}
		resp, err := a.strong.Generate(ctx, chatRequest(sys, "Findings:\n"+toJSON(findings)+"\nSources:\n"+src.String()+"\nContradictions:\n"+toJSON(s.Contradictions)))
		if err != nil {
			return ReportState{}, fmt.Errorf("analyst: writing %s: %w", sec.Name, err)
		}
		content = strings.TrimSpace(resp.Message.Text())
	}
	return ReportState{Written: []Section{{Name: sec.Name, Order: sec.Order, Content: content, Attempt: sec.Attempt, Findings: sec.Findings}}}, nil
}

// tooManyRe reads back the reviewer's note that a section has too many bullets (review_bullets).
var tooManyRe = readBack("review_bullets", "Limit")

func writeByRule(s ReportState, sec SectionPlan) string {
	p := s.Prefs
	name := sec.Name
	const keyFindings = "\x00findings" // a section planned on findings: those findings, with their evidence
	if len(sec.Findings) > 0 {
		name = keyFindings
	}
	var b strings.Builder
	limit := bulletLimit(p)
	if tooManyRe.MatchString(sec.Note) {
		limit = 3
	}
	first := func(f Finding) (string, Source, bool) {
		if len(f.Sources) == 0 {
			return "", Source{}, false
		}
		return strings.TrimSuffix(headline(f), "."), f.Sources[0], true
	}
	switch name {
	case secSummary:
		// Each bullet its own evidence: a source already cited is not cited again.
		n := 0
		cited := map[string]bool{}
		for _, c := range s.Contradictions {
			if n == limit || cited[c.Source.Ref] {
				continue
			}
			cited[c.Source.Ref] = true
			fmt.Fprintf(&b, "- %s\n", sentence("report_so_what", map[string]any{"Assumption": c.Assumption, "Statement": c.Statement,
				"Evidence": strings.TrimSuffix(c.Evidence, "."), "Cite": cite(p, s.Sources, c.Source)}))
			n++
		}
		for _, f := range s.Findings {
			if n == limit {
				break
			}
			if h, src, ok := first(f); ok && !cited[src.Ref] {
				cited[src.Ref] = true
				fmt.Fprintf(&b, "- %s%s.\n", h, cite(p, s.Sources, src))
				n++
			}
		}
		if n == 0 {
			fmt.Fprintf(&b, "- %s\n", sentence("report_no_evidence", nil))
		}
	case secSWOT:
		buckets := map[string][]string{}
		for _, f := range s.Findings {
			for _, src := range f.Sources {
				q := strings.TrimSuffix(src.Quote, ".")
				if q == "" {
					continue
				}
				k := swotPart(src, q)
				item := q + cite(p, s.Sources, src)
				if len(buckets[k]) < limit-2 && !slices.Contains(buckets[k], item) {
					buckets[k] = append(buckets[k], item)
				}
			}
		}
		for _, part := range swotParts {
			fmt.Fprintf(&b, "**%s**\n", part.heading)
			if len(buckets[part.key]) == 0 {
				fmt.Fprintf(&b, "- %s\n", sentence("report_swot_none", nil))
			}
			for _, x := range buckets[part.key] {
				fmt.Fprintf(&b, "- %s.\n", x)
			}
			b.WriteString("\n")
		}
	case secPorter:
		var forces []struct {
			name  string
			words []string
		}
		if d := domain(); d != nil {
			for _, f := range d.Vocabulary.Report.Forces {
				words := f.Words
				if f.Competitors {
					words = append(append([]string(nil), d.Competitors...), words...)
				}
				forces = append(forces, struct {
					name  string
					words []string
				}{f.Name, lowered(words)})
			}
		}
		for _, fo := range forces {
			fmt.Fprintf(&b, "**%s:** ", fo.name)
			var ev []string
			for _, f := range s.Findings {
				for _, src := range f.Sources {
					if len(ev) < 2 && containsAny(strings.ToLower(src.Quote), fo.words) {
						ev = append(ev, strings.TrimSuffix(src.Quote, ".")+cite(p, s.Sources, src))
					}
				}
			}
			if len(ev) == 0 {
				b.WriteString(sentence("report_force_none", nil) + "\n\n")
			} else {
				b.WriteString(strings.Join(ev, "; ") + ".\n\n")
			}
		}
	case secGap:
		b.WriteString(sentence("report_gap_header", nil) + "\n")
		for _, c := range s.Contradictions {
			b.WriteString(sentence("report_gap_row", map[string]any{"Assumption": c.Assumption, "Statement": c.Statement,
				"Evidence": strings.TrimSuffix(c.Evidence, "."), "Cite": cite(p, s.Sources, c.Source)}) + "\n")
		}
		if len(s.Contradictions) == 0 {
			b.WriteString(sentence("report_gap_none", nil) + "\n")
		}
	case keyFindings:
		for _, f := range s.Findings {
			if len(sec.Findings) > 0 && !slices.Contains(sec.Findings, f.TaskID) {
				continue
			}
			b.WriteString(sentence("report_finding", map[string]any{"Question": f.Question, "Percent": fmt.Sprintf("%.0f", f.Confidence*100)}) + "\n")
			if len(f.Sources) == 0 {
				b.WriteString(f.Answer + "\n\n")
				continue
			}
			n := 0
			for _, src := range f.Sources {
				if src.Quote == "" || n == limit-2 {
					continue
				}
				fmt.Fprintf(&b, "- %s%s.\n", strings.TrimSuffix(src.Quote, "."), cite(p, s.Sources, src))
				n++
			}
			b.WriteString("\n")
		}
	case secChallenged:
		for _, c := range s.Contradictions {
			fmt.Fprintf(&b, "- %s\n", sentence("report_challenged", map[string]any{"Assumption": c.Assumption, "Statement": c.Statement,
				"Evidence": strings.TrimSuffix(c.Evidence, "."), "Cite": cite(p, s.Sources, c.Source)}))
		}
	case secGaps:
		for _, f := range s.Findings {
			if f.Gap {
				fmt.Fprintf(&b, "- %s\n", sentence("report_gap_item", map[string]any{"Question": f.Question}))
			}
		}
	case secRecommendations:
		due := dueDate(s.Today)
		team := sentence("report_owner", nil)
		owner := team
		if p.Project != "" {
			owner = sentence("report_owner_project", map[string]any{"Project": projectBare(p.Project)})
		}
		n := 0
		done := map[string]bool{}
		for _, c := range s.Contradictions {
			if done[c.Assumption] {
				continue
			}
			done[c.Assumption] = true
			fmt.Fprintf(&b, "%d. %s\n", n+1, sentence("report_revisit", map[string]any{"Assumption": c.Assumption, "Statement": c.Statement, "Owner": owner, "Due": due}))
			n++
		}
		for _, f := range s.Findings {
			if f.Gap {
				fmt.Fprintf(&b, "%d. %s\n", n+1, sentence("report_commission", map[string]any{"Question": f.Question, "Owner": team, "Due": due}))
				n++
			}
		}
		if n == 0 {
			fmt.Fprintf(&b, "1. %s\n", sentence("report_proceed", map[string]any{"Owner": owner, "Due": due}))
		}
	}
	return strings.TrimSpace(b.String())
}

// swotPart sorts a source's quote into a SWOT part by the corpus's cue words: the firm's own
// documents give strengths and weaknesses, outside sources naming a competitor or a threat cue
// give threats.
func swotPart(src Source, quote string) string {
	lq := strings.ToLower(quote)
	d := domain()
	if d == nil {
		return "Opportunities"
	}
	cues := d.Vocabulary.Report
	switch {
	case src.Kind != "web" && containsAny(lq, cues.OwnWeaknesses):
		return "Weaknesses"
	case src.Kind == "web" && (len(namedIn(quote, d.Competitors)) > 0 || containsAny(lq, cues.Threats)):
		return "Threats"
	case containsAny(lq, cues.Opportunities):
		return "Opportunities"
	case src.Kind != "web" && containsAny(lq, cues.Weaknesses):
		return "Weaknesses"
	case src.Kind != "web":
		return "Strengths"
	}
	return "Opportunities"
}

func lowered(ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = strings.ToLower(w)
	}
	return out
}

// dueDate is thirty days after today (YYYY-MM-DD), the recommendations' due date.
func dueDate(today string) string {
	t, err := time.Parse("2006-01-02", today)
	if err != nil {
		return sentence("report_due_unknown", nil)
	}
	return t.AddDate(0, 0, 30).Format("2006-01-02")
}

// sectionReviewer approves sections or sends them back once: an empty section, an executive
// summary over the user's bullet limit, or a section without citations where there is evidence.
func (a *Analyst) sectionReviewer(ctx context.Context, s ReportState) (ReportState, error) {
	approved := map[string]Section{}
	var again []SectionPlan
	for _, w := range s.Written {
		if _, ok := s.Approved[w.Name]; ok {
			continue
		}
		note := ""
		switch {
		case strings.TrimSpace(w.Content) == "":
			note = sentence("review_empty", nil)
		case w.Name == secSummary && strings.Count(w.Content, "\n- ")+1 > bulletLimit(s.Prefs) && strings.HasPrefix(w.Content, "- "):
			note = sentence("review_bullets", map[string]any{"Limit": bulletLimit(s.Prefs)})
		case w.Name != secRecommendations && w.Name != secGaps && len(s.Sources) > 0 && !hasCitation(w.Content, s.Prefs):
			note = sentence("review_cite", nil)
		}
		if note != "" && w.Attempt < 2 {
			brief := sectionBrief(w.Name, s.Prefs)
			if len(w.Findings) > 0 {
				brief = sentence("brief_findings", map[string]any{"IDs": strings.Join(w.Findings, ", ")})
			}
			again = append(again, SectionPlan{Name: w.Name, Order: w.Order, Attempt: w.Attempt + 1, Brief: brief, Note: note, Findings: w.Findings})
			continue
		}
		approved[w.Name] = w
	}
	if err := graph.Overwrite(ctx, "written", []Section{}); err != nil {
		return ReportState{}, err
	}
	if err := graph.Write(ctx, "sections", again); err != nil {
		return ReportState{}, err
	}
	return ReportState{Approved: approved}, nil
}

func hasCitation(text string, p Prefs) bool {
	switch p.Citation {
	case "author-date":
		return strings.Contains(text, ", 20")
	case "footnotes":
		return strings.Contains(text, "[^")
	}
	return strings.Contains(text, " [")
}

// assemble joins the approved sections into the Markdown report and its JSON.
func (a *Analyst) assemble(ctx context.Context, s ReportState) (ReportState, error) {
	var secs []Section
	for _, sec := range s.Approved {
		secs = append(secs, sec)
	}
	sort.Slice(secs, func(i, j int) bool { return secs[i].Order < secs[j].Order })
	date := a.now().UTC().Format("2006-01-02")
	title := sentence("report_title", map[string]any{"Topic": strings.TrimRight(s.Topic, "?.")})
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", title)
	meta := []string{date}
	if s.Prefs.Name != "" {
		meta = append([]string{sentence("report_prepared_for", map[string]any{"Name": s.Prefs.Name})}, meta...)
	}
	if s.Prefs.Project != "" {
		meta = append(meta, projectNamed(s.Prefs.Project))
	}
	meta = append(meta, sentence("report_framework", map[string]any{"Framework": s.Prefs.Framework}))
	fmt.Fprintf(&b, "_%s_\n\n", strings.Join(meta, " · "))
	var jsecs []map[string]any
	for _, sec := range secs {
		fmt.Fprintf(&b, "## %s\n\n%s\n\n", sec.Name, sec.Content)
		jsecs = append(jsecs, map[string]any{"name": sec.Name, "content": sec.Content})
	}
	var jsrc []map[string]any
	if len(s.Sources) > 0 {
		fmt.Fprintf(&b, "## %s\n\n", secSources)
		for i, src := range s.Sources {
			switch s.Prefs.Citation {
			case "footnotes":
				fmt.Fprintf(&b, "[^%d]: %s, %s (%s).\n", i+1, src.Title, src.Date, src.Ref)
			case "author-date":
				fmt.Fprintf(&b, "- %s (%s). %s.\n", src.Title, src.Date, src.Ref)
			default:
				fmt.Fprintf(&b, "%d. %s, %s (%s).\n", i+1, src.Title, src.Date, src.Ref)
			}
			jsrc = append(jsrc, map[string]any{"n": i + 1, "title": src.Title, "date": src.Date, "ref": src.Ref, "kind": src.Kind})
		}
	}
	js := map[string]any{"title": title, "date": date, "prepared_for": s.Prefs.Name, "project": s.Prefs.Project,
		"framework": s.Prefs.Framework, "citation_style": s.Prefs.Citation, "sections": jsecs, "sources": jsrc}
	return ReportState{Draft: strings.TrimSpace(b.String()) + "\n", JSON: js}, nil
}
