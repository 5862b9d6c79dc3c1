package tool

import (
	"context"
	"encoding/json"

	"github.com/trellis-go/trellis/model"
)

// NewRaw builds a tool from a spec whose parameters are a JSON Schema given as JSON, and a
// function that takes the raw arguments. Use it when the schema is not a Go type: a graph's input
// schema, a tool defined in configuration, a proxy. The arguments are validated against the schema
// before fn runs, exactly as for [New], and fn receives them normalised (see
// [NormalizeArguments]). It returns a [*DefinitionError] when the spec is unusable or the schema
// does not compile.
func NewRaw(spec model.ToolSpec, fn func(ctx context.Context, args json.RawMessage) (*Result, error)) (Tool, error) {
	if fn == nil {
		return nil, &DefinitionError{Tool: spec.Name, Problem: "function is nil", Hint: "pass the function that implements the tool"}
	}
	if err := CheckSpec(spec); err != nil {
		return nil, err
	}
	s, err := CompileSchema(spec.Parameters)
	if err != nil {
		return nil, &DefinitionError{Tool: spec.Name, Problem: err.Error(), Hint: "give a JSON Schema (draft 2020-12 or draft-07) without remote references"}
	}
	spec.Parameters = append(json.RawMessage(nil), spec.Parameters...)
	return &rawFunc{spec: spec, schema: s, fn: fn}, nil
}

type rawFunc struct {
	spec   model.ToolSpec
	schema *Schema
	fn     func(context.Context, json.RawMessage) (*Result, error)
}

func (r *rawFunc) Spec() model.ToolSpec { return r.spec }

func (r *rawFunc) Call(ctx context.Context, args json.RawMessage) (*Result, error) {
	args, err := r.schema.Validate(r.spec.Name, args)
	if err != nil {
		return nil, err
	}
	res, err := r.fn(ctx, args)
	if err == nil && res == nil {
		res = &Result{}
	}
	return res, err
}
