// Package einopeer ports two of the trellis runtime benchmark workloads to
// github.com/cloudwego/eino, so that bench/cmd/compare can set trellis
// against another Go graph runtime. It is its own Go module: the main trellis
// module does not depend on eino.
//
// The workloads follow docs/benchmarks.md ("Workloads"):
//
//   - sequential_1000: a chain of 1000 no-op nodes over a messages state,
//     input {messages: []};
//   - static_fanout_100: START has a static edge to each of 100 workers;
//     worker i contributes the one-element list ["result i"]; a collect node
//     joins all 100 (eino merges the lists, like an append reducer) and ends.
//
// LangGraph streams one "updates" event per finished node. eino has no such
// stream; its nearest equivalent is the OnEnd callback that fires for each
// finished node, so every run here installs a callback handler that counts
// them, and a run is an Invoke that returns once the graph is done.
//
// eino has no per-superstep checkpoints (its CheckPointStore is written only
// when a run is interrupted), so only the nocheckpoint variant exists here.
package einopeer

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
)

// MessagesState is the state of sequential_N: LangGraph's MessagesState.
type MessagesState struct {
	Messages []*schema.Message
}

// Results is the value each fan-out worker writes. eino merges the outputs
// of a node's predecessors with the merge function registered for their
// type; the one registered here concatenates, as LangGraph's append reducer
// (operator.add) does.
type Results []string

func init() {
	compose.RegisterValuesMergeFunc(func(rs []Results) (Results, error) {
		n := 0
		for _, r := range rs {
			n += len(r)
		}
		out := make(Results, 0, n)
		for _, r := range rs {
			out = append(out, r...)
		}
		return out, nil
	})
}

// Workload is one compiled graph, ready to run many times.
type Workload struct {
	// Name is the workload's name in docs/benchmarks.md.
	Name string
	run  func(ctx context.Context, events *atomic.Int64) error
	// want is the number of node events one run produces.
	want int64
}

// Run runs the workload once, counting node events the way a LangGraph
// "updates" stream would see them, and checks the count.
func (w *Workload) Run(ctx context.Context) error {
	var events atomic.Int64
	if err := w.run(ctx, &events); err != nil {
		return fmt.Errorf("%s: %w", w.Name, err)
	}
	if got := events.Load(); got != w.want {
		return fmt.Errorf("%s: %d node events, want %d", w.Name, got, w.want)
	}
	return nil
}

// eventCounter counts the OnEnd callbacks of nodes (not of the graph itself).
func eventCounter(events *atomic.Int64) callbacks.Handler {
	return callbacks.NewHandlerBuilder().
		OnEndFn(func(ctx context.Context, info *callbacks.RunInfo, _ callbacks.CallbackOutput) context.Context {
			if info != nil && info.Component != compose.ComponentOfGraph {
				events.Add(1)
			}
			return ctx
		}).
		Build()
}

// Sequential builds sequential_n: n no-op nodes in a chain.
func Sequential(ctx context.Context, n int) (*Workload, error) {
	if n < 1 {
		return nil, fmt.Errorf("einopeer: sequential needs at least one node, got %d", n)
	}
	g := compose.NewGraph[MessagesState, MessagesState]()
	noop := compose.InvokableLambda(func(_ context.Context, s MessagesState) (MessagesState, error) {
		return s, nil
	})
	prev := compose.START
	for i := range n {
		name := fmt.Sprintf("node_%d", i)
		if err := g.AddLambdaNode(name, noop); err != nil {
			return nil, err
		}
		if err := g.AddEdge(prev, name); err != nil {
			return nil, err
		}
		prev = name
	}
	if err := g.AddEdge(prev, compose.END); err != nil {
		return nil, err
	}
	// eino's default (Pregel) mode, like LangGraph's; it counts steps, so
	// the limit must cover the chain.
	r, err := g.Compile(ctx, compose.WithMaxRunSteps(n+10))
	if err != nil {
		return nil, fmt.Errorf("einopeer: compile sequential_%d: %w", n, err)
	}
	return &Workload{
		Name: fmt.Sprintf("sequential_%d", n),
		want: int64(n),
		run: func(ctx context.Context, events *atomic.Int64) error {
			out, err := r.Invoke(ctx, MessagesState{Messages: []*schema.Message{}},
				compose.WithCallbacks(eventCounter(events)))
			if err != nil {
				return err
			}
			if len(out.Messages) != 0 {
				return fmt.Errorf("%d messages out, want 0", len(out.Messages))
			}
			return nil
		},
	}, nil
}

// StaticFanout builds static_fanout_n: n workers on static edges from START,
// joined by one collect node.
func StaticFanout(ctx context.Context, n int) (*Workload, error) {
	if n < 1 {
		return nil, fmt.Errorf("einopeer: static fan-out needs at least one worker, got %d", n)
	}
	g := compose.NewGraph[map[string]any, Results]()
	for i := range n {
		name := fmt.Sprintf("worker_%d", i)
		result := Results{fmt.Sprintf("result %d", i)}
		worker := compose.InvokableLambda(func(_ context.Context, _ map[string]any) (Results, error) {
			return slices.Clone(result), nil
		})
		if err := g.AddLambdaNode(name, worker); err != nil {
			return nil, err
		}
		if err := g.AddEdge(compose.START, name); err != nil {
			return nil, err
		}
	}
	collect := compose.InvokableLambda(func(_ context.Context, r Results) (Results, error) {
		return r, nil
	})
	if err := g.AddLambdaNode("collect", collect); err != nil {
		return nil, err
	}
	// eino wants both ends of an edge to exist before the edge.
	for i := range n {
		if err := g.AddEdge(fmt.Sprintf("worker_%d", i), "collect"); err != nil {
			return nil, err
		}
	}
	if err := g.AddEdge("collect", compose.END); err != nil {
		return nil, err
	}
	// AllPredecessor (eino's DAG mode) makes collect wait for every worker:
	// the join of LangGraph's add_edge([...], "collect").
	r, err := g.Compile(ctx, compose.WithNodeTriggerMode(compose.AllPredecessor))
	if err != nil {
		return nil, fmt.Errorf("einopeer: compile static_fanout_%d: %w", n, err)
	}
	return &Workload{
		Name: fmt.Sprintf("static_fanout_%d", n),
		want: int64(n + 1),
		run: func(ctx context.Context, events *atomic.Int64) error {
			out, err := r.Invoke(ctx, map[string]any{},
				compose.WithCallbacks(eventCounter(events)))
			if err != nil {
				return err
			}
			if len(out) != n {
				return fmt.Errorf("%d results out, want %d", len(out), n)
			}
			return nil
		},
	}, nil
}
