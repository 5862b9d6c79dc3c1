package realty

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
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

// RunConfig is what a realty run's configuration may hold, published as the graph's
// config_schema (graph.CompileOptions.ConfigType).
type RunConfig struct {
	// SessionID is the memory session the run reads and writes; the thread's ID when empty.
	SessionID string `json:"session_id,omitempty"`
}

// compileOptions are the server's compile options with the graph's configuration declared.
func compileOptions(co graph.CompileOptions) graph.CompileOptions {
	co.ConfigType = reflect.TypeFor[RunConfig]()
	return co
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
				text += "\n" + offline.Unlabelled(msgs[i])
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
			if t := strings.TrimSpace(offline.Unlabelled(m)); t != "" {
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
	text := "User: " + user + "\nAssistant: " + answer
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
