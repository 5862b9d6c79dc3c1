package agent_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/trellis-go/trellis/agent"
	"github.com/trellis-go/trellis/agent/react"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/scripted"
)

func withUsage(text string, in, out int) scripted.Step {
	return scripted.Respond(&model.Response{Message: message.Assistant(text), Usage: model.Usage{InputTokens: in, OutputTokens: out}})
}

func TestTokenBudgetRefusesOnceSpent(t *testing.T) {
	inner := scripted.New(withUsage("one", 40, 20), withUsage("two", 30, 20), withUsage("never", 1, 1))
	b := agent.NewTokenBudget(100, nil)
	m := b.Wrap(inner)
	req := &model.Request{Messages: []message.Message{message.User("hi")}}
	ctx := context.Background()
	if _, err := m.Generate(ctx, req); err != nil {
		t.Fatal(err)
	}
	if _, err := model.Collect(m.Stream(ctx, req)); err != nil {
		t.Fatal(err)
	}
	if u := b.Used(); u.InputTokens != 70 || u.OutputTokens != 40 || b.Remaining() != 0 || b.Calls() != 2 {
		t.Fatalf("used %+v, remaining %d, calls %d", u, b.Remaining(), b.Calls())
	}
	_, err := m.Generate(ctx, req)
	var be *agent.BudgetError
	if !errors.Is(err, agent.ErrBudgetExceeded) || !errors.As(err, &be) || be.Used != 110 || be.Limit != 100 {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "110 of 100 tokens used") {
		t.Errorf("message = %q", err)
	}
	if _, err := model.Collect(m.Stream(ctx, req)); !errors.Is(err, agent.ErrBudgetExceeded) {
		t.Errorf("stream err = %v", err)
	}
	if inner.Remaining() != 1 {
		t.Error("a refused call reached the model")
	}
}

func TestTokenBudgetRefusesOversizedInput(t *testing.T) {
	inner := scripted.New()
	b := agent.NewTokenBudget(50, nil)
	_, err := b.Wrap(inner).Generate(context.Background(), &model.Request{Messages: []message.Message{message.User(strings.Repeat("word ", 100))}})
	var be *agent.BudgetError
	if !errors.As(err, &be) || be.Needed < 100 || !strings.Contains(err.Error(), "only 50 of 50 remain") {
		t.Fatalf("err = %v", err)
	}
	if len(inner.Requests()) != 0 {
		t.Error("an oversized call reached the model")
	}
}

func TestTokenBudgetEstimatesUnreportedUsage(t *testing.T) {
	b := agent.NewTokenBudget(1000, nil)
	m := b.Wrap(scripted.New(scripted.Text("five words of reply here"), scripted.Text("and a streamed reply")))
	req := &model.Request{Messages: []message.Message{message.User("count me")}}
	if _, err := m.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if _, err := model.Collect(m.Stream(context.Background(), req)); err != nil {
		t.Fatal(err)
	}
	if u := b.Used(); u.InputTokens == 0 || u.OutputTokens < 9 {
		t.Errorf("estimated usage = %+v", u)
	}
}

func TestBudgetPerRunFromContext(t *testing.T) {
	inner := scripted.New(withUsage("a", 10, 10))
	inner.Repeat = true
	g, err := react.New(agent.BudgetedModel(inner), nil)
	if err != nil {
		t.Fatal(err)
	}
	in := react.State{Messages: []message.Message{message.User("hi")}}
	// No budget in the context: not counted.
	if _, err := g.Invoke(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	// Concurrent runs each get their own budget.
	var wg sync.WaitGroup
	budgets := make([]*agent.TokenBudget, 4)
	for i := range budgets {
		budgets[i] = agent.NewTokenBudget(100, nil)
		wg.Go(func() {
			if _, err := g.Invoke(agent.WithTokenBudget(context.Background(), budgets[i]), in); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i, b := range budgets {
		if b.Used().Total() != 20 || b.Calls() != 1 {
			t.Errorf("run %d used %+v in %d calls", i, b.Used(), b.Calls())
		}
	}
	// A spent budget fails the run clearly.
	spent := agent.NewTokenBudget(15, nil)
	ctx := agent.WithTokenBudget(context.Background(), spent)
	if _, err := g.Invoke(ctx, in); err != nil {
		t.Fatal(err)
	}
	_, err = g.Invoke(ctx, in)
	if !errors.Is(err, agent.ErrBudgetExceeded) || !strings.Contains(err.Error(), `node "model"`) {
		t.Fatalf("err = %v", err)
	}
	if agent.TokenBudgetFrom(context.Background()) != nil {
		t.Error("budget from an empty context")
	}
}
