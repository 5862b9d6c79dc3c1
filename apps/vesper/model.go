package vesper

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/trellis-go/trellis/agent"
	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/agent/supervisor"
	"github.com/trellis-go/trellis/apps/vesper/reports"
	"github.com/trellis-go/trellis/apps/vesper/synth"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/server/appkit"
	"github.com/trellis-go/trellis/tool"
)

// DefaultMaxTurns bounds the model calls of one domain agent's tool loop
// when Options.MaxTurns is zero.
const DefaultMaxTurns = 6

// callLog keeps the calls a tool loop made, by the model's call ID, so they
// can be put back in the order the model asked for them (the calls of one
// turn run concurrently).
type callLog struct {
	mu    sync.Mutex
	calls map[string]loggedCall
	next  int // IDs for calls that came without one
}

type loggedCall struct {
	blk synth.Block
	rec ToolCallRecord
}

func (l *callLog) put(id string, c loggedCall) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if id == "" {
		l.next++
		id = fmt.Sprintf("#%d", l.next)
	}
	l.calls[id] = c
}

// modelLoop runs a domain's agent as a ReAct tool loop with the configured
// model (react.New): the domain's prompt, the filter context, the
// tenant's enabled tools. Each call goes through runCall, as the offline
// plan's calls do (registry, switches, permissions, formatting), and the
// model reads the formatted result: the same Markdown the answer will show,
// so it reasons over what the user sees. The loop ends when the model
// answers without calling a tool, or after Options.MaxTurns model calls.
func (a *assistant) modelLoop(ctx context.Context, d *Domain, task supervisor.Task, info tool.CallInfo, funcs map[string]ToolFunc, allowed []string, disabled map[string]bool) (agentOutput, error) {
	all := a.cfg.Toolkit.Tools()
	log := &callLog{calls: map[string]loggedCall{}}
	var loopTools []tool.Tool
	for _, n := range allowed {
		if disabled[n] {
			continue // a switched-off tool is not offered; one the caller may not use is, and explained
		}
		spec := model.ToolSpec{Name: n, Description: n, Parameters: json.RawMessage(`{"type":"object"}`)}
		if t, ok := all[n]; ok && len(d.Tools) == 0 {
			spec = t.Spec()
		} else if dt, ok := d.ToolSpecs[n]; ok {
			spec = dt
		}
		name := n
		t, err := tool.NewRaw(spec, func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
			ci, _ := tool.CallInfoFrom(ctx)
			call := info
			call.CallID = ci.CallID
			blk, rec, err := a.runCall(ctx, d, call, funcs, allowed, disabled, Call{Tool: name, Args: args})
			if err != nil {
				return nil, err
			}
			log.put(ci.CallID, loggedCall{blk: blk, rec: rec})
			text := a.format.Compose([]synth.Block{blk}, nil).Markdown
			return &tool.Result{Content: text, IsError: rec.Error != ""}, nil
		})
		if err != nil {
			return agentOutput{}, fmt.Errorf("vesper: %s: tool %s: %w", d.Name, n, err)
		}
		loopTools = append(loopTools, t)
	}
	turns := a.cfg.MaxTurns
	if turns == 0 {
		turns = DefaultMaxTurns
	}
	g, err := react.New(a.cfg.Model, &react.Options{Name: d.Name, Tools: loopTools, Prompt: d.Prompt, MaxTurns: turns})
	if err != nil {
		return agentOutput{}, fmt.Errorf("vesper: %s: %w", d.Name, err)
	}
	var msgs []message.Message
	if len(task.Filters) > 0 && string(task.Filters) != "{}" && string(task.Filters) != "null" {
		msgs = append(msgs, message.System("[Filter Context: "+string(task.Filters)+"]"))
	}
	if task.Summary != "" {
		msgs = append(msgs, message.System("Earlier in this conversation: "+task.Summary))
	}
	for _, m := range task.Messages {
		m.ID = "" // the loop's own conversation
		msgs = append(msgs, m)
	}
	// The loop is a run of its own: its model tokens (the agent's
	// reasoning) stay out of the request's stream, which carries only the
	// synthesizer's answer.
	st, err := g.Invoke(ctx, react.State{Messages: msgs})
	if err != nil {
		return agentOutput{}, fmt.Errorf("vesper: %s: %w", d.Name, err)
	}
	out := agentOutput{Blocks: []synth.Block{}, ToolCalls: []ToolCallRecord{}}
	seen := map[string]bool{}
	for _, m := range st.Messages[len(msgs):] {
		if m.Role != message.RoleAssistant {
			continue
		}
		for _, tc := range m.ToolCalls {
			if c, ok := log.calls[tc.ID]; ok && !seen[tc.ID] {
				seen[tc.ID] = true
				out.Blocks = append(out.Blocks, c.blk)
				out.ToolCalls = append(out.ToolCalls, c.rec)
			}
		}
	}
	for id, c := range log.calls { // calls without a model ID (not expected from providers)
		if !seen[id] {
			out.Blocks = append(out.Blocks, c.blk)
			out.ToolCalls = append(out.ToolCalls, c.rec)
		}
	}
	if last := st.Messages[len(st.Messages)-1]; last.Role == message.RoleAssistant && len(last.ToolCalls) == 0 {
		out.Answer = strings.TrimSpace(last.Text())
	}
	if len(out.Blocks) == 0 && out.Answer != "" {
		out.Blocks = append(out.Blocks, synth.Block{Lead: out.Answer})
	}
	return out, nil
}

// modelSynthesis has the model write the answer from the formatted blocks,
// streamed into the run's messages mode; the Related Reports section is
// appended by the rules. If the model fails, the rules' composition is the
// answer (logged): the data is formatted already, so the user still gets it.
func (a *assistant) modelSynthesis(ctx context.Context, st supervisor.State, blocks []synth.Block, links []reports.DeepLink) string {
	var data []string
	for _, r := range st.Results {
		var out agentOutput
		_ = json.Unmarshal(r.Data, &out)
		part := fmt.Sprintf("[%s]", r.Agent)
		switch {
		case r.Error != "":
			part += " Error: " + r.Error
		case len(out.Blocks) > 0:
			part += "\n" + a.format.Compose(out.Blocks, nil).Markdown
		}
		if out.Answer != "" && len(out.ToolCalls) > 0 {
			part += "\n\nThe agent's own summary: " + out.Answer
		}
		data = append(data, part)
	}
	req := &model.Request{Messages: []message.Message{
		message.System(synthesizerPrompt),
		message.User("User question: " + appkit.LastUser(st.Messages) + "\n\nAgent data:\n" + strings.Join(data, "\n\n")),
	}}
	resp, err := agent.StreamModel(ctx, a.cfg.Model, req)
	if err != nil || strings.TrimSpace(resp.Message.Text()) == "" {
		slog.Default().Warn("vesper: the synthesizer model failed; answering with the formatted results", "err", err)
		text := a.format.Compose(blocks, links).Markdown
		emitText(ctx, text, true) // not a continuation of what the failed model call streamed
		return text
	}
	text := strings.TrimSpace(resp.Message.Text())
	if tail := a.format.Compose(nil, links).Markdown; tail != "" {
		emitText(ctx, tail, false)
		text += tail
	}
	return text
}
