package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/trellis-go/trellis/agent"
	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
)

// Intents the classifier may report besides the agents' own.
const (
	// IntentMulti means the request spans several agents.
	IntentMulti = "multi_domain"
	// IntentGeneral means no agent is needed: greetings, help, questions about the assistant.
	IntentGeneral = "general"
)

// Node names of the supervisor graph. Each registered agent is a node named after it.
const (
	NodeClassify   = "supervisor"
	NodeSynthesize = "synthesizer"
)

// State is the state of a supervisor graph. Its JSON names follow the multi-agent
// specifications, so an application state can map onto it field by field.
type State struct {
	// Messages is the conversation. The supervisor appends its answer (the synthesis, or the
	// clarifying question) as one assistant message.
	Messages []message.Message `json:"messages" reduce:"messages"`
	// Summary is a summary of the earlier conversation, given by the caller (see conversation.Summarize); the
	// classifier reads it to resolve references such as "the same for SP15".
	Summary string `json:"conversation_summary,omitempty"`

	// Intent, Agents, Filters and Clarification are the classifier's decision for the latest
	// request (see [Route]).
	Intent        string          `json:"intent,omitempty"`
	Agents        []string        `json:"active_agents,omitempty"`
	Filters       json.RawMessage `json:"filters,omitempty"`
	Clarification string          `json:"clarification,omitempty"`

	// Task is set only in the payload an agent node receives: what that agent is asked to do.
	Task *Task `json:"task,omitempty"`
	// Results collects the agents' results of the latest request, in the order they were sent.
	Results []AgentResult `json:"agent_results,omitempty" reduce:"append"`
	// Answer is the final answer of the latest request.
	Answer string `json:"final_response,omitempty"`
}

// Route is the classifier's structured decision about a request.
type Route struct {
	// Intent names the request's kind: an agent's intent, [IntentMulti] or [IntentGeneral].
	Intent string `json:"intent,omitempty"`
	// Agents lists the agents that should work on the request, in order of relevance.
	Agents []string `json:"agents"`
	// Filters holds the values extracted from the request, shaped by Options.Filters.
	Filters json.RawMessage `json:"filters,omitempty"`
	// Ambiguous is true when the request cannot be routed without asking the user; Question then
	// holds what to ask.
	Ambiguous bool   `json:"ambiguous,omitempty"`
	Question  string `json:"clarifying_question,omitempty"`
}

// Task is what one agent is asked to do.
type Task struct {
	// Agent names the agent.
	Agent string `json:"agent"`
	// Request is the user's latest message, or a narrower instruction written by a planner.
	Request string `json:"request"`
	// Messages is the conversation so far (user and assistant turns, the request last).
	Messages []message.Message `json:"messages,omitempty"`
	// Intent and Filters come from the classifier.
	Intent  string          `json:"intent,omitempty"`
	Filters json.RawMessage `json:"filters,omitempty"`
	// Summary is the earlier conversation's summary, if the caller gave one.
	Summary string `json:"summary,omitempty"`
	// Critiques are a reviewer's critiques of earlier attempts, oldest first (see [NewReview]).
	Critiques []string `json:"critiques,omitempty"`
}

// AgentResult is what an agent hands to the synthesizer.
type AgentResult struct {
	Agent   string `json:"agent"`
	Request string `json:"request,omitempty"`
	// Answer is the agent's own answer in words.
	Answer string `json:"answer,omitempty"`
	// Data is structured output (rows, a report), when the agent has some.
	Data json.RawMessage `json:"data,omitempty"`
	// Error says why the agent failed; the synthesizer reports it instead of an answer.
	Error    string         `json:"error,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// AgentFunc is an agent written as a function.
type AgentFunc func(ctx context.Context, task Task) (AgentResult, error)

// Agent describes an agent to the classifier and says how to run it. Register one with
// [Supervisor.Add], or a compiled graph with [AddGraphAgent] or [Supervisor.AddReAct].
type Agent struct {
	// Name identifies the agent: the classifier returns it and the graph node bears it. Use
	// letters, digits and '_' (for example "dayahead_agent").
	Name string
	// Description says what the agent knows and does, in words the classifier matches requests
	// against. Required.
	Description string
	// Intent is the intent this agent serves; empty means Name.
	Intent string
	// Examples are requests this agent answers, shown to the classifier.
	Examples []string
	// Run runs the agent. Required for [Supervisor.Add]; set by the graph helpers otherwise.
	Run AgentFunc
}

// Options configure [New]. Nil options, and every zero field, are the documented defaults.
type Options struct {
	// Name names the compiled graph; "supervisor" by default.
	Name string
	// ClassifierModel, when set, classifies requests (with structured output) instead of the
	// model given to [New], which then only writes the synthesis. A fast model is usually
	// enough to classify.
	ClassifierModel model.Model
	// Prompt opens the classifier's system prompt: who the assistant is and what it serves. The
	// agents' descriptions, the output format and the prior conversation summary follow it. Empty
	// means a neutral opening.
	Prompt string
	// Filters is the JSON Schema (an object schema) of the values to extract from a request, such
	// as vendor, market or date range. Nil means no filters are extracted.
	Filters json.RawMessage
	// History is how many earlier user and assistant turns the classifier sees besides the latest
	// request and the summary; zero means none (the summary carries the context).
	History int
	// AfterClassify, when set, may adjust a route before it is followed: normalise filters, drop
	// agents the user may not use, or ask for clarification.
	AfterClassify func(ctx context.Context, s State, r Route) (Route, error)
	// Plan, when set, turns a route into tasks: several tasks for one agent fan out to parallel
	// runs of it. Nil means one task per routed agent carrying the user's request.
	Plan func(ctx context.Context, s State) ([]Task, error)
	// SynthesizerPrompt is the synthesizer's system prompt; empty means a default that asks for a
	// direct, concise answer built only from the agents' results.
	SynthesizerPrompt string
	// Synthesize, when set, replaces the default synthesizer. It returns the answer text.
	Synthesize func(ctx context.Context, s State) (string, error)
	// Compile configures the compiled graph (saver, store, concurrency).
	Compile graph.CompileOptions
}

// Supervisor routes requests to registered agents. Build it with [New], register
// agents, then [Supervisor.Compile]. Registration is not safe for concurrent use; the compiled
// graph is.
type Supervisor struct {
	model  model.Model
	opts   Options
	agents []Agent
	byName map[string]int
	graphs []func(g *graph.Graph[State])
	errs   []error
}

var nameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

// New returns a supervisor with no agents yet: m classifies each request (unless
// Options.ClassifierModel is set) and writes the synthesis. m is required (Compile reports it
// missing); o may be nil.
func New(m model.Model, o *Options) *Supervisor {
	s := &Supervisor{model: m, byName: map[string]int{}}
	if o != nil {
		s.opts = *o
	}
	return s
}

// Add registers an agent written as a function. An error from Run becomes an [AgentResult] with
// Error set, which the synthesizer reports; interrupts and cancellation still stop the run.
// Mistakes (a bad name, a missing description) are reported by Compile.
func (s *Supervisor) Add(a Agent) *Supervisor {
	if a.Run == nil {
		s.errs = append(s.errs, fmt.Errorf("supervisor: agent %q has no Run function (use AddGraphAgent or AddReAct for a compiled graph)", a.Name))
		return s
	}
	if !s.register(a) {
		return s
	}
	run := a.Run
	name := a.Name
	s.graphs = append(s.graphs, func(g *graph.Graph[State]) {
		g.AddNode(name, func(ctx context.Context, st State) (State, error) {
			task := taskFor(name, st)
			res, err := run(ctx, task)
			if err != nil {
				if stopsRun(ctx, err) {
					return State{}, err
				}
				res = AgentResult{Error: err.Error()}
			}
			res.Agent = name
			if res.Request == "" {
				res.Request = task.Request
			}
			return State{Results: []AgentResult{res}}, nil
		})
	})
	return s
}

// AddGraphAgent registers a compiled graph as an agent: it runs as a subgraph (its checkpoints,
// interrupts and streamed tokens flow through the supervisor's run). in builds the graph's input
// from the task; out reads the agent's result from its final state (its Agent is filled in). A failure of the graph fails the run (give the graph's nodes retry
// policies where that is wrong).
func AddGraphAgent[C any](s *Supervisor, a Agent, g *graph.Compiled[C], in func(Task) C, out func(C) AgentResult) *Supervisor {
	if g == nil || in == nil || out == nil {
		s.errs = append(s.errs, fmt.Errorf("supervisor: agent %q needs a compiled graph and both mapping functions", a.Name))
		return s
	}
	if a.Run != nil {
		s.errs = append(s.errs, fmt.Errorf("supervisor: agent %q: Run is set, but a graph agent runs its graph (register a function agent with Add)", a.Name))
		return s
	}
	if !s.register(a) {
		return s
	}
	name := a.Name
	s.graphs = append(s.graphs, func(pg *graph.Graph[State]) {
		graph.AddSubgraph(pg, name, g,
			func(st State) C { return in(taskFor(name, st)) },
			func(c C) State {
				r := out(c)
				r.Agent = name
				return State{Results: []AgentResult{r}}
			})
	})
	return s
}

// AddReAct registers a ReAct agent (from [react.New]) as an agent. It receives the conversation
// with the task's request last, preceded by a system note of the extracted filters when there are
// any; its last assistant message is the result's Answer and its structured response the Data.
func (s *Supervisor) AddReAct(a Agent, g *graph.Compiled[react.State]) *Supervisor {
	return AddGraphAgent(s, a, g, ReActInput, ReActResult)
}

// ReActInput is the input [Supervisor.AddReAct] gives a ReAct agent for a task.
func ReActInput(t Task) react.State {
	var msgs []message.Message
	if len(t.Filters) > 0 && string(t.Filters) != "{}" && string(t.Filters) != "null" {
		msgs = append(msgs, message.System("Filters extracted from the request by the router (use them as tool arguments where they fit): "+string(t.Filters)))
	}
	for _, m := range t.Messages {
		m.ID = "" // the agent's own thread: fresh IDs, no clash with the supervisor's
		msgs = append(msgs, m)
	}
	return react.State{Messages: msgs}
}

// ReActResult is the result [Supervisor.AddReAct] reads from a ReAct agent's final state.
func ReActResult(s react.State) AgentResult {
	r := AgentResult{Data: s.Structured}
	answered := false
	for i := len(s.Messages) - 1; i >= 0; i-- {
		switch m := s.Messages[i]; m.Role {
		case message.RoleAssistant:
			// the last assistant message after the latest user message
			if !answered {
				r.Answer, answered = m.Text(), true
			}
		case message.RoleUser:
			r.Request = m.Text()
			return r
		}
	}
	return r
}

func (s *Supervisor) register(a Agent) bool {
	switch {
	case !nameRE.MatchString(a.Name):
		s.errs = append(s.errs, fmt.Errorf("supervisor: agent name %q must start with a letter and hold only letters, digits, '_' and '-' (at most 64)", a.Name))
		return false
	case a.Name == NodeClassify || a.Name == NodeSynthesize || a.Name == IntentGeneral || a.Name == IntentMulti:
		s.errs = append(s.errs, fmt.Errorf("supervisor: agent name %q is reserved; choose another", a.Name))
		return false
	case strings.TrimSpace(a.Description) == "":
		s.errs = append(s.errs, fmt.Errorf("supervisor: agent %q has no Description; the classifier routes by it", a.Name))
		return false
	}
	if _, dup := s.byName[a.Name]; dup {
		s.errs = append(s.errs, fmt.Errorf("supervisor: agent %q is registered twice", a.Name))
		return false
	}
	if a.Intent == "" {
		a.Intent = a.Name
	}
	s.byName[a.Name] = len(s.agents)
	s.agents = append(s.agents, a)
	return true
}

// Agents returns the registered agents in registration order.
func (s *Supervisor) Agents() []Agent { return append([]Agent(nil), s.agents...) }

// Compile builds the supervisor graph: classify, then the chosen agents in parallel (one
// [graph.Send] per task), then the synthesizer. A clarifying question or an empty route skips
// the agents. Every registration mistake is reported at once.
func (s *Supervisor) Compile() (*graph.Compiled[State], error) {
	errs := append([]error(nil), s.errs...)
	if s.model == nil {
		errs = append(errs, errors.New("supervisor: New needs a model"))
	}
	if len(s.agents) == 0 && len(s.errs) == 0 {
		errs = append(errs, errors.New("supervisor: the supervisor has no agents; register them with Add, AddGraphAgent or AddReAct"))
	}
	if len(s.opts.Filters) > 0 {
		var obj map[string]any
		if err := json.Unmarshal(s.opts.Filters, &obj); err != nil {
			errs = append(errs, fmt.Errorf("supervisor: Options.Filters is not a JSON object schema: %v", err))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	schema := s.routeSchema()
	prompt := s.classifierPrompt()
	g := graph.New[State]()
	g.AddNode(NodeClassify, func(ctx context.Context, st State) (State, error) {
		return s.classify(ctx, st, schema, prompt)
	})
	names := []string{NodeSynthesize, graph.END}
	for _, add := range s.graphs {
		add(g)
	}
	for _, a := range s.agents {
		names = append(names, a.Name)
		g.AddEdge(a.Name, NodeSynthesize)
	}
	g.AddRouter(NodeClassify, func(ctx context.Context, st State) ([]graph.Target, error) {
		if st.Clarification != "" {
			return []graph.Target{graph.To(graph.END)}, nil
		}
		tasks, err := s.plan(ctx, st)
		if err != nil {
			return nil, err
		}
		if len(tasks) == 0 {
			return []graph.Target{graph.To(NodeSynthesize)}, nil
		}
		out := make([]graph.Target, len(tasks))
		for i, t := range tasks {
			p := st
			p.Task = &t
			out[i] = graph.Send(t.Agent, p)
		}
		return out, nil
	}, names...)
	g.AddNode(NodeSynthesize, func(ctx context.Context, st State) (State, error) {
		var text string
		var err error
		if s.opts.Synthesize != nil {
			text, err = s.opts.Synthesize(ctx, st)
		} else {
			text, err = s.synthesize(ctx, st)
		}
		if err != nil {
			return State{}, err
		}
		answer := message.Assistant(text)
		if id := graph.StreamedMessageID(ctx); id != "" {
			answer.ID = id // the streamed chunks' message (see graph.StreamedMessageID)
		}
		return State{Answer: text, Messages: []message.Message{answer}}, nil
	})
	g.AddEdge(graph.START, NodeClassify)
	g.AddEdge(NodeSynthesize, graph.END)
	co := s.opts.Compile
	if co.Name == "" {
		co.Name = s.opts.Name
	}
	if co.Name == "" {
		co.Name = "supervisor"
	}
	return g.Compile(co)
}

// routeSchema is the JSON Schema of a Route for this supervisor's agents.
func (s *Supervisor) routeSchema() *model.Schema {
	names := make([]any, len(s.agents))
	intents := []any{}
	seen := map[string]bool{}
	for i, a := range s.agents {
		names[i] = a.Name
		if !seen[a.Intent] {
			seen[a.Intent] = true
			intents = append(intents, a.Intent)
		}
	}
	intents = append(intents, IntentMulti, IntentGeneral)
	props := map[string]any{
		"intent": map[string]any{"type": "string", "enum": intents, "description": "the kind of request"},
		"agents": map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": names},
			"description": "the agents that should work on the request; empty when none is needed"},
		"ambiguous":           map[string]any{"type": "boolean", "description": "true only when the request cannot be routed without asking the user"},
		"clarifying_question": map[string]any{"type": "string", "description": "what to ask the user when ambiguous is true"},
	}
	if len(s.opts.Filters) > 0 {
		props["filters"] = json.RawMessage(s.opts.Filters)
	}
	raw, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": []string{"agents"}})
	return &model.Schema{Name: "route", Description: "where to send the request", JSON: raw}
}

func (s *Supervisor) classifierPrompt() string {
	var b strings.Builder
	if p := strings.TrimSpace(s.opts.Prompt); p != "" {
		b.WriteString(p)
	} else {
		b.WriteString("You are the router of a team of specialist agents.")
	}
	b.WriteString("\n\nDecide which agents should work on the user's latest request and extract the values it names. Reply with JSON only:\n" +
		"- agents: the names of the agents to use, several when the request spans several areas, none for greetings, thanks or questions about you;\n" +
		"- intent: the kind of request (an agent's intent, " + IntentMulti + " for several, " + IntentGeneral + " for none);\n")
	if len(s.opts.Filters) > 0 {
		b.WriteString("- filters: the values the request names, normalised as the schema describes; leave out what it does not name;\n")
	}
	b.WriteString("- ambiguous: true only when you cannot tell what the user wants or which thing they mean, with clarifying_question set to a short question for them.\n\n## Agents\n")
	for _, a := range s.agents {
		fmt.Fprintf(&b, "\n### %s\n", a.Name)
		if a.Intent != a.Name {
			fmt.Fprintf(&b, "Intent: %s.\n", a.Intent)
		}
		b.WriteString(strings.TrimSpace(strings.ReplaceAll(a.Description, "\n\n", "\n")))
		b.WriteByte('\n')
		if len(a.Examples) > 0 {
			b.WriteString("Example requests:\n")
			for _, e := range a.Examples {
				fmt.Fprintf(&b, "- %s\n", e)
			}
		}
	}
	return b.String()
}

// Classify asks m to route the conversation's latest user message, using the same prompt and
// schema as the compiled graph. Applications that route without the graph call it directly.
func (s *Supervisor) Classify(ctx context.Context, st State) (Route, error) {
	return s.route(ctx, st, s.routeSchema(), s.classifierPrompt())
}

func (s *Supervisor) route(ctx context.Context, st State, schema *model.Schema, prompt string) (Route, error) {
	last := -1
	for i := len(st.Messages) - 1; i >= 0; i-- {
		if st.Messages[i].Role == message.RoleUser {
			last = i
			break
		}
	}
	if last < 0 {
		return Route{}, errors.New("supervisor: the supervisor needs a user message to route; send {\"messages\": [{\"role\": \"user\", \"content\": \"...\"}]}")
	}
	sys := prompt
	if st.Summary != "" {
		sys += "\n\n## Prior conversation\n" + st.Summary + "\n"
	}
	msgs := []message.Message{message.System(sys)}
	if s.opts.History > 0 {
		var hist []message.Message
		for i := last - 1; i >= 0 && len(hist) < s.opts.History; i-- {
			m := st.Messages[i]
			if (m.Role == message.RoleUser || m.Role == message.RoleAssistant) && m.Text() != "" {
				hist = append(hist, message.Message{Role: m.Role, Content: m.Text()})
			}
		}
		for i := len(hist) - 1; i >= 0; i-- {
			msgs = append(msgs, hist[i])
		}
	}
	u := st.Messages[last]
	msgs = append(msgs, message.Message{Role: message.RoleUser, Content: u.Content, Parts: u.Parts})
	cm := s.opts.ClassifierModel
	if cm == nil {
		cm = s.model
	}
	resp, err := cm.Generate(ctx, &model.Request{Messages: msgs, Schema: schema})
	if err != nil {
		return Route{}, fmt.Errorf("supervisor: classifying the request: %w", err)
	}
	var r Route
	if err := json.Unmarshal(resp.Structured, &r); err != nil {
		return Route{}, fmt.Errorf("supervisor: classifying the request: the reply %s is not a route: %w", resp.Structured, err)
	}
	if string(r.Filters) == "null" {
		r.Filters = nil
	}
	return r, nil
}

// normalize checks a route against the registered agents and fills what it leaves implicit.
func (s *Supervisor) normalize(r Route) (Route, error) {
	seen := map[string]bool{}
	agents := r.Agents[:0:0]
	for _, n := range r.Agents {
		if _, ok := s.byName[n]; !ok {
			return r, fmt.Errorf("supervisor: the route names agent %q, which is not registered (registered: %s)", n, strings.Join(s.names(), ", "))
		}
		if !seen[n] {
			seen[n] = true
			agents = append(agents, n)
		}
	}
	r.Agents = agents
	if r.Ambiguous && strings.TrimSpace(r.Question) == "" {
		r.Question = "Could you say a little more about what you need, so I can send your question to the right place?"
	}
	if !r.Ambiguous {
		r.Question = ""
	}
	switch {
	case len(r.Agents) == 0:
		r.Intent = IntentGeneral
	case len(r.Agents) > 1:
		r.Intent = IntentMulti
	case r.Intent == "" || r.Intent == IntentGeneral || r.Intent == IntentMulti:
		r.Intent = s.agents[s.byName[r.Agents[0]]].Intent
	}
	return r, nil
}

func (s *Supervisor) names() []string {
	out := make([]string, len(s.agents))
	for i, a := range s.agents {
		out[i] = a.Name
	}
	return out
}

func (s *Supervisor) classify(ctx context.Context, st State, schema *model.Schema, prompt string) (State, error) {
	r, err := s.route(ctx, st, schema, prompt)
	if err != nil {
		return State{}, err
	}
	if r, err = s.normalize(r); err != nil {
		return State{}, err
	}
	if s.opts.AfterClassify != nil {
		if r, err = s.opts.AfterClassify(ctx, st, r); err != nil {
			return State{}, err
		}
		if r, err = s.normalize(r); err != nil {
			return State{}, err
		}
	}
	// Every route key is written, zero values included, so nothing of the previous request on
	// this thread survives into this one.
	writes := []struct {
		key string
		val any
	}{
		{"intent", r.Intent}, {"active_agents", r.Agents}, {"filters", r.Filters},
		{"clarification", r.Question}, {"final_response", r.Question},
	}
	for _, w := range writes {
		if err := graph.Write(ctx, w.key, w.val); err != nil {
			return State{}, err
		}
	}
	if err := graph.Overwrite(ctx, "agent_results", []AgentResult(nil)); err != nil {
		return State{}, err
	}
	if r.Ambiguous {
		return State{Messages: []message.Message{message.Assistant(r.Question)}}, nil
	}
	return State{}, nil
}

func (s *Supervisor) plan(ctx context.Context, st State) ([]Task, error) {
	if s.opts.Plan != nil {
		tasks, err := s.opts.Plan(ctx, st)
		if err != nil {
			return nil, err
		}
		base := taskFor("", st)
		for i := range tasks {
			if _, ok := s.byName[tasks[i].Agent]; !ok {
				return nil, fmt.Errorf("supervisor: Plan made task %d for agent %q, which is not registered (registered: %s)", i, tasks[i].Agent, strings.Join(s.names(), ", "))
			}
			if tasks[i].Request == "" {
				tasks[i].Request = base.Request
			}
			if tasks[i].Messages == nil {
				tasks[i].Messages = base.Messages
				if n := len(base.Messages); n > 0 && tasks[i].Request != base.Request {
					tasks[i].Messages = append(append([]message.Message(nil), base.Messages[:n-1]...), message.User(tasks[i].Request))
				}
			}
			if tasks[i].Filters == nil {
				tasks[i].Filters = base.Filters
			}
			if tasks[i].Intent == "" {
				tasks[i].Intent = base.Intent
			}
			if tasks[i].Summary == "" {
				tasks[i].Summary = base.Summary
			}
		}
		return tasks, nil
	}
	tasks := make([]Task, len(st.Agents))
	for i, n := range st.Agents {
		tasks[i] = taskFor(n, st)
	}
	return tasks, nil
}

// taskFor returns the task an agent node received, or builds the default one from the state.
func taskFor(name string, st State) Task {
	if st.Task != nil && (name == "" || st.Task.Agent == name) {
		return *st.Task
	}
	t := Task{Agent: name, Intent: st.Intent, Filters: st.Filters, Summary: st.Summary}
	for _, m := range st.Messages {
		if (m.Role == message.RoleUser || m.Role == message.RoleAssistant) && m.Text() != "" {
			t.Messages = append(t.Messages, message.Message{ID: m.ID, Role: m.Role, Content: m.Content, Parts: m.Parts})
		}
	}
	for i := len(t.Messages) - 1; i >= 0; i-- {
		if t.Messages[i].Role == message.RoleUser {
			t.Request = t.Messages[i].Text()
			t.Messages = t.Messages[:i+1]
			break
		}
	}
	return t
}

// stopsRun reports whether an agent's error must stop the run instead of becoming a result.
func stopsRun(ctx context.Context, err error) bool {
	var ie *graph.InterruptedError
	return errors.As(err, &ie) || ctx.Err() != nil || errors.Is(err, context.Canceled)
}

const defaultSynthesizerPrompt = `You write the final answer for the user from the results of specialist agents, which appear as tool results after the user's latest message.
- Lead with a direct answer to the question in one or two sentences.
- Use only facts from the results; do not invent numbers.
- Present rows of data as a Markdown table.
- When an agent failed or found nothing, say what was looked for and suggest what to try instead.
- Keep it concise.`

const generalPrompt = `You are a helpful assistant in front of a team of specialist agents. The user's latest message needs none of them (a greeting, thanks, or a question about what you can do). Answer briefly; when it helps, say what you can help with:`

// synthesize writes the answer: the agents' results are shown to the model as the results of
// tool calls it made (one per agent), which every provider and the offline model answer from.
func (s *Supervisor) synthesize(ctx context.Context, st State) (string, error) {
	conv := taskFor("", st).Messages
	var msgs []message.Message
	if len(st.Results) == 0 {
		var b strings.Builder
		b.WriteString(generalPrompt)
		for _, a := range s.agents {
			fmt.Fprintf(&b, "\n- %s", firstLine(a.Description))
		}
		msgs = append(msgs, message.System(b.String()))
		if st.Summary != "" {
			msgs = append(msgs, message.System("Earlier in this conversation: "+st.Summary))
		}
		msgs = append(msgs, stripIDs(conv)...)
		resp, err := agent.StreamModel(ctx, s.model, &model.Request{Messages: msgs})
		if err != nil {
			return "", fmt.Errorf("supervisor: synthesizer: %w", err)
		}
		return resp.Message.Text(), nil
	}
	prompt := s.opts.SynthesizerPrompt
	if prompt == "" {
		prompt = defaultSynthesizerPrompt
	}
	msgs = append(msgs, message.System(prompt))
	if st.Summary != "" {
		msgs = append(msgs, message.System("Earlier in this conversation: "+st.Summary))
	}
	msgs = append(msgs, stripIDs(conv)...)
	calls := make([]message.ToolCall, len(st.Results))
	results := make([]message.Message, len(st.Results))
	var specs []model.ToolSpec
	seen := map[string]bool{}
	for i, r := range st.Results {
		args, _ := json.Marshal(map[string]any{"request": r.Request})
		id := fmt.Sprintf("agent_%d", i+1)
		calls[i] = message.ToolCall{ID: id, Name: r.Agent, Arguments: args}
		if r.Error != "" {
			results[i] = message.ToolError(id, r.Agent, r.Error)
		} else {
			results[i] = message.ToolResult(id, r.Agent, resultText(r))
		}
		if !seen[r.Agent] {
			seen[r.Agent] = true
			desc := r.Agent
			if i, ok := s.byName[r.Agent]; ok {
				desc = firstLine(s.agents[i].Description)
			}
			specs = append(specs, model.ToolSpec{Name: r.Agent, Description: desc,
				Parameters: json.RawMessage(`{"type":"object","properties":{"request":{"type":"string"}},"required":["request"]}`)})
		}
	}
	msgs = append(msgs, message.Assistant("", calls...))
	msgs = append(msgs, results...)
	resp, err := agent.StreamModel(ctx, s.model, &model.Request{Messages: msgs, Tools: specs, ToolChoice: model.ToolChoiceNone})
	if err != nil {
		return "", fmt.Errorf("supervisor: synthesizer: %w", err)
	}
	return resp.Message.Text(), nil
}

// resultText is what the synthesizer reads of a result: the answer, then the data.
func resultText(r AgentResult) string {
	switch {
	case len(r.Data) == 0 && r.Answer == "":
		return "(the agent returned nothing)"
	case len(r.Data) == 0:
		return r.Answer
	case r.Answer == "":
		return string(r.Data)
	}
	return r.Answer + "\n\nData: " + string(r.Data)
}

func stripIDs(msgs []message.Message) []message.Message {
	out := make([]message.Message, len(msgs))
	for i, m := range msgs {
		m.ID = ""
		out[i] = m
	}
	return out
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
