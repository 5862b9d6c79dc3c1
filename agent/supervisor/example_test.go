package supervisor_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/trellis-go/trellis/agent/supervisor"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model/offline"
)

// A supervisor with two agents, routed by the offline model: the request names a project, so
// the project agent answers and the synthesizer writes its rows as a table.
func Example() {
	projects := func(_ context.Context, t supervisor.Task) (supervisor.AgentResult, error) {
		return supervisor.AgentResult{Data: json.RawMessage(`[{"project":"Nazareth Solar","health":"green"}]`)}, nil
	}
	prices := func(_ context.Context, t supervisor.Task) (supervisor.AgentResult, error) {
		return supervisor.AgentResult{Answer: "NP15 averaged $41.20/MWh."}, nil
	}
	sup := supervisor.New(offline.New(nil), &supervisor.Options{
		Filters: json.RawMessage(`{"type":"object","properties":{"project_name":{"type":"string"}}}`),
	})
	sup.Add(supervisor.Agent{Name: "price_agent", Description: "Day-ahead energy prices by market, hub zone and year.", Run: prices})
	sup.Add(supervisor.Agent{Name: "project_agent", Description: "Renewable project health, milestones and budgets.", Run: projects})
	g, err := sup.Compile()
	if err != nil {
		panic(err)
	}
	out, err := g.Invoke(context.Background(), supervisor.State{
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
