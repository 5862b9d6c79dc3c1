package engine

import (
	"context"
	"encoding/json"
	"iter"
	"reflect"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
)

// goneGraph stands for the graph of a run whose assistant was deleted while the run waited: the
// run fails with err, and the thread's state is left alone.
type goneGraph struct{ err error }

var _ graph.Runnable = goneGraph{}

func (g goneGraph) Name() string            { return "deleted" }
func (g goneGraph) Nodes() []string         { return nil }
func (g goneGraph) Shape() graph.Shape      { return graph.Shape{} }
func (g goneGraph) Mermaid(bool) string     { return "" }
func (g goneGraph) StateType() reflect.Type { return nil }
func (g goneGraph) InputKeys() []string     { return nil }
func (g goneGraph) OutputKeys() []string    { return nil }
func (g goneGraph) Stream(context.Context, json.RawMessage, ...graph.RunOption) iter.Seq2[graph.Event, error] {
	return func(yield func(graph.Event, error) bool) { yield(graph.Event{}, g.err) }
}
func (g goneGraph) State(context.Context, checkpoint.Ref) (*graph.StateSnapshot[any], error) {
	return nil, checkpoint.ErrNotFound
}
func (g goneGraph) History(context.Context, string, graph.HistoryOptions) iter.Seq2[*graph.StateSnapshot[any], error] {
	return func(func(*graph.StateSnapshot[any], error) bool) {}
}
func (g goneGraph) UpdateState(context.Context, checkpoint.Ref, json.RawMessage, string) (checkpoint.Ref, error) {
	return checkpoint.Ref{}, g.err
}
func (g goneGraph) DeleteThread(context.Context, string) error       { return nil }
func (g goneGraph) CopyThread(context.Context, string, string) error { return g.err }
func (g goneGraph) PruneThread(context.Context, string, int) error   { return nil }
