package vesper

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/trellis-go/trellis/agent/supervisor"
	"github.com/trellis-go/trellis/apps/vesper/pack"
	"github.com/trellis-go/trellis/apps/vesper/rbac"
	"github.com/trellis-go/trellis/apps/vesper/reports"
	"github.com/trellis-go/trellis/apps/vesper/synth"
	"github.com/trellis-go/trellis/apps/vesper/tools"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/server/appkit"
	"github.com/trellis-go/trellis/tool"
)

// assistantConfig configures newAssistant. Toolkit is required; every other zero value is a
// documented default.
type assistantConfig struct {
	// Toolkit runs the tools (tools.New over the warehouse). Required.
	Toolkit *tools.Toolkit
	// Settings is the per-tenant tool switch table; nil means every tool is on.
	Settings *tools.Settings
	// Linker makes the Power BI deep links; nil means answers carry none.
	Linker *reports.Linker
	// Model, when set and not the offline model, classifies requests, runs
	// each domain agent as a tool loop (react.New, at most MaxTurns
	// model calls) and writes the answer from the formatted results. Nil
	// means the offline model: the app's rules route, plan and compose (see
	// [RuleRouter]).
	Model model.Model
	// MaxTurns bounds the model calls of one domain agent's tool loop with a
	// real model; zero means DefaultMaxTurns.
	MaxTurns int
	// Domains are registered after the built-in four; use it to add a domain.
	Domains []Domain
	// Now is the clock for relative dates ("last week"); nil means time.Now.
	Now func() time.Time
	// Compile configures the compiled graph (saver, store).
	Compile graph.CompileOptions
	// TenantAliases maps a caller's tenant to the warehouse tenant whose data it sees; for
	// example the dev-mode server's single tenant "default" to the demo tenant "vesper".
	// Nil means every tenant sees its own data.
	TenantAliases map[string]string
}

// callerFrom returns the run's caller, its tenant mapped through assistantConfig.TenantAliases.
func (a *assistant) callerFrom(ctx context.Context) (tool.CallInfo, bool) {
	info, ok := tool.CallInfoFrom(ctx)
	if t, alias := a.cfg.TenantAliases[info.Tenant]; alias {
		info.Tenant = t
	}
	return info, ok
}

// assistant is the Vesper graph and what it needs.
type assistant struct {
	cfg     assistantConfig
	rules   bool
	domains []Domain
	byName  map[string]*Domain
	funcs   map[string]ToolFunc
	format  *synth.Formatter
	offline model.Model // the offline model with vesper's pack, when the rules route
	Graph   *graph.Compiled[supervisor.State]
}

// ErrNoCaller is returned when a run carries no tenant: the server puts a
// tool.CallInfo in every run's context.
var ErrNoCaller = errors.New("vesper: no caller in the run's context; the server (or a test) must put a tool.CallInfo with a Tenant in it (tool.WithCallInfo)")

// newAssistant builds the graph: the supervisor, one agent per domain, the synthesizer.
func newAssistant(cfg assistantConfig) (*assistant, error) {
	if cfg.Toolkit == nil {
		return nil, errors.New("vesper: assistantConfig.Toolkit is required; build it with tools.New(warehouse, nil)")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	a := &assistant{cfg: cfg, byName: map[string]*Domain{}, funcs: toolkitFuncs(cfg.Toolkit),
		format: synth.New(&synth.Options{Now: cfg.Now})}
	a.rules = cfg.Model == nil || model.IsOffline(cfg.Model)
	m := cfg.Model
	if a.rules && m == nil {
		// Outside the server (tests, tools): the offline model on the app's clock (the data's
		// own date) with vesper's pack. Through the server, cfg.Model is the server's role: the
		// offline model with vesper's pack, which the server wraps for spans and token budgets.
		m = offline.New(&offline.Options{Now: cfg.Now, Packs: []*offline.Pack{pack.Pack}})
	}
	if a.rules {
		a.offline = m
	}
	a.domains = append(BuiltinDomains(), cfg.Domains...)
	cues := packCues(pack.Pack)
	for i := range a.domains {
		d := &a.domains[i]
		if d.Keywords == nil {
			d.Keywords = cues[d.Name]
		}
		if d.Plan == nil {
			return nil, fmt.Errorf("vesper: domain %q has no Plan; the offline router needs one", d.Name)
		}
		if err := checkRouting(d); err != nil {
			return nil, err
		}
		if _, dup := a.byName[d.Name]; dup {
			return nil, fmt.Errorf("vesper: domain %q is registered twice", d.Name)
		}
		a.byName[d.Name] = d
	}
	opts := supervisor.Options{
		Name: "vesper", Prompt: supervisorPrompt, Filters: FilterSchema, History: 2,
		AfterClassify: a.afterClassify, Synthesize: a.synthesize, Compile: cfg.Compile,
	}
	if a.rules {
		opts.ClassifierModel = &RuleRouter{app: a}
	}
	sup := supervisor.New(m, &opts)
	for i := range a.domains {
		d := &a.domains[i]
		sup.Add(supervisor.Agent{Name: d.Name, Intent: d.Intent, Description: d.Description, Examples: d.Examples, Run: a.runDomain(d)})
	}
	g, err := sup.Compile()
	if err != nil {
		return nil, err
	}
	a.Graph = g
	return a, nil
}

// packCues are the cue phrases of each intent of a pack, by tool (a domain's agent), lower case:
// the words the offline router scores a domain by.
func packCues(p *offline.Pack) map[string][]string {
	out := map[string][]string{}
	for _, in := range p.Intents {
		for _, c := range in.Cues {
			out[in.Tool] = append(out[in.Tool], strings.ToLower(c))
		}
	}
	return out
}

// Toolkit returns the toolkit the agents run.
func (a *assistant) Toolkit() *tools.Toolkit { return a.cfg.Toolkit }

// Domains returns the registered domains.
func (a *assistant) Domains() []Domain { return slices.Clone(a.domains) }

// afterClassify normalises the filters (alias map, fuzzy matching), carries
// the previous request's filters and agents into a follow-up that names
// only new filters ("and for SP15?"), and asks a domain's clarifying
// question when the request lacks what it needs.
func (a *assistant) afterClassify(ctx context.Context, st supervisor.State, r supervisor.Route) (supervisor.Route, error) {
	var f Filters
	if len(r.Filters) > 0 {
		if err := json.Unmarshal(r.Filters, &f); err != nil {
			return r, fmt.Errorf("vesper: the classifier's filters %s do not fit the filter schema: %w", r.Filters, err)
		}
	}
	f.Normalize()
	req := strings.ToLower(appkit.LastUser(st.Messages))
	if f.SQL == "" && writeRequest(req) {
		// The tools only read; say so rather than answer another question.
		r.Agents, r.Ambiguous, r.Question = nil, true, WriteRefusal
		raw, _ := json.Marshal(f)
		r.Filters = raw
		return r, nil
	}
	followUp := hasCue(req, "follow_up")
	if !r.Ambiguous && len(st.Agents) > 0 && (followUp || (len(r.Agents) == 0 && !f.empty())) {
		var prev Filters
		_ = json.Unmarshal(st.Filters, &prev)
		f = merge(prev, f)
		if len(r.Agents) == 0 {
			r.Agents = st.Agents
		}
	}
	if !r.Ambiguous && f.SQL == "" {
		for _, n := range r.Agents {
			if d := a.byName[n]; d != nil && d.Clarify != nil {
				if q := d.Clarify(req, f); q != "" {
					r.Ambiguous, r.Question = true, q
					break
				}
			}
		}
	}
	raw, _ := json.Marshal(f)
	r.Filters = raw
	return r, nil
}

func (f Filters) empty() bool {
	b, _ := json.Marshal(f)
	return string(b) == "{}"
}

// merge lays the new filters over the previous ones; a new hub-zone or
// vendor replaces the old list.
func merge(prev, cur Filters) Filters {
	out := prev
	b, _ := json.Marshal(cur)
	_ = json.Unmarshal(b, &out)
	if len(cur.HubZones) > 0 {
		out.HubZones = cur.HubZones
	}
	if len(cur.Vendors) > 0 {
		out.Vendors = cur.Vendors
	}
	if len(cur.Markets) > 0 {
		out.Markets = cur.Markets
	}
	return out
}

// ToolCallRecord is one tool call an agent made, as chat_messages keeps it.
type ToolCallRecord struct {
	Agent  string          `json:"agent"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
	Error  string          `json:"error,omitempty"`
	Denied bool            `json:"denied,omitempty"`
}

// agentOutput is an agent's Data: its formatted blocks and its tool calls.
type agentOutput struct {
	Blocks    []synth.Block    `json:"blocks"`
	ToolCalls []ToolCallRecord `json:"tool_calls"`
	// Answer is the agent's own final words, when a model wrote them.
	Answer string `json:"answer,omitempty"`
}

func (a *assistant) runDomain(d *Domain) supervisor.AgentFunc {
	return func(ctx context.Context, task supervisor.Task) (supervisor.AgentResult, error) {
		info, ok := a.callerFrom(ctx)
		if !ok || strings.TrimSpace(info.Tenant) == "" {
			return supervisor.AgentResult{}, ErrNoCaller
		}
		var f Filters
		if len(task.Filters) > 0 {
			_ = json.Unmarshal(task.Filters, &f)
		}
		funcs, allowed := a.toolsOf(d)
		disabled := map[string]bool{}
		if a.cfg.Settings != nil {
			var err error
			if disabled, err = a.cfg.Settings.Disabled(ctx, info.Tenant, d.Name); err != nil {
				return supervisor.AgentResult{}, fmt.Errorf("vesper: reading the tool switches of %s: %w", d.Name, err)
			}
		}
		var out agentOutput
		if a.rules {
			plan := d.Plan(strings.ToLower(task.Request), f)
			if f.SQL != "" && slices.Contains(allowed, "general_sql_query") {
				plan = []Call{call("general_sql_query", tools.GeneralSQLArgs{SQL: f.SQL})}
			}
			for _, c := range plan {
				blk, rec, err := a.runCall(ctx, d, info, funcs, allowed, disabled, c)
				if err != nil {
					return supervisor.AgentResult{}, err
				}
				out.Blocks = append(out.Blocks, blk)
				out.ToolCalls = append(out.ToolCalls, rec)
			}
		} else {
			var err error
			if out, err = a.modelLoop(ctx, d, task, info, funcs, allowed, disabled); err != nil {
				return supervisor.AgentResult{}, err
			}
		}
		data, err := json.Marshal(out)
		if err != nil {
			return supervisor.AgentResult{}, err
		}
		answer := out.Answer
		if answer == "" {
			var leads []string
			for _, b := range out.Blocks {
				leads = append(leads, b.Lead)
			}
			answer = strings.Join(leads, "\n")
		}
		return supervisor.AgentResult{Answer: answer, Data: data}, nil
	}
}

// runCall runs one tool call of a domain's agent as the caller: the tool
// must be the agent's, switched on for the tenant and permitted; its result
// is formatted by synth. A refusal or a failure becomes a block that says
// so; only cancellation and formatting bugs are returned as errors.
func (a *assistant) runCall(ctx context.Context, d *Domain, info tool.CallInfo, funcs map[string]ToolFunc, allowed []string, disabled map[string]bool, c Call) (synth.Block, ToolCallRecord, error) {
	rec := ToolCallRecord{Agent: d.Name, Tool: c.Tool, Args: c.Args}
	fn, known := funcs[c.Tool]
	switch {
	case !known || !slices.Contains(allowed, c.Tool):
		rec.Error = "not a tool of this agent"
		return synth.Block{Lead: pack.Vocabulary.Texts.NotAgentTool, Empty: true}, rec, nil
	case disabled[c.Tool]:
		rec.Error, rec.Denied = "disabled for the tenant", true
		return synth.Block{Lead: tools.Fill(pack.Vocabulary.Texts.ToolDisabled, "tool", toolWords(c.Tool)), Empty: true}, rec, nil
	}
	if perm := d.Permissions[c.Tool]; perm != "" && !info.Has(perm) {
		rec.Error, rec.Denied = "permission "+perm+" missing", true
		return synth.Block{Lead: tools.Fill(pack.Vocabulary.Texts.NoAccess, "tool", c.Tool, "permission", perm), Empty: true}, rec, nil
	}
	cctx := tool.WithCallInfo(ctx, tool.CallInfo{User: info.User, Tenant: info.Tenant, Permissions: info.Permissions, Tool: c.Tool,
		ThreadID: info.ThreadID, RunID: info.RunID, CallID: info.CallID})
	res, err := fn(cctx, c.Args)
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			return synth.Block{}, rec, err
		}
		rec.Error = err.Error()
		var de *rbac.DeniedError
		rec.Denied = errors.As(err, &de)
		return a.format.Error(c.Tool, err), rec, nil
	}
	if r, ok := res.(Renderer); ok {
		return r.Block(), rec, nil
	}
	blk, err := a.format.Render(res)
	return blk, rec, err
}

// toolsOf returns a domain's tool runners and its registry entry.
func (a *assistant) toolsOf(d *Domain) (map[string]ToolFunc, []string) {
	if len(d.Tools) > 0 {
		names := make([]string, 0, len(d.Tools))
		for n := range d.Tools {
			names = append(names, n)
		}
		slices.Sort(names)
		return d.Tools, names
	}
	return a.funcs, tools.AgentTools[d.Name]
}

// synthesize merges the agents' formatted blocks, adds the deep links and
// streams the answer as message chunks.
func (a *assistant) synthesize(ctx context.Context, st supervisor.State) (string, error) {
	out := a.Outcome(st)
	var links []reports.DeepLink
	if info, ok := a.callerFrom(ctx); ok && a.cfg.Linker != nil && len(out.ReportKeys) > 0 {
		links = a.cfg.Linker.Links(ctx, info.Tenant, out.ReportKeys)
	}
	var text string
	switch {
	case len(out.Blocks) == 0:
		text = a.general()
	case !a.rules:
		return a.modelSynthesis(ctx, st, out.Blocks, links), nil
	default:
		text = a.format.Compose(out.Blocks, links).Markdown
	}
	emitText(ctx, text, false)
	return text, nil
}

// general answers a request no domain takes: the greeting of pack/words.json and a line per
// domain.
func (a *assistant) general() string {
	var b strings.Builder
	texts := pack.Vocabulary.Texts
	b.WriteString(texts.Greeting)
	for _, d := range a.domains {
		b.WriteString(tools.Fill(texts.GreetingDomain, "description", d.Description, "example", first(d.Examples)))
	}
	return b.String()
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// emitText streams text into the run's messages mode in pieces of a few words, as part of the
// message the node streamed last (so that the synthesizer's final message, which takes that ID,
// is the one the chunks make), or of a new one with fresh set or nothing streamed yet.
func emitText(ctx context.Context, text string, fresh bool) {
	info, ok := graph.InfoFrom(ctx)
	if !ok {
		return
	}
	id := graph.StreamedMessageID(ctx)
	if id == "" || fresh {
		id = message.NewID()
	}
	rest := text
	for rest != "" {
		n := 0
		for i, r := range rest {
			if r == ' ' || r == '\n' {
				n++
				if n == 8 {
					rest, text = rest[i+1:], rest[:i+1]
					break
				}
			}
		}
		if n < 8 {
			text, rest = rest, ""
		}
		graph.EmitMessage(ctx, graph.MessageChunk{Message: message.Message{ID: id, Role: message.RoleAssistant, Content: text},
			Metadata: map[string]any{"node": info.Node}})
	}
}

// Outcome is what a request's final state says besides the answer: for
// chat.complete and chat_messages.
type Outcome struct {
	Intent     string           `json:"intent"`
	Agents     []string         `json:"agents_used"`
	ToolCalls  []ToolCallRecord `json:"tool_calls"`
	ReportKeys []string         `json:"report_keys"`
	Charts     []synth.Chart    `json:"charts,omitempty"`
	Blocks     []synth.Block    `json:"-"`
}

// Outcome reads the agents' results of the latest request.
func (a *assistant) Outcome(st supervisor.State) Outcome {
	o := Outcome{Intent: st.Intent, Agents: st.Agents, ToolCalls: []ToolCallRecord{}}
	for _, r := range st.Results {
		if r.Error != "" {
			o.Blocks = append(o.Blocks, synth.Block{Lead: tools.Fill(pack.Vocabulary.Texts.AgentFailed, "agent", strings.ReplaceAll(r.Agent, "_", " "), "error", r.Error), Empty: true})
			continue
		}
		var out agentOutput
		if err := json.Unmarshal(r.Data, &out); err != nil {
			o.Blocks = append(o.Blocks, synth.Block{Lead: r.Answer})
			continue
		}
		o.Blocks = append(o.Blocks, out.Blocks...)
		o.ToolCalls = append(o.ToolCalls, out.ToolCalls...)
	}
	o.ReportKeys = synth.ReportKeys(o.Blocks)
	for _, b := range o.Blocks {
		if b.Chart != nil {
			o.Charts = append(o.Charts, *b.Chart)
		}
	}
	return o
}

// WriteRefusal answers a request to change data (texts.write_refusal of pack/words.json).
var WriteRefusal = pack.Vocabulary.Texts.WriteRefusal

// politeOpening are the words a request may begin with before its verb ("could you please").
var politeOpening = set(pack.Vocabulary.Cues["polite_opening"])

// writeVerbs begin a request to change data.
var writeVerbs = set(pack.Vocabulary.WriteVerbs)

// writeRequest reports whether a request asks to change data: it begins
// (after a polite opening) with a verb of change, or holds a statement
// that writes.
func writeRequest(req string) bool {
	ws := strings.Fields(strings.NewReplacer(",", " ", "?", " ", "!", " ", ".", " ").Replace(req))
	for len(ws) > 0 && politeOpening[ws[0]] {
		ws = ws[1:]
	}
	if len(ws) > 0 && writeVerbs[ws[0]] {
		return true
	}
	return has(req, "delete from", "drop table", "insert into", "truncate table", "alter table") ||
		(strings.Contains(req, "update ") && strings.Contains(req, " set "))
}

// toolWords names a tool for a person, by pack/words.json: "get_project_health" reads
// "Looking up project health" (texts.looking_up, without a tool verb), a tool of
// texts.tool_names as it says.
func toolWords(name string) string {
	texts := pack.Vocabulary.Texts
	if w, ok := texts.ToolNames[name]; ok {
		return w
	}
	ws := strings.Split(name, "_")
	if len(ws) > 1 && slices.Contains(pack.Vocabulary.ToolVerbs, ws[0]) {
		ws = ws[1:]
	}
	return tools.Fill(texts.LookingUp, "what", strings.Join(ws, " "))
}
