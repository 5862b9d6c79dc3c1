package vesper

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strings"

	"github.com/trellis-go/trellis/agent/supervisor"
	"github.com/trellis-go/trellis/apps/vesper/pack"
	"github.com/trellis-go/trellis/apps/vesper/tools"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
)

// RuleRouter is the supervisor's classifier when no real model is
// configured: a model.Model that answers the route schema by the app's
// rules. It extracts the filters ([Extract]), resolves a project name
// against the tenant's live projects, and scores each domain by the offline
// model's pick, its keywords and its boosts (Domain.Boosts: data, in
// pack/words.json for the built-in domains); the best of each Group is kept,
// so a multi-domain question routes to several agents, which run in parallel.
// No rule names a domain: a new one routes by its own data.
type RuleRouter struct{ app *assistant }

// Route classifies one request for a tenant.
func (rr *RuleRouter) Route(ctx context.Context, tenant, text string) supervisor.Route {
	a := rr.app
	f := Extract(text, a.cfg.Now())
	lower := strings.ToLower(text)
	// scoring is the text the domains' keywords are looked for in: without
	// a report's name, whose words ("Day-Ahead Curves Dashboard") would
	// otherwise count as a price question's.
	scoring := lower
	if tenant != "" {
		rr.names(ctx, tenant, text, &f, &scoring)
	}
	// The model reads the scoring text too: a report's name ("Project Health Report") is not
	// a project question.
	picked := rr.modelPicks(ctx, scoring)
	counts := filterCounts(f)
	best := map[string]int{}
	scores := map[string]int{}
	for _, d := range a.domains {
		s := 0
		// The offline model's pick, from vesper's pack (its intents' example phrasings).
		if picked[d.Name] {
			s += 2
		}
		for _, k := range d.Keywords {
			if strings.Contains(scoring, k) {
				s++
			}
		}
		s = boosted(s, d.Boosts, counts)
		scores[d.Name] = s
		if d.Group != "" && s > best[d.Group] {
			best[d.Group] = s
		}
	}
	var r supervisor.Route
	picked = map[string]bool{}
	for _, d := range a.domains {
		s := scores[d.Name]
		if s == 0 || (d.Group != "" && (s < best[d.Group] || picked["group:"+d.Group])) {
			continue
		}
		if d.Group != "" {
			picked["group:"+d.Group] = true
		}
		r.Agents = append(r.Agents, d.Name)
	}
	// A SQL statement goes to the agent whose views it reads (each agent has
	// general_sql_query), whatever words it contains.
	if f.SQL != "" {
		r.Agents = rr.sqlAgents(strings.ToLower(f.SQL))
	}
	// A question naming, say, a vendor alone but nothing else goes to the domain that takes it
	// as a fallback (Domain.Fallback).
	if len(r.Agents) == 0 && strings.HasSuffix(strings.TrimSpace(lower), "?") {
		for _, d := range a.domains {
			if slices.ContainsFunc(d.Fallback, func(name string) bool { return counts[name] > 0 }) {
				r.Agents = []string{d.Name}
				break
			}
		}
	}
	r.Filters, _ = json.Marshal(f)
	return r
}

// sqlAgents is the domain a SQL statement (lower case) goes to: the first whose views
// (Domain.SQLViews) it reads, else the first with Domain.SQLDefault; none when no domain
// takes it.
func (rr *RuleRouter) sqlAgents(sql string) []string {
	for _, d := range rr.app.domains {
		if slices.ContainsFunc(d.SQLViews, func(v string) bool { return strings.Contains(sql, v) }) {
			return []string{d.Name}
		}
	}
	for _, d := range rr.app.domains {
		if d.SQLDefault {
			return []string{d.Name}
		}
	}
	return nil
}

// filterCounts is how many values each filter holds, by its JSON name (a list its length, any
// other value one); a filter not named is absent.
func filterCounts(f Filters) map[string]int {
	var m map[string]json.RawMessage
	raw, _ := json.Marshal(f)
	_ = json.Unmarshal(raw, &m)
	out := make(map[string]int, len(m))
	for name, v := range m {
		var list []json.RawMessage
		if json.Unmarshal(v, &list) == nil {
			out[name] = len(list)
		} else {
			out[name] = 1
		}
	}
	return out
}

// boosted is a domain's score s changed by its boosts, given the filters' counts: each boost
// whose condition holds adds to it, and a veto that holds makes it 0.
func boosted(s int, boosts []pack.Boost, counts map[string]int) int {
	veto := false
	for _, b := range boosts {
		least := max(b.AtLeast, 1)
		if !slices.ContainsFunc(b.When, func(name string) bool { return counts[name] >= least }) ||
			slices.ContainsFunc(b.Unless, func(name string) bool { return counts[name] > 0 }) {
			continue
		}
		s += b.Add
		veto = veto || b.Veto
	}
	if veto {
		return 0
	}
	return s
}

// filterNames are the JSON names of Filters, which boosts and fallbacks may read.
var filterNames = func() map[string]bool {
	out := map[string]bool{}
	t := reflect.TypeFor[Filters]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out[name] = true
	}
	return out
}()

// checkRouting reports a domain's boost or fallback that reads a filter Filters does not have.
func checkRouting(d *Domain) error {
	var names []string
	for _, b := range d.Boosts {
		names = append(names, b.Filters()...)
	}
	for _, name := range append(names, d.Fallback...) {
		if !filterNames[name] {
			return fmt.Errorf("vesper: domain %q: its boosts or fallback read the filter %q, which is none of the extracted filters (%s); use their JSON names", d.Name, name, strings.Join(keys(filterNames), ", "))
		}
	}
	return nil
}

// modelPicks asks the offline model (with vesper's pack) which domains a request is for, as a
// real model is asked to call tools: one tool per domain, named and described as the domain is.
// A request whose clauses are for different domains gets several.
func (rr *RuleRouter) modelPicks(ctx context.Context, text string) map[string]bool {
	a := rr.app
	if a.offline == nil || strings.TrimSpace(text) == "" {
		return nil
	}
	specs := make([]model.ToolSpec, 0, len(a.domains))
	for _, d := range a.domains {
		specs = append(specs, model.ToolSpec{Name: d.Name, Description: d.Description,
			Parameters: json.RawMessage(`{"type":"object","properties":{"request":{"type":"string"}},"required":["request"]}`)})
	}
	resp, err := a.offline.Generate(ctx, &model.Request{Messages: []message.Message{message.User(text)}, Tools: specs})
	if err != nil {
		return nil
	}
	out := map[string]bool{}
	for _, c := range resp.Message.ToolCalls {
		out[c.Name] = true
	}
	return out
}

// Generate answers a classification request (one with a Schema).
func (rr *RuleRouter) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	text := ""
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == message.RoleUser {
			text = req.Messages[i].Text()
			break
		}
	}
	info, _ := rr.app.callerFrom(ctx)
	raw, err := json.Marshal(rr.Route(ctx, info.Tenant, text))
	if err != nil {
		return nil, err
	}
	return &model.Response{Message: message.Assistant(string(raw)), Structured: raw, FinishReason: model.FinishStop}, nil
}

// Stream yields Generate's answer as one chunk.
func (rr *RuleRouter) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		resp, err := rr.Generate(ctx, req)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		yield(model.Chunk{Text: resp.Message.Text(), FinishReason: resp.FinishReason}, nil)
	}
}

// usageWords say that a question is about report usage, so a report's name
// in it is a filter (and not, say, the words "project health").
var usageWords = pack.Vocabulary.Usage

// offtakeWords say that a question is about a PPA's offtaker.
var offtakeWords = pack.Vocabulary.Offtake

// names fills the filters that name the tenant's own data (projects,
// reports, sponsors, buyers), as people type them, and takes a report's
// name out of the scoring text.
func (rr *RuleRouter) names(ctx context.Context, tenant, text string, f *Filters, scoring *string) {
	a := rr.app
	lower := strings.ToLower(text)
	vocab, err := a.cfg.Toolkit.Vocabulary(ctx, tenant)
	if err != nil {
		vocab = tools.Vocabulary{}
	}
	tw := words(text)
	if has(lower, usageWords...) || hasCue(lower, "report") && hasCue(lower, "view") {
		if name, start, end, ok := findPhrase(tw, vocab.Reports, reportAliases); ok {
			f.ReportName = name
			*scoring = withoutWords(tw, start, end)
			tw = strings.Fields(*scoring)
		}
	}
	// A capitalised run that names a project exactly or in part.
	for _, cand := range capitalisedRuns(text) {
		m, err := a.cfg.Toolkit.Projects().Resolve(ctx, tenant, cand)
		if err == nil && (m.Name != "" || m.Ambiguous()) {
			f.ProjectName = cand
			if m.Name != "" {
				f.ProjectName = m.Name
			}
			break
		}
	}
	// A project as people type it: any case, with typos and spacing variants.
	if f.ProjectName == "" {
		if m, ok := findName(tw, vocab.Projects, 0.85); ok {
			f.ProjectName = m.Name
		}
	}
	// A name that looks like a project's but is none: the tools answer
	// "no project matches" with the close names, rather than the question
	// falling back to the whole portfolio.
	if f.ProjectName == "" {
		for _, cand := range capitalisedRuns(text) {
			if looksLikeProject(cand) {
				f.ProjectName = cand
				break
			}
		}
	}
	// A project by the first word of its name alone ("risks for nazareth").
	if f.ProjectName == "" {
		if name, ok := findLead(tw, vocab.Projects); ok {
			f.ProjectName = name
		}
	}
	if f.ProjectName != "" && f.Technology != "" && strings.Contains(strings.ToLower(f.ProjectName), strings.ToLower(f.Technology)) {
		f.Technology = ""
	}
	if hasCue(lower, "sponsor") {
		if name, ok := findPerson(tw, vocab.Sponsors); ok {
			f.Sponsor = name
		}
	}
	if has(lower, offtakeWords...) || hasCue(lower, "buyer_link") && f.ProjectName == "" {
		if m, ok := findName(tw, vocab.Buyers, 0.85); ok {
			f.Buyer = m.Name
		}
	}
}

// projectWords end a project's name.
var projectWords = set(pack.Vocabulary.ProjectEnds)

// looksLikeProject reports whether a capitalised run reads as a project's
// name: two or more words, the last a technology ("Foobar Wind").
func looksLikeProject(run string) bool {
	ws := words(run)
	return len(ws) >= 2 && projectWords[ws[len(ws)-1]]
}
