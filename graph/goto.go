package graph

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/trellis-go/trellis/checkpoint"
)

// GotoJSON steers a thread from outside its nodes, as a LangGraph Command(update=..., goto=...)
// given as a run's input does: values (a JSON object of state keys, or empty) are applied
// through the reducers, as update-state with no node applies them, and the nodes named are
// scheduled next in place of what was scheduled (a task waiting at an interrupt included). It
// writes a checkpoint, the thread's newest, and returns it; a run continuing the thread
// ([Continue]) then starts with those nodes. A name that is no node of the graph is an error,
// and nothing is written.
func (c *Compiled[S]) GotoJSON(ctx context.Context, ref checkpoint.Ref, values json.RawMessage, nodes []string) (checkpoint.Ref, error) {
	if len(nodes) == 0 {
		return checkpoint.Ref{}, fmt.Errorf("%s: goto names no node", c.label)
	}
	targets := make([]Target, 0, len(nodes))
	for _, n := range nodes {
		if _, ok := c.g.nodes[n]; !ok {
			return checkpoint.Ref{}, fmt.Errorf("%s: goto names unknown node %q%s", c.label, n, suggest(n, c.g.order))
		}
		targets = append(targets, To(n))
	}
	v, err := c.decodeJSON(values)
	if err != nil {
		return checkpoint.Ref{}, err
	}
	return c.updateState(ctx, ref, v, "", targets)
}
