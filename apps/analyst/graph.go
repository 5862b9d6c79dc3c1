package analyst

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/memory"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/server"
	"github.com/trellis-go/trellis/server/appkit"
)

// The graphs and where their nodes are. Each node is a method of Analyst in the file named for
// its concern; graph.go holds the graphs' wiring and the entry nodes.
//
//	main graph                    file           method
//	context_loader                graph.go       contextLoader
//	greeting_node                 graph.go       greeting
//	planner_agent                 planner.go     planner (and revise, the plan gate's feedback)
//	hitl_plan_gate                gates.go       planGate
//	research_subgraph             research.go    researchIn, researchOut (ResearchGraph below)
//	hitl_discovery_gate           gates.go       discoveryGate
//	report_subgraph               report.go      reportIn, reportOut (ReportGraph below)
//	hitl_final_gate               gates.go       finalGate
//	save_report_node              save.go        saveReport (its tables: store.Tables)
//
//	research subgraph
//	research_supervisor           research.go    researchSupervisor (supervisor.go: its tool loop)
//	task_agent                    research.go    taskAgent
//	supervisor_review             research.go    supervisorReview
//	discovery_synthesiser         research.go    synthesise
//
//	report subgraph
//	report_supervisor             report.go      reportSupervisor (supervisor.go: its tool loop)
//	writer_agent                  report.go      writer
//	section_reviewer              report.go      sectionReviewer
//	report_assembler              report.go      assemble

// Node names of the main graph.
const (
	NodeContextLoader = "context_loader"
	NodeGreeting      = "greeting_node"
	NodePlanner       = "planner_agent"
	NodePlanGate      = "hitl_plan_gate"
	NodeResearch      = "research_subgraph"
	NodeDiscoveryGate = "hitl_discovery_gate"
	NodeReport        = "report_subgraph"
	NodeFinalGate     = "hitl_final_gate"
	NodeSaveReport    = "save_report_node"
)

// Node names of the research subgraph.
const (
	NodeResearchSupervisor = "research_supervisor"
	NodeTaskAgent          = "task_agent"
	NodeSupervisorReview   = "supervisor_review"
	NodeSynthesiser        = "discovery_synthesiser"
)

// Node names of the report subgraph.
const (
	NodeReportSupervisor = "report_supervisor"
	NodeWriter           = "writer_agent"
	NodeSectionReviewer  = "section_reviewer"
	NodeAssembler        = "report_assembler"
)

// Graph compiles the main graph with its research and report subgraphs.
func (a *Analyst) Graph(opts graph.CompileOptions) (*graph.Compiled[State], error) {
	research, err := a.ResearchGraph(opts)
	if err != nil {
		return nil, err
	}
	report, err := a.ReportGraph(opts)
	if err != nil {
		return nil, err
	}
	g := graph.New[State]()
	g.AddNode(NodeContextLoader, traced(NodeContextLoader, a.contextLoader))
	g.AddNode(NodeGreeting, traced(NodeGreeting, a.greeting))
	g.AddNode(NodePlanner, traced(NodePlanner, a.planner))
	g.AddNode(NodePlanGate, traced(NodePlanGate, clearingGateError(a.planGate)))
	graph.AddSubgraph(g, NodeResearch, research, a.researchIn, a.researchOut)
	g.AddNode(NodeDiscoveryGate, traced(NodeDiscoveryGate, clearingGateError(a.discoveryGate)))
	graph.AddSubgraph(g, NodeReport, report, a.reportIn, a.reportOut)
	g.AddNode(NodeFinalGate, traced(NodeFinalGate, clearingGateError(a.finalGate)))
	g.AddNode(NodeSaveReport, traced(NodeSaveReport, a.saveReport))

	g.AddEdge(graph.START, NodeContextLoader)
	g.AddEdge(NodeContextLoader, NodeGreeting)
	g.AddConditionalEdges(NodeGreeting, func(_ context.Context, s State) (string, error) {
		if s.Query == "" {
			return graph.END, nil
		}
		return NodePlanner, nil
	}, nil)
	g.AddEdge(NodePlanner, NodePlanGate)
	next := func(_ context.Context, s State) (string, error) {
		if s.Next == "" || s.Next == "end" {
			return graph.END, nil
		}
		return s.Next, nil
	}
	g.AddConditionalEdges(NodePlanGate, next, map[string]string{NodePlanner: NodePlanner, NodeResearch: NodeResearch, NodePlanGate: NodePlanGate, graph.END: graph.END})
	g.AddEdge(NodeResearch, NodeDiscoveryGate)
	g.AddConditionalEdges(NodeDiscoveryGate, next, map[string]string{NodeResearch: NodeResearch, NodeReport: NodeReport, NodeDiscoveryGate: NodeDiscoveryGate, graph.END: graph.END})
	g.AddEdge(NodeReport, NodeFinalGate)
	g.AddConditionalEdges(NodeFinalGate, next, map[string]string{NodeSaveReport: NodeSaveReport, NodeFinalGate: NodeFinalGate,
		NodeResearch: NodeResearch, NodePlanner: NodePlanner, graph.END: graph.END})
	g.AddEdge(NodeSaveReport, graph.END)
	return g.Compile(opts)
}

// traced wraps a node so that its span records the state keys it read and the keys (and sizes)
// it wrote.
// ResearchGraph compiles the research subgraph: a supervisor that dispatches one task agent per
// task with Send, a review that approves each finding or sends it back with a critique, and the
// discovery synthesiser.
func (a *Analyst) ResearchGraph(opts graph.CompileOptions) (*graph.Compiled[ResearchState], error) {
	return fanOut(opts, [4]namedNode[ResearchState]{
		{NodeResearchSupervisor, a.researchSupervisor}, {NodeTaskAgent, a.taskAgent},
		{NodeSupervisorReview, a.supervisorReview}, {NodeSynthesiser, a.synthesise},
	}, func(s ResearchState) []ResearchState {
		var out []ResearchState
		for _, t := range s.Tasks {
			out = append(out, ResearchState{UserID: s.UserID, Tenant: s.Tenant, Query: s.Query, Task: t})
		}
		return out
	})
}

// ReportGraph compiles the report subgraph: a supervisor that plans sections from the findings
// and the user's preferences, writers in parallel (Send), a section reviewer that sends a section
// back once, and the assembler (Markdown and structured JSON).
func (a *Analyst) ReportGraph(opts graph.CompileOptions) (*graph.Compiled[ReportState], error) {
	return fanOut(opts, [4]namedNode[ReportState]{
		{NodeReportSupervisor, a.reportSupervisor}, {NodeWriter, a.writer},
		{NodeSectionReviewer, a.sectionReviewer}, {NodeAssembler, a.assemble},
	}, func(s ReportState) []ReportState {
		var out []ReportState
		for _, sec := range s.Sections {
			out = append(out, ReportState{UserID: s.UserID, Topic: s.Topic, Findings: s.Findings, Sources: s.Sources,
				Contradictions: s.Contradictions, Summary: s.Summary, Prefs: s.Prefs, Section: sec, Today: s.Today})
		}
		return out
	})
}

// namedNode is a node of a subgraph and its name.
type namedNode[S any] struct {
	name string
	fn   func(context.Context, S) (S, error)
}

// fanOut compiles the shape both subgraphs share: a supervisor that sends one state per item
// (work) to a worker, a reviewer after each worker that sends items back the same way, and a
// last node once there is nothing left to send. The subgraph is checkpointed by its parent.
func fanOut[S any](opts graph.CompileOptions, n [4]namedNode[S], work func(S) []S) (*graph.Compiled[S], error) {
	sup, worker, review, done := n[0].name, n[1].name, n[2].name, n[3].name
	g := graph.New[S]()
	for _, x := range n {
		g.AddNode(x.name, traced(x.name, x.fn))
	}
	g.AddEdge(graph.START, sup)
	dispatch := func(_ context.Context, s S) ([]graph.Target, error) {
		items := work(s)
		if len(items) == 0 {
			return []graph.Target{graph.To(done)}, nil
		}
		out := make([]graph.Target, 0, len(items))
		for _, it := range items {
			out = append(out, graph.Send(worker, it))
		}
		return out, nil
	}
	g.AddRouter(sup, dispatch, worker, done)
	g.AddEdge(worker, review)
	g.AddRouter(review, dispatch, worker, done)
	g.AddEdge(done, graph.END)
	opts.Saver = nil
	return g.Compile(opts)
}

func traced[S any](name string, fn func(context.Context, S) (S, error)) func(context.Context, S) (S, error) {
	return func(ctx context.Context, s S) (S, error) {
		sp := trace.SpanFromContext(ctx)
		if sp.IsRecording() {
			sp.SetAttributes(attribute.String("analyst.node", name), attribute.StringSlice("analyst.input_keys", nonZeroKeys(s)))
		}
		out, err := fn(ctx, s)
		if err == nil && sp.IsRecording() {
			sp.SetAttributes(attribute.StringSlice("analyst.output_delta", deltaOf(out)))
		}
		return out, err
	}
}

func nonZeroKeys(v any) []string {
	m := map[string]json.RawMessage{}
	raw, _ := json.Marshal(v)
	_ = json.Unmarshal(raw, &m)
	var keys []string
	for k, v := range m {
		switch string(v) {
		case "null", `""`, "0", "false", "[]", "{}":
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func deltaOf(v any) []string {
	m := map[string]json.RawMessage{}
	raw, _ := json.Marshal(v)
	_ = json.Unmarshal(raw, &m)
	var out []string
	for _, k := range nonZeroKeys(v) {
		out = append(out, fmt.Sprintf("%s(%dB)", k, len(m[k])))
	}
	return out
}

// who returns the user and tenant of the run: the server's authenticated user, or the state's
// user_id in dev mode or outside the server.
func who(ctx context.Context, s State) (user, tenant string) {
	info, _ := graph.InfoFrom(ctx)
	user, _ = info.Config["user_id"].(string)
	tenant, _ = info.Config["tenant"].(string)
	if (user == "" || user == server.DevPrincipal.User) && s.UserID != "" {
		user = s.UserID
	}
	if user == "" {
		user = "anonymous"
	}
	if tenant == "" {
		tenant = server.DevPrincipal.Tenant
	}
	return user, tenant
}

func sessionOf(ctx context.Context, s State) string {
	if s.SessionID != "" {
		return s.SessionID
	}
	info, _ := graph.InfoFrom(ctx)
	if info.ThreadID != "" {
		return info.ThreadID
	}
	return "local"
}

// greetingWords are the words of a bare greeting (the pack's greetings).
var greetingWords = setOf(words.Greetings)

// requestIn returns the research request in a user's message, or "" for a bare greeting.
func requestIn(text string) string {
	n := 0
	for _, w := range strings.Fields(strings.ToLower(text)) {
		if !greetingWords[strings.Trim(w, ",.!?;:")] {
			n++
		}
	}
	if n < 2 {
		return ""
	}
	return text
}

// profileKeys maps the profile input's keys to the namespace and typed fact they set.
var profileKeys = map[string][3]string{
	"name":       {NSUserProfile, "name", "full"},
	"role":       {NSUserProfile, "role", "title"},
	"seniority":  {NSUserProfile, "role", "seniority"},
	"style":      {NSUserProfile, "communication", "style"},
	"project":    {NSUserProfile, "project", "active"},
	"frameworks": {NSPreferences, "framework", "preferred"},
	"citation":   {NSPreferences, "citation", "style"},
	"verbosity":  {NSPreferences, "style", "verbosity"},
	"format":     {NSPreferences, "format", "report"},
}

// contextLoader loads the four memory namespaces and the company context in parallel.
func (a *Analyst) contextLoader(ctx context.Context, s State) (State, error) {
	user, tenant := who(ctx, s)
	if err := a.kb.EnsureCorpus(ctx, tenant); err != nil {
		return State{}, err
	}
	query := s.Query
	var said statements
	if q := strings.TrimSpace(appkit.LastUser(s.Messages)); q != "" {
		said = statementsIn(q)
		query = requestIn(said.Rest)
	}
	if err := a.rememberProfile(ctx, user, s.Profile); err != nil {
		return State{}, err
	}
	if err := a.rememberStatements(ctx, user, said); err != nil {
		return State{}, err
	}
	if q := strings.TrimSpace(appkit.LastUser(s.Messages)); q != "" {
		if _, err := a.mem.Update(ctx, user, NSUserProfile, "the user's message", []message.Message{message.User(q)}); err != nil {
			return State{}, err
		}
	}
	var mem Mem
	var memErr, ragErr error
	var chunks []Chunk
	done := make(chan struct{})
	go func() {
		defer close(done)
		mem, memErr = a.mem.LoadAll(ctx, user)
	}()
	// RAG on the query and on the active project, in parallel with the memory reads.
	chunks, ragErr = a.prefetch(ctx, tenant, user, query)
	<-done
	if memErr != nil {
		return State{}, memErr
	}
	if ragErr != nil {
		return State{}, ragErr
	}
	if len(mem[NSCompanyProfile].Facts) == 0 {
		if mem[NSCompanyProfile], memErr = a.seedCompany(ctx, user); memErr != nil {
			return State{}, memErr
		}
	}
	// A new request on this thread starts afresh.
	for _, k := range []string{"research_plan", "plan_feedback", "plan_edited", "plan_approved", "research_tasks", "research_findings",
		"supervisor_summary", "discoveries", "contradictions", "follow_up_questions", "ignored_findings", "report_sections",
		"report_draft", "report_json", "final_report", "report_id", "last_answer", "next", "research_rounds", "plan_version"} {
		if err := graph.Overwrite(ctx, k, nil); err != nil {
			return State{}, err
		}
	}
	mc := map[string]string{}
	for _, ns := range Namespaces {
		mc[ns] = mem[ns].Text()
	}
	return State{UserID: user, SessionID: sessionOf(ctx, s), Query: query, RetrievedContext: chunks, MemoryContext: mc, CurrentPhase: "init"}, nil
}

func (a *Analyst) prefetch(ctx context.Context, tenant, user, query string) ([]Chunk, error) {
	profile, err := a.mem.Load(ctx, user, NSUserProfile)
	if err != nil {
		return nil, err
	}
	project := (Mem{NSUserProfile: profile}).Typed(NSUserProfile, "project", "active")
	queries := []string{}
	if query != "" {
		queries = append(queries, query)
	}
	if project != "" {
		queries = append(queries, "Project "+project)
	}
	res := make([][]Chunk, len(queries))
	errs := make([]error, len(queries))
	done := make(chan int, len(queries))
	for i, q := range queries {
		go func() {
			res[i], errs[i] = a.kb.Search(ctx, tenant, q, 5, nil, ragMinScore)
			done <- i
		}()
	}
	for range queries {
		<-done
	}
	seen := map[string]bool{}
	var out []Chunk
	for i := range queries {
		if errs[i] != nil {
			return nil, errs[i]
		}
		for _, c := range res[i] {
			if k := c.Content; !seen[k] {
				seen[k] = true
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// rememberStatements keeps what the user's message said about the user: the name of an
// introduction (as the profile's name) and its standing notes (in the preferences).
func (a *Analyst) rememberStatements(ctx context.Context, user string, st statements) error {
	if st.Name != "" && len(st.Name) <= 60 {
		if err := a.rememberProfile(ctx, user, map[string]string{"name": st.Name}); err != nil {
			return err
		}
	}
	if len(st.Notes) == 0 {
		return nil
	}
	var ops []memory.Op // an addition of a note already kept is no change (memory.Apply)
	for _, n := range st.Notes {
		ops = append(ops, memory.Op{Op: memory.OpAdd, Text: n, Subject: standingSubject})
	}
	_, err := a.mem.Apply(ctx, user, NSPreferences, "a note the user asked to keep", ops)
	return err
}

func (a *Analyst) rememberProfile(ctx context.Context, user string, p map[string]string) error {
	byNS := map[string][][3]string{}
	for k, v := range p {
		spec, ok := profileKeys[k]
		if !ok {
			return fmt.Errorf("analyst: profile.%s is not known; send any of name, role, seniority, style, project, frameworks, citation, verbosity, format", k)
		}
		if v = strings.TrimSpace(v); v != "" {
			byNS[spec[0]] = append(byNS[spec[0]], [3]string{spec[1], spec[2], v})
		}
	}
	for ns, sets := range byNS {
		sort.Slice(sets, func(i, j int) bool { return sets[i][0]+sets[i][1] < sets[j][0]+sets[j][1] })
		doc, err := a.mem.Load(ctx, user, ns)
		if err != nil {
			return err
		}
		var ops []memory.Op
		for _, st := range sets {
			op := TypedOp(doc, st[0], st[1], st[2])
			if op.Op == memory.OpCorrect {
				if f, _ := doc.Find(op.ID); f.Text == op.Text {
					continue
				}
			}
			ops = append(ops, op)
		}
		if _, err := a.mem.Apply(ctx, user, ns, "profile given at session start", ops); err != nil {
			return err
		}
	}
	return nil
}

// seedCompany fills company_profile from the knowledge base's fact sheet on a user's first
// session: the company, its facts (the fact sheet's header), its competitors and its projects.
func (a *Analyst) seedCompany(ctx context.Context, user string) (memory.FactDoc, error) {
	doc := memory.FactDoc{}
	d, err := loadDomain()
	if err != nil {
		return doc, err
	}
	ops := []memory.Op{TypedOp(doc, "company", "name", d.Company)}
	for _, f := range d.Facts {
		ops = append(ops, TypedOp(doc, "company", f.Key, f.Value))
	}
	if len(d.Competitors) > 0 {
		ops = append(ops, TypedOp(doc, "company", "competitors", strings.Join(d.Competitors, ", ")))
	}
	if len(d.Projects) > 0 {
		ops = append(ops, TypedOp(doc, "company", "projects", strings.Join(d.Projects, ", ")))
	}
	return a.mem.Apply(ctx, user, NSCompanyProfile, "company fact sheet on first session", ops)
}

// greeting greets the user by first name with their active project and what was last found.
func (a *Analyst) greeting(ctx context.Context, s State) (State, error) {
	user, _ := who(ctx, s)
	mem, err := a.mem.LoadAll(ctx, user)
	if err != nil {
		return State{}, err
	}
	if s.Greeted && s.Query != "" {
		return State{CurrentPhase: "planning"}, nil
	}
	var parts []string
	if name := firstName(mem.Typed(NSUserProfile, "name", "full")); name != "" {
		parts = append(parts, sentence("greeting_name", map[string]any{"Name": name}))
	} else {
		parts = append(parts, sentence("greeting_anonymous", nil))
	}
	if p := mem.Typed(NSUserProfile, "project", "active"); p != "" {
		parts = append(parts, sentence("greeting_project", map[string]any{"Project": projectNamed(p)}))
	}
	if eps := mem[NSEpisodic].Facts; len(eps) > 0 {
		parts = append(parts, sentence("greeting_last", map[string]any{"Last": strings.TrimSuffix(eps[len(eps)-1].Text, ".")}))
	}
	if s.Query == "" {
		parts = append(parts, sentence("greeting_ask", nil))
	} else {
		parts = append(parts, sentence("greeting_plan", map[string]any{"Query": clip(s.Query, 160)}))
	}
	phase := "planning"
	if s.Query == "" {
		phase = "init"
	}
	text := strings.Join(parts, " ")
	if !a.fastRule {
		sys := prompt("greeting", mem, map[string]any{"Query": s.Query})
		resp, err := a.fast.Generate(ctx, chatRequest(sys, "Write the greeting."))
		if err != nil {
			return State{}, fmt.Errorf("analyst: greeting: %w", err)
		}
		if g := strings.TrimSpace(resp.Message.Text()); g != "" {
			text = g
		}
	}
	return State{Greeted: true, CurrentPhase: phase, Messages: []message.Message{message.Assistant(text)}}, nil
}

func firstName(full string) string {
	f := strings.Fields(full)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}
