package rehab

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/trellis-go/trellis/agent/conversation"
	"github.com/trellis-go/trellis/apps/rehab/store"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/server/appkit"
)

// summarize writes a conversation's 2-3 sentence summary with the summary model (a template on
// the offline model) and stores it with the number of messages it covers.
func (o *Orchestrator) summarize(ctx context.Context, r *run, convID string) error {
	conv, err := r.env.Data.Conversation(ctx, r.who, convID)
	if err != nil {
		return err
	}
	if conv.MessageCount == 0 || conv.MessageCount == conv.SummarizedCount {
		return nil
	}
	msgs, err := r.env.Data.Messages(ctx, r.who, convID)
	if err != nil {
		return err
	}
	acts, err := r.env.Data.Actions(ctx, r.who, 100)
	if err != nil {
		return err
	}
	var mine []store.Action
	for _, a := range acts {
		if a.ConversationID == convID {
			mine = append(mine, a)
		}
	}
	text, err := Summary(ctx, r.env.Summary, conv.Summary, msgs, mine)
	if err != nil {
		return err
	}
	return r.env.Data.SetSummary(ctx, r.who, convID, text, conv.MessageCount)
}

// SummaryPrompt asks for the session summary (prompts/summary.md).
var SummaryPrompt = strings.TrimSpace(summaryPromptMD)

//go:embed prompts/summary.md
var summaryPromptMD string

// Summary writes a session summary: by the model, or by template when the model is the offline
// one (which would only quote the turns).
func Summary(ctx context.Context, m model.Model, previous string, msgs []store.Message, actions []store.Action) (string, error) {
	if m != nil && !model.IsOffline(m) {
		var conv []message.Message
		for _, x := range msgs {
			switch x.Role {
			case "user":
				conv = append(conv, message.User(x.Content))
			case "assistant":
				if x.Content != "" {
					conv = append(conv, message.Assistant(x.Content))
				}
			}
		}
		conv = append([]message.Message{message.System(SummaryPrompt)}, conv...)
		text, err := conversation.Summarize(ctx, m, previous, conv, nil)
		if err != nil {
			return "", fmt.Errorf("rehab: summarising the session: %w", err)
		}
		return strings.TrimSpace(text), nil
	}
	return TemplateSummary(msgs, actions), nil
}

// TemplateSummary is the deterministic session summary: what was done, then what is next.
func TemplateSummary(msgs []store.Message, actions []store.Action) string {
	var done []string
	seen := map[string]bool{}
	// actions come newest first
	for i := len(actions) - 1; i >= 0; i-- {
		a := actions[i]
		var s string
		switch a.ActionType {
		case "analysis_renovation":
			s = answer("summary_analysed", "property", firstLine(a.New, 60))
		case "analysis_fiscal":
			s = answer("summary_taxes", "taxes", a.New)
		case "update_profile":
			s = answer("summary_profile", "field", a.Field)
		case "save_to_portfolio":
			s = answer("summary_saved")
		case "remove_from_portfolio":
			s = answer("summary_removed")
		case "switch_active_property":
			s = answer("summary_switched")
		default:
			continue
		}
		if !seen[s] {
			seen[s] = true
			done = append(done, s)
		}
	}
	first := ""
	for _, m := range msgs {
		if m.Role == "user" {
			first = firstLine(m.Content, 80)
			break
		}
	}
	var b strings.Builder
	if first != "" {
		b.WriteString(answer("summary_began", "message", first) + " ")
	}
	if len(done) > 0 {
		if len(done) > 3 {
			done = done[len(done)-3:]
		}
		b.WriteString(strings.Join(done, "; ") + ". ")
	}
	lastUser := ""
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			lastUser = firstLine(msgs[i].Content, 80)
			break
		}
	}
	if lastUser != "" && lastUser != first {
		b.WriteString(answer("summary_last", "message", lastUser))
	}
	return strings.TrimSpace(b.String())
}

// OpenSession returns the conversation a new message of who belongs to (see
// store.Store.OpenConversation), after writing the summaries of the sessions it ended.
func (o *Orchestrator) OpenSession(ctx context.Context, env *Env, who store.Who, id string) (*store.Session, error) {
	if env == nil {
		env = o.def
	}
	sess, err := env.Data.OpenConversation(ctx, who, id, env.SessionTimeout())
	if err != nil {
		return nil, err
	}
	r := &run{env: env, who: who}
	for _, ended := range sess.Ended {
		if err := o.summarize(ctx, r, ended.ID); err != nil {
			return nil, err
		}
	}
	return sess, nil
}

// EndIdle ends the sessions idle past the timeout and writes their summaries, so a session ends
// even if its user never writes again. It returns how many it ended.
func (o *Orchestrator) EndIdle(ctx context.Context, env *Env) (int, error) {
	if env == nil {
		env = o.def
	}
	now := time.Now()
	if env.Data.Now != nil {
		now = env.Data.Now()
	}
	idle, err := env.Data.IdleConversations(ctx, now.Add(-env.SessionTimeout()), 100)
	if err != nil {
		return 0, err
	}
	for _, c := range idle {
		if err := env.Data.EndConversation(ctx, c.Who, c.ID); err != nil {
			return 0, err
		}
		if err := o.summarize(ctx, &run{env: env, who: c.Who}, c.ID); err != nil {
			return 0, err
		}
	}
	return len(idle), nil
}

// Sweeper ends the sessions idle past the timeout and writes their summaries, without a new
// message from their users: the next conversation's first context block shows the summary.
type Sweeper struct {
	O   *Orchestrator
	Env *Env // nil means the Orchestrator's default
	// Interval between sweeps; zero means a quarter of the session timeout, at most a minute
	// and at least 10ms.
	Interval time.Duration
	// Swept, when set, is called after every sweep with the sessions it ended and its error.
	Swept func(ended int, err error)
}

// Start sweeps in the background, on appkit.Every, until stop is called: stop cancels a sweep
// under way and waits for it.
func (s *Sweeper) Start() (stop func(), err error) {
	env := s.Env
	if env == nil {
		env = s.O.def
	}
	every := s.Interval
	if every <= 0 {
		every = min(env.SessionTimeout()/4, time.Minute)
	}
	return appkit.Every(max(every, 10*time.Millisecond), func(ctx context.Context) {
		n, err := s.O.EndIdle(ctx, env)
		if ctx.Err() == nil && s.Swept != nil {
			s.Swept(n, err)
		}
	})
}
