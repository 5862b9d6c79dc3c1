// Package runctx carries a graph run's typed context (LangGraph's runtime context) in a
// context.Context, so that the graph's nodes and tasks and the tools they call read it
// without either package importing the other.
package runctx

import (
	"context"
	"encoding/json"
	"reflect"
)

type key struct{}

// holder lets a run say "no context" below a parent's: a nil value is a run without one.
type holder struct{ v any }

// With returns ctx carrying v as the run's context (nil: none).
func With(ctx context.Context, v any) context.Context {
	return context.WithValue(ctx, key{}, holder{v})
}

// Value returns the run's context in ctx, and whether there is one.
func Value(ctx context.Context) (any, bool) {
	h, ok := ctx.Value(key{}).(holder)
	if !ok || h.v == nil {
		return nil, false
	}
	return h.v, true
}

// As returns the run's context in ctx as a T: the value itself when it is one (or a pointer
// to one), else the value converted through JSON (a context that crossed the wire arrives as
// a map). ok is false when there is no context or it does not convert.
func As[T any](ctx context.Context) (T, bool) {
	var out T
	v, ok := Value(ctx)
	if !ok {
		return out, false
	}
	if t, ok := v.(T); ok {
		return t, true
	}
	if p, ok := v.(*T); ok && p != nil {
		return *p, true
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return out, false
	}
	data, err := json.Marshal(v)
	if err != nil {
		return out, false
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return out, false
	}
	return out, true
}
