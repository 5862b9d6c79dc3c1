package graph

import (
	"context"
	"fmt"

	"github.com/trellis-go/trellis/checkpoint"
)

// Goto steers a thread from outside its nodes, as a LangGraph Command(update=..., goto=...)
// given as a run's input does: values are applied through the reducers, as UpdateState with no
// node applies them, and the nodes named are scheduled next in place of what was scheduled (a
// task waiting at an interrupt included). It writes a checkpoint, the thread's newest, and
// returns it; a run continuing the thread ([Continue]) then starts with those nodes. A name that
// is no node of the graph is an error, and nothing is written. The [Runnable] view's Goto takes
// values as a JSON object of state keys (or empty).
func (c *Compiled[S]) Goto(ctx context.Context, ref checkpoint.Ref, values S, nodes []string) (checkpoint.Ref, error) {
	targets, err := c.gotoTargets(nodes)
	if err != nil {
		return checkpoint.Ref{}, err
	}
	return c.updateState(ctx, ref, values, "", targets)
}

// gotoTargets checks that nodes name nodes of the graph, and returns them as targets.
func (c *Compiled[S]) gotoTargets(nodes []string) ([]Target, error) {
	if len(nodes) == 0 {
		return nil, fmt.Errorf("%s: goto names no node", c.label)
	}
	targets := make([]Target, 0, len(nodes))
	for _, n := range nodes {
		if _, ok := c.g.nodes[n]; !ok {
			return nil, fmt.Errorf("%s: goto names unknown node %q%s", c.label, n, suggest(n, c.g.order))
		}
		targets = append(targets, To(n))
	}
	return targets, nil
}
