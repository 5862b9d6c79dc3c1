package agent_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/trellis-go/trellis/agent"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/scripted"
)

// BenchmarkTokenBudgetOverhead is what a budget adds to a model call (the call itself is a
// scripted reply).
func BenchmarkTokenBudgetOverhead(b *testing.B) {
	inner := scripted.New(scripted.Respond(&model.Response{Message: message.Assistant("ok"), Usage: model.Usage{InputTokens: 1, OutputTokens: 1}}))
	inner.Repeat = true
	m := agent.NewTokenBudget(1<<62, nil).Wrap(inner)
	var msgs []message.Message
	for i := range 5 {
		msgs = append(msgs, message.User(fmt.Sprintf("Question %d about NP15 prices?", i)), message.Assistant(fmt.Sprintf("The price was %d.", 40+i)))
	}
	req := &model.Request{Messages: msgs}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Generate(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
