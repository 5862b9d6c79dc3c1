package react

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/tool"
)

// Middleware extends a ReAct agent from the outside, the way LangChain v1's agent middleware
// does: hooks that run as nodes of the graph around the loop (before the agent starts, before
// and after each model call, after the agent ends), and wrappers around each model call and
// each tool call. Every hook is optional; Name is required and unique among an agent's
// middleware, since it names the hooks' nodes ("<Name>.before_model", ...) and its Extra keys.
//
// Options.Middleware composes them in order: before-hooks run first to last, after-hooks last to
// first, and the first middleware's wrapper is the outermost. A hook's [Update] is written to
// the state like a node's, so it is checkpointed, streamed and visible in the thread's history.
type Middleware struct {
	// Name names the middleware's nodes and should prefix the Extra keys it keeps.
	Name string
	// BeforeAgent runs once per invocation, before anything else.
	BeforeAgent Hook
	// BeforeModel runs before every model call (after the loop comes back from the tools too).
	BeforeModel Hook
	// AfterModel runs after every model call, before its tool calls run. It may answer calls
	// itself (tool messages for them in its Update): only calls left without a result run.
	AfterModel Hook
	// AfterAgent runs once when the agent ends.
	AfterAgent Hook
	// WrapModel is called instead of the model call: it may change the request (its system
	// prompt, context, messages, tools, model, response schema), call next once, several times or
	// not at all, and change the response.
	WrapModel func(ctx context.Context, req *ModelRequest, next ModelHandler) (*model.Response, error)
	// WrapTool is called instead of each tool call: it may change the call, run it (next), retry
	// it, or answer it without running it ([ToolAnswer]). Calls of one turn run concurrently, so
	// a wrapper that asks a person belongs in AfterModel instead (see [HumanInTheLoop]).
	WrapTool func(ctx context.Context, req *ToolRequest, next ToolHandler) (tool.Outcome, error)
}

// A Hook reads the agent's state at its point of the loop and returns what to change, or nil
// for nothing. An error fails the run.
type Hook func(ctx context.Context, s State) (*Update, error)

// Update is what a hook changes: messages added to the conversation (merged by ID as the
// messages reducer merges them, so a message with an existing ID replaces it), keys set in
// State.Extra, and where the loop goes next.
type Update struct {
	Messages []message.Message
	Extra    map[string]any
	// Jump, when set, leaves the hook's usual path: to the model (through its before-model
	// hooks), to the tools, or to the end (through the after-agent hooks).
	Jump Jump
}

// Jump is a destination a hook may send the loop to.
type Jump string

// The destinations of [Update.Jump].
const (
	JumpModel Jump = "model"
	JumpTools Jump = "tools"
	JumpEnd   Jump = "end"
)

// ModelRequest is one model call as a [Middleware.WrapModel] sees it and may change it.
type ModelRequest struct {
	// Model answers the call: the agent's model unless a wrapper changed it.
	Model model.Model
	// SystemPrompt is sent first, as a system message (Options.Prompt); empty sends none.
	SystemPrompt string
	// Context is sent after the system prompt and before the conversation (Options.Context's
	// messages for this call). Like SystemPrompt, it is never stored.
	Context []message.Message
	// Messages is the conversation as stored. Changing it changes this call only; a hook's
	// Update changes the stored conversation.
	Messages []message.Message
	// Tools the model is offered, and ToolChoice as in model.Request.
	Tools      []model.ToolSpec
	ToolChoice string
	// ResponseSchema asks for a structured final answer (Options.ResponseSchema).
	ResponseSchema *model.Schema
	// State is the agent's state before the call.
	State State
}

// ModelHandler makes the model call a ModelRequest describes.
type ModelHandler func(ctx context.Context, req *ModelRequest) (*model.Response, error)

// ToolRequest is one tool call as a [Middleware.WrapTool] sees it and may change it.
type ToolRequest struct {
	// Call is the call to run; a wrapper may change its arguments (or name) before next.
	Call message.ToolCall
	// Tool is the tool the call names, nil when the agent has no such tool (next then answers
	// with the executor's "unknown tool" error).
	Tool tool.Tool
	// State is the agent's state when its tools run.
	State State
}

// ToolHandler runs the call a ToolRequest describes.
type ToolHandler func(ctx context.Context, req *ToolRequest) (tool.Outcome, error)

// ToolAnswer is the outcome of a call answered without running it: text is what the model
// reads, an error result when isError is set.
func ToolAnswer(call message.ToolCall, text string, isError bool) tool.Outcome {
	msg := message.ToolResult(call.ID, call.Name, text)
	if isError {
		msg = message.ToolError(call.ID, call.Name, text)
	}
	return tool.Outcome{Call: call, Message: msg, Result: &tool.Result{Content: text, IsError: isError}}
}

// ExtraValue reads key from s.Extra as a T. A value read back from a checkpoint has its JSON
// form (numbers as float64, objects as maps), so it is converted through JSON when it is not
// already a T. ok is false when the key is missing or does not convert.
func ExtraValue[T any](s State, key string) (T, bool) {
	var zero T
	v, ok := s.Extra[key]
	if !ok {
		return zero, false
	}
	if t, ok := v.(T); ok {
		return t, true
	}
	data, err := json.Marshal(v)
	if err != nil {
		return zero, false
	}
	var t T
	if json.Unmarshal(data, &t) != nil {
		return zero, false
	}
	return t, true
}

// hookKind names the four hook points as LangChain names their nodes.
type hookKind string

const (
	beforeAgent hookKind = "before_agent"
	beforeModel hookKind = "before_model"
	afterModel  hookKind = "after_model"
	afterAgent  hookKind = "after_agent"
)

func (mw *Middleware) hook(k hookKind) Hook {
	switch k {
	case beforeAgent:
		return mw.BeforeAgent
	case beforeModel:
		return mw.BeforeModel
	case afterModel:
		return mw.AfterModel
	default:
		return mw.AfterAgent
	}
}

// hookNode is one hook of one middleware, placed in the graph.
type hookNode struct {
	name string // the graph node: "<middleware>.<kind>"
	mw   string
	kind hookKind
	run  Hook
}

// hookChain lists the nodes of one kind in the order they run: before-hooks in middleware
// order, after-hooks in reverse.
func hookChain(mws []Middleware, k hookKind) []hookNode {
	var out []hookNode
	for _, mw := range mws {
		if h := mw.hook(k); h != nil {
			out = append(out, hookNode{name: mw.Name + "." + string(k), mw: mw.Name, kind: k, run: h})
		}
	}
	if k == afterModel || k == afterAgent {
		slices.Reverse(out)
	}
	return out
}

// checkMiddleware refuses unnamed and duplicate middleware, and names that collide with the
// agent's own nodes.
func checkMiddleware(mws []Middleware) error {
	seen := map[string]bool{}
	for i, mw := range mws {
		switch {
		case mw.Name == "":
			return fmt.Errorf("react: Options.Middleware[%d] has no Name; every middleware needs a unique one (it names the middleware's nodes)", i)
		case seen[mw.Name]:
			return fmt.Errorf("react: Options.Middleware has two middleware named %q; names must be unique", mw.Name)
		case mw.Name == NodeModel || mw.Name == NodeTools:
			return fmt.Errorf("react: Options.Middleware[%d] is named %q, the name of one of the agent's nodes; choose another", i, mw.Name)
		}
		seen[mw.Name] = true
	}
	return nil
}

// chainModel composes the wrappers around call, the first middleware outermost.
func chainModel(mws []Middleware, call ModelHandler) ModelHandler {
	h := call
	for i := len(mws) - 1; i >= 0; i-- {
		if w := mws[i].WrapModel; w != nil {
			next := h
			h = func(ctx context.Context, req *ModelRequest) (*model.Response, error) { return w(ctx, req, next) }
		}
	}
	return h
}

// chainTool composes the tool wrappers around run, the first middleware outermost; nil when no
// middleware wraps tools.
func chainTool(mws []Middleware, run ToolHandler) ToolHandler {
	h, wrapped := run, false
	for i := len(mws) - 1; i >= 0; i-- {
		if w := mws[i].WrapTool; w != nil {
			next := h
			h = func(ctx context.Context, req *ToolRequest) (tool.Outcome, error) { return w(ctx, req, next) }
			wrapped = true
		}
	}
	if !wrapped {
		return nil
	}
	return h
}

// ErrLimit is wrapped by the error of a limit middleware whose exit behaviour is to fail.
var ErrLimit = errors.New("react: limit reached")

// prefix is what the request sends before the conversation: the system prompt, then the context.
func (r *ModelRequest) prefix() []message.Message {
	if r.SystemPrompt == "" {
		return r.Context
	}
	out := make([]message.Message, 0, 1+len(r.Context))
	return append(append(out, message.System(r.SystemPrompt)), r.Context...)
}

// modelRequest is the model.Request the call sends.
func (r *ModelRequest) modelRequest() *model.Request {
	return &model.Request{Messages: withContext(r.prefix(), r.Messages), Tools: r.Tools, ToolChoice: r.ToolChoice}
}

// apply runs the hook and turns its update into the node's command: the update written, and the
// loop sent to the jump's destination or, by default, to next (decided on the updated state).
func (h hookNode) apply(ctx context.Context, s State, next func(State) string, jumps map[Jump]string) (*graph.Command[State], error) {
	u, err := h.run(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("react: middleware %q (%s): %w", h.mw, h.kind, err)
	}
	cmd := &graph.Command[State]{}
	if u == nil {
		cmd.Goto = []graph.Target{graph.To(next(s))}
		return cmd, nil
	}
	msgs := slices.Clone(u.Messages)
	for i := range msgs {
		if msgs[i].ID == "" {
			msgs[i].ID = message.NewID() // the same IDs in the decision below and in the state
		}
	}
	cmd.Update = State{Messages: msgs, Extra: u.Extra}
	if u.Jump != "" {
		to, ok := jumps[u.Jump]
		if !ok {
			return nil, fmt.Errorf("react: middleware %q (%s) jumps to %q; use JumpModel, JumpTools or JumpEnd", h.mw, h.kind, u.Jump)
		}
		cmd.Goto = []graph.Target{graph.To(to)}
		return cmd, nil
	}
	after := s
	if len(msgs) > 0 {
		if after.Messages, err = message.Add(slices.Clip(s.Messages), msgs); err != nil {
			return nil, fmt.Errorf("react: middleware %q (%s): %w", h.mw, h.kind, err)
		}
	}
	cmd.Goto = []graph.Target{graph.To(next(after))}
	return cmd, nil
}

// pendingCalls lists the tool calls of the last assistant turn that have no result yet, in order.
func pendingCalls(msgs []message.Message) []message.ToolCall {
	i := len(msgs) - 1
	var answered map[string]bool // made only when tool messages follow the calls
	for ; i >= 0 && msgs[i].Role == message.RoleTool; i-- {
		if answered == nil {
			answered = map[string]bool{}
		}
		answered[msgs[i].ToolCallID] = true
	}
	if i < 0 || msgs[i].Role != message.RoleAssistant {
		return nil
	}
	if answered == nil {
		return slices.Clip(msgs[i].ToolCalls) // none answered yet: all of them, read-only
	}
	var out []message.ToolCall
	for _, c := range msgs[i].ToolCalls {
		if !answered[c.ID] {
			out = append(out, c)
		}
	}
	return out
}

// runWrapped runs each call through the tool wrappers, concurrently, and returns their outcomes
// in call order. An outcome always answers its own call, whatever a wrapper did to the call.
func runWrapped(ctx context.Context, h ToolHandler, exec *tool.Executor, calls []message.ToolCall, s State) ([]tool.Outcome, error) {
	outs := make([]tool.Outcome, len(calls))
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() {
			t, _ := exec.Tool(c.Name)
			outs[i], errs[i] = h(ctx, &ToolRequest{Call: c, Tool: t, State: s})
		})
	}
	wg.Wait()
	for i, c := range calls {
		if errs[i] != nil {
			return outs, errs[i]
		}
		o := &outs[i]
		if o.Result == nil {
			o.Result = &tool.Result{Content: o.Message.Text(), IsError: o.Message.IsError}
		}
		if o.Message.Role == "" {
			return outs, fmt.Errorf("react: a tool wrapper answered call %s (%s) with an empty outcome; return next's outcome or a ToolAnswer", c.ID, c.Name)
		}
		o.Message.ToolCallID, o.Message.Name = c.ID, c.Name
	}
	return outs, nil
}
