package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/trellis-go/trellis/model"
)

// Func is a tool built from a Go function by [New]. Its parameters schema comes from the Args type.
// A Func is safe for concurrent use if its function is.
type Func[Args, Out any] struct {
	spec      model.ToolSpec
	schema    *Schema
	outSchema json.RawMessage
	defaults  []byte // a JSON object of default argument values, or nil
	assign    bool   // whether Args can be filled by assign
	fn        func(context.Context, Args) (Out, error)
}

// New builds a tool from a function. The JSON Schema of its arguments is inferred from Args (a
// struct, or a map with string keys) by github.com/google/jsonschema-go, and refined by struct tags:
//
//	json:"name,omitempty"   the argument's name; omitempty (or omitzero) makes it optional
//	jsonschema:"..."        the argument's description, which the model reads
//	enum:"a,b,c"            the allowed values (for a slice, of each element)
//	minimum:"0"             the smallest number allowed; maximum:"10" the largest
//	pattern:"^[A-Z]{3}$"    a regular expression a string must match
//	format:"date"           a format hint such as date, date-time, email or uri
//	default:"metric"        the value used when the model leaves the argument out; the argument
//	                        becomes optional (top-level fields only)
//
// Before fn runs, the arguments are checked against the schema; a mismatch is returned as an
// [*ArgumentError] that names each wrong argument and what was expected, and fn is not called.
//
// What fn returns becomes the result: a *Result or Result is used as it is (this is how a tool
// returns a Command or an error result), a string becomes the text, and anything else is encoded
// as JSON into Result.Structured, which the model reads when there is no text.
//
// New returns a [*DefinitionError] when the name is not a valid tool name, fn is nil, Args does
// not describe a JSON object, or a tag cannot be applied.
func New[Args, Out any](name, description string, fn func(ctx context.Context, args Args) (Out, error)) (*Func[Args, Out], error) {
	if fn == nil {
		return nil, &DefinitionError{Tool: name, Problem: "function is nil", Hint: "pass the function that implements the tool"}
	}
	t := reflect.TypeFor[Args]()
	base := t
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	if base.Kind() != reflect.Struct && !(base.Kind() == reflect.Map && base.Key().Kind() == reflect.String) {
		return nil, &DefinitionError{Tool: name, Problem: fmt.Sprintf("arguments type %v is not a struct", t),
			Hint: "models call tools with a JSON object; declare the arguments as a struct"}
	}
	s, err := jsonschema.ForType(base, nil)
	if err != nil {
		return nil, &DefinitionError{Tool: name, Problem: "cannot infer a schema from " + t.String() + ": " + err.Error(),
			Hint: "use JSON-friendly field types, or tag unsupported fields with json:\"-\""}
	}
	defaults, err := applyTags(base, s, true)
	if err != nil {
		return nil, &DefinitionError{Tool: name, Problem: err.Error(), Hint: "fix the struct tag"}
	}
	compiled, err := compile(s)
	if err != nil {
		return nil, &DefinitionError{Tool: name, Problem: err.Error()}
	}
	f := &Func[Args, Out]{
		spec:   model.ToolSpec{Name: name, Description: description, Parameters: compiled.JSON()},
		schema: compiled,
		assign: assignable(t),
		fn:     fn,
	}
	if err := CheckSpec(f.spec); err != nil {
		return nil, err
	}
	if len(defaults) > 0 {
		if f.defaults, err = json.Marshal(defaults); err != nil {
			return nil, &DefinitionError{Tool: name, Problem: "cannot encode defaults: " + err.Error()}
		}
	}
	f.outSchema = outputSchema[Out]()
	return f, nil
}

// Must returns t, and panics if err is not nil. It is meant for tools defined in package-level
// variables, where a definition error is a programming mistake found at start-up.
func Must[T any](t T, err error) T {
	if err != nil {
		panic(err)
	}
	return t
}

// Spec describes the tool to a model.
func (f *Func[Args, Out]) Spec() model.ToolSpec { return f.spec }

// Schema returns the compiled parameters schema.
func (f *Func[Args, Out]) Schema() *Schema { return f.schema }

// OutputSchema returns the JSON Schema of the structured output when Out is a struct, else nil.
func (f *Func[Args, Out]) OutputSchema() json.RawMessage { return f.outSchema }

// Call validates args, decodes them into Args and runs the function.
func (f *Func[Args, Out]) Call(ctx context.Context, args json.RawMessage) (*Result, error) {
	run, err := f.prepare(args)
	if err != nil {
		return nil, err
	}
	return run(ctx)
}

// prepare checks and decodes args, and returns the call of the function with them. The
// executor prepares a call where it runs, and runs only the function on a goroutine of its own
// (which it may abandon at the tool's timeout): checking arguments cannot hang.
func (f *Func[Args, Out]) prepare(args json.RawMessage) (func(context.Context) (*Result, error), error) {
	instance, raw, err := f.schema.validate(f.spec.Name, args)
	if err != nil {
		return nil, err
	}
	a, err := f.decode(instance, raw)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (*Result, error) {
		out, err := f.fn(ctx, a)
		if err != nil {
			return nil, err
		}
		return toResult(out)
	}, nil
}

// decode turns validated arguments into Args: from the decoded instance when assign can, from
// the text by encoding/json otherwise.
func (f *Func[Args, Out]) decode(instance any, raw json.RawMessage) (Args, error) {
	var a Args
	if f.defaults != nil {
		if err := json.Unmarshal(f.defaults, &a); err != nil {
			return a, fmt.Errorf("tool: applying defaults of %q: %w", f.spec.Name, err)
		}
	}
	if f.assign && assign(reflect.ValueOf(&a).Elem(), instance) {
		return a, nil
	}
	if f.assign { // start again from the defaults: assign may have written part of a
		a = *new(Args)
		if f.defaults != nil {
			_ = json.Unmarshal(f.defaults, &a)
		}
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		// JSON Schema calls 2.0 an integer but encoding/json will not put it in an int: write such
		// numbers as integers and try once more.
		fixed, ok := integralNumbers(raw)
		if !ok || json.Unmarshal(fixed, &a) != nil {
			// The schema accepted the value but Go cannot hold it, for example 300 for an int8.
			return a, &ArgumentError{Tool: f.spec.Name, Problems: []Problem{{Message: decodeProblem(err)}}}
		}
	}
	return a, nil
}

// integralNumbers rewrites numbers such as 2.0 or 1e3 that have no fractional part as integer
// literals. It reports false when there was nothing to rewrite.
func integralNumbers(raw []byte) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	changed := false
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case json.Number:
			if _, err := x.Int64(); err == nil {
				return x
			}
			if f, err := x.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
				changed = true
				return json.Number(strconv.FormatInt(int64(f), 10))
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case map[string]any:
			for k := range x {
				x[k] = walk(x[k])
			}
		}
		return v
	}
	v = walk(v)
	if !changed {
		return nil, false
	}
	b, err := json.Marshal(v)
	return b, err == nil
}

func decodeProblem(err error) string {
	if ute, ok := err.(*json.UnmarshalTypeError); ok {
		return fmt.Sprintf("%s: value %s does not fit a Go %v", ute.Field, ute.Value, ute.Type)
	}
	return err.Error()
}

func toResult(out any) (*Result, error) {
	switch o := out.(type) {
	case *Result:
		if o == nil {
			return &Result{}, nil
		}
		return o, nil
	case Result:
		return &o, nil
	case string:
		return &Result{Content: o}, nil
	case nil:
		return &Result{}, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("tool: cannot encode the result as JSON: %w", err)
	}
	return &Result{Structured: b}, nil
}

func outputSchema[Out any]() json.RawMessage {
	t := reflect.TypeFor[Out]()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == reflect.TypeFor[Result]() {
		return nil
	}
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{IgnoreInvalidTypes: true})
	if err != nil {
		return nil
	}
	if _, err := applyTags(t, s, false); err != nil {
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil
	}
	return b
}

// applyTags refines the inferred schema s of struct type t with the tags New documents. With top
// set it also gathers default values, which only top-level fields may have.
func applyTags(t reflect.Type, s *jsonschema.Schema, top bool) (map[string]any, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || s == nil || s.Properties == nil {
		return nil, nil
	}
	var defaults map[string]any
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() {
			continue
		}
		name, skip := jsonName(f)
		if skip {
			continue
		}
		ps := s.Properties[name]
		if ps == nil {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		// Value constraints on a slice apply to its elements.
		target, vt := ps, ft
		if (ft.Kind() == reflect.Slice || ft.Kind() == reflect.Array) && ft.Elem().Kind() != reflect.Uint8 && ps.Items != nil {
			target, vt = ps.Items, ft.Elem()
			for vt.Kind() == reflect.Pointer {
				vt = vt.Elem()
			}
		}
		where := t.Name() + "." + f.Name
		if tag, ok := f.Tag.Lookup("enum"); ok {
			var vals []any
			for _, p := range strings.Split(tag, ",") {
				v, err := parseScalar(strings.TrimSpace(p), vt)
				if err != nil {
					return nil, fmt.Errorf("field %s: enum value: %v", where, err)
				}
				vals = append(vals, v)
			}
			if slices.Contains(target.Types, "null") {
				vals = append(vals, nil)
			}
			target.Enum = vals
		}
		for _, bound := range []struct {
			key string
			dst **float64
		}{{"minimum", &target.Minimum}, {"maximum", &target.Maximum}} {
			if tag, ok := f.Tag.Lookup(bound.key); ok {
				n, err := strconv.ParseFloat(tag, 64)
				if err != nil {
					return nil, fmt.Errorf("field %s: %s %q is not a number", where, bound.key, tag)
				}
				*bound.dst = &n
			}
		}
		if tag, ok := f.Tag.Lookup("pattern"); ok {
			if _, err := regexp.Compile(tag); err != nil {
				return nil, fmt.Errorf("field %s: pattern: %v", where, err)
			}
			target.Pattern = tag
		}
		if tag, ok := f.Tag.Lookup("format"); ok {
			target.Format = tag
		}
		if tag, ok := f.Tag.Lookup("default"); ok {
			if !top {
				return nil, fmt.Errorf("field %s: default is only supported on top-level arguments", where)
			}
			v, err := parseDefault(tag, ft)
			if err != nil {
				return nil, fmt.Errorf("field %s: default: %v", where, err)
			}
			b, _ := json.Marshal(v)
			ps.Default = b
			s.Required = slices.DeleteFunc(s.Required, func(r string) bool { return r == name })
			if defaults == nil {
				defaults = map[string]any{}
			}
			defaults[name] = v
		}
		// Nested structs, directly or as slice elements, have tags of their own.
		if ft.Kind() == reflect.Struct {
			if _, err := applyTags(ft, ps, false); err != nil {
				return nil, err
			}
		} else if (ft.Kind() == reflect.Slice || ft.Kind() == reflect.Array) && ps.Items != nil {
			if _, err := applyTags(ft.Elem(), ps.Items, false); err != nil {
				return nil, err
			}
		}
	}
	return defaults, nil
}

// jsonName returns the JSON name of a struct field, and whether encoding/json skips it (tagged "-",
// or an embedded struct whose fields are promoted).
func jsonName(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", true
	}
	name, _, _ := strings.Cut(tag, ",")
	if f.Anonymous && name == "" {
		return "", true
	}
	if name == "" {
		name = f.Name
	}
	return name, false
}

func parseScalar(s string, t reflect.Type) (any, error) {
	switch t.Kind() {
	case reflect.String:
		return s, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", s)
		}
		return float64(n), nil
	case reflect.Float32, reflect.Float64:
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return n, nil
	}
	return nil, fmt.Errorf("enum is supported on strings and numbers, not %v", t)
}

func parseDefault(s string, t reflect.Type) (any, error) {
	switch t.Kind() {
	case reflect.String:
		return s, nil
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not a boolean", s)
		}
		return b, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return parseScalar(s, t)
	}
	// Anything else is given as JSON.
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, fmt.Errorf("%q is not JSON: %v", s, err)
	}
	return v, nil
}
