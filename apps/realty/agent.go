package realty

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/apps/realty/realtyapi"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/appkit"
	"github.com/trellis-go/trellis/tool"
)

// Limits of the agent loop.
const (
	// MaxToolIterations bounds the model calls of one turn.
	MaxToolIterations = 8
	// VerbatimTurns is how many of the latest turns the model sees verbatim; older ones reach it
	// through the session's episodes (L2).
	VerbatimTurns = 5
	// HistoryResults and EpisodeResults are how many L3 summaries and L2 episodes are injected.
	HistoryResults = 3
	EpisodeResults = 3
)

// StructuredTools are the tools whose structured result ({"type": "listings"|"detail",
// "items": [...]}) is the turn's data.
var StructuredTools = map[string]bool{"search_properties": true, "get_property_details": true, "get_property_details_by_address": true}

// layerKey marks the context message holding the L2 episodes, which the loop places after
// the verbatim turns.
const layerKey = "realty_layer"

// turnContext says whom a model call or tool call serves.
type turnContext struct {
	Tenant, Session string
	Turn            int // the current turn's index, from 0
}

func tenantOf(ctx context.Context) string {
	if p, ok := server.PrincipalFrom(ctx); ok && p.Tenant != "" {
		return p.Tenant
	}
	if ci, ok := tool.CallInfoFrom(ctx); ok && ci.Tenant != "" {
		return ci.Tenant
	}
	return "default"
}

func sessionOfConfig(cfg map[string]any, threadID string) string {
	if s, ok := cfg["session_id"].(string); ok && s != "" {
		return s
	}
	if threadID != "" {
		return threadID
	}
	return "default"
}

// buildContext is the agent's per-call context, in the specification's order: the identity
// (AGENT.md), the instruction with the host's time zone, and the skills' system prompt; the
// skill's preferences (L1); similar past results (L3); then the session's older exchanges (L2),
// which the loop moves after the verbatim turns.
func (a *Realty) buildContext(ctx context.Context, in react.PromptInput) ([]message.Message, error) {
	tc := turnContext{Tenant: tenantOf(ctx), Session: sessionOfConfig(in.Config, in.ThreadID)}
	query, turn := appkit.LastUser(in.State.Messages), appkit.UserTurns(in.State.Messages)-1
	tc.Turn = turn
	var sys strings.Builder
	if id := a.reg.Identity(); id != "" {
		sys.WriteString(id + "\n\n")
	}
	now := a.now()
	fmt.Fprintf(&sys, "The user's time zone is %s; it is now %s there. Give times in that zone.\n", a.tz, now.Format("Monday 2 January 2006, 15:04 MST"))
	sys.WriteString("Answer from the tools' results; keep answers short.\n\n")
	sys.WriteString(a.reg.SystemPrompt())
	sys.WriteString("\n\n## Skill: " + SkillProperty + " (app tools)\n\nsave_search_criteria keeps the user's lasting criteria in the skill's preferences.")
	out := []message.Message{message.System(sys.String())}
	for _, skill := range a.skillNames() {
		// L1 holds only the user's own words (save_search_criteria keeps what the user said).
		prefs, err := a.mem.Preferences(ctx, tc.Tenant, skill)
		if err != nil {
			return nil, err
		}
		if prefs != "" {
			m := message.System(fmt.Sprintf("Saved preferences (%s/preferences.md):\n%s", skill, a.san.Sanitize(prefs)))
			m.Metadata = map[string]any{layerKey: "L1"}
			out = append(out, m)
		}
		if query != "" {
			past, err := a.mem.History(ctx, tc.Tenant, skill, query, HistoryResults)
			if err != nil {
				return nil, err
			}
			if len(past) > 0 {
				// Earlier results are external text: data in a user message, never instructions.
				out = append(out, a.externalMessage("L3", fmt.Sprintf("Results from earlier sessions (%s), for reference:\n- %s", skill, strings.Join(past, "\n- "))))
			}
		}
	}
	// The previous exchange becomes an episode (L2) whatever client ran it (the app's routes
	// also save it as soon as the turn ends).
	if in.Call == 0 && turn >= 1 {
		if text := exchangeText(in.State.Messages, turn-1); text != "" {
			if err := a.mem.SaveEpisode(ctx, tc.Tenant, tc.Session, turn-1, text); err != nil {
				a.log.Warn("realty: saving an episode failed", "err", err)
			}
		}
	}
	if turn > VerbatimTurns && query != "" {
		eps, err := a.mem.Episodes(ctx, tc.Tenant, tc.Session, query, turn-VerbatimTurns, EpisodeResults)
		if err != nil {
			return nil, err
		}
		if len(eps) > 0 {
			out = append(out, a.externalMessage("L2", "Earlier in this conversation (older exchanges related to this message):\n- "+strings.Join(eps, "\n- ")))
		}
	}
	return out, nil
}

// externalMessage is text that holds external data (earlier results, episodes with their
// listings) as the model gets it: sanitized, inside the external-data label, in a user message,
// marked with its memory layer.
func (a *Realty) externalMessage(layer, text string) message.Message {
	m := message.User(a.san.WrapExternal(text))
	m.Metadata = map[string]any{layerKey: layer}
	return m
}

func (a *Realty) now() time.Time {
	if a.clock != nil {
		return a.clock().In(a.loc)
	}
	return time.Now().In(a.loc)
}

func (a *Realty) skillNames() []string {
	names := a.reg.Names()
	for _, n := range names {
		if n == SkillProperty {
			return names
		}
	}
	return append(names, SkillProperty)
}

// loop is realty's part of the agent loop, as one react.Middleware around each model call (so
// the graph keeps the agent's two nodes): the model sees the context, the last VerbatimTurns
// turns verbatim, the L2 episodes, then the current turn (Window); each call is bounded by
// timeout; offline, the turns the app's understanding recognises are answered by it; a final
// answer sends follow-up hints; a call that fails for good is reported as an outage.
type loop struct {
	timeout time.Duration
	// hints, when set, makes the model's final answer of a turn send three follow-up questions
	// as a custom event ({"hints": [...]}) to a run that streams the custom mode: how a client of
	// the Agent Protocol (trellis chat) gets them.
	hints func(ctx context.Context, msgs []message.Message) []string
	// outage, when set, is told of a call that failed for good because the model is
	// unavailable, so the routes can answer 503/502 with Retry-After.
	outage func(ctx context.Context, err error)
	// offline is set when the model is the offline one: the turns the app's understanding
	// recognises (details by address or reference, refinements, comparisons) are answered
	// by it.
	offline bool
}

// middleware is the loop as the agent's middleware.
func (l *loop) middleware() react.Middleware {
	return react.Middleware{Name: "realty", WrapModel: l.wrapModel}
}

func (l *loop) wrapModel(ctx context.Context, req *react.ModelRequest, next react.ModelHandler) (*model.Response, error) {
	r := *req
	// The window: the context (system prompt and layered messages) first, then the turns.
	r.Messages = Window(append(slices.Clip(req.Context), req.Messages...))
	r.Context = nil
	if l.offline {
		if resp := understand(r.Messages); resp != nil {
			r.Model = canned{resp} // streamed like a model's answer
			out, err := next(ctx, &r)
			if err == nil && len(out.Message.ToolCalls) == 0 {
				l.emitHints(ctx, r.Messages, out.Message.Text())
			}
			return out, err
		}
	}
	tctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	resp, err := next(tctx, &r)
	if err != nil {
		if l.outage != nil {
			l.outage(ctx, err)
		}
		return nil, err
	}
	if len(resp.Message.ToolCalls) == 0 {
		l.emitHints(ctx, r.Messages, resp.Message.Text())
	}
	return resp, nil
}

// HintsEvent is the custom event the graph sends after a turn's final answer when the run
// streams the custom mode: {"hints": ["...", "...", "..."]}.
type HintsEvent struct {
	Hints []string `json:"hints"`
}

// emitHints sends the follow-up questions of a final answer (text, no tool calls).
func (l *loop) emitHints(ctx context.Context, msgs []message.Message, answer string) {
	if l.hints == nil || strings.TrimSpace(answer) == "" || !graph.Streams(ctx, graph.ModeCustom) {
		return
	}
	var conv []message.Message
	for _, m := range msgs {
		if m.Metadata[layerKey] == nil && (m.Role == message.RoleUser || m.Role == message.RoleAssistant || m.Role == message.RoleTool) {
			conv = append(conv, m)
		}
	}
	conv = append(conv, message.Assistant(answer))
	if h := l.hints(ctx, conv); len(h) > 0 {
		graph.Emit(ctx, HintsEvent{Hints: h})
	}
}

// canned is a model whose answer is already known (the app's own understanding, offline).
type canned struct{ resp *model.Response }

func (c canned) Generate(context.Context, *model.Request) (*model.Response, error) {
	r := *c.resp
	return &r, nil
}

func (c canned) Stream(context.Context, *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		m := c.resp.Message
		if m.Content != "" && !yield(model.Chunk{Text: m.Content}, nil) {
			return
		}
		for i := range m.ToolCalls {
			if !yield(model.Chunk{ToolCall: &m.ToolCalls[i]}, nil) {
				return
			}
		}
		yield(model.Chunk{FinishReason: c.resp.FinishReason, Metadata: m.Metadata}, nil)
	}
}

// Window reorders and trims a request's messages as the model sees them.
func Window(msgs []message.Message) []message.Message {
	var head, l2, conv []message.Message
	for _, m := range msgs {
		switch {
		case m.Metadata[layerKey] == "L2":
			l2 = append(l2, m)
		case len(conv) == 0 && (m.Role == message.RoleSystem || m.Metadata[layerKey] != nil):
			head = append(head, m)
		default:
			conv = append(conv, m)
		}
	}
	var starts []int
	for i, m := range conv {
		if m.Role == message.RoleUser {
			starts = append(starts, i)
		}
	}
	cur := len(conv)
	if len(starts) > 0 {
		cur = starts[len(starts)-1]
	}
	from := 0
	if n := len(starts) - 1; n > VerbatimTurns {
		from = starts[n-VerbatimTurns]
	}
	out := make([]message.Message, 0, len(head)+len(l2)+len(conv)-from)
	out = append(out, head...)
	out = append(out, conv[from:cur]...)
	out = append(out, l2...)
	out = append(out, conv[cur:]...)
	return out
}

// routed is a skill's tool as the agent calls it: search_properties takes what it lacks from the
// saved preferences, and a useful result is scored and kept in the skill's history (L3).
type routed struct {
	tool.Tool
	skill string
	a     *Realty
}

func (r *routed) Call(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
	tenant := tenantOf(ctx)
	name := r.Spec().Name
	if name == "search_properties" {
		var err error
		if args, err = r.a.withSavedCriteria(ctx, tenant, args); err != nil {
			return nil, err
		}
	}
	if name == "get_property_details" {
		args = pointedListing(ctx, args)
	}
	res, err := r.Tool.Call(ctx, args)
	if err != nil {
		// An upstream error can quote the upstream's answer: its text is sanitized before the
		// executor logs it or turns it into the result the model reads.
		return nil, &sanitizedError{msg: r.a.san.Sanitize(err.Error()), err: err}
	}
	if res == nil {
		return nil, nil
	}
	// Sanitized here, before anything reads it (the executor's filter does it again for the
	// history): the summary below goes to the scorer and the store.
	r.a.san.FilterResult(ctx, &tool.FilterCall{}, res)
	if res.IsError {
		return res, nil
	}
	session := ""
	if ci, ok := tool.CallInfoFrom(ctx); ok {
		session = ci.ThreadID
	}
	if _, _, err := r.a.mem.ScoreAndSave(ctx, tenant, r.skill, session, summarize(name, args, res)); err != nil {
		r.a.log.Warn("realty: saving a result to the skill's history failed", "err", err)
	}
	return res, nil
}

// sanitizedError is a tool's error with its text sanitized; the cause stays for errors.Is.
type sanitizedError struct {
	msg string
	err error
}

func (e *sanitizedError) Error() string { return e.msg }
func (e *sanitizedError) Unwrap() error { return e.err }

// summarize writes the L3 summary of a result: what was asked and what came back, not the raw
// output.
func summarize(name string, args json.RawMessage, res *tool.Result) string {
	var d struct {
		Type  string `json:"type"`
		Items []struct {
			ZPID    string   `json:"zpid"`
			Address string   `json:"address"`
			Price   *float64 `json:"price"`
			Beds    *float64 `json:"beds"`
		} `json:"items"`
	}
	_ = json.Unmarshal(res.Structured, &d)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s returned %d %s", name, compactJSON(args), len(d.Items), d.Type)
	for i, it := range d.Items {
		if i == 3 {
			b.WriteString("; …")
			break
		}
		price := "?"
		if it.Price != nil {
			price = fmt.Sprintf("$%.0f", *it.Price)
		}
		fmt.Fprintf(&b, "; %s at %s (zpid %s)", it.Address, price, it.ZPID)
	}
	return b.String()
}

func compactJSON(raw json.RawMessage) string {
	var v map[string]any
	if json.Unmarshal(raw, &v) != nil || len(v) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// withSavedCriteria fills a search's missing location, price range, bedrooms, bathrooms and kind
// from the skill's saved preferences.
func (a *Realty) withSavedCriteria(ctx context.Context, tenant string, args json.RawMessage) (json.RawMessage, error) {
	var v map[string]any
	if len(args) > 0 && json.Unmarshal(args, &v) != nil {
		return args, nil
	}
	if v == nil {
		v = map[string]any{}
	}
	// A minimum price under $1,000 is a count the words gave ("at least 2"), not a price.
	if f, ok := v["min_price"].(float64); ok && f < 1000 {
		delete(v, "min_price")
	}
	// One amount read into both ends of the range: the words say which end it is.
	if lo, ok := v["min_price"].(float64); ok {
		if hi, ok := v["max_price"].(float64); ok && lo == hi {
			if floorWords(lastUserText(ctx)) {
				delete(v, "max_price")
			} else {
				delete(v, "min_price")
			}
		}
	}
	prefs, err := a.mem.Preferences(ctx, tenant, SkillProperty)
	if err != nil {
		return args, err
	}
	if prefs == "" {
		return json.Marshal(v)
	}
	saved := map[string]string{}
	for _, line := range strings.Split(prefs, "\n") {
		_, rest, ok := strings.Cut(line, "] ")
		if !ok {
			continue
		}
		k, val, ok := strings.Cut(rest, ": ")
		if ok {
			saved[strings.TrimSpace(k)] = strings.TrimSpace(val)
		}
	}
	empty := func(k string) bool {
		x, ok := v[k]
		if !ok || x == nil || x == "" || x == "any" {
			return true
		}
		f, isNum := x.(float64)
		return isNum && f == 0
	}
	for _, k := range []string{"location", "min_price", "max_price", "bedrooms", "bathrooms", "property_type"} {
		s, ok := saved[k]
		if !ok || !empty(k) {
			continue
		}
		if k == "location" || k == "property_type" {
			v[k] = s
			continue
		}
		var f float64
		if _, err := fmt.Sscanf(s, "%g", &f); err == nil {
			v[k] = f
		}
	}
	return json.Marshal(v)
}

// CriteriaArgs are save_search_criteria's arguments.
type CriteriaArgs struct {
	Location     string  `json:"location,omitempty" jsonschema:"the city and state the user wants to live in"`
	MinPrice     float64 `json:"min_price,omitempty" jsonschema:"the lowest price in US dollars"`
	MaxPrice     float64 `json:"max_price,omitempty" jsonschema:"the user's budget: the highest price in US dollars"`
	Bedrooms     float64 `json:"bedrooms,omitempty" jsonschema:"the fewest bedrooms"`
	Bathrooms    float64 `json:"bathrooms,omitempty" jsonschema:"the fewest bathrooms"`
	PropertyType string  `json:"property_type,omitempty" enum:"any,SINGLE_FAMILY,CONDO,TOWNHOUSE,MULTI_FAMILY" jsonschema:"the kind of home"`
}

// criteriaTool is save_search_criteria: the user's lasting criteria as typed entries of the
// property skill's preferences.md.
func (a *Realty) criteriaTool() (tool.Tool, error) {
	return tool.New("save_search_criteria", "Remember the user's lasting search criteria (location, budget, bedrooms, bathrooms, kind of home) for later sessions.",
		func(ctx context.Context, c CriteriaArgs) (string, error) {
			tenant := tenantOf(ctx)
			type entry struct{ typ, key, value string }
			var es []entry
			num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
			// A price under $1,000 is a count the words gave ("at least 2"), not a price; one
			// amount read into both ends is the end the words say.
			if c.MinPrice < 1000 {
				c.MinPrice = 0
			}
			if c.MinPrice > 0 && c.MinPrice == c.MaxPrice {
				if floorWords(lastUserText(ctx)) {
					c.MaxPrice = 0
				} else {
					c.MinPrice = 0
				}
			}
			// Only what the user said is kept: each value must be in the user's message (or in
			// the suggestion a short confirmation accepts), never taken from earlier results.
			said, dropped := a.userWords(ctx), []string{}
			if s := strings.TrimSpace(c.Location); s != "" {
				if SaysPlace(said, s) {
					es = append(es, entry{"LOCATION", "location", s})
				} else {
					dropped = append(dropped, "location "+s)
				}
			}
			for _, p := range []struct {
				key string
				v   float64
			}{{"min_price", c.MinPrice}, {"max_price", c.MaxPrice}} {
				switch {
				case p.v <= 0:
				case lexicon.SaysAmount(said, p.v):
					es = append(es, entry{"BUDGET", p.key, num(p.v)})
				default:
					dropped = append(dropped, p.key+" "+num(p.v))
				}
			}
			if c.Bedrooms > 0 {
				if n, ok := lexicon.Bedrooms(said); ok && n == c.Bedrooms {
					es = append(es, entry{"ROOMS", "bedrooms", num(c.Bedrooms)})
				} else {
					dropped = append(dropped, "bedrooms "+num(c.Bedrooms))
				}
			}
			if c.Bathrooms > 0 {
				if n, ok := lexicon.Bathrooms(said); ok && n == c.Bathrooms {
					es = append(es, entry{"ROOMS", "bathrooms", num(c.Bathrooms)})
				} else {
					dropped = append(dropped, "bathrooms "+num(c.Bathrooms))
				}
			}
			if c.PropertyType != "" && c.PropertyType != "any" {
				if lexicon.SaysType(said, c.PropertyType) {
					es = append(es, entry{"TYPE", "property_type", c.PropertyType})
				} else {
					dropped = append(dropped, "property_type "+c.PropertyType)
				}
			}
			if len(es) == 0 && len(dropped) > 0 {
				return "", fmt.Errorf("nothing saved: %s %s not in the user's message; save only what the user says, or ask them to confirm it", strings.Join(dropped, ", "), plural(len(dropped), "is", "are"))
			}
			if len(es) == 0 {
				return "", fmt.Errorf("nothing to save: give at least one of location, min_price, max_price, bedrooms, bathrooms, or property_type")
			}
			var saved []string
			for _, e := range es {
				if err := a.mem.SavePreference(ctx, tenant, SkillProperty, e.typ, e.key, e.value); err != nil {
					return "", err
				}
				saved = append(saved, fmt.Sprintf("[%s] %s: %s", e.typ, e.key, e.value))
			}
			out := "Saved to preferences.md: " + strings.Join(saved, "; ")
			if len(dropped) > 0 {
				out += ". Not saved, as the user did not say it: " + strings.Join(dropped, ", ")
			}
			return out, nil
		})
}

// pointedListing gives get_property_details the zpid it lacks from the listing the user points
// at ("the first one", "the second", "the cheapest", "the biggest") in the turn's or the
// conversation's last search results.
func pointedListing(ctx context.Context, args json.RawMessage) json.RawMessage {
	var v map[string]any
	if len(args) > 0 && json.Unmarshal(args, &v) != nil {
		return args
	}
	if z, _ := v["zpid"].(string); strings.TrimSpace(z) != "" {
		return args
	}
	st, ok := tool.StateFrom[react.State](ctx)
	if !ok {
		return args
	}
	// The words are the lexicon's (lexicon/en.json): the same resolution as the offline
	// understanding's references, over the last search's listings.
	var items []realtyapi.Listing
	query := ""
	for i := len(st.Messages) - 1; i >= 0; i-- {
		m := st.Messages[i]
		if query == "" && m.Role == message.RoleUser {
			query = m.Text()
		}
		if items == nil && m.Role == message.RoleTool && m.Name == "search_properties" && !m.IsError {
			if d := dataOf(m); d != nil && len(d.Items) > 0 {
				items = d.Items
			}
		}
	}
	if len(items) == 0 || query == "" {
		return args
	}
	refs := references(query, shown{listings: items})
	if len(refs) == 0 {
		return args
	}
	if v == nil {
		v = map[string]any{}
	}
	v["zpid"] = refs[0].ZPID
	out, err := json.Marshal(v)
	if err != nil {
		return args
	}
	return out
}

// userWords is what the user said in this turn: the last message, and when it only confirms a
// suggestion ("yes, save that"), the assistant's message it answers.
func (a *Realty) userWords(ctx context.Context) string {
	st, ok := tool.StateFrom[react.State](ctx)
	if !ok {
		return ""
	}
	msgs := st.Messages
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == message.RoleUser {
			last = i
			break
		}
	}
	if last < 0 {
		return ""
	}
	text := msgs[last].Text()
	if lexicon.IsConfirmation(text) {
		for i := last - 1; i >= 0; i-- {
			if msgs[i].Role == message.RoleUser {
				break
			}
			if msgs[i].Role == message.RoleAssistant && strings.TrimSpace(msgs[i].Content) != "" {
				text += "\n" + offlineText(msgs[i].Content)
				break
			}
		}
	}
	return text
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// lastUserText is the user's last message in the run's state, lower case.
func lastUserText(ctx context.Context) string {
	st, ok := tool.StateFrom[react.State](ctx)
	if !ok {
		return ""
	}
	return strings.ToLower(appkit.LastUser(st.Messages))
}

// floorWords reports words that make an amount a minimum ("over $300k", "at least").
func floorWords(s string) bool {
	for _, w := range []string{"over ", "above ", "at least", "more than", "starting at", "from $", "minimum"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// exchangeText is turn n of a conversation (from 0) as an episode: the question, the answer, the
// tools used and the listings seen.
func exchangeText(msgs []message.Message, n int) string {
	turn := -1
	var user, answer string
	var tools, seen []string
	for _, m := range msgs {
		if m.Role == message.RoleUser {
			turn++
		}
		if turn != n {
			continue
		}
		switch m.Role {
		case message.RoleUser:
			user = m.Text()
		case message.RoleAssistant:
			if t := strings.TrimSpace(m.Text()); t != "" {
				answer = t
			}
		case message.RoleTool:
			tools = append(tools, m.Name)
			if d := dataOf(m); d != nil {
				for i, it := range d.Items {
					if i == 5 {
						break
					}
					seen = append(seen, it.ZPID+" "+it.Address)
				}
			}
		}
	}
	if user == "" {
		return ""
	}
	text := "User: " + user + "\nAssistant: " + offlineText(answer)
	if len(tools) > 0 {
		text += "\nTools: " + strings.Join(tools, ", ")
	}
	if len(seen) > 0 {
		text += "\nListings: " + strings.Join(seen, "; ")
	}
	return text
}

// recordOutage keeps the model's unavailability for the thread whose call failed.
func (a *Realty) recordOutage(ctx context.Context, err error) {
	var ue *model.UnavailableError
	if !errors.As(err, &ue) {
		return
	}
	if info, ok := graph.InfoFrom(ctx); ok && info.ThreadID != "" {
		a.outages.Store(info.ThreadID, ue)
	}
}

// outage returns, and forgets, the model's unavailability during the thread's latest run.
func (a *Realty) outage(threadID string) (*model.UnavailableError, bool) {
	v, ok := a.outages.LoadAndDelete(threadID)
	if !ok {
		return nil, false
	}
	return v.(*model.UnavailableError), true
}

// outageError is what the routes say when the model is unavailable: 503 when it could not be
// reached or did not answer in time, 502 when it answered wrongly, with Retry-After.
func outageError(ue *model.UnavailableError) *apiError {
	code := http.StatusServiceUnavailable
	if ue.BadAnswer {
		code = http.StatusBadGateway
	}
	secs := max(1, int(ue.RetryAfter.Round(time.Second)/time.Second))
	return &apiError{code: code, retryAfter: secs, msg: fmt.Sprintf("the model is unavailable right now (%d attempts failed); your message is kept in the session: send it again in %d seconds", ue.Attempts, secs)}
}
