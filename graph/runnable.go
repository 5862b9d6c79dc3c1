package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"reflect"

	"github.com/trellis-go/trellis/checkpoint"
)

// Runnable is a compiled graph with its state type erased: the verbs of [Compiled] under the
// same names, with input and state updates given as JSON objects of state keys and state read
// back as the graph's own values (which encode to JSON). Servers, CLIs and tools that handle
// graphs of many state types hold them as Runnables; [Compiled.Runnable] gives a compiled
// graph's.
type Runnable interface {
	Name() string
	Nodes() []string
	Shape() Shape
	Mermaid(xray bool) string
	StateType() reflect.Type
	InputKeys() []string
	OutputKeys() []string
	// Stream runs the graph on input, a JSON object of state keys (or empty, for no input),
	// as [Compiled.Stream] does. Unknown keys are an error that names them.
	Stream(ctx context.Context, input json.RawMessage, opts ...RunOption) iter.Seq2[Event, error]
	// State returns a thread's state at a checkpoint ([Compiled.State]), with Values holding
	// the state struct.
	State(ctx context.Context, ref checkpoint.Ref) (*StateSnapshot[any], error)
	// History returns a thread's snapshots, newest first ([Compiled.History]).
	History(ctx context.Context, threadID string, opts HistoryOptions) iter.Seq2[*StateSnapshot[any], error]
	// UpdateState applies values, a JSON object of state keys, as node asNode would
	// ([Compiled.UpdateState]).
	UpdateState(ctx context.Context, ref checkpoint.Ref, values json.RawMessage, asNode string) (checkpoint.Ref, error)
	DeleteThread(ctx context.Context, threadID string) error
	CopyThread(ctx context.Context, from, to string) error
	PruneThread(ctx context.Context, threadID string, keep int) error
}

// Runnable returns the graph as a [Runnable], the view servers and tools that hold graphs of
// any state type use. The view has the graph's other methods too ([Compiled.Subgraphs],
// [Compiled.Goto] with its values as JSON), for callers that look for them with a type
// assertion. A nil graph gives a nil Runnable.
func (c *Compiled[S]) Runnable() Runnable {
	if c == nil {
		return nil
	}
	return erased[S]{c}
}

// Erase is [Compiled.Runnable] for what a constructor of compiled graphs returns, so that a
// function handing graphs out as Runnables can end with return graph.Erase(g.Compile(opts)).
// An error is passed on, with a nil Runnable.
func Erase[S any](c *Compiled[S], err error) (Runnable, error) {
	if err != nil {
		return nil, err
	}
	return c.Runnable(), nil
}

// erased is a compiled graph's Runnable view: its verbs shadow the typed ones of the embedded
// graph with JSON and any in place of S, and every other method is the graph's own.
type erased[S any] struct{ *Compiled[S] }

var _ Runnable = erased[struct{}]{}

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

func (e erased[S]) Stream(ctx context.Context, input json.RawMessage, opts ...RunOption) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		in, err := e.decodeJSON(input)
		if err != nil {
			yield(Event{}, err)
			return
		}
		for ev, err := range e.Compiled.Stream(ctx, in, opts...) {
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

func (e erased[S]) State(ctx context.Context, ref checkpoint.Ref) (*StateSnapshot[any], error) {
	s, err := e.Compiled.State(ctx, ref)
	return eraseSnapshot(s), err
}

// StateWithSubgraphs is [Compiled.StateWithSubgraphs] with Values holding the state struct.
func (e erased[S]) StateWithSubgraphs(ctx context.Context, ref checkpoint.Ref) (*StateSnapshot[any], error) {
	s, err := e.Compiled.StateWithSubgraphs(ctx, ref)
	return eraseSnapshot(s), err
}

func (e erased[S]) History(ctx context.Context, threadID string, opts HistoryOptions) iter.Seq2[*StateSnapshot[any], error] {
	return func(yield func(*StateSnapshot[any], error) bool) {
		for s, err := range e.Compiled.History(ctx, threadID, opts) {
			if !yield(eraseSnapshot(s), err) {
				return
			}
		}
	}
}

func (e erased[S]) UpdateState(ctx context.Context, ref checkpoint.Ref, values json.RawMessage, asNode string) (checkpoint.Ref, error) {
	v, err := e.decodeJSON(values)
	if err != nil {
		return checkpoint.Ref{}, err
	}
	return e.Compiled.UpdateState(ctx, ref, v, asNode)
}

// Goto is [Compiled.Goto] with values as a JSON object of state keys (or empty).
func (e erased[S]) Goto(ctx context.Context, ref checkpoint.Ref, values json.RawMessage, nodes []string) (checkpoint.Ref, error) {
	targets, err := e.gotoTargets(nodes)
	if err != nil {
		return checkpoint.Ref{}, err
	}
	v, err := e.decodeJSON(values)
	if err != nil {
		return checkpoint.Ref{}, err
	}
	return e.updateState(ctx, ref, v, "", targets)
}
