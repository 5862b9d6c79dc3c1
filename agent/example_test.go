package agent_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/trellis-go/trellis/agent"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model/offline"
)

// A supervisor with two agents, routed by the offline model: the request names a project, so
// the project agent answers and the synthesizer writes its rows as a table.
func ExampleSupervisor() {
	projects := func(_ context.Context, t agent.Task) (agent.AgentResult, error) {
		return agent.AgentResult{Data: json.RawMessage(`[{"project":"Nazareth Solar","health":"green"}]`)}, nil
	}
	prices := func(_ context.Context, t agent.Task) (agent.AgentResult, error) {
		return agent.AgentResult{Answer: "NP15 averaged $41.20/MWh."}, nil
	}
	sup := agent.NewSupervisor(agent.SupervisorOptions{
		Model:   offline.New(nil),
		Filters: json.RawMessage(`{"type":"object","properties":{"project_name":{"type":"string"}}}`),
	})
	sup.Add(agent.Agent{Name: "price_agent", Description: "Day-ahead energy prices by market, hub zone and year.", Run: prices})
	sup.Add(agent.Agent{Name: "project_agent", Description: "Renewable project health, milestones and budgets.", Run: projects})
	g, err := sup.Compile()
	if err != nil {
		panic(err)
	}
	out, err := g.Invoke(context.Background(), agent.SupervisorState{
		Messages: []message.Message{message.User(`What is the health of project "Nazareth Solar"?`)},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(out.Agents, string(out.Filters))
	fmt.Println(out.Answer)
	// Output:
	// [project_agent] {"project_name":"Nazareth Solar"}
	// Here is what I found for "What is the health of project \"Nazareth Solar\"?".
	//
	// | project | health |
	// | --- | --- |
	// | Nazareth Solar | green |
	//
	// [offline model]
}

// Compaction keeps the latest turn and replaces the rest with a recap.
func ExampleCompact() {
	msgs := []message.Message{
		message.System("You answer price questions."),
		message.User("What was NP15 in 2024?"),
		message.Assistant("NP15 averaged $38.10/MWh in 2024."),
		message.User("And in 2025?"),
		message.Assistant("NP15 averaged $41.20/MWh in 2025."),
	}
	out, err := agent.Compact(context.Background(), msgs, &agent.CompactOptions{Model: offline.New(nil), KeepTurns: 1})
	if err != nil {
		panic(err)
	}
	for _, m := range out {
		fmt.Printf("%s: %s\n", m.Role, m.Content)
	}
	// Output:
	// system: You answer price questions.
	// system: Recap of the earlier conversation:
	// - User: What was NP15 in 2024?
	// - Assistant: NP15 averaged $38.10/MWh in 2024.
	// user: And in 2025?
	// assistant: NP15 averaged $41.20/MWh in 2025.
}
