package listforge

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trellis-go/trellis/agent"
	"github.com/trellis-go/trellis/apps/listforge/pack"
	"github.com/trellis-go/trellis/apps/listforge/research"
	"github.com/trellis-go/trellis/apps/listforge/store"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/server/appkit"
)

// ChatState is the ChatGraph's state (the specification's §5.4). Each turn starts from
// load_context, which replaces what the previous turn left: the session's state lives in the
// database, not in the graph.
type ChatState struct {
	SessionID string `json:"sessionId"`
	ItemID    string `json:"itemId"`
	UserID    string `json:"userId"`

	Messages    []message.Message `json:"messages" reduce:"messages"`
	UserMessage string            `json:"userMessage"`

	Item           *store.Item      `json:"item"`
	Research       *store.Research  `json:"research"`
	RecentEvidence []store.Evidence `json:"recentEvidence"`

	Intent string `json:"intent"` // question, action, research, unknown
	Topic  string `json:"topic"`  // what a question is about (one of Topics)
	// Ask is the price a compare question gives (0 when none).
	Ask float64 `json:"ask,omitempty"`
	// Update is the field update an action asks for, as understood (nil when none was named).
	Update    *ProposedUpdate  `json:"update,omitempty"`
	Response  string           `json:"response"`
	Actions   []store.Action   `json:"actions"`
	ToolCalls []store.ToolCall `json:"toolCalls"`
	// Streamed is true once the response's tokens went out on the messages stream.
	Streamed bool `json:"streamed"`
	// StreamID is the ID the response's tokens were streamed under; the turn's assistant message
	// takes it, so a client's chunks and the final message are one message.
	StreamID string `json:"streamId,omitempty"`
}

// Chat messages of the specification's Appendix B.
const (
	MsgTrouble        = "I'm having trouble right now. Try again?"
	MsgSessionExpired = "Session expired, please refresh"
	MsgToolFailure    = "I couldn't access that data. Let me try differently."
)

// StaleAfter is when research is old enough to suggest a refresh.
const StaleAfter = 7 * 24 * time.Hour

type chatGraph struct {
	*graph.Compiled[ChatState]
	a     *app
	model model.Model // a configured model; nil on the offline path
	// offline is the offline model with listforge's pack: it understands every message (and
	// stands in when the configured model fails).
	offline model.Model
	// Timeout bounds a model call before the fallback answer.
	timeout time.Duration
}

func newChatGraph(a *app, m model.Model) (*chatGraph, error) {
	c := &chatGraph{a: a, timeout: 20 * time.Second}
	switch {
	case m != nil && model.IsOffline(m):
		c.offline = m // the server gave it the app's pack
	default:
		c.model = m
		c.offline = offline.New(&offline.Options{Now: a.o.Now, Packs: []*offline.Pack{pack.Pack}})
	}
	g := graph.New[ChatState]()
	g.AddNode("load_context", c.loadContext)
	g.AddNode("route_intent", c.routeIntent)
	g.AddNode("answer_query", c.answerQuery)
	g.AddNode("handle_action", c.handleAction)
	g.AddNode("start_research", c.startResearch)
	g.AddNode("respond", c.respond)
	g.AddEdge(graph.START, "load_context")
	g.AddConditionalEdges("load_context", func(_ context.Context, s ChatState) (string, error) {
		if s.Response != "" {
			return "respond", nil // the session is gone: say so
		}
		return "route", nil
	}, map[string]string{"respond": "respond", "route": "route_intent"})
	g.AddConditionalEdges("route_intent", func(_ context.Context, s ChatState) (string, error) {
		switch s.Intent {
		case "action":
			return "action", nil
		case "research":
			return "research", nil
		}
		return "question", nil
	}, map[string]string{"question": "answer_query", "action": "handle_action", "research": "start_research"})
	g.AddEdge("answer_query", "respond")
	g.AddEdge("handle_action", "respond")
	g.AddEdge("start_research", "respond")
	g.AddEdge("respond", graph.END)
	co := a.d.Compile
	co.Name = ChatGraphID
	co.Durability = graph.DurabilityExit // the session lives in the database; one checkpoint a turn
	compiled, err := g.Compile(co)
	if err != nil {
		return nil, err
	}
	c.Compiled = compiled
	return c, nil
}

func (c *chatGraph) loadContext(ctx context.Context, s ChatState) (ChatState, error) {
	text := strings.TrimSpace(s.UserMessage)
	if text == "" {
		text = strings.TrimSpace(appkit.LastUser(s.Messages))
	}
	out, err := c.loadValues(ctx, s)
	if err != nil {
		return ChatState{}, err
	}
	// Each turn starts clean: what the previous turn wrote is replaced, except the keys this
	// node sets anew (a key without a reducer takes one write per step).
	resets := map[string]any{"userMessage": text, "intent": "unknown", "topic": "", "ask": 0.0, "update": (*ProposedUpdate)(nil), "response": "", "actions": []store.Action{},
		"toolCalls": []store.ToolCall{}, "streamed": false, "streamId": "", "item": (*store.Item)(nil), "research": (*store.Research)(nil),
		"recentEvidence": []store.Evidence{}}
	for k, set := range map[string]bool{"intent": out.Intent != "", "response": out.Response != "", "toolCalls": out.ToolCalls != nil,
		"item": out.Item != nil, "research": out.Research != nil, "recentEvidence": out.RecentEvidence != nil} {
		if set {
			delete(resets, k)
		}
	}
	for k, v := range resets {
		if err := graph.Overwrite(ctx, k, v); err != nil {
			return ChatState{}, err
		}
	}
	return out, nil
}

// loadValues reads the session's item, its research and evidence for the turn.
func (c *chatGraph) loadValues(ctx context.Context, s ChatState) (ChatState, error) {
	w, _ := callerOf(ctx)
	itemID := s.ItemID
	if s.SessionID != "" {
		ss, err := c.a.st.GetSession(ctx, w, s.SessionID)
		if err != nil {
			return ChatState{Response: MsgSessionExpired, Intent: "error"}, nil
		}
		itemID = ss.ItemID
	}
	if itemID == "" || w.Org == "" {
		return ChatState{}, nil
	}
	t := c.tools()
	out := ChatState{ItemID: itemID}
	calls := []store.ToolCall{}
	it, err := t.GetItemSnapshot(ctx, w, itemID)
	if errors.Is(err, store.ErrNotFound) {
		return ChatState{Response: MsgSessionExpired, Intent: "error"}, nil
	}
	if err != nil {
		if it, err = t.GetItemSnapshot(ctx, w, itemID); err != nil { // retry once
			return ChatState{Response: MsgToolFailure, Intent: "error"}, nil
		}
	}
	out.Item = it
	calls = append(calls, store.ToolCall{Tool: "getItemSnapshot", Args: map[string]any{"itemId": itemID}})
	if out.Research, err = t.GetResearch(ctx, w, itemID); err == nil {
		calls = append(calls, store.ToolCall{Tool: "getResearch", Args: map[string]any{"itemId": itemID}})
	}
	if ev, err := t.GetEvidence(ctx, w, itemID, 10); err == nil && ev != nil {
		out.RecentEvidence = ev
		calls = append(calls, store.ToolCall{Tool: "getEvidence", Args: map[string]any{"itemId": itemID, "limit": 10}})
	}
	out.ToolCalls = calls
	return out, nil
}

// Topics a question may be about.
var Topics = []string{"count", "why", "compare", "comps", "demand", "missing", "identify", "price"}

// Route is what the chat understood of a message: its intent (question, action, research), the
// topic of a question, and the field update an action asks for (Field empty when none was named).
type Route struct {
	Intent string         `json:"intent"`
	Topic  string         `json:"topic,omitempty"`
	Update ProposedUpdate `json:"update,omitzero"`
	// Price is the price a compare question gives ("is $350 too much?"), 0 when none.
	Price float64 `json:"price,omitempty"`
}

// Understand asks m which of the chat's requests text is, as RouteTools (with RoutePrompt): on
// the offline path m is the offline model with listforge's pack, which knows the phrasings of
// each request. A call to no tool is a price question.
func Understand(ctx context.Context, m model.Model, text string) (Route, error) {
	resp, err := m.Generate(ctx, &model.Request{Messages: []message.Message{message.System(RoutePrompt), message.User(text)},
		Tools: RouteTools, ToolChoice: "required"})
	if err != nil {
		return Route{Intent: "question", Topic: "price"}, err
	}
	if len(resp.Message.ToolCalls) == 0 {
		return Route{Intent: "question", Topic: "price"}, nil
	}
	c := resp.Message.ToolCalls[0]
	switch c.Name {
	case "start_research":
		return Route{Intent: "research"}, nil
	case "update_item_field":
		var a struct {
			Field   string `json:"field"`
			Becomes any    `json:"becomes"`
		}
		_ = json.Unmarshal(c.Arguments, &a)
		up := ProposedUpdate{Field: storeFields[a.Field], Value: a.Becomes}
		if s, ok := up.Value.(string); ok {
			s = strings.TrimRight(strings.TrimSpace(s), ".")
			// "mark it as fair condition": the condition is "fair".
			if low := strings.ToLower(s); up.Field == "condition" && strings.HasSuffix(low, " condition") {
				s = strings.TrimSpace(s[:len(s)-len(" condition")])
			}
			up.Value = s
			// A value that is the whole message was read from nothing in it ("it's actually the
			// 256GB one" names no field and no new value): no update.
			if strings.EqualFold(s, strings.TrimRight(strings.TrimSpace(text), ".!?")) {
				up = ProposedUpdate{}
			}
		}
		if up.Field == "defaultPrice" {
			v, ok := amount(up.Value)
			if !ok {
				up = ProposedUpdate{}
			} else {
				up.Value = v
			}
		}
		if up.Value == nil || up.Value == "" {
			up = ProposedUpdate{}
		}
		return Route{Intent: "action", Update: up}, nil
	}
	if t, ok := topicTools[c.Name]; ok {
		var a struct {
			Price any `json:"price"`
		}
		_ = json.Unmarshal(c.Arguments, &a)
		p, _ := amount(a.Price)
		return Route{Intent: "question", Topic: t, Price: p}, nil
	}
	return Route{Intent: "question", Topic: "price"}, nil
}

// amount is a price value as a number: a number, or the first amount written in a string
// ("$120", "99.50 please").
func amount(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case string:
		m := priceRE.FindStringSubmatch(x)
		if m == nil {
			return 0, false
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", "."), 64)
		return f, err == nil
	}
	return 0, false
}

var intentSchema = json.RawMessage(`{"type":"object","properties":{"intent":{"type":"string","enum":["question","action","research"]},
"topic":{"type":"string","enum":["price","count","why","compare","comps","demand","missing","identify"]}},"required":["intent"]}`)

func (c *chatGraph) routeIntent(ctx context.Context, s ChatState) (ChatState, error) {
	r, err := Understand(ctx, c.offline, s.UserMessage)
	if err != nil {
		return ChatState{}, fmt.Errorf("listforge: understanding the message on the offline model: %w", err)
	}
	if c.model != nil {
		mctx, cancel := context.WithTimeout(ctx, c.timeout)
		defer cancel()
		resp, err := c.model.Generate(mctx, &model.Request{Messages: []message.Message{message.System(IntentPrompt), message.User(s.UserMessage)},
			Schema: &model.Schema{Name: "intent", JSON: intentSchema}})
		if err == nil {
			var out struct{ Intent, Topic string }
			if json.Unmarshal(resp.Structured, &out) == nil && out.Intent != "" {
				r.Intent = out.Intent
				if slices.Contains(Topics, out.Topic) {
					r.Topic = out.Topic
				}
			}
		}
	}
	out := ChatState{Intent: r.Intent, Topic: r.Topic, Ask: r.Price}
	if r.Update.Field != "" {
		out.Update = &r.Update
	}
	return out, nil
}

func (c *chatGraph) answerQuery(ctx context.Context, s ChatState) (ChatState, error) {
	var actions []store.Action
	stale := ""
	if s.Research != nil {
		if age := time.Since(s.Research.CreatedAt); age > StaleAfter || (s.Item != nil && s.Item.UpdatedAt.After(s.Research.CreatedAt)) {
			days := int(age.Hours() / 24)
			stale = fmt.Sprintf("\n\nThis research is from %d days ago", days)
			if days == 0 {
				stale = "\n\nThe item changed after this research"
			}
			stale += "; prices move, so I suggest refreshing it (say \"refresh the research\")."
			actions = append(actions, store.Action{Type: "start_research", Payload: map[string]any{"type": "pricing_refresh", "reason": "stale research"}})
		}
	} else if s.Item != nil {
		actions = append(actions, store.Action{Type: "start_research", Payload: map[string]any{"type": "manual_request", "reason": "no research yet"}})
	}
	topic := s.Topic
	if topic == "" {
		topic = "price"
	}
	if a, ok := SuggestPrice(topic, s.Item, s.Research); ok {
		actions = append([]store.Action{a}, actions...)
	}
	if c.model != nil {
		ctxJSON, _ := json.Marshal(map[string]any{"item": s.Item, "research": s.Research, "evidence": s.RecentEvidence})
		mctx, cancel := context.WithTimeout(ctx, c.timeout)
		defer cancel()
		resp, err := agent.StreamModel(mctx, c.model, &model.Request{Messages: []message.Message{message.System(ChatPrompt),
			message.User("Context:\n" + string(ctxJSON) + "\n\nQuestion: " + s.UserMessage)}})
		if err != nil {
			return ChatState{Response: MsgTrouble, Actions: actions}, nil
		}
		text := resp.Message.Text() + stale
		if stale != "" {
			emitText(ctx, resp.Message.ID, stale)
		}
		return ChatState{Response: text, Streamed: true, StreamID: resp.Message.ID, Actions: actions}, nil
	}
	text := AnswerTopic(topic, s.Ask, s.Item, s.Research, s.RecentEvidence) + stale
	return ChatState{Response: text, Streamed: true, StreamID: emitText(ctx, "", text), Actions: actions}, nil
}

// emitText streams text on the messages stream as message id (a new one when empty), and
// returns the ID.
func emitText(ctx context.Context, id, text string) string {
	return appkit.EmitText(ctx, id, text, map[string]any{"provider": "listforge-rules"})
}

func money(x float64) string {
	if x == math.Trunc(x) {
		return "$" + strconv.FormatFloat(x, 'f', 0, 64)
	}
	return "$" + strconv.FormatFloat(x, 'f', 2, 64)
}

func bandOf(d store.ResearchData, label string) (store.PriceBand, bool) {
	for _, b := range d.PriceBands {
		if b.Label == label {
			return b, true
		}
	}
	return store.PriceBand{}, false
}

// SuggestPrice is the suggest_price action a price question implies: the research's target,
// which the user may apply to the item's price (once, audited). None without research, when
// the question is not about the price, or when the price is already the target.
func SuggestPrice(topic string, it *store.Item, res *store.Research) (store.Action, bool) {
	if it == nil || res == nil || (topic != "price" && topic != "why" && topic != "compare") {
		return store.Action{}, false
	}
	tg, ok := bandOf(res.Data, "target")
	if !ok || tg.Amount <= 0 || (it.DefaultPrice != nil && *it.DefaultPrice == tg.Amount) {
		return store.Action{}, false
	}
	return store.Action{Type: "suggest_price", Payload: map[string]any{"itemId": it.ID, "amount": tg.Amount, "currency": tg.Currency,
		"band": "target", "researchId": res.ID, "reason": fmt.Sprintf("research target price %s (confidence %.0f%%)", money(tg.Amount), res.Data.OverallConfidence*100)}}, true
}

// AnswerTopic is the offline answer to a question about topic (one of Topics); ask is the price
// a compare question gives (0 when none: the item's own).
func AnswerTopic(topic string, ask float64, it *store.Item, res *store.Research, ev []store.Evidence) string {
	if it == nil {
		return "Hello! I help price and list second-hand items. Open an item's chat to ask what to list it for, what comparable items sold for, or to change its details."
	}
	name := it.Title
	if name == "" {
		name = "this item"
	}
	if res == nil {
		return fmt.Sprintf("There is no research for %s yet, so I can't recommend a price. Say \"research it\" and I'll start it; it takes a few seconds.", name)
	}
	d := res.Data
	var b strings.Builder
	tg, hasTarget := bandOf(d, "target")
	fl, _ := bandOf(d, "floor")
	ce, _ := bandOf(d, "ceiling")
	priced := 0
	for _, e := range ev {
		if e.RelevanceScore >= research.Priced {
			priced++
		}
	}
	switch topic {
	case "count":
		if cs := d.Comparables; cs != nil {
			fmt.Fprintf(&b, "%d comparables: %d kept, %d used for the price (the same variant), %d dropped", cs.Considered, cs.Kept, cs.Priced, cs.Dropped)
			if len(cs.Reasons) > 0 {
				b.WriteString(" (" + reasonList(cs.Reasons) + ")")
			}
			b.WriteString(".")
			if cs.Outliers > 0 {
				fmt.Fprintf(&b, " %d price outliers were set aside.", cs.Outliers)
			}
		} else {
			fmt.Fprintf(&b, "%d comparables were kept as evidence, %d of them close enough to set the price.", len(ev), priced)
		}
	case "why":
		if !hasTarget {
			b.WriteString("There was nothing to base a price on: no comparable sales were found.")
			break
		}
		if cs := d.Comparables; cs != nil && cs.Priced == 0 || cs == nil && priced == 0 {
			// Bands without comparables are an estimate: say so, and what would help.
			fmt.Fprintf(&b, "The target of %s is not based on sales: %s. Confidence: %.0f%%.", money(tg.Amount),
				strings.TrimSuffix(tg.Reasoning, "."), d.OverallConfidence*100)
			for _, m := range d.MissingInfo {
				if m.Importance != "optional" && m.SuggestedPrompt != "" {
					fmt.Fprintf(&b, " To find comparables: %s", m.SuggestedPrompt)
					break
				}
			}
			break
		}
		fmt.Fprintf(&b, "The target of %s is %s. ", money(tg.Amount), strings.ToLower(strings.TrimSuffix(tg.Reasoning, ".")))
		if cs := d.Comparables; cs != nil {
			fmt.Fprintf(&b, "Of %d listings found, %d were the same variant", cs.Considered, cs.Priced)
			if cs.Dropped > 0 {
				fmt.Fprintf(&b, "; %d were dropped (%s)", cs.Dropped, reasonList(cs.Reasons))
			}
			if cs.Outliers > 0 {
				fmt.Fprintf(&b, "; %d price outliers were set aside", cs.Outliers)
			}
			b.WriteString(". ")
		}
		fmt.Fprintf(&b, "Prices are adjusted to your item's condition; the floor %s is the lower quartile, the ceiling %s the upper. Confidence: %.0f%%.",
			money(fl.Amount), money(ce.Amount), d.OverallConfidence*100)
	case "compare":
		if !hasTarget {
			b.WriteString("There is no research price to compare with yet.")
			break
		}
		what := "A price of"
		if ask == 0 && it.DefaultPrice != nil {
			ask, what = *it.DefaultPrice, "Your asking price of"
		}
		switch {
		case ask == 0:
			fmt.Fprintf(&b, "The research says %s (range %s to %s); tell me a price to compare.", money(tg.Amount), money(fl.Amount), money(ce.Amount))
		case ask > ce.Amount:
			fmt.Fprintf(&b, "%s %s is above the ceiling of %s: %.0f%% over the target %s. Expect it to sit longer.", what, money(ask), money(ce.Amount), (ask/tg.Amount-1)*100, money(tg.Amount))
		case ask < fl.Amount:
			fmt.Fprintf(&b, "%s %s is below the floor of %s: %.0f%% under the target %s. It should sell fast, but you leave money behind.", what, money(ask), money(fl.Amount), (1-ask/tg.Amount)*100, money(tg.Amount))
		default:
			fmt.Fprintf(&b, "%s %s is within the range %s to %s, %+.0f%% from the target %s.", what, money(ask), money(fl.Amount), money(ce.Amount), (ask/tg.Amount-1)*100, money(tg.Amount))
		}
	case "comps":
		n := 0
		for _, e := range ev {
			if e.Price == nil || n == 3 || e.RelevanceScore < research.Priced {
				continue // only the item's own variant
			}
			if fl.Amount > 0 && ce.Amount > 0 && (*e.Price < fl.Amount*0.6 || *e.Price > ce.Amount*1.4) {
				continue // an outlier: a bundle, a typo, a part
			}
			if n == 0 {
				b.WriteString("The closest comparables:\n")
			}
			n++
			date := " listed now"
			if len(e.SoldDate) >= 10 {
				date = " sold " + e.SoldDate[:10]
			}
			fmt.Fprintf(&b, "- %s: %s (%s,%s)\n", e.Title, money(*e.Price), e.Condition, date)
		}
		if n == 0 {
			b.WriteString("No comparable listings of the same variant were found for " + name + ".")
		}
	case "demand":
		for _, s := range d.DemandSignals {
			switch s.Metric {
			case "sell_through_rate":
				fmt.Fprintf(&b, "Sell-through over %s: %.0f%%. ", s.Period, s.Value*100)
			case "days_to_sell":
				fmt.Fprintf(&b, "Similar items sold in about %.0f days. ", s.Value)
			case "active_competition":
				fmt.Fprintf(&b, "%.0f competing listings are active now. ", s.Value)
			}
		}
		if fl.Amount > 0 {
			fmt.Fprintf(&b, "For a quick sale, list at %s.", money(fl.Amount))
		}
	case "missing":
		if len(d.MissingInfo) == 0 {
			b.WriteString("Nothing important is missing.")
		}
		for _, m := range d.MissingInfo {
			if m.Importance == "optional" {
				continue
			}
			fmt.Fprintf(&b, "- %s (%s): %s", m.Field, m.Importance, m.Reason)
			if m.SuggestedPrompt != "" {
				b.WriteString(" " + m.SuggestedPrompt)
			}
			b.WriteString("\n")
		}
	case "identify":
		if p := d.ProductID; p != nil && p.Model != "" {
			fmt.Fprintf(&b, "It looks like a %s %s (%.0f%% sure, from %s)", p.Brand, p.Model, p.Confidence*100, strings.ReplaceAll(p.Source, "_", " "))
			if p.MPN != "" {
				b.WriteString(", part number " + p.MPN)
			}
			b.WriteString(".")
		} else {
			b.WriteString("I couldn't identify the exact product. A photo of the label or the model number would help.")
		}
	default:
		if !hasTarget {
			b.WriteString("Limited data available, prices are estimates, and there was nothing to estimate from: add an asking price or more details and research again.")
			break
		}
		fmt.Fprintf(&b, "I'd list %s at %s. For a quick sale go down to %s; a patient seller could ask up to %s. ", name, money(tg.Amount), money(fl.Amount), money(ce.Amount))
		fmt.Fprintf(&b, "Confidence: %.0f%%. %s", d.OverallConfidence*100, tg.Reasoning)
		if slices.Contains(d.Notes, "Limited data available, prices are estimates") {
			b.WriteString(" Limited data available, prices are estimates.")
		}
		if it.DefaultPrice == nil || *it.DefaultPrice != tg.Amount {
			fmt.Fprintf(&b, " Apply the suggestion to set the price to %s.", money(tg.Amount))
		}
	}
	return strings.TrimSpace(b.String())
}

// reasonList writes dropped comparables' reasons, most frequent first ("storage differs: 8,
// an accessory, not the item: 4").
func reasonList(rs map[string]int) string {
	type kv struct {
		k string
		n int
	}
	var xs []kv
	for k, n := range rs {
		xs = append(xs, kv{k, n})
	}
	slices.SortFunc(xs, func(a, b kv) int {
		if a.n != b.n {
			return b.n - a.n
		}
		return strings.Compare(a.k, b.k)
	})
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%s: %d", x.k, x.n)
	}
	return strings.Join(parts, "; ")
}

// ProposedUpdate is a field update read from a message.
type ProposedUpdate struct {
	Field string `json:"field"`
	Value any    `json:"value"`
}

var priceRE = regexp.MustCompile(`\$?\s*(\d+(?:[.,]\d{1,2})?)`)

func fieldLabel(f string) string {
	switch f {
	case "defaultPrice":
		return "price"
	case "lifecycleStatus":
		return "status"
	}
	return f
}

func (c *chatGraph) handleAction(ctx context.Context, s ChatState) (ChatState, error) {
	if s.Item == nil {
		return ChatState{Response: "Open an item's chat first, then tell me what to change."}, nil
	}
	var up ProposedUpdate
	ok := s.Update != nil
	if ok {
		up = *s.Update
	}
	if c.model != nil {
		mctx, cancel := context.WithTimeout(ctx, c.timeout)
		defer cancel()
		resp, err := c.model.Generate(mctx, &model.Request{Messages: []message.Message{message.System(ActionPrompt), message.User(s.UserMessage)},
			Schema: &model.Schema{Name: "action", JSON: json.RawMessage(`{"type":"object","properties":{"field":{"type":"string"},"value":{}},"required":["field","value"]}`)}})
		if err == nil {
			var m ProposedUpdate
			if json.Unmarshal(resp.Structured, &m) == nil && m.Field != "" {
				up, ok = m, true
			}
		}
	}
	if !ok {
		// A correction of what the item is ("it's actually the 256GB one"): its title.
		if title, changed := research.CorrectTitle(s.Item.Title, s.UserMessage); changed {
			return ChatState{
				Response: fmt.Sprintf("I can update the title to \"%s\". Should I make this change? The price depends on it: refresh the research afterwards (say \"refresh the research\").", title),
				Actions: []store.Action{{Type: "update_field", Applied: false,
					Payload: map[string]any{"itemId": s.Item.ID, "field": "title", "value": title, "reason": "corrected in chat: " + s.UserMessage}}},
			}, nil
		}
		return ChatState{Response: "Which field should I change, and to what? For example: \"set the price to $120\" or \"change the condition to like new\"."}, nil
	}
	if up.Field == "defaultPrice" {
		if sv, isStr := up.Value.(string); isStr {
			if v, err := strconv.ParseFloat(strings.TrimPrefix(sv, "$"), 64); err == nil {
				up.Value = v
			}
		}
	}
	shown := fmt.Sprint(up.Value)
	if v, isNum := up.Value.(float64); isNum && up.Field == "defaultPrice" {
		shown = money(v)
	}
	return ChatState{
		Response: fmt.Sprintf("I can update the %s to \"%s\". Should I make this change?", fieldLabel(up.Field), shown),
		Actions: []store.Action{{Type: "update_field", Applied: false,
			Payload: map[string]any{"itemId": s.Item.ID, "field": up.Field, "value": up.Value, "reason": "requested in chat: " + s.UserMessage}}},
	}, nil
}

func (c *chatGraph) startResearch(ctx context.Context, s ChatState) (ChatState, error) {
	if s.Item == nil {
		return ChatState{Response: "Open an item's chat first, then ask me to research it."}, nil
	}
	_, p := callerOf(ctx)
	typ := "manual_request"
	if s.Research != nil {
		typ = "pricing_refresh"
	}
	job, err := c.tools().StartResearchJob(ctx, p, s.Item.ID, typ, "normal")
	if err != nil {
		return ChatState{Response: MsgToolFailure + " (" + err.Error() + ")"}, nil
	}
	return ChatState{
		Response:  fmt.Sprintf("I've started fresh research for %s (job %s). You'll see each step in the Research tab; it usually takes a few seconds.", s.Item.Title, job.ID),
		ToolCalls: append(s.ToolCalls, store.ToolCall{Tool: "startResearchJob", Args: map[string]any{"itemId": s.Item.ID, "type": typ, "priority": "normal"}, Result: map[string]any{"jobId": job.ID, "status": "queued"}}),
		Actions:   []store.Action{{Type: "start_research", Payload: map[string]any{"jobId": job.ID}, Applied: true}},
	}, nil
}

func (c *chatGraph) respond(ctx context.Context, s ChatState) (ChatState, error) {
	text := s.Response
	if text == "" {
		text = MsgTrouble
	}
	id := s.StreamID
	if !s.Streamed {
		id = emitText(ctx, "", text)
	}
	answer := message.Assistant(text)
	if id != "" {
		answer.ID = id
	}
	return ChatState{Response: text, Streamed: true, StreamID: id, Messages: []message.Message{answer}}, nil
}
