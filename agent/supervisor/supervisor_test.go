package supervisor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/agent/supervisor"
	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/model/scripted"
	"github.com/trellis-go/trellis/tool"
)

// route returns a scripted step answering a classification with r.
func route(r string) scripted.Step {
	return scripted.Respond(&model.Response{Message: message.Assistant(r)})
}

// recorder is a function agent that records its tasks and answers with a fixed text.
type recorder struct {
	mu     sync.Mutex
	tasks  []supervisor.Task
	answer string
	err    error
}

func (r *recorder) run(_ context.Context, t supervisor.Task) (supervisor.AgentResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tasks = append(r.tasks, t)
	return supervisor.AgentResult{Answer: r.answer + " for " + t.Request}, r.err
}

func (r *recorder) calls() []supervisor.Task {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]supervisor.Task(nil), r.tasks...)
}

type supBundle struct {
	classifier, synth *scripted.Model
	prices, projects  *recorder
}

var filtersSchema = json.RawMessage(`{"type":"object","properties":{"market":{"type":"string","enum":["CAISO","ERCOT"]},"project_name":{"type":"string"}}}`)

// setupSupervisor builds a supervisor with two function agents, "prices" and "projects".
func setupSupervisor(t *testing.T, classify []scripted.Step, synth []scripted.Step, edit func(*supervisor.Options)) (*graph.Compiled[supervisor.State], *supBundle) {
	t.Helper()
	b := &supBundle{
		classifier: scripted.New(classify...),
		synth:      scripted.New(synth...),
		prices:     &recorder{answer: "NP15 averaged $41.20/MWh"},
		projects:   &recorder{answer: "Nazareth Solar is green"},
	}
	o := supervisor.Options{ClassifierModel: b.classifier, Filters: filtersSchema, Prompt: "You route questions for Vesper Analytics."}
	if edit != nil {
		edit(&o)
	}
	s := supervisor.New(b.synth, &o).
		Add(supervisor.Agent{Name: "prices", Description: "Day-ahead energy prices by market and hub zone.", Intent: "dayahead_curve", Examples: []string{"Average NP15 price in 2025"}, Run: b.prices.run}).
		Add(supervisor.Agent{Name: "projects", Description: "Renewable project health, milestones and budgets.", Run: b.projects.run})
	g, err := s.Compile()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if n := b.classifier.Remaining() + b.synth.Remaining(); n != 0 {
			t.Errorf("%d scripted model steps were not used", n)
		}
	})
	return g, b
}

func ask(text string) supervisor.State {
	return supervisor.State{Messages: []message.Message{message.User(text)}}
}

func TestSupervisorRoutesToOneAgentAndSynthesizes(t *testing.T) {
	g, b := setupSupervisor(t,
		[]scripted.Step{route(`{"intent":"dayahead_curve","agents":["prices"],"filters":{"market":"CAISO"}}`)},
		[]scripted.Step{scripted.Text("NP15 averaged $41.20/MWh in 2025.")}, nil)
	in := ask("Average NP15 price in CAISO for 2025?")
	in.Summary = "The user asked earlier about Ascend curves."
	out, err := g.Invoke(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if out.Answer != "NP15 averaged $41.20/MWh in 2025." || out.Intent != "dayahead_curve" || len(out.Agents) != 1 {
		t.Fatalf("state = %+v", out)
	}
	if last := out.Messages[len(out.Messages)-1]; last.Role != message.RoleAssistant || last.Content != out.Answer {
		t.Errorf("last message = %+v", last)
	}
	tasks := b.prices.calls()
	if len(tasks) != 1 || tasks[0].Request != "Average NP15 price in CAISO for 2025?" || string(tasks[0].Filters) != `{"market":"CAISO"}` || tasks[0].Summary == "" {
		t.Fatalf("prices got %+v", tasks)
	}
	if len(b.projects.calls()) != 0 {
		t.Error("projects ran without being routed")
	}
	// The classifier saw the agents, the summary and the request.
	creq := b.classifier.Requests()[0]
	sys := creq.Messages[0].Content
	for _, want := range []string{"You route questions for Vesper Analytics.", "### prices", "Intent: dayahead_curve.", "Average NP15 price in 2025", "### projects", "## Prior conversation\nThe user asked earlier about Ascend curves."} {
		if !strings.Contains(sys, want) {
			t.Errorf("classifier prompt lacks %q:\n%s", want, sys)
		}
	}
	if creq.Schema == nil || !strings.Contains(string(creq.Schema.JSON), `"enum":["prices","projects"]`) || !strings.Contains(string(creq.Schema.JSON), `"CAISO"`) {
		t.Errorf("classifier schema = %s", creq.Schema.JSON)
	}
	// The synthesizer read the agent's answer as a tool result.
	sreq := b.synth.Requests()[0]
	lastMsg := sreq.Messages[len(sreq.Messages)-1]
	if lastMsg.Role != message.RoleTool || lastMsg.Name != "prices" || !strings.Contains(lastMsg.Content, "NP15 averaged $41.20/MWh for Average NP15") {
		t.Errorf("synthesizer's last message = %+v", lastMsg)
	}
	if sreq.ToolChoice != model.ToolChoiceNone {
		t.Errorf("synthesizer may call tools: %q", sreq.ToolChoice)
	}
}

func TestSupervisorRunsSeveralAgentsInParallel(t *testing.T) {
	// Each agent waits until both have started: the test passes only when they run concurrently.
	var started sync.WaitGroup
	started.Add(2)
	barrier := func(name string) supervisor.AgentFunc {
		return func(ctx context.Context, task supervisor.Task) (supervisor.AgentResult, error) {
			started.Done()
			done := make(chan struct{})
			go func() { started.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				return supervisor.AgentResult{}, errors.New(name + " ran alone: agents were not run in parallel")
			}
			return supervisor.AgentResult{Answer: name + " done"}, nil
		}
	}
	synth := scripted.New(scripted.Text("Both answered."))
	sup := supervisor.New(synth, &supervisor.Options{ClassifierModel: scripted.New(route(`{"intent":"a","agents":["b","a"]}`))}).
		Add(supervisor.Agent{Name: "a", Description: "first", Run: barrier("a")}).
		Add(supervisor.Agent{Name: "b", Description: "second", Run: barrier("b")})
	g, err := sup.Compile()
	if err != nil {
		t.Fatal(err)
	}
	out, err := g.Invoke(context.Background(), ask("both please"))
	if err != nil {
		t.Fatal(err)
	}
	if out.Intent != supervisor.IntentMulti {
		t.Errorf("intent = %q, want %q for two agents", out.Intent, supervisor.IntentMulti)
	}
	if len(out.Results) != 2 || out.Results[0].Agent != "b" || out.Results[1].Agent != "a" || out.Results[0].Error != "" || out.Results[1].Error != "" {
		t.Fatalf("results = %+v (want b then a, in route order, without errors)", out.Results)
	}
	// One synthesis for both results.
	if n := len(synth.Requests()); n != 1 {
		t.Fatalf("synthesizer ran %d times", n)
	}
	msgs := synth.Requests()[0].Messages
	if got := msgs[len(msgs)-3]; len(got.ToolCalls) != 2 || got.ToolCalls[0].Name != "b" {
		t.Errorf("synthesizer's calls = %+v", got)
	}
}

func TestSupervisorAsksClarifyingQuestion(t *testing.T) {
	g, b := setupSupervisor(t,
		[]scripted.Step{route(`{"agents":["projects"],"ambiguous":true,"clarifying_question":"Which project do you mean?"}`)},
		nil, nil)
	out, err := g.Invoke(context.Background(), ask("how is it going?"))
	if err != nil {
		t.Fatal(err)
	}
	if out.Answer != "Which project do you mean?" || out.Clarification != out.Answer {
		t.Fatalf("state = %+v", out)
	}
	if last := out.Messages[len(out.Messages)-1]; last.Role != message.RoleAssistant || last.Content != "Which project do you mean?" {
		t.Errorf("last message = %+v", last)
	}
	if len(b.projects.calls()) != 0 || len(b.synth.Requests()) != 0 {
		t.Error("an ambiguous request reached an agent or the synthesizer")
	}
}

func TestSupervisorAmbiguousWithoutQuestionGetsDefault(t *testing.T) {
	g, _ := setupSupervisor(t, []scripted.Step{route(`{"agents":[],"ambiguous":true}`)}, nil, nil)
	out, err := g.Invoke(context.Background(), ask("hmm"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.Answer, "?") || out.Answer == "" {
		t.Errorf("answer = %q, want a default question", out.Answer)
	}
}

func TestSupervisorGeneralSkipsAgents(t *testing.T) {
	g, b := setupSupervisor(t, []scripted.Step{route(`{"intent":"dayahead_curve","agents":[]}`)}, []scripted.Step{scripted.Text("Hello! I can help with prices and projects.")}, nil)
	out, err := g.Invoke(context.Background(), ask("hi there"))
	if err != nil {
		t.Fatal(err)
	}
	if out.Intent != supervisor.IntentGeneral || out.Answer != "Hello! I can help with prices and projects." {
		t.Fatalf("state = %+v", out)
	}
	sys := b.synth.Requests()[0].Messages[0].Content
	if !strings.Contains(sys, "Day-ahead energy prices") || len(b.synth.Requests()[0].Tools) != 0 {
		t.Errorf("general answer prompt = %q", sys)
	}
}

func TestSupervisorAgentErrorReachesSynthesizer(t *testing.T) {
	g, b := setupSupervisor(t,
		[]scripted.Step{route(`{"agents":["projects","prices"]}`)},
		[]scripted.Step{scripted.Text("Prices are fine; project data is unavailable.")}, nil)
	b.projects.err = errors.New("database is down")
	out, err := g.Invoke(context.Background(), ask("prices and project health"))
	if err != nil {
		t.Fatal(err)
	}
	if out.Results[0].Agent != "projects" || out.Results[0].Error != "database is down" || out.Results[1].Error != "" {
		t.Fatalf("results = %+v", out.Results)
	}
	msgs := b.synth.Requests()[0].Messages
	if r := msgs[len(msgs)-2]; !r.IsError || r.Content != "database is down" {
		t.Errorf("error result = %+v", r)
	}
}

func TestSupervisorAfterClassifyAndUnknownAgents(t *testing.T) {
	// AfterClassify can drop agents (RBAC) ...
	g, b := setupSupervisor(t, []scripted.Step{route(`{"agents":["projects","prices"]}`)}, []scripted.Step{scripted.Text("ok")},
		func(o *supervisor.Options) {
			o.AfterClassify = func(_ context.Context, _ supervisor.State, r supervisor.Route) (supervisor.Route, error) {
				r.Agents = []string{"prices"}
				return r, nil
			}
		})
	out, err := g.Invoke(context.Background(), ask("prices and projects"))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 1 || len(b.projects.calls()) != 0 || out.Intent != "dayahead_curve" {
		t.Fatalf("state = %+v", out)
	}
	// ... and naming an agent that does not exist fails clearly.
	g, _ = setupSupervisor(t, []scripted.Step{route(`{"agents":["prices"]}`)}, nil,
		func(o *supervisor.Options) {
			o.AfterClassify = func(_ context.Context, _ supervisor.State, r supervisor.Route) (supervisor.Route, error) {
				r.Agents = append(r.Agents, "weather")
				return r, nil
			}
		})
	_, err = g.Invoke(context.Background(), ask("prices"))
	if err == nil || !strings.Contains(err.Error(), `agent "weather", which is not registered (registered: prices, projects)`) {
		t.Fatalf("err = %v", err)
	}
}

func TestSupervisorClassifierReplyOutsideSchema(t *testing.T) {
	// The model names an unknown agent twice (the reply and its repair): a structured-output error.
	g, _ := setupSupervisor(t, []scripted.Step{route(`{"agents":["weather"]}`), route(`not json`)}, nil, nil)
	_, err := g.Invoke(context.Background(), ask("weather in Lisbon"))
	if !errors.Is(err, model.ErrStructuredOutput) || !strings.Contains(err.Error(), "supervisor: classifying the request") {
		t.Fatalf("err = %v", err)
	}
}

func TestSupervisorNeedsUserMessage(t *testing.T) {
	g, _ := setupSupervisor(t, nil, nil, nil)
	_, err := g.Invoke(context.Background(), supervisor.State{})
	if err == nil || !strings.Contains(err.Error(), "needs a user message") {
		t.Fatalf("err = %v", err)
	}
}

func TestSupervisorPlanFansOutOneAgent(t *testing.T) {
	g, b := setupSupervisor(t, []scripted.Step{route(`{"agents":["prices"]}`)}, []scripted.Step{scripted.Text("done")},
		func(o *supervisor.Options) {
			o.Plan = func(_ context.Context, s supervisor.State) ([]supervisor.Task, error) {
				return []supervisor.Task{{Agent: "prices", Request: "NP15"}, {Agent: "prices", Request: "SP15"}, {Agent: "projects"}}, nil
			}
		})
	out, err := g.Invoke(context.Background(), ask("compare zones"))
	if err != nil {
		t.Fatal(err)
	}
	var reqs []string
	for _, r := range out.Results {
		reqs = append(reqs, r.Agent+":"+r.Request)
	}
	if strings.Join(reqs, ",") != "prices:NP15,prices:SP15,projects:compare zones" {
		t.Fatalf("results = %v", reqs)
	}
	for _, task := range b.prices.calls() {
		if last := task.Messages[len(task.Messages)-1]; last.Content != task.Request {
			t.Errorf("task %q ends with %q", task.Request, last.Content)
		}
	}
}

func TestSupervisorThreadResetsResultsEachTurn(t *testing.T) {
	g, b := setupSupervisor(t,
		[]scripted.Step{route(`{"agents":["prices"]}`), route(`{"agents":["projects"]}`)},
		[]scripted.Step{scripted.Text("first"), scripted.Text("second")},
		func(o *supervisor.Options) { o.Compile.Saver = checkpoint.NewMemorySaver() })
	ctx := context.Background()
	if _, err := g.Invoke(ctx, ask("price?"), graph.WithThread("t1")); err != nil {
		t.Fatal(err)
	}
	out, err := g.Invoke(ctx, ask("project?"), graph.WithThread("t1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 1 || out.Results[0].Agent != "projects" || out.Answer != "second" || len(out.Agents) != 1 {
		t.Fatalf("second turn state = %+v", out)
	}
	if len(out.Messages) != 4 {
		t.Errorf("thread has %d messages, want 4", len(out.Messages))
	}
	// The second agent saw the whole conversation, request last.
	task := b.projects.calls()[0]
	if len(task.Messages) != 3 || task.Messages[2].Content != "project?" || task.Messages[1].Content != "first" {
		t.Errorf("task messages = %+v", task.Messages)
	}
}

func TestSupervisorCompileReportsEveryMistake(t *testing.T) {
	run := func(context.Context, supervisor.Task) (supervisor.AgentResult, error) {
		return supervisor.AgentResult{}, nil
	}
	_, err := supervisor.New(nil, &supervisor.Options{Filters: json.RawMessage(`[1]`)}).
		Add(supervisor.Agent{Name: "ok", Description: "fine", Run: run}).
		Add(supervisor.Agent{Name: "ok", Description: "again", Run: run}).
		Add(supervisor.Agent{Name: "bad name", Description: "x", Run: run}).
		Add(supervisor.Agent{Name: "nodesc", Run: run}).
		Add(supervisor.Agent{Name: "synthesizer", Description: "x", Run: run}).
		Add(supervisor.Agent{Name: "norun", Description: "x"}).
		Compile()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"needs a model", `"ok" is registered twice`, `"bad name" must start with a letter`, `"nodesc" has no Description`, `"synthesizer" is reserved`, `"norun" has no Run`, "Filters is not a JSON object schema"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	_, err = supervisor.New(scripted.New(), nil).Compile()
	if err == nil || !strings.Contains(err.Error(), "has no agents") {
		t.Errorf("empty supervisor: %v", err)
	}
}

func TestSupervisorWithReActAgentStreamsTokens(t *testing.T) {
	lookup := tool.Must(tool.New("project_health", "Health of a project.", func(_ context.Context, a struct {
		Project string `json:"project"`
	}) (string, error) {
		return a.Project + " is green", nil
	}))
	reactModel := scripted.New(
		scripted.ToolCalls(message.ToolCall{ID: "c1", Name: "project_health", Arguments: json.RawMessage(`{"project":"Nazareth Solar"}`)}),
		scripted.Text("Nazareth Solar is green."),
	)
	react, err := react.New(reactModel, &react.Options{Name: "projects", Tools: []tool.Tool{lookup}})
	if err != nil {
		t.Fatal(err)
	}
	synth := scripted.New(scripted.Text("Nazareth Solar is on track."))
	sup := supervisor.New(synth, &supervisor.Options{ClassifierModel: scripted.New(route(`{"agents":["projects"],"filters":{"project_name":"Nazareth Solar"}}`)), Filters: filtersSchema}).
		AddReAct(supervisor.Agent{Name: "projects", Description: "Project health."}, react)
	g, err := sup.Compile()
	if err != nil {
		t.Fatal(err)
	}
	var tokens strings.Builder
	var fromAgent bool
	var final supervisor.State
	for ev, err := range g.Stream(context.Background(), ask(`Health of "Nazareth Solar"?`), graph.WithStreamModes(graph.ModeMessages, graph.ModeValues)) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Mode {
		case graph.ModeMessages:
			chunk := ev.Data.(graph.MessageChunk)
			if len(ev.NS) > 0 && strings.HasPrefix(ev.NS[0], "projects:") {
				fromAgent = true
			} else {
				tokens.WriteString(chunk.Message.Content)
			}
		case graph.ModeValues:
			final = ev.Data.(supervisor.State)
		}
	}
	if !fromAgent {
		t.Error("no token chunk came from the agent's subgraph namespace")
	}
	if tokens.String() != "Nazareth Solar is on track." {
		t.Errorf("synthesizer tokens = %q", tokens.String())
	}
	if len(final.Results) != 1 || final.Results[0].Answer != "Nazareth Solar is green." || final.Results[0].Request != `Health of "Nazareth Solar"?` {
		t.Fatalf("results = %+v", final.Results)
	}
	// The agent saw the filters as a system note before the conversation.
	first := reactModel.Requests()[0].Messages
	if first[0].Role != message.RoleSystem || !strings.Contains(first[0].Content, `"project_name":"Nazareth Solar"`) || first[len(first)-1].Content != `Health of "Nazareth Solar"?` {
		t.Errorf("agent's first request = %+v", first)
	}
}

// vesperAgents registers four domain agents described as in Vesper's specification.
func vesperAgents(s *supervisor.Supervisor, run supervisor.AgentFunc) *supervisor.Supervisor {
	return s.
		Add(supervisor.Agent{Name: "dayahead_agent", Intent: "dayahead_curve", Description: "Questions about Day-Ahead energy price forecasts, average prices by year, vendor curve comparisons (Ascend, Hitachi, ICF), hub-zone prices (NP15, SP15), and As-Of file comparisons.", Examples: []string{"What is the average day-ahead price for NP15 in CAISO for 2025 from Ascend?"}, Run: run}).
		Add(supervisor.Agent{Name: "price_curve_agent", Intent: "price_curve_intelligence", Description: "Hourly price analysis, peak vs off-peak comparison, cross-market analysis, price shape by hour-of-day, seasonal patterns.", Run: run}).
		Add(supervisor.Agent{Name: "pbi_metrics_agent", Intent: "pbi_metrics", Description: "Power BI usage statistics: report views, unique viewers, top users, most-viewed reports, usage trends.", Run: run}).
		Add(supervisor.Agent{Name: "per_agent", Intent: "project_execution", Description: "Renewable energy project tracking: project health (green/yellow/red), milestone dates, budget vs actuals, task status, risks, portfolio overview.", Run: run})
}

func TestSupervisorOnOfflineModel(t *testing.T) {
	var mu sync.Mutex
	var got []supervisor.Task
	run := func(_ context.Context, t supervisor.Task) (supervisor.AgentResult, error) {
		mu.Lock()
		got = append(got, t)
		mu.Unlock()
		return supervisor.AgentResult{Data: json.RawMessage(`[{"project":"Nazareth Solar","health":"green"}]`)}, nil
	}
	filters := json.RawMessage(`{"type":"object","properties":{"market":{"type":"string","enum":["CAISO","ERCOT","MISO","PJM"]},"project_name":{"type":"string","description":"the project's name"}}}`)
	g, err := vesperAgents(supervisor.New(offline.New(nil), &supervisor.Options{Filters: filters}), run).Compile()
	if err != nil {
		t.Fatal(err)
	}
	out, err := g.Invoke(context.Background(), ask(`What is the health status of "Nazareth Solar"?`))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Agent != "per_agent" || out.Intent != "project_execution" {
		t.Fatalf("routed to %+v, intent %q", got, out.Intent)
	}
	if !strings.Contains(string(got[0].Filters), `"project_name":"Nazareth Solar"`) {
		t.Errorf("filters = %s", got[0].Filters)
	}
	t.Logf("answer:\n%s", out.Answer)
	if !strings.Contains(out.Answer, "| Nazareth Solar | green |") || !strings.Contains(out.Answer, offline.Marker) {
		t.Errorf("answer = %q", out.Answer)
	}
}

// TestSupervisorOfflineRoutesVesperQuestions: the offline model routes the specification's
// example questions by the agents' descriptions, several agents for a comparison across domains.
func TestSupervisorOfflineRoutesVesperQuestions(t *testing.T) {
	run := func(_ context.Context, t supervisor.Task) (supervisor.AgentResult, error) {
		return supervisor.AgentResult{Answer: "ok"}, nil
	}
	g, err := vesperAgents(supervisor.New(offline.New(nil), nil), run).Compile()
	if err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{
		"Compare the day-ahead price and the hourly peak vs off-peak spread for NP15": "multi_domain [dayahead_agent price_curve_agent]",
		"Which Power BI reports had the most views last month?":                       "pbi_metrics [pbi_metrics_agent]",
		"Show me all projects at risk":                                                "project_execution [per_agent]",
		"hello":                                                                       "general []",
	} {
		out, err := g.Invoke(context.Background(), ask(q))
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(out.Intent, " ", out.Agents); got != want {
			t.Errorf("%q routed to %s, want %s", q, got, want)
		}
		if !strings.Contains(out.Answer, offline.Marker) {
			t.Errorf("%q: answer not labelled: %q", q, out.Answer)
		}
	}
}
