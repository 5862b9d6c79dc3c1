package server

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"slices"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/server/internal/lcstream"
	"github.com/trellis-go/trellis/server/internal/lcwire"
	"github.com/trellis-go/trellis/tool"
)

// apiGraph is an assistant's graph as the API sees it: state values it reads come back with
// their messages in LangChain's shape, and state values it is given may hold messages in any
// shape the API accepts (see lcwire.ToMessage). Every route and the runner reach the graph
// through it, so no message leaves or enters the server in another shape.
//
// Its Stream also brackets the run with two lifecycle events (mode lcstream.ModeLifecycle) that the
// "events" stream mode turns into the graph's on_chain_start and on_chain_end; other modes
// ignore them.
type apiGraph struct {
	graph.Runnable
}

// wrapGraph returns g as the API sees it.
func wrapGraph(g graph.Runnable) graph.Runnable {
	if g == nil {
		return nil
	}
	if _, ok := g.(*apiGraph); ok {
		return g
	}
	return &apiGraph{g}
}

func (g *apiGraph) snapshot(s *graph.StateSnapshot[any]) *graph.StateSnapshot[any] {
	if s == nil {
		return nil
	}
	c := *s
	c.Values = lcwire.Value(s.Values)
	return &c
}

// State implements graph.Runnable with messages in LangChain's shape.
func (g *apiGraph) State(ctx context.Context, ref checkpoint.Ref) (*graph.StateSnapshot[any], error) {
	s, err := g.Runnable.State(ctx, ref)
	return g.snapshot(s), err
}

// subgraphStater is a graph that reads a thread's state with its subgraphs' states (a
// graph.Compiled's Runnable view).
type subgraphStater interface {
	StateWithSubgraphs(ctx context.Context, ref checkpoint.Ref) (*graph.StateSnapshot[any], error)
}

// StateWithSubgraphs is State with the states of the snapshot's subgraph tasks, each in
// LangChain's shape too. A graph that cannot read them gives its plain state.
func (g *apiGraph) StateWithSubgraphs(ctx context.Context, ref checkpoint.Ref) (*graph.StateSnapshot[any], error) {
	sg, ok := g.Runnable.(subgraphStater)
	if !ok {
		return g.State(ctx, ref)
	}
	s, err := sg.StateWithSubgraphs(ctx, ref)
	return g.deepSnapshot(s), err
}

// deepSnapshot is snapshot for s and the subgraph states its tasks carry.
func (g *apiGraph) deepSnapshot(s *graph.StateSnapshot[any]) *graph.StateSnapshot[any] {
	c := g.snapshot(s)
	if c == nil || !slices.ContainsFunc(c.Tasks, func(t graph.TaskState) bool { return t.State != nil }) {
		return c
	}
	c.Tasks = slices.Clone(c.Tasks)
	for i := range c.Tasks {
		c.Tasks[i].State = g.deepSnapshot(c.Tasks[i].State)
	}
	return c
}

// History implements graph.Runnable with messages in LangChain's shape.
func (g *apiGraph) History(ctx context.Context, threadID string, opts graph.HistoryOptions) iter.Seq2[*graph.StateSnapshot[any], error] {
	return func(yield func(*graph.StateSnapshot[any], error) bool) {
		for s, err := range g.Runnable.History(ctx, threadID, opts) {
			if !yield(g.snapshot(s), err) {
				return
			}
		}
	}
}

// UpdateState implements graph.Runnable, reading messages in any shape the API accepts.
func (g *apiGraph) UpdateState(ctx context.Context, ref checkpoint.Ref, values json.RawMessage, asNode string) (checkpoint.Ref, error) {
	values, err := inputFromAPI(g.StateType(), values)
	if err != nil {
		return checkpoint.Ref{}, err
	}
	return g.Runnable.UpdateState(ctx, ref, values, asNode)
}

// Stream implements graph.Runnable, reading messages in any shape the API accepts, and adds
// the lifecycle events.
func (g *apiGraph) Stream(ctx context.Context, input json.RawMessage, opts ...graph.RunOption) iter.Seq2[graph.Event, error] {
	return func(yield func(graph.Event, error) bool) {
		in, err := inputFromAPI(g.StateType(), input)
		if err != nil {
			yield(graph.Event{}, err)
			return
		}
		info, _ := tool.CallInfoFrom(ctx)
		lc := &lcstream.Lifecycle{Start: true, Name: g.Name(), RunID: info.RunID, Input: input}
		if !yield(graph.Event{Mode: lcstream.ModeLifecycle, Data: lc}, nil) {
			return
		}
		var last any
		// Tool and model calls as they start and end, for the events mode (lcstream.ToolObserver, lcstream.ModelObserver).
		ctx := model.WithCallObserver(tool.WithCallObserver(ctx, lcstream.ToolObserver{}), lcstream.ModelObserver{})
		for ev, err := range g.Runnable.Stream(ctx, in, opts...) {
			if err != nil {
				var ie *graph.InterruptedError
				if errors.As(err, &ie) { // paused, not failed: the graph's chain ends here
					end := &lcstream.Lifecycle{Name: lc.Name, RunID: lc.RunID, Output: last}
					if !yield(graph.Event{Mode: lcstream.ModeLifecycle, Data: end}, nil) {
						return
					}
				}
				yield(ev, err)
				return
			}
			if ev.Mode == graph.ModeValues && len(ev.NS) == 0 {
				last = ev.Data
			}
			if !yield(ev, nil) {
				return
			}
		}
		yield(graph.Event{Mode: lcstream.ModeLifecycle, Data: &lcstream.Lifecycle{Name: lc.Name, RunID: lc.RunID, Output: last}}, nil)
	}
}
