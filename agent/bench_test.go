package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/trellis-go/trellis/agent"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/offline"
	"github.com/trellis-go/trellis/model/scripted"
)

// BenchmarkCompactIfNeededUnderBudget is the cost a turn pays to check its budget: counting a
// 50-turn conversation (201 messages) with the approximate counter.
func BenchmarkCompactIfNeededUnderBudget(b *testing.B) {
	msgs := conversation(50)
	o := &agent.CompactOptions{Model: scripted.New(), MaxTokens: 1 << 30}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, did, err := agent.CompactIfNeeded(ctx, msgs, o); err != nil || did {
			b.Fatal(did, err)
		}
	}
}

// BenchmarkCompact compacts a 50-turn conversation with the offline model as summariser, so it
// measures trellis's own work (boundary, transcript, summary message) plus the offline model.
func BenchmarkCompact(b *testing.B) {
	msgs := conversation(50)
	o := &agent.CompactOptions{Model: offline.New(nil), KeepTurns: 3}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := agent.Compact(ctx, msgs, o); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSupervisorOffline runs a whole supervisor request on the offline model: classify,
// two agents in parallel, synthesize.
func BenchmarkSupervisorOffline(b *testing.B) {
	run := func(_ context.Context, t agent.Task) (agent.AgentResult, error) {
		return agent.AgentResult{Data: json.RawMessage(`[{"zone":"NP15","price":41.2}]`)}, nil
	}
	g, err := vesperAgents(agent.NewSupervisor(agent.SupervisorOptions{Model: offline.New(nil)}), run).Compile()
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

// BenchmarkTokenBudgetOverhead is what a budget adds to a model call (the call itself is a
// scripted reply).
func BenchmarkTokenBudgetOverhead(b *testing.B) {
	inner := scripted.New(scripted.Respond(&model.Response{Message: message.Assistant("ok"), Usage: model.Usage{InputTokens: 1, OutputTokens: 1}}))
	inner.Repeat = true
	m := agent.NewTokenBudget(1<<62, nil).Wrap(inner)
	req := &model.Request{Messages: conversation(5)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Generate(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
