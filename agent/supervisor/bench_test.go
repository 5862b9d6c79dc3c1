package supervisor_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/trellis-go/trellis/agent/supervisor"
	"github.com/trellis-go/trellis/model/offline"
)

// BenchmarkSupervisorOffline runs a whole supervisor request on the offline model: classify,
// two agents in parallel, synthesize.
func BenchmarkSupervisorOffline(b *testing.B) {
	run := func(_ context.Context, t supervisor.Task) (supervisor.AgentResult, error) {
		return supervisor.AgentResult{Data: json.RawMessage(`[{"zone":"NP15","price":41.2}]`)}, nil
	}
	g, err := vesperAgents(supervisor.New(offline.New(nil), nil), run).Compile()
	if err != nil {
		b.Fatal(err)
	}
	in := ask("Compare the day-ahead price and the hourly peak vs off-peak spread for NP15")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		out, err := g.Invoke(ctx, in)
		if err != nil || len(out.Results) == 0 {
			b.Fatal(len(out.Results), err)
		}
	}
}
