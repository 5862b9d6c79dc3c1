package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/trellis-go/trellis/internal/runctx"
)

// Context returns the run's context (passed with [WithContext]) as a T, and whether the run
// has one that is a T. It works in nodes, in the functional tasks ([Task]) and subgraphs they
// run, and in whatever they call with their context (tools read the same value with
// tool.Context). A context that is not a T but has a JSON form that decodes into one (a run
// of a graph that declares no context type, passed a map) is converted; ok is false when the
// run has no context or it is of another shape. LangGraph's nodes read it as runtime.context.
//
//	type UserContext struct {
//		UserID string `json:"user_id"`
//		Locale string `json:"locale,omitempty"`
//	}
//
//	g.AddNode("greet", func(ctx context.Context, s State) (State, error) {
//		uc, _ := graph.Context[UserContext](ctx)
//		return State{Greeting: "hello " + uc.UserID}, nil
//	})
func Context[T any](ctx context.Context) (T, bool) { return runctx.As[T](ctx) }

// runContext checks and converts v, a run's context, to the graph's context type.
func (c *Compiled[S]) runContext(v any) (any, error) {
	t := c.opts.ContextType
	if v == nil || t == nil {
		return v, nil
	}
	vt := reflect.TypeOf(v)
	switch {
	case vt.AssignableTo(t):
		return v, nil
	case vt.Kind() == reflect.Pointer && vt.Elem().AssignableTo(t):
		rv := reflect.ValueOf(v)
		if rv.IsNil() {
			return nil, nil
		}
		return rv.Elem().Interface(), nil
	}
	var data []byte
	switch x := v.(type) {
	case json.RawMessage:
		data = x
	case map[string]any:
		var err error
		if data, err = json.Marshal(x); err != nil {
			return nil, fmt.Errorf("%s: the run's context cannot be encoded as JSON: %w", c.label, err)
		}
	default:
		return nil, fmt.Errorf("%s: the run's context is a %T, but the graph's context type (CompileOptions.ContextType) is %s: pass a %s or its JSON form", c.label, v, t, t)
	}
	out := reflect.New(t)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out.Interface()); err != nil {
		return nil, fmt.Errorf("%s: the run's context does not fit the graph's context type %s: %s", c.label, t, contextProblem(err))
	}
	return out.Elem().Interface(), nil
}

// contextProblem words a decoding error of a context by the field it concerns.
func contextProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Sprintf("field %q: expected %s, got a JSON %s", te.Field, te.Type, te.Value)
		}
		return fmt.Sprintf("expected %s, got a JSON %s", te.Type, te.Value)
	}
	// "json: unknown field "x"" names the field already.
	return err.Error()
}
