package react

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/trellis-go/trellis/agent"
	"github.com/trellis-go/trellis/agent/conversation"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/tool"
)

// State is the state of a ReAct agent: the conversation, and the structured answer when one was
// asked for.
type State struct {
	Messages []message.Message `json:"messages" reduce:"messages"`
	// Structured is the final answer as JSON matching Options.ResponseSchema.
	Structured json.RawMessage `json:"structured_response,omitempty"`
	// Extra holds the state that middleware keeps (counters, flags), merged key by key; read a
	// key typed with [ExtraValue].
	Extra map[string]any `json:"extra,omitempty" reduce:"merge"`
}

// Options configure [New]. Nil options, and every zero field, are the documented defaults: an
// agent named "agent" with no tools, no prompt and a limit of 25 model calls per run.
type Options struct {
	// Name names the graph; "agent" by default.
	Name string
	// Tools the model may call; none by default (the model only answers). Only those the caller may use (see tool.Executor.Specs) are
	// offered to the model.
	Tools []tool.Tool
	// Executor options for running the tools (timeouts, permissions, tenants, filters).
	Executor *tool.ExecutorOptions
	// Prompt, when set, is sent as a system message before the conversation.
	Prompt string
	// Context, when set, is called before every model call and returns the messages sent
	// before the conversation for that call: a system prompt built from the current state and
	// the run (its configurable values, its store, the thread), and any injected context such as
	// memories or retrieved documents. What it returns is never written to the state, so each
	// call sees context built afresh and the stored conversation stays clean. Prompt, when also
	// set, comes first. An error fails the model node. See [PromptInput].
	Context func(ctx context.Context, in PromptInput) ([]message.Message, error)
	// ReturnDirect lists tools whose result is the answer: when the model calls one of them,
	// the run ends after the tools run, with an assistant message holding the tool's result
	// (metadata "return_direct": the tool's name) and no further model call. When several
	// return-direct tools are called in one turn their results are joined, in call order.
	ReturnDirect []string
	// MaxTurns bounds the model calls of one run; zero means 25. When the model still asks for
	// tools at the limit, the run ends with an assistant message that says so.
	MaxTurns int
	// ResponseSchema, when set, asks the model for a structured final answer once it stops
	// calling tools; the answer lands in State.Structured.
	ResponseSchema *model.Schema
	// Structured says how the structured answer is asked for: StructuredNative (a last call with
	// the schema, the provider's own structured output), StructuredTool (the schema offered as a
	// tool in the loop: the model's call of it is the answer, one call fewer), or StructuredAuto,
	// the zero value, which chooses per model call: the tool for providers whose native
	// structured output is itself a forced tool call (Anthropic), native for the others.
	Structured StructuredStrategy
	// Approve lists tools that need a human's approval before they run: the run pauses with a
	// [agent.HumanInterrupt] for each such call.
	Approve []string
	// ApproveIf, when set, is asked about every tool call that Approve does not name: true makes
	// the call wait for a human's approval as Approve does. It decides per run, for example from
	// the run's configuration (graph.InfoFrom(ctx).Config).
	ApproveIf func(ctx context.Context, call message.ToolCall) bool
	// Compaction, when set, keeps the conversation within a token budget: before a model call
	// whose request (prompt, messages and tools) counts more than Compaction.MaxTokens, and after
	// a call that fails with model.ErrContextWindowExceeded (retried once), older turns are
	// replaced in the state by one summary (see [conversation.Compact]). Nil means no
	// compaction.
	Compaction *conversation.CompactOptions
	// Middleware extends the loop: hooks before and after the agent and each model call, and
	// wrappers around each model and tool call, composed in order (see [Middleware]).
	Middleware []Middleware
	// Saver, Store, MaxConcurrency and the rest configure the compiled graph.
	Compile graph.CompileOptions
}

// Node names of the ReAct graph.
const (
	NodeModel = "model"
	NodeTools = "tools"
)

// New builds the ReAct agent: m answers each turn, in a loop of a model node and a tool node,
// until it answers without calling a tool. m is required; o may be nil.
func New(m model.Model, o *Options) (*graph.Compiled[State], error) {
	if m == nil {
		return nil, errors.New("react: New needs a model")
	}
	var opts Options
	if o != nil {
		opts = *o // the graph keeps its own copy: later changes to *o do not reach it
	}
	o = &opts
	exec, err := newExecutor(o.Tools, o.Executor)
	if err != nil {
		return nil, err
	}
	maxTurns := o.MaxTurns
	if maxTurns == 0 {
		maxTurns = 25
	}
	var compactor *conversation.Compactor
	if o.Compaction != nil {
		if compactor, err = conversation.NewCompactor(o.Compaction); err != nil {
			return nil, fmt.Errorf("react: Options.Compaction: %w", err)
		}
	}
	if o.ResponseSchema != nil {
		if _, clash := exec.Tool(o.ResponseSchema.SchemaName()); clash && o.Structured != StructuredNative {
			return nil, fmt.Errorf("react: the response schema is named %q like one of the agent's tools; name the schema differently (model.Schema.Name)", o.ResponseSchema.SchemaName())
		}
	}
	switch o.Structured {
	case StructuredAuto, StructuredNative, StructuredTool:
	default:
		return nil, fmt.Errorf("react: Options.Structured is %q; use StructuredAuto, StructuredNative or StructuredTool", o.Structured)
	}
	direct := map[string]bool{}
	for _, n := range o.ReturnDirect {
		if _, ok := exec.Tool(n); !ok {
			return nil, fmt.Errorf("react: ReturnDirect names tool %q, which is not among the agent's tools", n)
		}
		direct[n] = true
	}
	approve := map[string]bool{}
	for _, n := range o.Approve {
		if _, ok := exec.Tool(n); !ok {
			return nil, fmt.Errorf("react: Approve names tool %q, which is not among the agent's tools", n)
		}
		approve[n] = true
	}

	if err := checkMiddleware(o.Middleware); err != nil {
		return nil, err
	}
	mws := o.Middleware
	callModel := chainModel(mws, func(ctx context.Context, req *ModelRequest) (*model.Response, error) {
		strategy := o.Structured.resolve(req.Model)
		mreq := req.modelRequest()
		if req.ResponseSchema != nil && strategy == StructuredTool {
			mreq.Tools = append(slices.Clip(mreq.Tools), schemaTool(req.ResponseSchema))
		}
		resp, err := agent.StreamModel(ctx, req.Model, mreq)
		if err != nil {
			return nil, err
		}
		if req.ResponseSchema != nil && strategy == StructuredTool {
			if c, ok := findCall(resp.Message.ToolCalls, req.ResponseSchema.SchemaName()); ok {
				if structured, err := model.CheckStructured(req.ResponseSchema, string(c.Arguments)); err == nil {
					resp.Structured = structured
				}
			}
			return resp, nil
		}
		if len(resp.Message.ToolCalls) == 0 && req.ResponseSchema != nil {
			msgs := slices.Clip(withContext(req.prefix(), req.Messages))
			sreq := &model.Request{Messages: append(msgs, resp.Message, message.User("Give your final answer in the requested structured form.")), Schema: req.ResponseSchema}
			sresp, err := req.Model.Generate(ctx, sreq)
			if err != nil {
				return nil, fmt.Errorf("react: structured answer: %w", err)
			}
			resp.Structured = sresp.Structured
		}
		return resp, nil
	})
	runTool := chainTool(mws, func(ctx context.Context, req *ToolRequest) (tool.Outcome, error) {
		outs, err := exec.Run(ctx, []message.ToolCall{req.Call})
		if len(outs) == 0 {
			return tool.Outcome{}, err
		}
		return outs[0], err
	})

	// The loop's shape: START, the before-agent hooks, then around and around the before-model
	// hooks, the model, the after-model hooks and the tools, and out through the after-agent hooks.
	chains := map[hookKind][]hookNode{}
	for _, k := range []hookKind{beforeAgent, beforeModel, afterModel, afterAgent} {
		chains[k] = hookChain(mws, k)
	}
	first := func(k hookKind, otherwise string) string {
		if c := chains[k]; len(c) > 0 {
			return c[0].name
		}
		return otherwise
	}
	modelEntry := first(beforeModel, NodeModel)
	exit := first(afterAgent, graph.END)
	jumps := map[Jump]string{JumpModel: modelEntry, JumpTools: NodeTools, JumpEnd: exit}
	// route decides where the loop goes once the model (and its after-model hooks) answered: to
	// the tools while calls wait for a result, back to the model when hooks answered them all.
	route := func(msgs []message.Message) string {
		last := lastAssistant(msgs)
		if last == nil || len(last.ToolCalls) == 0 {
			return exit
		}
		if len(pendingCalls(msgs)) > 0 {
			return NodeTools
		}
		return modelEntry
	}

	g := graph.New[State]()
	addHooks := func(k hookKind, then func(State) string) {
		c := chains[k]
		for i, h := range c {
			next := then
			if i+1 < len(c) {
				name := c[i+1].name
				next = func(State) string { return name }
			}
			dests := []string{modelEntry, NodeTools, exit}
			if i+1 < len(c) {
				dests = append(dests, c[i+1].name)
			} else if k == beforeModel {
				dests = append(dests, NodeModel)
			} else if k == afterAgent {
				dests = append(dests, graph.END)
			}
			slices.Sort(dests)
			g.AddCommandNode(h.name, func(ctx context.Context, s State) (*graph.Command[State], error) {
				return h.apply(ctx, s, next, jumps)
			}, graph.Destinations(slices.Compact(dests)...))
		}
	}
	addHooks(beforeAgent, func(State) string { return modelEntry })
	addHooks(beforeModel, func(State) string { return NodeModel })
	addHooks(afterModel, func(s State) string { return route(s.Messages) })
	addHooks(afterAgent, func(State) string { return graph.END })

	g.AddNode(NodeModel, func(ctx context.Context, s State) (State, error) {
		msgs := conversation.RepairHistory(s.Messages)
		if turnsSinceUser(msgs) >= maxTurns {
			return State{Messages: []message.Message{message.Assistant(fmt.Sprintf("I stopped after %d model turns without reaching an answer. Ask me to continue, or narrow the question.", maxTurns))}}, nil
		}
		extra, err := buildContext(ctx, o.Context, s)
		if err != nil {
			return State{}, err
		}
		req := ModelRequest{Model: m, SystemPrompt: o.Prompt, Context: extra, Messages: msgs, Tools: exec.Specs(ctx), ResponseSchema: o.ResponseSchema, State: s}
		var replaced []message.Message // the compacted conversation, replacing the state's
		if compactor != nil && compactor.Over(req.modelRequest()) {
			out, ok, err := compactor.Compact(ctx, msgs)
			if err != nil {
				return State{}, err
			}
			if ok {
				msgs, replaced = out, out
			}
		}
		call := req // wrappers may change the request they are given; a retry starts afresh
		call.Messages = msgs
		resp, err := callModel(ctx, &call)
		if errors.Is(err, model.ErrContextWindowExceeded) && compactor != nil {
			out, rerr := compactor.Recover(ctx, msgs, err, replaced != nil)
			if rerr != nil {
				return State{}, rerr
			}
			msgs, replaced = out, out
			call = req
			call.Messages = msgs
			resp, err = callModel(ctx, &call)
		}
		if err != nil {
			return State{}, err
		}
		out := State{Messages: []message.Message{resp.Message}, Structured: resp.Structured}
		if replaced != nil {
			out.Messages = append(append([]message.Message{message.RemoveAll()}, replaced...), resp.Message)
		}
		return out, nil
	})
	g.AddCommandNode(NodeTools, func(ctx context.Context, s State) (*graph.Command[State], error) {
		last := lastAssistant(s.Messages)
		pending := pendingCalls(s.Messages)
		if last == nil || len(pending) == 0 {
			return &graph.Command[State]{Goto: []graph.Target{graph.To(modelEntry)}}, nil
		}
		needs := func(c message.ToolCall) bool {
			return approve[c.Name] || (o.ApproveIf != nil && o.ApproveIf(ctx, c))
		}
		if o.ResponseSchema != nil {
			if c, ok := findCall(pending, o.ResponseSchema.SchemaName()); ok {
				return answerSchemaCall(ctx, o.ResponseSchema, c, pending, modelEntry, exit)
			}
		}
		calls, skipped, abort, err := reviewCalls(ctx, pending, needs)
		if err != nil {
			return nil, err
		}
		info, _ := tool.CallInfoFrom(ctx)
		info.State = s
		info.Store = graph.StoreFrom(ctx)
		tctx := tool.WithCallInfo(ctx, info)
		var outcomes []tool.Outcome
		if runTool != nil {
			outcomes, err = runWrapped(tctx, runTool, exec, calls, s)
		} else {
			outcomes, err = exec.Run(tctx, calls)
		}
		if err != nil {
			return nil, err
		}
		// The tool messages are written first, so that messages a command adds come after them;
		// then each command is applied to the state (see ApplyCommand).
		if err := graph.Write(ctx, "messages", mergeResults(pending, tool.Messages(outcomes), skipped)); err != nil {
			return nil, err
		}
		if err := applyOutcomes[State](ctx, outcomes); err != nil {
			return nil, err
		}
		gotos, parent := steering(outcomes)
		if parent != nil && !abort {
			// A handoff: the agent stops here and its parent graph goes on.
			return &graph.Command[State]{Parent: true, Goto: parent.Goto, ParentUpdate: parent.Update}, nil
		}
		cmd := &graph.Command[State]{}
		if answer, ok := directAnswer(calls, outcomes, direct); ok && !abort {
			if err := graph.Write(ctx, "messages", []message.Message{answer}); err != nil {
				return nil, err
			}
			cmd.Goto = []graph.Target{graph.To(exit)}
		} else if abort {
			cmd.Goto = []graph.Target{graph.To(exit)}
		} else if len(gotos) > 0 {
			cmd.Goto = gotos // a tool chose where the graph goes next
		} else {
			cmd.Goto = []graph.Target{graph.To(modelEntry)}
		}
		return cmd, nil
	}, graph.Destinations(slices.Compact([]string{modelEntry, exit})...))
	g.AddEdge(graph.START, first(beforeAgent, modelEntry))
	if c := chains[afterModel]; len(c) > 0 {
		g.AddEdge(NodeModel, c[0].name)
	} else {
		// With no after-model hook nothing answers a call before the tools, so the route never
		// goes back to the model from here.
		paths := map[string]string{NodeTools: NodeTools, exit: exit}
		g.AddConditionalEdges(NodeModel, func(_ context.Context, s State) (string, error) {
			return route(s.Messages), nil
		}, paths)
	}

	co := o.Compile
	co.Name = cmp.Or(co.Name, o.Name, "agent")
	return g.Compile(co)
}

// PromptInput is what [Options.Context] builds a model call's context from.
type PromptInput struct {
	// State is the agent's state as the model node sees it (the stored conversation).
	State State
	// Config holds the run's configurable values (graph.WithConfig), such as a user or thread id.
	Config map[string]any
	// ThreadID is the run's thread, empty when the graph runs without a checkpointer.
	ThreadID string
	// Store is the graph's store (CompileOptions.Store), nil when none.
	Store store.Store
	// Call counts the model calls since the user's last message, from 0.
	Call int
}

// buildContext returns the messages Options.Context gives for one model call, sent after the
// system prompt and before the conversation.
func buildContext(ctx context.Context, hook func(context.Context, PromptInput) ([]message.Message, error), s State) ([]message.Message, error) {
	if hook == nil {
		return nil, nil
	}
	info, _ := graph.InfoFrom(ctx)
	in := PromptInput{State: s, Config: info.Config, ThreadID: info.ThreadID, Store: graph.StoreFrom(ctx), Call: turnsSinceUser(s.Messages)}
	extra, err := hook(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("react: building the model's context: %w", err)
	}
	for i, m := range extra {
		if m.Role == message.RoleTool || (m.Role == message.RoleAssistant && len(m.ToolCalls) > 0) {
			return nil, fmt.Errorf("react: the context hook's message %d is a tool call or result; return system, user or plain assistant messages", i)
		}
	}
	return extra, nil
}

// withContext puts the per-call context before the conversation, in a new slice.
func withContext(prefix, msgs []message.Message) []message.Message {
	if len(prefix) == 0 {
		return msgs
	}
	out := make([]message.Message, 0, len(prefix)+len(msgs))
	out = append(out, prefix...)
	return append(out, msgs...)
}

// directAnswer is the final assistant message of a turn that called return-direct tools: their
// results, joined in call order. ok is false when no such tool ran.
func directAnswer(calls []message.ToolCall, outcomes []tool.Outcome, direct map[string]bool) (message.Message, bool) {
	if len(direct) == 0 {
		return message.Message{}, false
	}
	byID := map[string]message.Message{}
	for _, m := range tool.Messages(outcomes) {
		byID[m.ToolCallID] = m
	}
	var parts, names []string
	for _, c := range calls {
		if !direct[c.Name] {
			continue
		}
		if m, ok := byID[c.ID]; ok {
			parts = append(parts, m.Text())
			names = append(names, c.Name)
		}
	}
	if len(parts) == 0 {
		return message.Message{}, false
	}
	msg := message.Assistant(strings.Join(parts, "\n\n"))
	msg.Metadata = map[string]any{"return_direct": strings.Join(names, ",")}
	return msg, true
}

func lastAssistant(msgs []message.Message) *message.Message {
	for i := len(msgs) - 1; i >= 0; i-- {
		switch msgs[i].Role {
		case message.RoleAssistant:
			return &msgs[i]
		case message.RoleUser:
			return nil
		}
	}
	return nil
}

// turnsSinceUser counts the assistant turns after the last user message, including those a
// compaction summary (just before that message) replaced.
func turnsSinceUser(msgs []message.Message) int {
	n := 0
	i := len(msgs) - 1
	for ; i >= 0 && msgs[i].Role != message.RoleUser; i-- {
		if msgs[i].Role == message.RoleAssistant {
			n++
		}
	}
	if i > 0 {
		n += conversation.ReplacedTurns(msgs[i-1])
	}
	return n
}

// mergeResults orders tool messages by their calls, taking a skipped call's message (a human's
// response, or an ignore) from skipped.
func mergeResults(calls []message.ToolCall, ran []message.Message, skipped map[string]message.Message) []message.Message {
	if len(skipped) == 0 && len(ran) == len(calls) && slices.EqualFunc(calls, ran, func(c message.ToolCall, m message.Message) bool { return c.ID == m.ToolCallID }) {
		return ran // every call ran, in order: the usual turn
	}
	byID := map[string]message.Message{}
	for _, m := range ran {
		byID[m.ToolCallID] = m
	}
	out := make([]message.Message, 0, len(calls))
	for _, c := range calls {
		if m, ok := skipped[c.ID]; ok {
			out = append(out, m)
		} else if m, ok := byID[c.ID]; ok {
			out = append(out, m)
		}
	}
	return out
}
