package agent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"

	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/tokens"
)

// ErrBudgetExceeded means a run used up its token budget. Match it with errors.Is; the error is a
// *[BudgetError] with the figures.
var ErrBudgetExceeded = errors.New("agent: token budget exceeded")

// BudgetError reports a model call refused because of a [TokenBudget].
type BudgetError struct {
	Limit int // the budget, in tokens
	Used  int // tokens used before this call
	// Needed is the estimated input of the refused call (0 when the budget was already spent).
	Needed int
}

func (e *BudgetError) Error() string {
	if e.Needed > 0 {
		return fmt.Sprintf("agent: token budget exceeded: the next model call needs about %d input tokens but only %d of %d remain (raise the budget, compact the conversation, or split the task)", e.Needed, max(e.Limit-e.Used, 0), e.Limit)
	}
	return fmt.Sprintf("agent: token budget exceeded: %d of %d tokens used (raise the budget or split the task)", e.Used, e.Limit)
}

// Is reports whether target is ErrBudgetExceeded.
func (e *BudgetError) Is(target error) bool { return target == ErrBudgetExceeded }

// TokenBudget counts the tokens model calls use against a limit. It is safe for concurrent use,
// so the parallel branches of one run can share it.
//
// Calls are counted with the usage providers report; a provider that reports none is counted
// with a token counter instead. A call is refused with a *[BudgetError], before anything is sent,
// once the budget is spent or when its input alone would not fit in what remains. A call under
// way is never cut: the budget can end slightly overspent by that call's output.
type TokenBudget struct {
	limit   int
	counter tokens.Counter
	mu      sync.Mutex
	used    model.Usage
	calls   int
}

// NewTokenBudget returns a budget of limit tokens (input plus output). counter estimates what
// providers do not report; nil means tokens.Approximate(). A limit of zero or less refuses
// every call.
func NewTokenBudget(limit int, counter tokens.Counter) *TokenBudget {
	if counter == nil {
		counter = tokens.Approximate()
	}
	return &TokenBudget{limit: limit, counter: counter}
}

// Used returns the tokens counted so far.
func (b *TokenBudget) Used() model.Usage {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Calls returns how many model calls were counted.
func (b *TokenBudget) Calls() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls
}

// Remaining returns the tokens left, never below zero.
func (b *TokenBudget) Remaining() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return max(b.limit-b.used.Total(), 0)
}

// Limit returns the budget.
func (b *TokenBudget) Limit() int { return b.limit }

func (b *TokenBudget) admit(req *model.Request) error {
	need := tokens.CountRequest(b.counter, req)
	b.mu.Lock()
	defer b.mu.Unlock()
	used := b.used.Total()
	if used >= b.limit {
		return &BudgetError{Limit: b.limit, Used: used}
	}
	if used+need > b.limit {
		return &BudgetError{Limit: b.limit, Used: used, Needed: need}
	}
	return nil
}

func (b *TokenBudget) charge(req *model.Request, resp *model.Response) {
	u := resp.Usage
	if u.InputTokens == 0 {
		u.InputTokens = tokens.CountRequest(b.counter, req)
	}
	if u.OutputTokens == 0 {
		u.OutputTokens = b.counter.Count(resp.Message.Content)
		for _, tc := range resp.Message.ToolCalls {
			u.OutputTokens += b.counter.Count(tc.Name) + b.counter.Count(string(tc.Arguments))
		}
	}
	b.mu.Lock()
	b.used = b.used.Add(u)
	b.calls++
	b.mu.Unlock()
}

// Wrap returns m counted against b: every call through the returned model uses this budget.
func (b *TokenBudget) Wrap(m model.Model) model.Model { return &budgetModel{inner: m, fixed: b} }

type budgetKey struct{}

// WithTokenBudget returns a context whose model calls through a [BudgetedModel] count against b.
// Give each run its own: graph.Invoke(agent.WithTokenBudget(ctx, agent.NewTokenBudget(50000, nil)), ...).
func WithTokenBudget(ctx context.Context, b *TokenBudget) context.Context {
	return context.WithValue(ctx, budgetKey{}, b)
}

// TokenBudgetFrom returns the budget in ctx, or nil.
func TokenBudgetFrom(ctx context.Context) *TokenBudget {
	b, _ := ctx.Value(budgetKey{}).(*TokenBudget)
	return b
}

// BudgetedModel wraps m so that each call counts against the budget found in its context (see
// [WithTokenBudget]), so one compiled graph can give every run its own budget. Calls whose
// context holds no budget pass through uncounted.
func BudgetedModel(m model.Model) model.Model { return &budgetModel{inner: m} }

type budgetModel struct {
	inner model.Model
	fixed *TokenBudget
}

// Identity is the wrapped model's.
func (m *budgetModel) Identity() (provider, name string) { return model.IdentityOf(m.inner) }

// Unwrap returns the wrapped model, for model.IsOffline and offline.PacksOf.
func (m *budgetModel) Unwrap() model.Model { return m.inner }

func (m *budgetModel) budget(ctx context.Context) *TokenBudget {
	if m.fixed != nil {
		return m.fixed
	}
	return TokenBudgetFrom(ctx)
}

func (m *budgetModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	b := m.budget(ctx)
	if b == nil || req == nil {
		return m.inner.Generate(ctx, req)
	}
	if err := b.admit(req); err != nil {
		return nil, err
	}
	resp, err := m.inner.Generate(ctx, req)
	if resp != nil {
		b.charge(req, resp)
	}
	return resp, err
}

func (m *budgetModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		b := m.budget(ctx)
		if b == nil || req == nil {
			for c, err := range m.inner.Stream(ctx, req) {
				if !yield(c, err) {
					return
				}
			}
			return
		}
		if err := b.admit(req); err != nil {
			yield(model.Chunk{}, err)
			return
		}
		// Collect what streams past, to charge it however the stream ends.
		seen := &model.Response{}
		var text strings.Builder
		defer func() {
			seen.Message.Content = text.String()
			b.charge(req, seen)
		}()
		for c, err := range m.inner.Stream(ctx, req) {
			if err == nil {
				text.WriteString(c.Text)
				if c.ToolCall != nil {
					seen.Message.ToolCalls = append(seen.Message.ToolCalls, *c.ToolCall)
				}
				if c.Usage != nil {
					seen.Usage = *c.Usage
				}
			}
			if !yield(c, err) {
				return
			}
		}
	}
}
