package app

import (
	"context"
	"encoding/json"
	"iter"
	"strings"

	"github.com/trellis-go/trellis/agent"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
)

// RuleRouter is the supervisor's classifier when no real model is
// configured: a model.Model that answers the route schema by the app's
// rules. It extracts the filters ([Extract]), resolves a project name
// against the tenant's live projects, and scores each domain by its
// keywords; the best of each Group is kept, so a multi-domain question
// routes to several agents, which run in parallel.
type RuleRouter struct{ app *App }

// Route classifies one request for a tenant.
func (rr *RuleRouter) Route(ctx context.Context, tenant, text string) agent.Route {
	a := rr.app
	f := Extract(text, a.cfg.Now())
	lower := strings.ToLower(text)
	if tenant != "" {
		for _, cand := range capitalisedRuns(text) {
			m, err := a.cfg.Toolkit.Projects().Resolve(ctx, tenant, cand)
			if err == nil && (m.Name != "" || m.Ambiguous()) {
				f.ProjectName = cand
				if m.Name != "" {
					f.ProjectName = m.Name
				}
				if f.Technology != "" && strings.Contains(strings.ToLower(f.ProjectName), strings.ToLower(f.Technology)) {
					f.Technology = ""
				}
				break
			}
		}
	}
	best := map[string]int{}
	scores := map[string]int{}
	for _, d := range a.domains {
		s := 0
		for _, k := range d.Keywords {
			if strings.Contains(lower, k) {
				s++
			}
		}
		if d.Name == "per_agent" && f.ProjectName != "" {
			s += 2
		}
		if d.Group == "prices" && (f.HubZone != "" || f.Market != "") {
			s++
		}
		scores[d.Name] = s
		if d.Group != "" && s > best[d.Group] {
			best[d.Group] = s
		}
	}
	var r agent.Route
	picked := map[string]bool{}
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
