package vesper

import (
	"context"
	"encoding/json"
	"github.com/trellis-go/trellis/appdb/appdbtest"
	"strings"
	"testing"
	"time"

	"github.com/trellis-go/trellis/agent/supervisor"
	"github.com/trellis-go/trellis/apps/vesper/reports"
	"github.com/trellis-go/trellis/apps/vesper/tools"
	"github.com/trellis-go/trellis/apps/vesper/warehouse"
	"github.com/trellis-go/trellis/apps/vesper/warehousetest"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/tool"
)

func TestMain(m *testing.M) { warehousetest.Main(m) }

var now = func() time.Time { return warehouse.Today.Add(10 * time.Hour) }

// setup builds the app over the shared SQLite warehouse with the offline rules.
func setup(t *testing.T, cfg assistantConfig) *assistant {
	t.Helper()
	w := warehousetest.SQLite(t)
	cfg.Toolkit = tools.New(w, &tools.Options{Now: now})
	cfg.Now = now
	if cfg.Linker == nil {
		menu, err := reports.NewMenu(context.Background(), appdbtest.SQLite(t, "vesper"))
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range reports.DefaultItems("vesper") {
			if err := menu.Put(context.Background(), it); err != nil {
				t.Fatal(err)
			}
		}
		cfg.Linker = &reports.Linker{Menu: menu}
	}
	a, err := newAssistant(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func caller(tenant string, perms ...string) context.Context {
	if len(perms) == 0 {
		perms = []string{"*"}
	}
	return tool.WithCallInfo(context.Background(), tool.CallInfo{Tenant: tenant, User: "u1", Permissions: perms})
}

func ask(t *testing.T, a *assistant, ctx context.Context, q string) supervisor.State {
	t.Helper()
	st, err := a.Graph.Invoke(ctx, supervisor.State{Messages: []message.Message{message.User(q)}})
	if err != nil {
		t.Fatalf("%q: %v", q, err)
	}
	return st
}

func contains(t *testing.T, md string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(md, w) {
			t.Errorf("answer lacks %q:\n%s", w, md)
		}
	}
}

// AppendixB holds the five conversations of the specification's Appendix B
// with the route and the answer each must give on the generated data.
var AppendixB = []struct {
	Name, Question, Intent, Agent, Tool string
	Want                                []string
}{
	{"B.1", "What was the average day-ahead price for NP15 in CAISO for 2025 from Ascend?", "dayahead_curve", "dayahead_agent", "get_average_annual_price",
		[]string{"The average day-ahead price for **NP15 in CAISO for 2025** (Ascend forecast, As-Of Jan 2025) was **$48.73/MWh** based on 8,760 hourly data points.", "**Related Reports**", "Day-Ahead Curves Dashboard"}},
	{"B.2", "What is the health status of Nazareth Solar?", "project_execution", "per_agent", "get_project_health",
		[]string{"**Nazareth Solar** is currently in **Stage 4 (Pre-Con & Finance)**", "| Interconnection | 🔴 Red | 40% | Sep 2025 | Phase II study delayed |",
			"**Key Risk**: Interconnection (Phase II study delayed) is the critical path item.",
			"[Project Health Report](", "— Full health breakdown", "[Project Overview](", "— Budget and milestone view"}},
	{"B.3", "Show me all projects that are off track (red)", "project_execution", "per_agent", "get_portfolio_summary",
		[]string{"There are **3 projects** currently flagged as **off track** 🔴:", "| Sierra Wind | Stage 3 | Wind | ERCOT | $800K | $620K | Permitting stalled |"}},
	{"B.4", "Compare Ascend vs Hitachi day-ahead prices for SP15 in CAISO for 2025", "dayahead_curve", "dayahead_agent", "compare_vendors",
		[]string{"**Day-Ahead Price Comparison — SP15, CAISO, 2025**", "| Ascend | Jan_2025 | $52.14 |", "| Hitachi | Q1_2025 | $54.80 |",
			"Hitachi's forecast is **$2.66/MWh (5.1%) higher** than Ascend's for SP15 in 2025. This difference is most pronounced during peak hours (HE 16-21)"}},
	{"B.5", "What milestone dates changed in the last week?", "project_execution", "per_agent", "get_recent_changes",
		[]string{"**5 milestone date changes** recorded in the last 7 days:", "| Feb 26 | Sierra Wind | Execute Interconnection Agreement | Mar 2026 | Jun 2026 | +3 months |", "| Feb 21 | Kern Wind | Commercial Operation | Jun 2027 | Sep 2027 | +3 months |"}},
}

func TestAppendixBOffline(t *testing.T) {
	t.Parallel()
	a := setup(t, assistantConfig{})
	for _, c := range AppendixB {
		t.Run(c.Name, func(t *testing.T) {
			st := ask(t, a, caller("vesper"), c.Question)
			if st.Intent != c.Intent || len(st.Agents) != 1 || st.Agents[0] != c.Agent {
				t.Errorf("routed to %s %v, want %s [%s]", st.Intent, st.Agents, c.Intent, c.Agent)
			}
			out := a.Outcome(st)
			if len(out.ToolCalls) != 1 || out.ToolCalls[0].Tool != c.Tool {
				t.Errorf("tool calls %+v, want one %s", out.ToolCalls, c.Tool)
			}
			contains(t, st.Answer, c.Want...)
			if c.Name == "B.1" && strings.Contains(st.Answer, "\n|") {
				t.Errorf("B.1 is one figure; the answer has a table:\n%s", st.Answer)
			}
			if last := st.Messages[len(st.Messages)-1]; last.Role != message.RoleAssistant || last.Text() != st.Answer {
				t.Errorf("the answer is not the last message: %+v", last)
			}
		})
	}
}

func TestMultiDomainRunsAgentsInParallel(t *testing.T) {
	t.Parallel()
	a := setup(t, assistantConfig{})
	st := ask(t, a, caller("vesper"), "Compare Ascend vs Hitachi for SP15 in CAISO for 2025, and what is the health status of Nazareth Solar?")
	if st.Intent != "multi_domain" || len(st.Agents) != 2 {
		t.Fatalf("intent %s agents %v, want multi_domain with two agents", st.Intent, st.Agents)
	}
	if len(st.Results) != 2 {
		t.Fatalf("results %d, want 2", len(st.Results))
	}
	contains(t, st.Answer, "| Hitachi | Q1_2025 | $54.80 |", "**Nazareth Solar** is currently in **Stage 4")
}

func TestClarifyingQuestionShortCircuits(t *testing.T) {
	t.Parallel()
	a := setup(t, assistantConfig{})
	st := ask(t, a, caller("vesper"), "What is the average day-ahead price?")
	if st.Clarification == "" || len(st.Results) != 0 {
		t.Fatalf("want a clarifying question and no agent run, got %q and %d results", st.Clarification, len(st.Results))
	}
	contains(t, st.Answer, "Which market and hub-zone")
}

func TestFollowUpUsesPreviousFilters(t *testing.T) {
	t.Parallel()
	a := setup(t, assistantConfig{})
	ctx := caller("vesper")
	st := ask(t, a, ctx, "Compare Ascend vs Hitachi day-ahead prices for SP15 in CAISO for 2025")
	st.Messages = append(st.Messages, message.User("What about NP15?"))
	st2, err := a.Graph.Invoke(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	var f Filters
	_ = json.Unmarshal(st2.Filters, &f)
	if f.HubZone != "NP15" || f.Market != "CAISO" || f.Year != 2025 || len(st2.Agents) != 1 || st2.Agents[0] != "dayahead_agent" {
		t.Fatalf("follow-up filters %+v agents %v", f, st2.Agents)
	}
	contains(t, st2.Answer, "NP15")
}

func TestGreetingNeedsNoAgent(t *testing.T) {
	t.Parallel()
	a := setup(t, assistantConfig{})
	st := ask(t, a, caller("vesper"), "Hello there")
	if st.Intent != "general" || len(st.Results) != 0 {
		t.Fatalf("intent %s results %d", st.Intent, len(st.Results))
	}
	contains(t, st.Answer, "Power BI usage statistics")
}

func TestDeniedToolIsExplained(t *testing.T) {
	t.Parallel()
	a := setup(t, assistantConfig{})
	// A viewer may read project health but not budgets.
	st := ask(t, a, caller("vesper", "chat:read_project_data"), "What is the budget vs actuals for Nazareth Solar?")
	out := a.Outcome(st)
	if len(out.ToolCalls) != 1 || !out.ToolCalls[0].Denied {
		t.Fatalf("want one denied call, got %+v", out.ToolCalls)
	}
	contains(t, st.Answer, "You don't have access", "chat:read_budget")
}

func TestNoCallerFailsClearly(t *testing.T) {
	t.Parallel()
	a := setup(t, assistantConfig{})
	st, err := a.Graph.Invoke(context.Background(), supervisor.State{Messages: []message.Message{message.User("What is the health status of Nazareth Solar?")}})
	if err != nil {
		t.Fatal(err)
	}
	contains(t, st.Answer, "tool.CallInfo")
}

func TestNewNeedsToolkit(t *testing.T) {
	t.Parallel()
	if _, err := newAssistant(assistantConfig{}); err == nil || !strings.Contains(err.Error(), "Toolkit") {
		t.Fatalf("err = %v", err)
	}
}
