package vesper

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model/modeltest"
	"github.com/trellis-go/trellis/model/openai"
)

// scriptedProvider is a real provider client (model/openai) talking to local
// servers that speak the OpenAI wire format (model/modeltest), one per
// role: the classifier, each domain agent and the synthesizer. A loopback
// front server sends each request to its role's server by the system
// prompt it carries, so agents running in parallel each read their own
// script in order.
type scriptedProvider struct {
	classifier, synth *modeltest.Server
	agents            map[string]*modeltest.Server
	model             *openai.Model
}

// markers name the role of a request by text of its system prompt.
var markers = []struct{ role, text string }{
	{"classifier", "You are the routing supervisor"},
	{"synth", "You are the response writer"},
	{"dayahead_agent", "Day-Ahead Energy Curve specialist"},
	{"price_curve_agent", "Price Curve Intelligence specialist"},
	{"pbi_metrics_agent", "Power BI Usage Metrics specialist"},
	{"per_agent", "Project Execution (PER) specialist"},
}

func newProvider(t *testing.T) *scriptedProvider {
	t.Helper()
	p := &scriptedProvider{classifier: modeltest.NewOpenAI(t), synth: modeltest.NewOpenAI(t), agents: map[string]*modeltest.Server{}}
	for _, m := range markers[2:] {
		p.agents[m.role] = modeltest.NewOpenAI(t)
	}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var target *modeltest.Server
		for _, m := range markers {
			if bytes.Contains(body, []byte(m.text)) {
				switch m.role {
				case "classifier":
					target = p.classifier
				case "synth":
					target = p.synth
				default:
					target = p.agents[m.role]
				}
				break
			}
		}
		if target == nil {
			http.Error(w, `{"error":{"message":"test: no role for this request","type":"invalid_request_error"}}`, http.StatusBadRequest)
			return
		}
		resp, err := http.Post(target.URL+r.URL.Path, r.Header.Get("Content-Type"), bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(front.Close)
	m, err := openai.New("gpt-test", &openai.Options{BaseURL: front.URL + "/v1", APIKey: "test", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	p.model = m
	return p
}

func toolCall(id, name, args string) message.ToolCall {
	return message.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

// messagesOf returns the text of each message of a recorded request.
func messagesOf(r modeltest.Request) []string {
	msgs, _ := r.Body["messages"].([]any)
	var out []string
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		switch c := mm["content"].(type) {
		case string:
			out = append(out, c)
		case []any:
			var b strings.Builder
			for _, part := range c {
				if pm, ok := part.(map[string]any); ok {
					s, _ := pm["text"].(string)
					b.WriteString(s)
				}
			}
			out = append(out, b.String())
		default:
			out = append(out, "")
		}
	}
	return out
}

func requestHas(t *testing.T, what string, r modeltest.Request, wants ...string) {
	t.Helper()
	all := strings.Join(messagesOf(r), "\n")
	for _, w := range wants {
		if !strings.Contains(all, w) {
			t.Errorf("%s request lacks %q:\n%s", what, w, all)
		}
	}
}

// modelFlows are the five conversations of Appendix B as a real model
// would run them: the classifier's route (with lower-case values the
// normalisation must fix), the agent's tool call and final words, and the
// synthesizer's answer. toolData is what the real tools return for those
// arguments on the generated data, which the agent and the synthesizer
// must be shown.
var modelFlows = []struct {
	name, question, route, agent, tool, args, answer string
	filter                                           string
	toolData                                         []string
}{
	{"B.1", AppendixB[0].Question,
		`{"intent":"dayahead_curve","agents":["dayahead_agent"],"filters":{"vendor":"ascend","market":"caiso","hub_zone":"np15","year":2025}}`,
		"dayahead_agent", "get_average_annual_price", `{"vendor":"Ascend","market":"CAISO","hub_zone":"NP15","year":2025}`,
		"The average day-ahead price for **NP15 in CAISO for 2025** (Ascend, As-Of Jan 2025) was **$48.73/MWh** over 8,760 hours.",
		`"hub_zone":"NP15"`, []string{"**$48.73/MWh**", "8,760 hourly data points", "As-Of Jan 2025"}},
	{"B.2", AppendixB[1].Question,
		`{"intent":"project_execution","agents":["per_agent"],"filters":{"project_name":"Nazareth Solar"}}`,
		"per_agent", "get_project_health", `{"project_name":"Nazareth Solar"}`,
		"**Nazareth Solar** is in **Stage 4 (Pre-Con & Finance)**; Interconnection (Phase II study delayed) is the critical path item.",
		`"project_name":"Nazareth Solar"`, []string{"| Interconnection | 🔴 Red | 40% | Sep 2025 | Phase II study delayed |", "Stage 4 (Pre-Con & Finance)"}},
	{"B.3", AppendixB[2].Question,
		`{"intent":"project_execution","agents":["per_agent"],"filters":{"status_color":"red"}}`,
		"per_agent", "get_portfolio_summary", `{"status_color":"off_track"}`,
		"There are **3 projects** flagged as **off track** 🔴: Sierra Wind, Nazareth Solar and Mojave BESS.",
		`"status_color":"off_track"`, []string{"| Sierra Wind | Stage 3 | Wind | ERCOT | $800K | $620K | Permitting stalled |", "**3 projects**"}},
	{"B.4", AppendixB[3].Question,
		`{"intent":"dayahead_curve","agents":["dayahead_agent"],"filters":{"market":"CAISO","hub_zone":"sp15","year":2025,"vendors":["ascend","hitachi"]}}`,
		"dayahead_agent", "compare_vendors", `{"market":"CAISO","hub_zone":"SP15","year":2025}`,
		"Hitachi's forecast is **$2.66/MWh (5.1%) higher** than Ascend's for SP15 in 2025 ($54.80 against $52.14).",
		`"hub_zone":"SP15"`, []string{"| Ascend | Jan_2025 | $52.14 |", "| Hitachi | Q1_2025 | $54.80 |", "**$2.66/MWh (5.1%) higher**"}},
	{"B.5", AppendixB[4].Question,
		`{"intent":"project_execution","agents":["per_agent"],"filters":{"field_changed":"FinishDate","date_range_start":"2026-02-20"}}`,
		"per_agent", "get_recent_changes", `{"field_changed":"FinishDate","since_date":"2026-02-20"}`,
		"**5 milestone date changes** in the last 7 days; Sierra Wind's interconnection agreement moved three months.",
		`"field_changed":"FinishDate"`, []string{"**5 milestone date changes**", "| Feb 21 | Kern Wind | Commercial Operation | Jun 2027 | Sep 2027 | +3 months |"}},
}

// The Appendix B flows through a real provider client: the model routes,
// each agent runs a tool loop (a tool call, then its answer), the tools
// run on the generated data, and the model writes the answer from the
// formatted results; the deep links are appended by the rules.
func TestAppendixBThroughAProvider(t *testing.T) {
	t.Parallel()
	for _, f := range modelFlows {
		t.Run(f.name, func(t *testing.T) {
			p := newProvider(t)
			p.classifier.Push(modeltest.Reply{Text: f.route})
			p.agents[f.agent].Push(
				modeltest.Reply{ToolCalls: []message.ToolCall{toolCall("call_1", f.tool, f.args)}},
				modeltest.Reply{Text: "Done: the figures are in the tool result."},
			)
			// One chunk: modeltest cuts text into byte pieces, which would split
			// the emoji's UTF-8 (a real provider streams whole characters).
			p.synth.Push(modeltest.Reply{Text: f.answer, TextChunk: len(f.answer)})
			a := setup(t, assistantConfig{Model: p.model})
			st := ask(t, a, caller("vesper"), f.question)

			if len(st.Agents) != 1 || st.Agents[0] != f.agent {
				t.Fatalf("routed to %v, want [%s]", st.Agents, f.agent)
			}
			out := a.Outcome(st)
			if len(out.ToolCalls) != 1 || out.ToolCalls[0].Tool != f.tool || out.ToolCalls[0].Error != "" {
				t.Fatalf("tool calls %+v, want one good %s", out.ToolCalls, f.tool)
			}
			ag := p.agents[f.agent].Requests()
			if len(ag) != 2 {
				t.Fatalf("agent made %d model calls, want 2 (tool call, answer)", len(ag))
			}
			// The agent saw its prompt, the normalised filters and the question;
			// then the tool's formatted result.
			requestHas(t, "agent's first", ag[0], "[Filter Context:", f.filter, f.question)
			requestHas(t, "agent's second", ag[1], f.toolData...)
			// The synthesizer was given the tool data, formatted by the rules.
			sy := p.synth.Requests()
			if len(sy) != 1 {
				t.Fatalf("synthesizer calls %d, want 1", len(sy))
			}
			requestHas(t, "synthesizer's", sy[0], append([]string{f.question}, f.toolData...)...)
			contains(t, st.Answer, f.answer, "**Related Reports**", "](https://app.powerbi.com/")
		})
	}
}

// A multi-domain question runs its two agents at the same time: each
// agent's first reply waits until the other agent has asked its model.
func TestProviderAgentsRunInParallel(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	p.classifier.Push(modeltest.Reply{Text: `{"intent":"multi_domain","agents":["dayahead_agent","per_agent"],"filters":{"market":"CAISO","hub_zone":"SP15","year":2025,"project_name":"Nazareth Solar"}}`})
	gateDA, gatePER := make(chan struct{}), make(chan struct{})
	openWhenAsked := func(srv *modeltest.Server, gate chan struct{}, parallel *bool) {
		// Generous: under the race detector on a loaded machine the other agent's request can
		// take many seconds to arrive; agents that ran one after the other fail here anyway.
		deadline := time.Now().Add(2 * time.Minute)
		for len(srv.Requests()) == 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		*parallel = len(srv.Requests()) > 0
		close(gate)
	}
	var perAsked, daAsked bool
	p.agents["dayahead_agent"].Push(
		modeltest.Reply{Text: "Comparing.", Gate: gateDA, ToolCalls: []message.ToolCall{toolCall("c1", "compare_vendors", `{"market":"CAISO","hub_zone":"SP15","year":2025}`)}},
		modeltest.Reply{Text: "Compared."})
	p.agents["per_agent"].Push(
		modeltest.Reply{Text: "Checking.", Gate: gatePER, ToolCalls: []message.ToolCall{toolCall("c2", "get_project_health", `{"project_name":"Nazareth Solar"}`)}},
		modeltest.Reply{Text: "Checked."})
	p.synth.Push(modeltest.Reply{Text: "Hitachi is $2.66/MWh higher for SP15; Nazareth Solar's interconnection is red."})
	done := make(chan struct{})
	go func() { openWhenAsked(p.agents["per_agent"], gateDA, &perAsked); done <- struct{}{} }()
	go func() { openWhenAsked(p.agents["dayahead_agent"], gatePER, &daAsked); done <- struct{}{} }()
	a := setup(t, assistantConfig{Model: p.model})
	st := ask(t, a, caller("vesper"), "Compare Ascend vs Hitachi for SP15 in CAISO for 2025, and what is the health status of Nazareth Solar?")
	<-done
	<-done
	if !perAsked || !daAsked {
		t.Fatalf("the agents did not overlap (per asked while dayahead waited: %v; dayahead asked while per waited: %v)", perAsked, daAsked)
	}
	if st.Intent != "multi_domain" || len(st.Results) != 2 {
		t.Fatalf("intent %s, %d results", st.Intent, len(st.Results))
	}
	requestHas(t, "synthesizer's", p.synth.Requests()[0], "| Hitachi | Q1_2025 | $54.80 |", "| Interconnection | 🔴 Red | 40% | Sep 2025 | Phase II study delayed |")
	contains(t, st.Answer, "Hitachi is $2.66/MWh higher", "Day-Ahead Curves Dashboard", "Project Health Report")
}

// A model that keeps calling tools is stopped after MaxTurns model calls;
// what the tools found still reaches the answer.
func TestProviderAgentTurnLimit(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	p.classifier.Push(modeltest.Reply{Text: `{"intent":"project_execution","agents":["per_agent"],"filters":{"project_name":"Nazareth Solar"}}`})
	for i := range 5 {
		p.agents["per_agent"].Push(modeltest.Reply{ToolCalls: []message.ToolCall{toolCall(fmt.Sprint("c", i), "get_project_health", `{"project_name":"Nazareth Solar"}`)}})
	}
	p.synth.Push(modeltest.Reply{Text: "Nazareth Solar: interconnection is red."})
	a := setup(t, assistantConfig{Model: p.model, MaxTurns: 3})
	st := ask(t, a, caller("vesper"), "What is the health status of Nazareth Solar?")
	if n := len(p.agents["per_agent"].Requests()); n != 3 {
		t.Errorf("agent model calls %d, want 3", n)
	}
	if n := len(a.Outcome(st).ToolCalls); n != 3 {
		t.Errorf("tool calls %d, want 3", n)
	}
	requestHas(t, "synthesizer's", p.synth.Requests()[0], "Phase II study delayed", "I stopped after 3 model turns")
}

// A caller without the permission is refused inside the loop: the model
// reads the refusal as the tool's result and the answer explains it.
func TestProviderDeniedToolIsExplained(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	p.classifier.Push(modeltest.Reply{Text: `{"intent":"project_execution","agents":["per_agent"],"filters":{"project_name":"Nazareth Solar"}}`})
	p.agents["per_agent"].Push(
		modeltest.Reply{ToolCalls: []message.ToolCall{toolCall("c1", "get_budget_overview", `{"project_name":"Nazareth Solar"}`)}},
		modeltest.Reply{Text: "You lack the budget permission."})
	p.synth.Push(modeltest.Reply{Text: "You don't have access to PER budget data; ask your administrator for chat:read_budget."})
	a := setup(t, assistantConfig{Model: p.model})
	st := ask(t, a, caller("vesper", "chat:read_project_data"), "What is the budget vs actuals for Nazareth Solar?")
	calls := a.Outcome(st).ToolCalls
	if len(calls) != 1 || !calls[0].Denied {
		t.Fatalf("tool calls %+v, want one denied", calls)
	}
	requestHas(t, "agent's second", p.agents["per_agent"].Requests()[1], "You don't have access", "chat:read_budget")
	requestHas(t, "synthesizer's", p.synth.Requests()[0], "You don't have access")
	contains(t, st.Answer, "chat:read_budget")
}
