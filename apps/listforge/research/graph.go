package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/trellis-go/trellis/apps/listforge/ebay"
	"github.com/trellis-go/trellis/apps/listforge/store"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/tool"
)

// Node names, in the order the progress panel shows them.
const (
	NodeLoadContext     = "load_context"
	NodeAnalyzeMedia    = "analyze_media"
	NodeIdentifyProduct = "identify_product"
	NodeSearchComps     = "search_comps"
	NodeAnalyzeComps    = "analyze_comps"
	NodeCalculatePrice  = "calculate_price"
	NodeAssessMissing   = "assess_missing"
	NodeRefineSearch    = "refine_search"
	NodePersistResults  = "persist_results"
)

// Nodes are the graph's nine nodes in order.
var Nodes = []string{NodeLoadContext, NodeAnalyzeMedia, NodeIdentifyProduct, NodeSearchComps, NodeAnalyzeComps,
	NodeCalculatePrice, NodeAssessMissing, NodeRefineSearch, NodePersistResults}

// Messages the user sees (the specification's Appendix B).
const (
	MsgNotReady = "Item not ready for research"
	MsgLimited  = "Limited data available, prices are estimates"
	MsgPaused   = "Research paused, will resume automatically"
)

// ErrPaused marks a node failure worth resuming later (an API that timed out after its
// retries): the job pauses and resumes from its last checkpoint.
var ErrPaused = errors.New("research paused: an external API did not answer after retries")

// Config configures New. Store and Market are required.
type Config struct {
	Store  *store.Store
	Market *ebay.Client
	// Vision reads photos; Model identifies products, refines prices and lists missing
	// information. Nil, or the offline model, means the deterministic logic of this package.
	Vision, Model model.Model
	// ImageDirs are where photos given as file paths are read from (offline labels).
	ImageDirs []string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Compile configures the compiled graph (saver, store). The saver is wrapped in a
	// DegradingSaver.
	Compile graph.CompileOptions
	// Log records a checkpoint saver's failures; nil logs nothing.
	Log *slog.Logger
	// Limits is how many listings each search asks for; zero values are the specification's
	// (20 sold, 10 active, 10 sold per refine query).
	Limits Limits
	// BeforeNode, when set, is called as each node starts (before its work); tests use it to
	// hold a job at a step.
	BeforeNode func(ctx context.Context, node string)
}

// Limits are the sizes of the searches for comparables.
type Limits struct {
	Sold, Active, Refine int
}

// DefaultLimits are the specification's: searchSoldListings limit 20, searchActiveListings
// limit 10, and 10 sold listings per refine query.
var DefaultLimits = Limits{Sold: 20, Active: 10, Refine: 10}

// Check names a limit out of range (1 to 200).
func (l Limits) Check() error {
	for _, x := range []struct {
		name string
		v    int
	}{{"sold", l.Sold}, {"active", l.Active}, {"refine", l.Refine}} {
		if x.v < 0 || x.v > 200 {
			return fmt.Errorf("research: the %s search limit %d is out of range: give 1 to 200 listings (0 means the default)", x.name, x.v)
		}
	}
	return nil
}

func (l Limits) orDefault() Limits {
	if l.Sold == 0 {
		l.Sold = DefaultLimits.Sold
	}
	if l.Active == 0 {
		l.Active = DefaultLimits.Active
	}
	if l.Refine == 0 {
		l.Refine = DefaultLimits.Refine
	}
	return l
}

// Graph is the compiled ResearchGraph with what it runs on.
type Graph struct {
	*graph.Compiled[State]
	cfg Config
}

// Market is the eBay client the graph searches with.
func (r *Graph) Market() *ebay.Client { return r.cfg.Market }

func isOffline(m model.Model) bool {
	return m == nil || model.IsOffline(m)
}

// New builds the ResearchGraph.
func New(cfg Config) (*Graph, error) {
	if cfg.Store == nil || cfg.Market == nil {
		return nil, errors.New("research: Config.Store and Config.Market are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := cfg.Limits.Check(); err != nil {
		return nil, err
	}
	cfg.Limits = cfg.Limits.orDefault()
	if isOffline(cfg.Vision) {
		cfg.Vision = nil
	}
	if isOffline(cfg.Model) {
		cfg.Model = nil
	}
	r := &Graph{cfg: cfg}
	g := graph.New[State]()
	graph.SetReducer(g, "comps", MergeComps)
	graph.SetReducer(g, "searchQueries", UnionQueries)
	for name, fn := range map[string]graph.NodeFunc[State]{NodeLoadContext: r.loadContext, NodeAnalyzeMedia: r.analyzeMedia,
		NodeIdentifyProduct: r.identifyProduct, NodeSearchComps: r.searchComps, NodeAnalyzeComps: r.analyzeComps,
		NodeCalculatePrice: r.calculatePrice, NodeAssessMissing: r.assessMissing, NodeRefineSearch: r.refineSearch,
		NodePersistResults: r.persistResults} {
		g.AddNode(name, reporting(name, fn, cfg.BeforeNode))
	}
	g.AddEdge(graph.START, NodeLoadContext)
	g.AddConditionalEdges(NodeLoadContext, func(_ context.Context, s State) (string, error) {
		if s.Error != "" {
			return "abort", nil
		}
		return "continue", nil
	}, map[string]string{"abort": graph.END, "continue": NodeAnalyzeMedia})
	g.AddSequence(NodeAnalyzeMedia, NodeIdentifyProduct, NodeSearchComps, NodeAnalyzeComps, NodeCalculatePrice, NodeAssessMissing)
	g.AddConditionalEdges(NodeAssessMissing, func(_ context.Context, s State) (string, error) { return ShouldRefine(s), nil },
		map[string]string{"refine": NodeRefineSearch, "persist": NodePersistResults})
	g.AddEdge(NodeRefineSearch, NodeAnalyzeComps)
	g.AddEdge(NodePersistResults, graph.END)
	co := cfg.Compile
	co.Name = "listforge-research"
	if co.Saver != nil {
		if _, ok := co.Saver.(*DegradingSaver); !ok {
			co.Saver = &DegradingSaver{Inner: co.Saver, Log: cfg.Log}
		}
	}
	c, err := g.Compile(co)
	if err != nil {
		return nil, err
	}
	r.Compiled = c
	return r, nil
}

// ProgressKind marks the custom stream events of Progress.
const ProgressKind = "listforge.progress"

// Progress is a custom stream event each node sends as it starts and ends, so that a job's
// progress is recorded and shown from small events (the tasks stream would carry the state).
type Progress struct {
	Kind   string `json:"kind"`
	Node   string `json:"node"`
	Phase  string `json:"phase"`            // start, end
	Status string `json:"status,omitempty"` // success, error (at the end)
	Error  string `json:"error,omitempty"`
	// Abort is set when load_context stopped the research (the item is not ready).
	Abort string `json:"abort,omitempty"`
	// Thread and Step locate the node's checkpoint: the one written after this step.
	Thread string `json:"thread,omitempty"`
	Step   int    `json:"step"`
}

func reporting(name string, fn graph.NodeFunc[State], before func(context.Context, string)) graph.NodeFunc[State] {
	return func(ctx context.Context, s State) (State, error) {
		info, _ := graph.InfoFrom(ctx)
		graph.Emit(ctx, Progress{Kind: ProgressKind, Node: name, Phase: "start", Thread: info.ThreadID, Step: info.Step})
		if before != nil {
			before(ctx, name)
		}
		if err := ctx.Err(); err != nil {
			return State{}, err
		}
		out, err := fn(ctx, s)
		p := Progress{Kind: ProgressKind, Node: name, Phase: "end", Status: "success", Abort: out.Error, Thread: info.ThreadID, Step: info.Step}
		if err != nil {
			p.Status, p.Error = "error", err.Error()
		}
		graph.Emit(ctx, p)
		return out, err
	}
}

// ShouldRefine is the specification's should_refine: persist at the iteration limit or once
// confident; refine when some non-optional missing information has a question to act on.
func ShouldRefine(s State) string {
	if s.Iteration >= maxIter(s) {
		return "persist"
	}
	if s.OverallConfidence >= threshold(s) {
		return "persist"
	}
	for _, m := range s.MissingInfo {
		if m.Importance != "optional" && m.SuggestedPrompt != "" {
			return "refine"
		}
	}
	return "persist"
}

func maxIter(s State) int {
	if s.MaxIterations <= 0 {
		return 3
	}
	return s.MaxIterations
}

func threshold(s State) float64 {
	if s.ConfidenceThreshold <= 0 {
		return 0.7
	}
	return s.ConfidenceThreshold
}

// who is the organisation the run acts for: the caller's tenant, which the server puts in
// every run's context. A graph run without one (a test invoking it directly) uses the input's
// organizationId.
func who(ctx context.Context, s State) (store.Who, error) {
	info, _ := tool.CallInfoFrom(ctx)
	if info.Tenant != "" {
		if s.OrganizationID != "" && s.OrganizationID != info.Tenant {
			return store.Who{}, fmt.Errorf("research: the input names organisation %q but the caller belongs to %q", s.OrganizationID, info.Tenant)
		}
		return store.Who{Org: info.Tenant, User: info.User}, nil
	}
	if s.OrganizationID == "" {
		return store.Who{}, errors.New("research: no organisation: run it through the server, or give organizationId")
	}
	return store.Who{Org: s.OrganizationID}, nil
}

func (r *Graph) loadContext(ctx context.Context, s State) (State, error) {
	if s.ItemID == "" {
		return State{Error: MsgNotReady + ": give the itemId of an item to research", Notes: []string{MsgNotReady}}, nil
	}
	w, err := who(ctx, s)
	if err != nil {
		return State{Error: MsgNotReady + ": " + err.Error(), Notes: []string{MsgNotReady}}, nil
	}
	it, err := r.cfg.Store.GetItem(ctx, w, s.ItemID)
	if errors.Is(err, store.ErrNotFound) {
		return State{Error: MsgNotReady + ": no such item in your organisation", Notes: []string{MsgNotReady}}, nil
	}
	if err != nil {
		return State{}, err
	}
	if why := notReady(it); why != "" {
		return State{Error: MsgNotReady + ": " + why, Notes: []string{MsgNotReady}}, nil
	}
	out := State{Item: it, OrganizationID: w.Org}
	if s.MaxIterations == 0 {
		out.MaxIterations = 3
	}
	if s.ConfidenceThreshold == 0 {
		out.ConfidenceThreshold = 0.7
	}
	prev, err := r.cfg.Store.LatestResearch(ctx, w, s.ItemID)
	if err != nil {
		return State{}, err
	}
	if prev != nil {
		out.ExistingResearch = &prev.Data
	}
	return out, nil
}

// notReady says why an item cannot be researched, or "".
func notReady(it *store.Item) string {
	if it.LifecycleStatus == "archived" {
		return "the item is archived"
	}
	if strings.TrimSpace(it.Title) == "" && strings.TrimSpace(it.Description) == "" && len(it.Media) == 0 {
		return "add a title, a description or a photo first"
	}
	return ""
}

// MediaAnalysisPrompt is the specification's Appendix A media prompt.
const MediaAnalysisPrompt = `You are an expert product analyst. Analyze the provided product images and extract:
1. Product Category  2. Brand (logos, labels)  3. Model/Version  4. Condition (1-5, note damage)
5. Key Features  6. Text Extraction (serial numbers, labels, UPC)  7. Completeness.
Respond in JSON: {"category": string, "brand": string|null, "model": string|null, "conditionScore": number,
"conditionNotes": string, "features": {}, "extractedText": {}, "completeness": "complete"|"partial"|"unknown", "confidence": number}`

var mediaSchema = json.RawMessage(`{"type":"object","properties":{"category":{"type":"string"},"brand":{"type":["string","null"]},
"model":{"type":["string","null"]},"conditionScore":{"type":"number"},"conditionNotes":{"type":"string"},
"features":{"type":"object","additionalProperties":{"type":"string"}},"extractedText":{"type":"object","additionalProperties":{"type":"string"}},
"completeness":{"type":"string"},"confidence":{"type":"number"}},"required":["category","confidence"]}`)

// images returns up to four image parts of the item.
func images(it *store.Item) []message.Part {
	var parts []message.Part
	for _, m := range it.Media {
		if (m.Type == "" || m.Type == "image") && m.URL != "" {
			parts = append(parts, message.Part{Type: message.PartImage, ImageURL: m.URL, Text: m.Caption})
			if len(parts) == 4 {
				break
			}
		}
	}
	return parts
}

func (r *Graph) analyzeMedia(ctx context.Context, s State) (State, error) {
	parts := images(s.Item)
	if len(parts) == 0 {
		return State{}, nil
	}
	if r.cfg.Vision == nil {
		return State{MediaAnalysis: readLabels(parts, r.cfg.ImageDirs)}, nil
	}
	req := &model.Request{Messages: []message.Message{message.System(MediaAnalysisPrompt),
		{Role: message.RoleUser, Parts: append([]message.Part{{Type: message.PartText, Text: "Analyze these product images:"}}, parts...)}},
		Schema: &model.Schema{Name: "media_analysis", JSON: mediaSchema}}
	resp, err := r.cfg.Vision.Generate(ctx, req)
	if err != nil {
		return State{}, modelFailure("analysing the photos", err)
	}
	var ma MediaAnalysis
	if err := json.Unmarshal(resp.Structured, &ma); err != nil {
		return State{}, fmt.Errorf("research: the vision model's analysis is not the JSON asked for: %w", err)
	}
	ma.Images = len(parts)
	return State{MediaAnalysis: &ma, Messages: []message.Message{resp.Message}}, nil
}

// modelFailure wraps a model error: a timeout or an overloaded provider pauses the job.
func modelFailure(doing string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "timeout") || strings.Contains(err.Error(), " 429") ||
		strings.Contains(err.Error(), " 503") {
		return fmt.Errorf("%w: %s: %v", ErrPaused, doing, err)
	}
	return fmt.Errorf("research: %s: %w", doing, err)
}

// readLabels is the offline vision: what each photo says about itself (package offline's
// labels: data URL parameters, PNG text, EXIF, sidecar files).
func readLabels(parts []message.Part, dirs []string) *MediaAnalysis {
	ma := &MediaAnalysis{Features: map[string]string{}, ExtractedText: map[string]string{}, Completeness: "unknown", Images: len(parts)}
	seen := 0
	for _, p := range parts {
		fields, err := offline.DescribeImage(p, dirs...)
		if err != nil {
			continue
		}
		seen++
		for k, v := range fields {
			val := strings.TrimSpace(fmt.Sprint(v))
			if list, ok := v.([]any); ok {
				var xs []string
				for _, x := range list {
					xs = append(xs, fmt.Sprint(x))
				}
				val = strings.Join(xs, ", ")
			}
			if val == "" {
				continue
			}
			switch strings.ToLower(k) {
			case "brand":
				ma.Brand = val
			case "model":
				ma.Model = val
			case "category":
				ma.Category = val
			case "condition":
				ma.ConditionNotes = val
				ma.ConditionScore = conditionScore(val)
			case "completeness":
				ma.Completeness = val
			case "upc", "gtin", "ean", "mpn", "serial", "text", "label", "labels":
				ma.ExtractedText[strings.ToLower(k)] = val
			default:
				ma.Features[strings.ToLower(k)] = val
			}
		}
	}
	switch {
	case seen == 0:
		ma.Confidence = 0
	case ma.ExtractedText["upc"] != "" || ma.Brand != "" && ma.Model != "":
		ma.Confidence = 0.9
	default:
		ma.Confidence = 0.5
	}
	return ma
}

func conditionScore(c string) float64 {
	f := ConditionFactor(c)
	return math.Round(1+4*(f-0.28)/(1-0.28)*10) / 10
}

// ProductPrompt asks a model to identify the product.
const ProductPrompt = `Identify the product from the item's title, description, attributes and the photo analysis.
Respond in JSON: {"confidence": number 0-1, "brand": string, "model": string, "mpn": string, "upc": string, "category": [string], "attributes": {}}`

var productSchema = json.RawMessage(`{"type":"object","properties":{"confidence":{"type":"number"},"brand":{"type":"string"},"model":{"type":"string"},
"mpn":{"type":"string"},"upc":{"type":"string"},"category":{"type":"array","items":{"type":"string"}},"attributes":{"type":"object"}},"required":["confidence"]}`)

func (r *Graph) identifyProduct(ctx context.Context, s State) (State, error) {
	it := s.Item
	ma := s.MediaAnalysis
	if ma == nil {
		ma = &MediaAnalysis{}
	}
	upc := ma.ExtractedText["upc"]
	if upc == "" {
		upc = attr(it, "upc", "gtin", "ean")
	}
	if upc != "" {
		id, err := r.lookupUPC(ctx, upc)
		if err != nil && ebay.Transient(err) {
			return State{}, fmt.Errorf("%w: UPC lookup: %v", ErrPaused, err)
		}
		if id != nil {
			return State{ProductIdentification: id}, nil
		}
	}
	brand := firstNonEmpty(ma.Brand, attr(it, "brand"))
	mdl := firstNonEmpty(ma.Model, attr(it, "model"))
	mpn := firstNonEmpty(ma.ExtractedText["mpn"], attr(it, "mpn", "model_number"))
	if brand != "" && mdl != "" {
		id := &store.ProductIdentification{Confidence: 0.8, Brand: brand, Model: mdl, MPN: mpn, Source: "labels", Attributes: map[string]any{}}
		if ma.Category != "" {
			id.Category = []string{ma.Category}
		}
		for k, v := range ma.Features {
			id.Attributes[k] = v
		}
		return State{ProductIdentification: id}, nil
	}
	// What the seller wrote: a brand and model in the title or description, an MPN.
	text := IdentifyText(it.Title, it.Description, it.Attributes)
	if text != nil && brand != "" && text.Brand == "" {
		text.Brand = brand
	}
	if text != nil && text.MPN == "" {
		text.MPN = mpn
	}
	if text != nil && text.Brand != "" && text.Model != "" {
		if ma.Category != "" {
			text.Category = append([]string{ma.Category}, text.Category...)
		}
		return State{ProductIdentification: text}, nil
	}
	if r.cfg.Model != nil {
		ctxJSON, _ := json.Marshal(map[string]any{"title": it.Title, "description": it.Description, "attributes": it.Attributes, "mediaAnalysis": s.MediaAnalysis})
		resp, err := r.cfg.Model.Generate(ctx, &model.Request{Messages: []message.Message{message.System(ProductPrompt), message.User(string(ctxJSON))},
			Schema: &model.Schema{Name: "product_identification", JSON: productSchema}})
		if err != nil {
			return State{}, modelFailure("identifying the product", err)
		}
		var id store.ProductIdentification
		if err := json.Unmarshal(resp.Structured, &id); err == nil && (id.Brand != "" || id.Model != "") {
			id.Source = "model"
			id.Confidence = math.Min(id.Confidence, 0.85)
			if id.Attributes == nil {
				id.Attributes = map[string]any{}
			}
			return State{ProductIdentification: &id, Messages: []message.Message{resp.Message}}, nil
		}
	}
	// From the title alone: a weak identification.
	id := &store.ProductIdentification{Confidence: 0.35, Brand: brand, Model: strings.TrimSpace(it.Title), MPN: mpn, Source: "title", Attributes: map[string]any{}}
	if ma.Category != "" {
		id.Category = []string{ma.Category}
	}
	return State{ProductIdentification: id}, nil
}

// lookupUPC finds the product with this UPC through the Browse API's GTIN search and the
// item's details; nil when none is listed.
func (r *Graph) lookupUPC(ctx context.Context, upc string) (*store.ProductIdentification, error) {
	ls, err := r.cfg.Market.SearchGTIN(ctx, upc, 3)
	if err != nil || len(ls) == 0 {
		return nil, err
	}
	d, err := r.cfg.Market.GetItem(ctx, ls[0].ItemID)
	if err != nil {
		return nil, err
	}
	mdl := strings.TrimSpace(d.Aspects["Model"] + " " + d.Aspects["Variant"])
	if mdl == "" {
		mdl = d.Title
	}
	id := &store.ProductIdentification{Confidence: 0.95, Brand: d.Brand, Model: mdl, MPN: d.MPN, UPC: upc, Source: "upc_lookup",
		Attributes: map[string]any{"epid": d.EPID}}
	if d.CategoryPath != "" {
		id.Category = strings.Split(d.CategoryPath, "|")
	}
	if d.Aspects["Variant"] != "" {
		id.Attributes["variant"] = d.Aspects["Variant"]
	}
	return id, nil
}

func attr(it *store.Item, keys ...string) string {
	for _, k := range keys {
		for ak, v := range it.Attributes {
			if strings.EqualFold(ak, k) {
				if s := strings.TrimSpace(fmt.Sprint(v)); s != "" && v != nil {
					return s
				}
			}
		}
	}
	return ""
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if strings.TrimSpace(x) != "" {
			return strings.TrimSpace(x)
		}
	}
	return ""
}

// SearchQueries are the first pass's queries: the identified product's name, or the title.
func SearchQueries(s State) []string {
	id := s.ProductIdentification
	var q string
	if id != nil && id.Source != "title" && id.Model != "" {
		q = strings.TrimSpace(id.Brand + " " + id.Model)
		if id.Brand != "" && strings.HasPrefix(strings.ToLower(id.Model), strings.ToLower(id.Brand)) {
			q = id.Model
		}
		if v, _ := id.Attributes["variant"].(string); id.Source == "text" && v != "" {
			q += " " + v // what the seller wrote: the model's name is short without it
		}
	} else if s.Item != nil {
		q = s.Item.Title
	}
	q = strings.Join(strings.Fields(q), " ")
	if q == "" {
		return nil
	}
	return []string{q}
}

// maxBroader is how many broader queries a first pass that found nothing tries.
const maxBroader = 4

// BroaderQueries are the queries a first pass tries, in turn, when the product's name found
// no listing (a marketplace's search wants every word, and a seller's words are not the
// listings'): without colours, without the variant, then without the model's trailing words
// that hold no digit (its first word stays).
func BroaderQueries(s State) []string {
	first := SearchQueries(s)
	id := s.ProductIdentification
	if len(first) == 0 || id == nil || id.Source == "title" || id.Model == "" {
		return nil
	}
	done := map[string]bool{strings.ToLower(first[0]): true}
	var out []string
	add := func(words []string) {
		q := strings.Join(strings.Fields(strings.Join(words, " ")), " ")
		if q != "" && !done[strings.ToLower(q)] {
			done[strings.ToLower(q)] = true
			out = append(out, q)
		}
	}
	var plain []string
	for _, w := range strings.Fields(first[0]) {
		if !know.colors[strings.ToLower(w)] {
			plain = append(plain, w)
		}
	}
	add(plain)
	brand := []string{}
	if id.Brand != "" && !strings.HasPrefix(strings.ToLower(id.Model), strings.ToLower(id.Brand)) {
		brand = strings.Fields(id.Brand)
	}
	model := strings.Fields(id.Model)
	add(append(append([]string{}, brand...), model...))
	for len(model) > 1 {
		i := len(model) - 1
		for i >= 1 && strings.ContainsAny(model[i], "0123456789") {
			i--
		}
		if i < 1 {
			break // the model's first word stays
		}
		model = append(append([]string{}, model[:i]...), model[i+1:]...)
		add(append(append([]string{}, brand...), model...))
	}
	if len(out) > maxBroader {
		out = out[:maxBroader]
	}
	return out
}

func (r *Graph) searchComps(ctx context.Context, s State) (State, error) {
	queries := SearchQueries(s)
	comps, err := r.search(ctx, queries, r.cfg.Limits.Sold, r.cfg.Limits.Active)
	if err != nil {
		return State{}, err
	}
	for _, q := range BroaderQueries(s) {
		if len(comps) > 0 {
			break
		}
		queries = append(queries, q)
		if comps, err = r.search(ctx, []string{q}, r.cfg.Limits.Sold, r.cfg.Limits.Active); err != nil {
			return State{}, err
		}
	}
	return State{Comps: comps, SearchQueries: queries}, nil
}

// search runs each query against sold and (activeLimit > 0) active listings in parallel. A
// failed search is left out (as Promise.allSettled); when every search failed on a transient
// error the node fails with ErrPaused.
func (r *Graph) search(ctx context.Context, queries []string, soldLimit, activeLimit int) ([]store.Evidence, error) {
	type result struct {
		ev  []store.Evidence
		err error
	}
	var calls []func() result
	now := r.cfg.Now().UTC().Format(time.RFC3339)
	for _, q := range queries {
		calls = append(calls, func() result {
			ls, fellBack, err := r.cfg.Market.SearchSold(ctx, q, soldLimit)
			return result{toEvidence(ls, q, fellBack, now), err}
		})
		if activeLimit > 0 {
			calls = append(calls, func() result {
				ls, err := r.cfg.Market.SearchActive(ctx, q, activeLimit)
				return result{toEvidence(ls, q, false, now), err}
			})
		}
	}
	results := make([]result, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = call()
		}()
	}
	wg.Wait()
	var out []store.Evidence
	failed, transient := 0, 0
	var last error
	for _, res := range results {
		if res.err != nil {
			failed++
			last = res.err
			if ebay.Transient(res.err) {
				transient++
			}
			continue
		}
		out = append(out, res.ev...)
	}
	if len(calls) > 0 && failed == len(calls) {
		if transient == failed {
			return nil, fmt.Errorf("%w: %v", ErrPaused, last)
		}
		return nil, fmt.Errorf("research: searching eBay: %w", last)
	}
	return MergeComps(nil, out), nil
}

func toEvidence(ls []ebay.Listing, query string, fellBack bool, fetched string) []store.Evidence {
	out := make([]store.Evidence, 0, len(ls))
	for _, l := range ls {
		e := store.Evidence{ID: "ebay:" + l.ItemID, Type: "active_listing", Source: "ebay", SourceID: l.ItemID, URL: l.URL, Title: l.Title,
			Currency: l.Currency, Condition: l.Condition, ImageURL: l.ImageURL, FetchedAt: fetched,
			ExtractedData: map[string]any{"query": query, "conditionId": l.ConditionID}}
		if l.Price > 0 {
			p := l.Price
			e.Price = &p
		}
		if l.Sold {
			e.Type = "sold_listing"
			e.SoldDate = l.SoldAt.UTC().Format(time.RFC3339)
		}
		if !l.ListedAt.IsZero() {
			e.ListedDate = l.ListedAt.UTC().Format(time.RFC3339)
		}
		if l.EPID != "" {
			e.ExtractedData["epid"] = l.EPID
		}
		if l.Category != "" {
			e.ExtractedData["category"] = l.Category
		}
		if fellBack {
			e.ExtractedData["fallback"] = "Marketplace Insights unavailable: active listing used in place of sales"
		}
		out = append(out, e)
	}
	return out
}
