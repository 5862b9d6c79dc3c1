// Package swarm builds a multi-agent system of peers: ReAct agents that hand the conversation to
// one another with handoff tools, where the agent that spoke last answers the next message. The
// active agent is part of the state, so a thread remembers who it was talking to across turns and
// restarts.
//
//	flights, _ := react.New(m, &react.Options{Name: "flights", Prompt: "You book flights.",
//		Tools: []tool.Tool{bookFlight, swarm.Handoff("hotels", nil)}})
//	hotels, _ := react.New(m, &react.Options{Name: "hotels", Prompt: "You book hotels.",
//		Tools: []tool.Tool{bookHotel, swarm.Handoff("flights", nil)}})
//	g, err := swarm.New([]swarm.Agent{{Name: "flights", Graph: flights}, {Name: "hotels", Graph: hotels}},
//		&swarm.Options{Compile: graph.CompileOptions{Saver: saver}})
//
// Each agent is a subgraph node of the swarm's graph. A handoff tool ends its agent's turn with a
// [react.Command] for the parent graph: the conversation (with the handoff's tool message, or a
// shorter one that HandoffOptions.Messages chooses) and the new active agent, which runs next in
// the same turn.
package swarm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/tool"
)

// State is a swarm's state: the conversation every agent shares, and the agent that answers next.
type State struct {
	Messages    []message.Message `json:"messages" reduce:"messages"`
	ActiveAgent string            `json:"active_agent,omitempty"`
}

// Agent is one peer of a swarm: a ReAct agent (react.New) and the name the others hand off to.
type Agent struct {
	Name  string
	Graph *graph.Compiled[react.State]
}

// Options configure [New]. Nil options, and every zero field, are the documented defaults.
type Options struct {
	// Name names the graph; "swarm" by default.
	Name string
	// Default is the agent that answers a thread's first message; the first agent when empty.
	Default string
	// Compile configures the compiled graph (its saver keeps the active agent per thread).
	Compile graph.CompileOptions
}

// New compiles the swarm: a router from START to the active agent, and each agent as a subgraph
// node that ends the turn, or hands off to another agent within it.
func New(agents []Agent, o *Options) (*graph.Compiled[State], error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	if len(agents) == 0 {
		return nil, errors.New("swarm: New needs at least one agent")
	}
	names := make([]string, 0, len(agents))
	for i, a := range agents {
		switch {
		case a.Name == "":
			return nil, fmt.Errorf("swarm: agent %d has no name", i)
		case a.Graph == nil:
			return nil, fmt.Errorf("swarm: agent %q has no graph; build it with react.New", a.Name)
		case slices.Contains(names, a.Name):
			return nil, fmt.Errorf("swarm: two agents are named %q", a.Name)
		case a.Name == graph.START || a.Name == graph.END:
			return nil, fmt.Errorf("swarm: an agent cannot be named %q", a.Name)
		}
		names = append(names, a.Name)
	}
	def := cmp.Or(opts.Default, names[0])
	if !slices.Contains(names, def) {
		return nil, fmt.Errorf("swarm: Options.Default names %q, which is not among the agents (%v)", def, names)
	}

	g := graph.New[State]()
	paths := map[string]string{}
	for _, a := range agents {
		paths[a.Name] = a.Name
		in := func(s State) react.State { return react.State{Messages: s.Messages} }
		out := func(r react.State) State { return State{Messages: r.Messages, ActiveAgent: a.Name} }
		graph.AddSubgraph(g, a.Name, a.Graph, in, out, graph.Destinations(others(names, a.Name)...))
		g.AddEdge(a.Name, graph.END)
	}
	g.AddConditionalEdges(graph.START, func(_ context.Context, s State) (string, error) {
		if slices.Contains(names, s.ActiveAgent) {
			return s.ActiveAgent, nil
		}
		return def, nil
	}, paths)
	co := opts.Compile
	co.Name = cmp.Or(co.Name, opts.Name, "swarm")
	return g.Compile(co)
}

func others(names []string, self string) []string {
	var out []string
	for _, n := range names {
		if n != self {
			out = append(out, n)
		}
	}
	return out
}

// HandoffOptions configure [Handoff]. Nil options are the defaults.
type HandoffOptions struct {
	// Name is the tool's name; "transfer_to_<agent>" by default.
	Name string
	// Description tells the model when to hand off; by default "Hand the conversation to <agent>."
	Description string
	// Messages, when set, chooses what the conversation becomes when the next agent takes it,
	// from the conversation so far (the handoff's call and its tool message included): for
	// example a summary and the latest user message. It replaces the shared conversation. Nil
	// passes the whole conversation on.
	Messages func(ctx context.Context, msgs []message.Message) ([]message.Message, error)
}

// Handoff returns a tool that hands the conversation to the agent named to: the calling agent's
// turn ends there, and to answers next, now and in the thread's next turns. It must be a tool of
// a ReAct agent that runs in a swarm (or in any parent graph whose state is State and which has a
// node named to).
func Handoff(to string, o *HandoffOptions) tool.Tool {
	var opts HandoffOptions
	if o != nil {
		opts = *o
	}
	name := cmp.Or(opts.Name, "transfer_to_"+tool.SanitizeName(to))
	desc := cmp.Or(opts.Description, "Hand the conversation to "+to+".")
	return tool.Must(tool.New(name, desc, func(ctx context.Context, _ struct{}) (*tool.Result, error) {
		info, _ := tool.CallInfoFrom(ctx)
		s, ok := tool.StateFrom[react.State](ctx)
		if !ok {
			return nil, fmt.Errorf("swarm: the handoff to %q runs outside a ReAct agent's tool node", to)
		}
		done := "Transferred to " + to + "."
		msgs := append(slices.Clip(s.Messages), message.ToolResult(info.CallID, name, done))
		if opts.Messages != nil {
			var err error
			if msgs, err = opts.Messages(ctx, msgs); err != nil {
				return nil, fmt.Errorf("swarm: choosing the messages for %q: %w", to, err)
			}
			msgs = append([]message.Message{message.RemoveAll()}, msgs...)
		}
		return &tool.Result{Content: done, Command: &react.Command{
			Parent: true,
			Goto:   []graph.Target{graph.To(to)},
			Update: State{Messages: msgs, ActiveAgent: to},
		}}, nil
	}))
}

// NewSupervisor compiles a supervisor that delegates by handoff: every turn starts with lead, a
// ReAct agent whose tools include a Handoff to each worker; a worker it hands to answers and
// gives the turn back to lead, which hands off again or answers. (supervisor.New is the other
// way: a classifier routes each request and a synthesizer joins the results.) Workers need no
// handoff tools; State.ActiveAgent names the agent that spoke last.
func NewSupervisor(lead Agent, workers []Agent, o *Options) (*graph.Compiled[State], error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	if opts.Default != "" && opts.Default != lead.Name {
		return nil, fmt.Errorf("swarm: NewSupervisor: every turn starts with the lead %q; leave Options.Default empty", lead.Name)
	}
	if len(workers) == 0 {
		return nil, errors.New("swarm: NewSupervisor needs at least one worker")
	}
	all := append([]Agent{lead}, workers...)
	if _, err := New(all, &Options{}); err != nil { // the same checks of names and graphs
		return nil, err
	}
	names := make([]string, len(all))
	for i, a := range all {
		names[i] = a.Name
	}
	g := graph.New[State]()
	for _, a := range all {
		in := func(s State) react.State { return react.State{Messages: s.Messages} }
		out := func(r react.State) State { return State{Messages: r.Messages, ActiveAgent: a.Name} }
		graph.AddSubgraph(g, a.Name, a.Graph, in, out, graph.Destinations(others(names, a.Name)...))
		if a.Name == lead.Name {
			g.AddEdge(a.Name, graph.END)
		} else {
			g.AddEdge(a.Name, lead.Name)
		}
	}
	g.AddEdge(graph.START, lead.Name)
	co := opts.Compile
	co.Name = cmp.Or(co.Name, opts.Name, "supervisor")
	return g.Compile(co)
}
