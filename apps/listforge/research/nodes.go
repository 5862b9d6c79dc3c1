package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/trellis-go/trellis/apps/listforge/pricing"
	"github.com/trellis-go/trellis/apps/listforge/store"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
)

// Relevance thresholds: comps at or above Kept are evidence; at or above Priced they price.
const (
	Kept   = 0.5
	Priced = 0.7
)

// Relevance scores how close a listing is to the identified product by the rules (see Judge).
func Relevance(c store.Evidence, id *store.ProductIdentification, item *store.Item) float64 {
	cond := ""
	if item != nil {
		cond = item.Condition
	}
	return Judge(c, Profile(id, item), cond).Score
}

func round2(x float64) float64 { return float64(int(x*100+0.5)) / 100 }

// Borderline is the range of rule scores a configured model rescored: comparables the rules
// neither keep for the price nor exclude for a differing attribute.
var Borderline = [2]float64{0.35, 0.85}

// ModelBatch is how many comparables go to the model in one request.
const ModelBatch = 15

func (r *Graph) analyzeComps(ctx context.Context, s State) (State, error) {
	scored, sum, msgs, err := ScoreCompRelevance(ctx, s.Comps, s.ProductIdentification, s.Item, r.cfg.Model)
	if err != nil {
		return State{}, err
	}
	return State{Comps: scored, Comparables: sum, Messages: msgs}, nil
}

// RelevancePrompt asks a model how relevant listings are to the item (the specification's
// scoreCompRelevance with a model).
const RelevancePrompt = `You judge comparable listings for pricing a second-hand item. For each listing, say how relevant
its sale price is to the item's price, from 0 (another product, variant, size, edition, an accessory, parts, a lot) to 1
(the same product and variant). Respond in JSON: {"scores": [{"id": string, "relevance": number, "reason": string}]}`

var relevanceSchema = json.RawMessage(`{"type":"object","properties":{"scores":{"type":"array","items":{"type":"object","properties":{
"id":{"type":"string"},"relevance":{"type":"number"},"reason":{"type":"string"}},"required":["id","relevance"]}}},"required":["scores"]}`)

// ScoreCompRelevance scores each comparable by the rules (Judge), recording the reasons in its
// extractedData ("relevance"); with a model, the borderline ones (rule score in Borderline, no
// differing attribute) are scored by the model in batches of ModelBatch, the rule score
// remaining where the model fails or leaves one out. It returns the comps and what was kept
// and dropped, and why.
func ScoreCompRelevance(ctx context.Context, comps []store.Evidence, id *store.ProductIdentification, item *store.Item, m model.Model) ([]store.Evidence, *store.CompSummary, []message.Message, error) {
	p := Profile(id, item)
	cond := ""
	if item != nil {
		cond = item.Condition
	}
	scored := make([]store.Evidence, len(comps))
	judged := make([]Judgement, len(comps))
	var border []int
	for i, c := range comps {
		j := Judge(c, p, cond)
		judged[i] = j
		ed := make(map[string]any, len(c.ExtractedData)+1)
		for k, v := range c.ExtractedData {
			ed[k] = v
		}
		ed["relevance"] = map[string]any{"by": "rules", "reasons": orNone(j.Reasons)}
		c.ExtractedData = ed
		c.RelevanceScore = j.Score
		scored[i] = c
		if !j.Hard && j.Score >= Borderline[0] && j.Score < Borderline[1] {
			border = append(border, i)
		}
	}
	sum := &store.CompSummary{Considered: len(comps), Reasons: map[string]int{}}
	var msgs []message.Message
	if m != nil && len(border) > 0 {
		for start := 0; start < len(border); start += ModelBatch {
			batch := border[start:min(start+ModelBatch, len(border))]
			got, msg, err := modelScores(ctx, m, p, item, scored, batch)
			if err != nil {
				if errors.Is(modelFailure("", err), ErrPaused) && ctx.Err() != nil {
					return nil, nil, nil, ctx.Err()
				}
				continue // the rule scores stay
			}
			msgs = append(msgs, msg)
			for _, i := range batch {
				g, ok := got[scored[i].ID]
				if !ok {
					continue
				}
				scored[i].RelevanceScore = round2(math.Max(0, math.Min(1, g.Relevance)))
				rel := scored[i].ExtractedData["relevance"].(map[string]any)
				rel["by"], rel["ruleScore"] = "model", judged[i].Score
				if g.Reason != "" {
					rel["modelReason"] = g.Reason
				}
				sum.ModelScored++
			}
		}
	}
	for i, c := range scored {
		switch {
		case c.RelevanceScore >= Priced:
			sum.Kept++
			sum.Priced++
		case c.RelevanceScore >= Kept:
			sum.Kept++
		default:
			sum.Dropped++
			why := "scored low by the model"
			if rs := judged[i].Reasons; len(rs) > 0 {
				why = ReasonKind(rs[len(rs)-1])
				for _, r := range rs {
					if k := ReasonKind(r); k != "few of the model's words" && !strings.HasSuffix(k, "not stated") && !strings.HasPrefix(k, "another condition") {
						why = k
						break
					}
				}
			}
			sum.Reasons[why]++
		}
	}
	return scored, sum, msgs, nil
}

func orNone(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

type modelScore struct {
	ID        string  `json:"id"`
	Relevance float64 `json:"relevance"`
	Reason    string  `json:"reason"`
}

func modelScores(ctx context.Context, m model.Model, p ItemProfile, item *store.Item, comps []store.Evidence, batch []int) (map[string]modelScore, message.Message, error) {
	type listing struct {
		ID        string   `json:"id"`
		Title     string   `json:"title"`
		Condition string   `json:"condition,omitempty"`
		Price     *float64 `json:"price,omitempty"`
	}
	ls := make([]listing, len(batch))
	for k, i := range batch {
		c := comps[i]
		ls[k] = listing{ID: c.ID, Title: c.Title, Condition: c.Condition, Price: c.Price}
	}
	it := map[string]any{"attributes": p.Attrs}
	if item != nil {
		it["title"], it["description"], it["condition"] = item.Title, item.Description, item.Condition
	}
	in, _ := json.Marshal(map[string]any{"item": it, "listings": ls})
	resp, err := m.Generate(ctx, &model.Request{Messages: []message.Message{message.System(RelevancePrompt), message.User(string(in))},
		Schema: &model.Schema{Name: "comp_relevance", JSON: relevanceSchema}})
	if err != nil {
		return nil, message.Message{}, err
	}
	var out struct {
		Scores []modelScore `json:"scores"`
	}
	raw := resp.Structured
	if len(raw) == 0 {
		raw = json.RawMessage(resp.Message.Text())
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, message.Message{}, fmt.Errorf("research: the model's relevance scores are not the JSON asked for: %w", err)
	}
	got := make(map[string]modelScore, len(out.Scores))
	for _, sc := range out.Scores {
		got[sc.ID] = sc
	}
	return got, resp.Message, nil
}

// PricingPrompt is the specification's Appendix A pricing prompt; the model sees the
// statistics and may move the bands within CheckRefined's bounds.
const PricingPrompt = `You are a pricing expert. Based on the comparable sales data provided, determine optimal price bands.
Consider recent sales (weighted higher), condition differences, market velocity, fees and shipping.
Respond in JSON: {"priceBands": [{"label": "floor"|"target"|"ceiling", "amount": number, "confidence": number, "reasoning": string}]}`

var bandsSchema = json.RawMessage(`{"type":"object","properties":{"priceBands":{"type":"array","items":{"type":"object","properties":{
"label":{"type":"string"},"amount":{"type":"number"},"confidence":{"type":"number"},"reasoning":{"type":"string"}},"required":["label","amount"]}}},"required":["priceBands"]}`)

// PricingComps turns the comps at or above Priced into pricing comps, their prices adjusted to
// the item's condition.
func PricingComps(comps []store.Evidence, item *store.Item) []pricing.Comp {
	var out []pricing.Comp
	target := 0.0
	if item != nil && item.Condition != "" {
		target = ConditionFactor(item.Condition)
	}
	for _, c := range comps {
		if c.RelevanceScore < Priced || c.Price == nil {
			continue
		}
		p := *c.Price
		if target > 0 && c.Condition != "" {
			p = p * target / ConditionFactor(c.Condition)
		}
		pc := pricing.Comp{Price: p, Relevance: c.RelevanceScore, Sold: c.Type == "sold_listing"}
		pc.SoldAt, _ = time.Parse(time.RFC3339, c.SoldDate)
		pc.ListedAt, _ = time.Parse(time.RFC3339, c.ListedDate)
		out = append(out, pc)
	}
	return out
}

func (r *Graph) calculatePrice(ctx context.Context, s State) (State, error) {
	comps := PricingComps(s.Comps, s.Item)
	now := r.cfg.Now()
	var sold []pricing.Comp
	for _, c := range comps {
		if c.Sold {
			sold = append(sold, c)
		}
	}
	currency := "USD"
	if s.Item != nil && s.Item.Currency != "" {
		currency = s.Item.Currency
	}
	basis := sold
	if len(basis) == 0 {
		basis = comps // Insights unavailable: asking prices are all there is
	}
	idConf := 0.35
	if s.ProductIdentification != nil {
		idConf = s.ProductIdentification.Confidence
	}
	demand := toDemand(pricing.DemandSignals(comps, "ebay", 90*24*time.Hour, now))
	if len(basis) == 0 {
		out := State{OverallConfidence: 0.1, DemandSignals: demand, Notes: []string{MsgLimited}}
		if s.Item != nil && s.Item.DefaultPrice != nil && *s.Item.DefaultPrice > 0 {
			p := *s.Item.DefaultPrice
			why := "No comparable sales were found; an estimate around your asking price."
			out.PriceBands = []store.PriceBand{
				{Label: "floor", Amount: round2(p * 0.8), Currency: currency, Confidence: 0.1, Reasoning: why},
				{Label: "target", Amount: round2(p), Currency: currency, Confidence: 0.1, Reasoning: why},
				{Label: "ceiling", Amount: round2(p * 1.2), Currency: currency, Confidence: 0.1, Reasoning: why},
			}
		}
		if err := graph.Overwrite(ctx, "priceBands", out.PriceBands); err != nil {
			return State{}, err
		}
		out.PriceBands = nil
		return out, nil // a pass with no comps writes its note; see below for the others
	}
	st := pricing.Compute(basis, now)
	if s.Comparables != nil {
		sum := *s.Comparables
		sum.Outliers = st.Trimmed
		if err := graph.Overwrite(ctx, "comparables", &sum); err != nil {
			return State{}, err
		}
	}
	conf := pricing.Confidence(st.N, st.Spread, idConf)
	if len(sold) == 0 {
		conf = min(conf, 0.5) // asking prices, not sales
	}
	bands := pricing.Bands(st, conf, currency)
	var msgs []message.Message
	var notes []string
	if r.cfg.Model != nil {
		refined, msg, err := r.refineBands(ctx, s, bands, st)
		switch {
		case err == nil:
			bands, msgs = refined, []message.Message{msg}
		case errors.Is(err, ErrPaused):
			return State{}, err
		default:
			notes = append(notes, "The model's price bands were not used: "+err.Error())
		}
	}
	out := State{PriceBands: toBands(bands), DemandSignals: demand, OverallConfidence: conf, Messages: msgs}
	if conf < 0.4 {
		notes = append(notes, MsgLimited)
	}
	// Overwrite, so that a later pass with better data drops an earlier pass's warning.
	if err := graph.Overwrite(ctx, "notes", notes); err != nil {
		return State{}, err
	}
	return out, nil
}

func (r *Graph) refineBands(ctx context.Context, s State, bands []pricing.Band, st pricing.Stats) ([]pricing.Band, message.Message, error) {
	top := make([]store.Evidence, 0, 10)
	for _, c := range s.Comps {
		if c.RelevanceScore >= Priced && len(top) < 10 {
			top = append(top, c)
		}
	}
	in, _ := json.Marshal(map[string]any{"item": s.Item, "productId": s.ProductIdentification, "comps": top, "stats": st, "computedBands": bands})
	resp, err := r.cfg.Model.Generate(ctx, &model.Request{Messages: []message.Message{message.System(PricingPrompt), message.User(string(in))},
		Schema: &model.Schema{Name: "price_bands", JSON: bandsSchema}})
	if err != nil {
		return nil, message.Message{}, modelFailure("pricing", err)
	}
	var out struct {
		PriceBands []pricing.Band `json:"priceBands"`
	}
	if err := json.Unmarshal(resp.Structured, &out); err != nil {
		return nil, message.Message{}, err
	}
	refined, err := pricing.CheckRefined(bands, out.PriceBands, st)
	return refined, resp.Message, err
}

func toBands(bs []pricing.Band) []store.PriceBand {
	out := make([]store.PriceBand, len(bs))
	for i, b := range bs {
		out[i] = store.PriceBand(b)
	}
	return out
}

func toDemand(ds []pricing.Demand) []store.DemandSignal {
	out := make([]store.DemandSignal, len(ds))
	for i, d := range ds {
		out[i] = store.DemandSignal(d)
	}
	return out
}

// MissingPrompt asks a model what information would improve the research.
const MissingPrompt = `List the information missing from this item that would make its identification or price more accurate.
Respond in JSON: {"missingInfo": [{"field": string, "importance": "required"|"recommended"|"optional", "reason": string, "suggestedPrompt": string}]}`

var missingSchema = json.RawMessage(`{"type":"object","properties":{"missingInfo":{"type":"array","items":{"type":"object","properties":{
"field":{"type":"string"},"importance":{"type":"string","enum":["required","recommended","optional"]},"reason":{"type":"string"},
"suggestedPrompt":{"type":"string"}},"required":["field","importance","reason"]}}},"required":["missingInfo"]}`)

// MissingInfo lists the gaps the rules see: what identifies the product, its condition, photos,
// and a model number when few close comparables were found.
func MissingInfo(s State) []store.MissingInfoHint {
	var out []store.MissingInfoHint
	id := s.ProductIdentification
	it := s.Item
	if id == nil || id.Brand == "" {
		out = append(out, store.MissingInfoHint{Field: "brand", Importance: "required", Reason: "The brand was not found on the photos or in the details.",
			SuggestedPrompt: "What brand is it? A photo of the logo or label helps."})
	}
	if id == nil || id.Source == "title" {
		out = append(out, store.MissingInfoHint{Field: "model_number", Importance: "required", Reason: "The exact model could not be identified, so comparables may be for other models.",
			SuggestedPrompt: "What model number is printed on the item or its label?"})
	}
	relevant := 0
	for _, c := range s.Comps {
		if c.RelevanceScore >= Priced {
			relevant++
		}
	}
	if id != nil && id.Source != "title" && relevant < 5 {
		out = append(out, store.MissingInfoHint{Field: "model_number", Importance: "recommended",
			Reason:          fmt.Sprintf("Only %d close comparable listings were found; sellers often list this product by its part number.", relevant),
			SuggestedPrompt: "What model or part number (MPN) is printed on the item or its label?"})
	}
	if it != nil && strings.TrimSpace(it.Condition) == "" {
		out = append(out, store.MissingInfoHint{Field: "condition", Importance: "required", Reason: "Condition moves the price by half or more.",
			SuggestedPrompt: "What condition is it in: new, like new, used, or for parts?"})
	}
	if it != nil && len(it.Media) == 0 {
		out = append(out, store.MissingInfoHint{Field: "photos", Importance: "recommended", Reason: "Photos confirm the model and condition.",
			SuggestedPrompt: "Can you add a photo of the item and its label?"})
	}
	if it != nil && len(it.Description) < 20 {
		out = append(out, store.MissingInfoHint{Field: "description", Importance: "optional", Reason: "A description with flaws and accessories helps buyers."})
	}
	return out
}

func (r *Graph) assessMissing(ctx context.Context, s State) (State, error) {
	hints := MissingInfo(s)
	var msgs []message.Message
	if r.cfg.Model != nil {
		in, _ := json.Marshal(map[string]any{"item": s.Item, "productId": s.ProductIdentification, "confidence": s.OverallConfidence, "compCount": len(s.Comps)})
		resp, err := r.cfg.Model.Generate(ctx, &model.Request{Messages: []message.Message{message.System(MissingPrompt), message.User(string(in))},
			Schema: &model.Schema{Name: "missing_info", JSON: missingSchema}})
		if err != nil {
			if errors.Is(modelFailure("", err), ErrPaused) {
				return State{}, modelFailure("assessing missing information", err)
			}
		} else {
			var out struct {
				MissingInfo []store.MissingInfoHint `json:"missingInfo"`
			}
			if json.Unmarshal(resp.Structured, &out) == nil {
				have := map[string]bool{}
				for _, h := range hints {
					have[h.Field] = true
				}
				for _, h := range out.MissingInfo {
					if !have[h.Field] {
						hints = append(hints, h)
					}
				}
				msgs = []message.Message{resp.Message}
			}
		}
	}
	// Written with Overwrite so that an empty list replaces the previous pass's.
	if err := graph.Overwrite(ctx, "missingInfo", hints); err != nil {
		return State{}, err
	}
	return State{Messages: msgs}, nil
}

// RefinedQueries are the refine pass's queries, one per non-optional missing field that can
// be acted on, leaving out queries already run.
func RefinedQueries(s State) []string {
	done := map[string]bool{}
	for _, q := range s.SearchQueries {
		done[strings.ToLower(q)] = true
	}
	id := s.ProductIdentification
	var out []string
	add := func(q string) {
		q = strings.Join(strings.Fields(q), " ")
		if q != "" && !done[strings.ToLower(q)] {
			done[strings.ToLower(q)] = true
			out = append(out, q)
		}
	}
	for _, m := range s.MissingInfo {
		if m.Importance == "optional" {
			continue
		}
		switch m.Field {
		case "model_number", "mpn":
			if id != nil && id.MPN != "" {
				add(id.Brand + " " + id.MPN)
			}
			if id != nil && id.Source != "title" {
				// The model without its variant words: more listings, scored down if they differ.
				words := strings.Fields(id.Model)
				if len(words) > 1 {
					add(id.Brand + " " + strings.Join(words[:len(words)-1], " "))
				}
			}
		case "condition":
			// nothing to search for until the user answers
		default:
			if s.Item != nil {
				if v := attr(s.Item, m.Field); v != "" && len(s.SearchQueries) > 0 {
					add(s.SearchQueries[0] + " " + v)
				}
			}
		}
	}
	return out
}

func (r *Graph) refineSearch(ctx context.Context, s State) (State, error) {
	queries := RefinedQueries(s)
	out := State{Iteration: s.Iteration + 1}
	if len(queries) == 0 {
		return out, nil
	}
	comps, err := r.search(ctx, queries, r.cfg.Limits.Refine, 0)
	if err != nil {
		return State{}, err
	}
	out.Comps, out.SearchQueries = comps, queries
	return out, nil
}

// Marketplaces recommends where to list: eBay always; Facebook Marketplace for bulky or cheap
// items that sell locally (the knowledge's localPickup); Amazon for new items with a UPC.
func Marketplaces(s State) []string {
	out := []string{"ebay"}
	target := 0.0
	for _, b := range s.PriceBands {
		if b.Label == "target" {
			target = b.Amount
		}
	}
	cat := ""
	if s.ProductIdentification != nil {
		cat = strings.ToLower(strings.Join(s.ProductIdentification.Category, " "))
	}
	local := know.LocalPickup
	bulky := slices.ContainsFunc(local.Categories, func(w string) bool { return strings.Contains(cat, w) })
	if (target > 0 && target < local.Below) || bulky {
		out = append(out, "facebook_marketplace")
	}
	if s.ProductIdentification != nil && s.ProductIdentification.UPC != "" && s.Item != nil && ConditionFactor(s.Item.Condition) >= 0.9 {
		out = append(out, "amazon")
	}
	return out
}

func (r *Graph) persistResults(ctx context.Context, s State) (State, error) {
	w, err := who(ctx, s)
	if err != nil {
		return State{}, err
	}
	active := 0
	var evidence []store.Evidence
	for _, c := range s.Comps {
		if c.Type == "active_listing" && c.RelevanceScore >= Kept {
			active++
		}
		if c.RelevanceScore >= Kept {
			evidence = append(evidence, c)
		}
	}
	sort.SliceStable(evidence, func(i, j int) bool { return evidence[i].RelevanceScore > evidence[j].RelevanceScore })
	data := store.ResearchData{ProductID: s.ProductIdentification, PriceBands: s.PriceBands, DemandSignals: s.DemandSignals,
		MissingInfo: s.MissingInfo, CompetitorCount: &active, Comparables: s.Comparables, RecommendedMarketplaces: Marketplaces(s), OverallConfidence: s.OverallConfidence,
		Notes: dedupe(s.Notes), GeneratedAt: r.cfg.Now().UTC().Format(time.RFC3339), Version: store.SchemaVersion}
	if data.PriceBands == nil {
		data.PriceBands = []store.PriceBand{}
	}
	if _, _, err := r.cfg.Store.SaveResults(ctx, w, s.ItemID, s.ResearchRunID, data, evidence); err != nil {
		return State{}, err
	}
	return State{Done: true}, nil
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
