package vesper

import (
	"context"
	"encoding/json"
	"github.com/trellis-go/trellis/apps/vesper/pack"
	"iter"
	"strings"

	"github.com/trellis-go/trellis/agent/supervisor"
	"github.com/trellis-go/trellis/apps/vesper/tools"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
)

// RuleRouter is the supervisor's classifier when no real model is
// configured: a model.Model that answers the route schema by the app's
// rules. It extracts the filters ([Extract]), resolves a project name
// against the tenant's live projects, and scores each domain by its
// keywords; the best of each Group is kept, so a multi-domain question
// routes to several agents, which run in parallel.
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
		if d.Name == "per_agent" && (f.ProjectName != "" || f.Sponsor != "" || f.Buyer != "" || f.RiskLevel != "") {
			s += 2
		}
		if d.Name == "pbi_metrics_agent" && f.ReportName != "" {
			s += 2
		}
		// Two markets or hub-zones side by side is the price-curve agent's
		// comparison; it outweighs the offline model's pick of a price domain.
		if d.Name == "price_curve_agent" && (len(f.Markets) >= 2 || len(f.HubZones) >= 2) {
			s += 3
		}
		// A project's own prices (its PPA) are the project agent's: a price
		// domain needs a market, hub-zone or vendor when a project is named.
		if d.Group == "prices" && f.ProjectName != "" && f.Market == "" && f.HubZone == "" && f.Vendor == "" {
			s = 0
		}
		if d.Group == "prices" && (f.HubZone != "" || f.Market != "") {
			s++
		}
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
		sql := strings.ToLower(f.SQL)
		switch {
		case strings.Contains(sql, "pbi_activity_events"):
			r.Agents = []string{"pbi_metrics_agent"}
		case strings.Contains(sql, "mc_dayahead") || strings.Contains(sql, "mc_vendor_files"):
			r.Agents = []string{"dayahead_agent"}
		default:
			r.Agents = []string{"per_agent"}
		}
	}
	// A question naming a vendor or a market alone but nothing else is about prices.
	if len(r.Agents) == 0 && (f.Vendor != "" || f.HubZone != "") && strings.HasSuffix(strings.TrimSpace(lower), "?") {
		r.Agents = []string{"dayahead_agent"}
	}
	r.Filters, _ = json.Marshal(f)
	return r
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
