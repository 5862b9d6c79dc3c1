package server

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/trellis-go/trellis/agent"
	"github.com/trellis-go/trellis/graph"
)

// ErrBudgetExceeded matches every *[BudgetError].
var ErrBudgetExceeded = errors.New("server: run budget exceeded")

// Budget names of a [BudgetError].
const (
	BudgetSteps  = "steps"
	BudgetTokens = "tokens"
)

// BudgetError ends a run that used up its step or token budget (Config.MaxRunSteps,
// Config.MaxRunTokens, or the run's own config.max_steps / config.max_tokens). The run's last
// checkpoint is kept: the thread can continue with a larger budget.
type BudgetError struct {
	Budget string // BudgetSteps or BudgetTokens
	Limit  int
	// Used is what the run had used when it was stopped: supersteps, or tokens before the call
	// that was refused.
	Used int
	// Err is the runtime's or the model wrapper's own error.
	Err error
}

func (e *BudgetError) Error() string {
	if e.Budget == BudgetSteps {
		return fmt.Sprintf("server: the run used its step budget of %d supersteps without finishing (max_steps); its last checkpoint is kept", e.Limit)
	}
	return fmt.Sprintf("server: the run used %d tokens of its token budget of %d (max_tokens); its last checkpoint is kept", e.Used, e.Limit)
}

// Unwrap returns the underlying error.
func (e *BudgetError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrBudgetExceeded) true.
func (e *BudgetError) Is(target error) bool { return target == ErrBudgetExceeded }

// budgetKeys are the run config keys that lower the server's budgets for one run.
const (
	configMaxSteps  = "max_steps"
	configMaxTokens = "max_tokens"
)

// runBudget is the budget a run executes under; zero fields mean no limit.
type runBudget struct {
	steps, tokens int
}

// budgetOf reads a run's budget: the server's limits, lowered by the run's config (see
// budgetWithin).
func (s *Server) budgetOf(config map[string]any) (runBudget, error) {
	return budgetWithin(config, runBudget{steps: s.cfg.MaxRunSteps, tokens: s.cfg.MaxRunTokens})
}

// budgetWithin reads a run's budget: the limits (zero: none), lowered by the run's config. It
// answers 400 naming the key when a value is not a positive whole number or exceeds its limit.
func budgetWithin(config map[string]any, limits runBudget) (runBudget, error) {
	b := limits
	if err := checkRecursionLimit(config); err != nil {
		return b, err
	}
	for _, k := range []struct {
		key   string
		limit int
		dst   *int
	}{{configMaxSteps, limits.steps, &b.steps}, {configMaxTokens, limits.tokens, &b.tokens}} {
		raw, ok := config[k.key]
		if !ok || raw == nil {
			continue
		}
		f, ok := raw.(float64)
		if !ok || f < 1 || f != math.Trunc(f) || f > math.MaxInt32 {
			return b, badRequest("give a whole number of at least 1", "field \"config.%s\" is %v", k.key, raw)
		}
		n := int(f)
		if k.limit > 0 && n > k.limit {
			return b, badRequest(fmt.Sprintf("the server allows at most %d per run", k.limit), "field \"config.%s\" is %d, above the server's limit", k.key, n)
		}
		*k.dst = n
	}
	return b, nil
}

// budgetRun applies a run's budget (the server's limits, lowered by its config): the step budget becomes the run's recursion limit (lowered
// by the run's own recursion_limit), and a token budget goes in the context for the models the
// graph wraps with telemetry.Model (or agent.BudgetedModel). Without a token budget the context
// still counts tokens, for the metrics and the run's span. It returns the counter, and whether
// the step budget is what bounds the run's supersteps.
func budgetRun(ctx context.Context, run *Run, opts []graph.RunOption, limits runBudget) (context.Context, []graph.RunOption, runBudget, *agent.TokenBudget, bool) {
	b, err := budgetWithin(run.Kwargs.Config, limits)
	if err != nil {
		// Checked when the run was created; a run stored by an older server keeps the server's.
		b = limits
	}
	stepsBind := false
	if b.steps > 0 {
		rl, _ := run.Kwargs.Config["recursion_limit"].(float64)
		if rl <= 0 || float64(b.steps) < rl {
			opts = append(opts, graph.WithRecursionLimit(b.steps))
			stepsBind = true
		}
	}
	limit := b.tokens
	if limit == 0 {
		limit = math.MaxInt32 // counting only
	}
	tb := agent.NewTokenBudget(limit, nil)
	return agent.WithTokenBudget(ctx, tb), opts, b, tb, stepsBind
}

// budgetError turns a run's error into a *BudgetError when a budget stopped it.
func budgetError(err error, b runBudget, stepsBind bool) error {
	if err == nil {
		return nil
	}
	var ne *graph.NodeError
	if stepsBind && errors.Is(err, graph.ErrRecursionLimit) && !errors.As(err, &ne) {
		// The root graph's limit (a subgraph's own limit fails its node instead).
		return &BudgetError{Budget: BudgetSteps, Limit: b.steps, Used: b.steps, Err: err}
	}
	var be *agent.BudgetError
	if b.tokens > 0 && errors.As(err, &be) {
		return &BudgetError{Budget: BudgetTokens, Limit: b.tokens, Used: be.Used, Err: err}
	}
	return err
}
