package rehab

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/trellis-go/trellis/agent/conversation"
	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/apps/rehab/kb"
	"github.com/trellis-go/trellis/apps/rehab/store"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/server/appkit"
)

// Message IDs of the two system messages, so that they are replaced, never accumulated.
const (
	promptID  = "rehab_system_prompt"
	contextID = "rehab_context_refresh"
)

// NewOrchestrator compiles the orchestrator graph with def as the default Env.
//
//	START → hydrate_context → agent ─┬→ tools → reflect → agent
//	                                 └→ post_process → END
func NewOrchestrator(def *Env, compile graph.CompileOptions) (*Orchestrator, error) {
	o := &Orchestrator{def: def}
	tools, err := o.Tools()
	if err != nil {
		return nil, err
	}
	toolNode, err := react.NewToolNode[State](tools, nil)
	if err != nil {
		return nil, err
	}
	specs := make([]model.ToolSpec, len(tools))
	for i, t := range tools {
		specs[i] = t.Spec()
	}
	g := graph.New[State]()
	graph.SetReducer(g, "knowledge", mergeKnowledge)
	graph.SetReducer(g, "todos", mergeTodos)
	g.AddNode("hydrate_context", o.hydrate)
	g.AddNode("agent", func(ctx context.Context, s State) (State, error) { return o.agent(ctx, s, specs) })
	g.AddNode("tools", toolNode)
	g.AddNode("reflect", o.reflect)
	g.AddNode("post_process", o.postProcess)
	g.AddEdge(graph.START, "hydrate_context")
	g.AddEdge("hydrate_context", "agent")
	g.AddConditionalEdges("agent", Route, map[string]string{"tools": "tools", "post_process": "post_process"})
	g.AddEdge("tools", "reflect")
	g.AddEdge("reflect", "agent")
	g.AddEdge("post_process", graph.END)
	compile.ConfigType = reflect.TypeFor[RunConfig]()
	c, err := g.Compile(compile)
	if err != nil {
		return nil, err
	}
	o.Graph = c
	return o, nil
}

// RunConfig is what a run's configuration may hold, published as the graph's config_schema
// (graph.CompileOptions.ConfigType). The server sets user_id and tenant from the caller.
type RunConfig struct {
	// ConversationID is the conversation the run continues; a new one when empty.
	ConversationID string `json:"conversation_id,omitempty"`
	// RehabEnv names an Env registered with Register (tests); the default Env when empty.
	RehabEnv string `json:"rehab_env,omitempty"`
}

// Route is the agent's routing: to tools when its last message calls any, else to
// post_process.
func Route(_ context.Context, s State) (string, error) {
	if n := len(s.Messages); n > 0 && s.Messages[n-1].Role == message.RoleAssistant && len(s.Messages[n-1].ToolCalls) > 0 {
		return "tools", nil
	}
	return "post_process", nil
}

// hydrate loads the user's context, opens (or creates) the conversation, and puts the system
// prompt and the context block at the head of the conversation.
func (o *Orchestrator) hydrate(ctx context.Context, s State) (State, error) {
	r, err := o.run(ctx)
	if err != nil {
		return State{}, err
	}
	convID := r.conv
	if convID == "" {
		convID = s.ConversationID
	}
	sess, err := r.env.Data.OpenConversation(ctx, r.who, convID, r.env.SessionTimeout())
	if err != nil {
		return State{}, err
	}
	// Sessions that ended by timeout get their summary now, so the new one starts with it.
	for _, ended := range sess.Ended {
		if err := o.summarize(ctx, r, ended.ID); err != nil {
			return State{}, err
		}
	}
	h, err := r.env.Data.Hydrate(ctx, r.who)
	if err != nil {
		return State{}, err
	}
	fresh, active := kb.Build(h)
	turn := s.Turn + 1
	// Entries the previous turns wrote or loaded stay as they were; the always-present tier
	// and the summaries come fresh from the database.
	upd := kb.KB{}
	for p, e := range fresh {
		if old, ok := s.Knowledge[p]; ok && old.Source != kb.SourceDB && !kb.Protected(p, active) {
			continue
		}
		if old, ok := s.Knowledge[p]; ok && old.Loaded() && !e.Loaded() && old.Text == e.Text {
			e = old
		}
		if kb.Protected(p, active) || p == "portfolio/index" {
			e.Touched = turn
		}
		upd[p] = e
	}
	for p, e := range s.Knowledge {
		if _, ok := fresh[p]; !ok && e.Source == kb.SourceDB {
			upd[p] = Tombstone()
		}
	}
	focus := s.CurrentFocus
	if focus == nil || focus.PropertyID == "" || fresh["portfolio/"+focus.PropertyID+"/resumo"].Summary == "" && !hasItem(h, focus.PropertyID) {
		focus = &kb.Focus{PropertyID: active}
		if active != "" {
			focus.Topic = answer("topic_property")
			if _, analysed := fresh["portfolio/"+active+"/analise"]; analysed {
				focus.Topic = answer("topic_renovation")
			}
		}
	}
	k := mergeKnowledge(s.Knowledge, upd)
	// A new conversation starts with the tasks left open in earlier ones.
	var carried []kb.Todo
	if s.Turn == 0 {
		for _, t := range h.Profile.Memory.OpenTodos {
			carried = append(carried, kb.Todo{ID: t.ID, Task: t.Task, Status: "pending"})
		}
	}
	block := contextMessage(k, mergeTodos(s.Todos, carried), focus, r.env.KB())
	var msgs []message.Message
	if len(s.Messages) == 0 || s.Messages[0].ID != promptID {
		// First turn of the thread: the system messages go first.
		msgs = append(msgs, message.RemoveAll(), systemPrompt(), block)
		for _, m := range s.Messages {
			if m.ID != contextID {
				msgs = append(msgs, m)
			}
		}
	} else {
		msgs = []message.Message{block}
	}
	if err := graph.Write(ctx, "knowledge", upd); err != nil {
		return State{}, err
	}
	return State{Messages: msgs, UserID: r.who.User, ConversationID: sess.Conversation.ID, CurrentFocus: focus, Turn: turn, Todos: carried,
		ReplyLanguage: ReplyLanguage(h.Profile.Sections["preferences"])}, nil
}

func hasItem(h *store.Hydrated, propertyID string) bool {
	for _, it := range h.Portfolio {
		if it.PropertyID == propertyID {
			return true
		}
	}
	return false
}

func systemPrompt() message.Message {
	m := message.System(SystemPrompt)
	m.ID = promptID
	return m
}

// contextMessage is the context block as the one system message named context_refresh.
func contextMessage(k kb.KB, todos []kb.Todo, f *kb.Focus, s kb.Settings) message.Message {
	kb.Fit(k, todos, f, s)
	m := message.System(kb.Block(k, todos, f))
	m.ID, m.Name = contextID, kb.ContextRefresh
	return m
}

// agent calls the model with the conversation and the tools, streaming its tokens.
func (o *Orchestrator) agent(ctx context.Context, s State, specs []model.ToolSpec) (State, error) {
	r, err := o.run(ctx)
	if err != nil {
		return State{}, err
	}
	req := &model.Request{Messages: forModel(s.Messages), Tools: specs}
	var m message.Message
	if model.IsOffline(r.env.Model) {
		m, err = o.offlineTurn(ctx, r.env, s, specs)
	} else {
		m, err = o.guardedTurn(ctx, r.env.Model, req, s)
	}
	if err != nil {
		return State{}, fmt.Errorf("rehab: the model failed: %w", err)
	}
	if m.Role == "" {
		m.Role = message.RoleAssistant
	}
	return State{Messages: []message.Message{m}}, nil
}

// RuleRehab is the offline rule (metadata offline.MetaRule) of the turns rehab's own
// understanding writes on the offline path.
const RuleRehab = "rehab"

// offlineTurn runs a turn on the offline model's understanding with rehab's pack (IntentOf: which
// tool the message asks for) and rehab's domain logic (the facts it states, the property, note
// or task it points to in the state): the plan of the user's message (facts first, then the call)
// gives this step's tool calls; once they have run, the reply is written from their results in
// pt-PT. The text is streamed word by word as a model would.
func (o *Orchestrator) offlineTurn(ctx context.Context, env *Env, s State, specs []model.ToolSpec) (message.Message, error) {
	out := message.Message{ID: message.NewID(), Role: message.RoleAssistant,
		Metadata: offline.Metadata(RuleRehab)}
	user := -1
	for i := len(s.Messages) - 1; i >= 0; i-- {
		if s.Messages[i].Role == message.RoleUser {
			user = i
			break
		}
	}
	made, results := 0, false
	if user >= 0 {
		for _, m := range s.Messages[user+1:] {
			if m.Role == message.RoleAssistant && len(m.ToolCalls) > 0 {
				made++
			}
			results = results || m.Role == message.RoleTool
		}
	}
	now := time.Now()
	if env.Data != nil && env.Data.Now != nil {
		now = env.Data.Now()
	}
	var p plan
	if user >= 0 {
		intent, prev, err := turnIntent(ctx, env.Model, specs, s.Messages, user)
		if err != nil {
			return message.Message{}, err
		}
		p = understand(s, s.Messages[user].Text(), intent, now, "call_"+out.ID)
		p.again(prev)
	}
	switch {
	case made < len(p.steps):
		out.ToolCalls = p.steps[made]
	case results:
		out.Content = Reply(s.Messages) + "\n\n" + offline.Marker
	case p.reply != "":
		out.Content = p.reply + " " + offline.Marker
	default:
		out.Content = offlineReply(s) + " " + offline.Marker
	}
	info, _ := graph.InfoFrom(ctx)
	md := map[string]any{"node": info.Node, "provider": offline.Name}
	appkit.EmitText(ctx, out.ID, out.Content, md)
	for _, c := range out.ToolCalls {
		graph.EmitMessage(ctx, graph.MessageChunk{Message: message.Message{ID: out.ID, Role: message.RoleAssistant, ToolCalls: []message.ToolCall{c}}, Metadata: md})
	}
	return out, nil
}

// forModel is the conversation as the model sees it: system messages first, then the rest,
// with tool calls the model never saw answered dropped (a run cut by a crash).
func forModel(msgs []message.Message) []message.Message {
	out := make([]message.Message, 0, len(msgs))
	for _, m := range msgs {
		if m.Role == message.RoleSystem {
			out = append(out, m)
		}
	}
	for _, m := range msgs {
		if m.Role != message.RoleSystem {
			out = append(out, m)
		}
	}
	return conversation.RepairHistory(out)
}

// offlineReply answers a message the offline model has no rule for: the greeting on the
// conversation's first message, else that it was not understood, with what the agent can do.
func offlineReply(s State) string {
	users := 0
	for _, m := range s.Messages {
		if m.Role == message.RoleUser {
			users++
		}
	}
	if users > 1 {
		return answer("not_understood") + " " + answer("can_do")
	}
	name := ""
	if e, ok := s.Knowledge["user/profile"]; ok && e.Summary != kb.NoProfile {
		name, _, _ = strings.Cut(e.Summary, " |")
		name = strings.Fields(name + " ")[0]
	}
	greet := answer("hello")
	if name != "" {
		greet = answer("hello_name", "name", name)
	}
	var b strings.Builder
	b.WriteString(greet + " " + answer("can_do"))
	if e, ok := s.Knowledge["portfolio/index"]; ok && e.Summary != kb.EmptyPortfolio {
		b.WriteString(" " + answer("you_have", "portfolio", e.Summary))
	}
	if e, ok := s.Knowledge["session/resumo_anterior"]; ok {
		b.WriteString(" " + answer("last_time", "summary", e.Summary))
	}
	return b.String()
}

// reflect rebuilds the context block after the tools ran: no model call; the block replaces
// the previous one (same message ID).
func (o *Orchestrator) reflect(ctx context.Context, s State) (State, error) {
	r, err := o.run(ctx)
	if err != nil {
		return State{}, err
	}
	k := s.Knowledge.Clone()
	block := contextMessage(k, s.Todos, s.CurrentFocus, r.env.KB())
	upd := changed(s.Knowledge, k)
	if len(upd) > 0 {
		if err := graph.Write(ctx, "knowledge", upd); err != nil {
			return State{}, err
		}
	}
	return State{Messages: []message.Message{block}}, nil
}

// KeepTurns is how many user turns the thread keeps once a summary covers the rest.
const KeepTurns = 3

// Compact returns the removals that leave the system messages and the last keep user turns
// (each with its tool calls and results) in the conversation.
func Compact(msgs []message.Message, keep int) []message.Message {
	turns := 0
	cut := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == message.RoleUser {
			turns++
			if turns == keep {
				cut = i
				break
			}
		}
	}
	if cut <= 0 {
		return nil
	}
	var out []message.Message
	for _, m := range msgs[:cut] {
		if m.Role != message.RoleSystem && m.ID != "" {
			out = append(out, message.Remove(m.ID))
		}
	}
	return out
}

// Reflect is the reflect node's transformation, for tests: the state's messages with the context
// block replaced.
func Reflect(s State, settings kb.Settings) []message.Message {
	k := s.Knowledge.Clone()
	out, _ := message.Add(s.Messages, []message.Message{contextMessage(k, s.Todos, s.CurrentFocus, settings)})
	return out
}

func changed(before, after kb.KB) kb.KB {
	upd := kb.KB{}
	for p, e := range after {
		b, ok := before[p]
		if !ok || b.Loaded() != e.Loaded() || b.LinesLoaded != e.LinesLoaded {
			upd[p] = e
		}
	}
	return upd
}

// postProcess persists the turn's messages, demotes stale knowledge, resets the turn's
// execution metadata and writes the conversation summary when enough messages have gathered.
func (o *Orchestrator) postProcess(ctx context.Context, s State) (State, error) {
	r, err := o.run(ctx)
	if err != nil {
		return State{}, err
	}
	who := r.who
	start := 0
	if s.SavedThrough != "" {
		for i, m := range s.Messages {
			if m.ID == s.SavedThrough {
				start = i + 1
			}
		}
	}
	last := s.SavedThrough
	count := 0
	for _, m := range s.Messages[start:] {
		last = m.ID
		if m.Role == message.RoleSystem {
			continue
		}
		var calls json.RawMessage
		if len(m.ToolCalls) > 0 {
			calls, _ = json.Marshal(m.ToolCalls)
		}
		content := m.Text()
		if m.Role == message.RoleAssistant {
			content = offline.Unlabelled(m)
		}
		n, err := r.env.Data.AddMessage(ctx, who, store.Message{ConversationID: s.ConversationID, Role: string(m.Role), Content: content, ToolCalls: calls})
		if err != nil {
			return State{}, err
		}
		count = n
	}
	active := ""
	if s.CurrentFocus != nil {
		active = s.CurrentFocus.PropertyID
	}
	k := s.Knowledge.Clone()
	demoted := kb.DemoteStale(k, s.Turn, active)
	upd := kb.KB{}
	for _, p := range demoted {
		upd[p] = k[p]
	}
	if len(upd) > 0 {
		if err := graph.Write(ctx, "knowledge", upd); err != nil {
			return State{}, err
		}
	}
	if err := graph.Overwrite(ctx, "executed_actions", []ExecutedAction(nil)); err != nil {
		return State{}, err
	}
	if err := graph.Overwrite(ctx, "stream_events", []map[string]any(nil)); err != nil {
		return State{}, err
	}
	if count > 0 {
		conv, err := r.env.Data.Conversation(ctx, who, s.ConversationID)
		if err != nil {
			return State{}, err
		}
		if conv.MessageCount-conv.SummarizedCount >= r.env.SummaryTrigger() {
			if err := o.summarize(ctx, r, s.ConversationID); err != nil {
				return State{}, err
			}
			// The thread keeps the latest turns; what came before is in the summary, which the
			// knowledge base shows from now on.
			if conv, err = r.env.Data.Conversation(ctx, who, s.ConversationID); err != nil {
				return State{}, err
			}
			e := kb.NewEntry(firstLine(conv.Summary, 80), conv.Summary, kb.SourceTool, true)
			e.Touched = s.Turn
			if err := graph.Write(ctx, "knowledge", kb.KB{"session/resumo_atual": e}); err != nil {
				return State{}, err
			}
			if drop := Compact(s.Messages, KeepTurns); len(drop) > 0 {
				return State{SavedThrough: last, Messages: drop}, nil
			}
		}
	}
	return State{SavedThrough: last}, nil
}
