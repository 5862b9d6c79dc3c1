package graph_test

import (
	"context"
	"fmt"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
)

// Agent declares an ephemeral key (seen by the superstep after its write, then cleared), an
// untracked key (kept for the run, never checkpointed) and the remaining-steps managed value.
type Agent struct {
	Log       []string             `json:"log" reduce:"append"`
	Hint      string               `json:"hint" channel:"ephemeral"`
	APIKey    string               `json:"api_key" channel:"untracked"`
	Remaining graph.RemainingSteps `json:"remaining_steps"`
}

// Ephemeral, untracked and managed values: the hint reaches the next node only, the API key
// never reaches the saver, and the agent stops looping while it still has steps to answer.
func Example_channels() {
	g := graph.New[Agent]()
	g.AddNode("plan", func(ctx context.Context, s Agent) (Agent, error) {
		return Agent{Hint: "be brief", APIKey: "sk-123"}, nil
	})
	g.AddCommandNode("think", func(ctx context.Context, s Agent) (*graph.Command[Agent], error) {
		line := fmt.Sprintf("hint=%q key=%v remaining=%d", s.Hint, s.APIKey != "", s.Remaining)
		next := "think"
		if s.Remaining <= 2 {
			next = graph.END // answer now: the next superstep could be the last
		}
		return &graph.Command[Agent]{Update: Agent{Log: []string{line}}, Goto: []graph.Target{graph.To(next)}}, nil
	}, graph.Destinations("think", graph.END))
	g.AddSequence(graph.START, "plan", "think")
	saver := checkpoint.NewMemorySaver()
	agent, err := g.Compile(graph.CompileOptions{Saver: saver})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	out, err := agent.Invoke(ctx, Agent{}, graph.WithThread("t1"), graph.WithRecursionLimit(5))
	if err != nil {
		panic(err)
	}
	for _, l := range out.Log {
		fmt.Println(l)
	}
	st, err := agent.State(ctx, checkpoint.Ref{ThreadID: "t1"})
	if err != nil {
		panic(err)
	}
	fmt.Printf("saved: hint=%q api_key=%q\n", st.Values.Hint, st.Values.APIKey)
	// Output:
	// hint="be brief" key=true remaining=3
	// hint="" key=true remaining=2
	// saved: hint="" api_key=""
}
