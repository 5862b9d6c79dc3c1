package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"reflect"

	"github.com/trellis-go/trellis/checkpoint"
)

// Runnable is a compiled graph with its state type erased: input and state updates arrive as
// JSON, and state comes back as the graph's own values (which encode to JSON). Servers, CLIs and
// tools that handle many graphs hold them as Runnables; every *Compiled[S] is one.
type Runnable interface {
	Name() string
	Nodes() []string
	Shape() Shape
	Mermaid(xray bool) string
	StateType() reflect.Type
	InputKeys() []string
	OutputKeys() []string
	// StreamJSON runs the graph on input, a JSON object of state keys (or empty, for no
	// input). Unknown keys are an error that names them.
	StreamJSON(ctx context.Context, input json.RawMessage, opts ...RunOption) iter.Seq2[Event, error]
	// StateOf returns a thread's state at a checkpoint, with Values as the state struct.
	StateOf(ctx context.Context, ref checkpoint.Ref) (*StateSnapshot[any], error)
	// HistoryOf returns a thread's snapshots, newest first.
	HistoryOf(ctx context.Context, threadID string, opts HistoryOptions) iter.Seq2[*StateSnapshot[any], error]
	// UpdateStateJSON applies values (a JSON object of state keys) as node asNode would.
	UpdateStateJSON(ctx context.Context, ref checkpoint.Ref, values json.RawMessage, asNode string) (checkpoint.Ref, error)
	DeleteThread(ctx context.Context, threadID string) error
	CopyThread(ctx context.Context, from, to string) error
	PruneThread(ctx context.Context, threadID string, keep int) error
}

var _ Runnable = (*Compiled[struct{}])(nil)

func (c *Compiled[S]) decodeJSON(data json.RawMessage) (S, error) {
	var zero S
	if len(data) == 0 || string(data) == "null" {
		return zero, nil
	}
	s, err := DecodeState[S](data)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", c.label, err)
	}
	return s, nil
}

// StreamJSON implements [Runnable].
func (c *Compiled[S]) StreamJSON(ctx context.Context, input json.RawMessage, opts ...RunOption) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		in, err := c.decodeJSON(input)
		if err != nil {
			yield(Event{}, err)
			return
		}
		for ev, err := range c.Stream(ctx, in, opts...) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

func eraseSnapshot[S any](s *StateSnapshot[S]) *StateSnapshot[any] {
	if s == nil {
		return nil
	}
	return &StateSnapshot[any]{Values: s.Values, Next: s.Next, Tasks: s.Tasks, Ref: s.Ref, Parent: s.Parent, Step: s.Step, Metadata: s.Metadata, CreatedAt: s.CreatedAt}
}

// StateOf implements [Runnable].
func (c *Compiled[S]) StateOf(ctx context.Context, ref checkpoint.Ref) (*StateSnapshot[any], error) {
	s, err := c.GetState(ctx, ref)
	return eraseSnapshot(s), err
}

// HistoryOf implements [Runnable].
func (c *Compiled[S]) HistoryOf(ctx context.Context, threadID string, opts HistoryOptions) iter.Seq2[*StateSnapshot[any], error] {
	return func(yield func(*StateSnapshot[any], error) bool) {
		for s, err := range c.History(ctx, threadID, opts) {
			if !yield(eraseSnapshot(s), err) {
				return
			}
		}
	}
}

// UpdateStateJSON implements [Runnable].
func (c *Compiled[S]) UpdateStateJSON(ctx context.Context, ref checkpoint.Ref, values json.RawMessage, asNode string) (checkpoint.Ref, error) {
	v, err := c.decodeJSON(values)
	if err != nil {
		return checkpoint.Ref{}, err
	}
	return c.UpdateState(ctx, ref, v, asNode)
}
