package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/trellis-go/trellis/internal/fastjson"
)

// Schema is a compiled JSON Schema for a tool's arguments. It validates raw arguments and explains
// what is wrong in words a model can act on. The zero value is not usable; see [CompileSchema].
// A Schema is safe for concurrent use.
type Schema struct {
	raw      json.RawMessage
	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved
	quick    *quickCheck // nil when the schema needs the library for every value
}

// CompileSchema parses and resolves a JSON Schema (draft 2020-12, or draft-07 as MCP servers built
// with zod often send). It returns an error when the schema is not JSON or cannot be resolved, for
// example because it refers to a remote document.
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("tool: parameters schema is not valid JSON Schema: %w", err)
	}
	return compile(&s)
}

func compile(s *jsonschema.Schema) (*Schema, error) {
	r, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("tool: cannot resolve parameters schema: %w", err)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("tool: cannot encode parameters schema: %w", err)
	}
	return &Schema{raw: raw, schema: s, resolved: r, quick: compileQuick(s)}, nil
}

// JSON returns the schema as JSON.
func (s *Schema) JSON() json.RawMessage { return s.raw }

// Validate checks raw arguments against the schema. It returns the arguments normalised (see
// [NormalizeArguments]) and, when they do not match, an [*ArgumentError] that lists each problem
// with the argument's path and what was expected. toolName only labels the error.
func (s *Schema) Validate(toolName string, raw json.RawMessage) (json.RawMessage, error) {
	_, raw, err := s.validate(toolName, raw)
	return raw, err
}

// validate is Validate that also returns the arguments decoded.
func (s *Schema) validate(toolName string, raw json.RawMessage) (any, json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		// Not the usual object: normalise it (the decoding below checks an object's syntax
		// anyway, so the common case skips a separate validity pass).
		var err error
		if raw, err = NormalizeArguments(toolName, raw); err != nil {
			return nil, nil, err
		}
	}
	instance, ok := fastjson.Parse(raw)
	if !ok {
		instance = nil
		if err := json.Unmarshal(raw, &instance); err != nil {
			return nil, nil, invalidJSON(toolName, raw, err)
		}
	}
	if s.quick != nil && s.quick.valid(instance) {
		return instance, raw, nil
	}
	if err := s.resolved.Validate(instance); err != nil {
		var problems []Problem
		explain("", s.schema, instance, &problems)
		if len(problems) == 0 {
			problems = []Problem{{Message: cleanLibraryMessage(err.Error())}}
		}
		return nil, nil, &ArgumentError{Tool: toolName, Problems: problems}
	}
	return instance, raw, nil
}

func invalidJSON(toolName string, raw json.RawMessage, err error) error {
	if _, nerr := NormalizeArguments(toolName, raw); nerr != nil {
		return nerr // its message quotes the arguments
	}
	return &ArgumentError{Tool: toolName, Problems: []Problem{{Message: "arguments are not valid JSON: " + err.Error()}}}
}

// NormalizeArguments turns what models commonly send into a JSON object, or explains why it cannot:
// empty input and null become {}, and an object encoded a second time as a JSON string (a habit of
// some models) is decoded once. Anything else that is not an object is an [*ArgumentError].
func NormalizeArguments(toolName string, raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}"), nil
	}
	if raw[0] == '"' {
		var inner string
		if err := json.Unmarshal(raw, &inner); err == nil {
			t := bytes.TrimSpace([]byte(inner))
			if len(t) > 0 && t[0] == '{' && json.Valid(t) {
				raw = t
			}
		}
	}
	if !json.Valid(raw) {
		var v any
		err := json.Unmarshal(raw, &v)
		return nil, &ArgumentError{Tool: toolName, Problems: []Problem{{
			Message: fmt.Sprintf("arguments are not valid JSON (%v): %s", err, truncate(string(raw), 80)),
		}}}
	}
	if raw[0] != '{' {
		var v any
		_ = json.Unmarshal(raw, &v)
		return nil, &ArgumentError{Tool: toolName, Problems: []Problem{{
			Message: fmt.Sprintf("arguments must be a JSON object of named arguments, got %s %s", jsonTypeOf(v), truncate(string(raw), 40)),
		}}}
	}
	return raw, nil
}

// ArgumentError says which arguments of a call were wrong and how. Its message is meant for the
// model, which can fix its call and try again.
type ArgumentError struct {
	Tool     string
	Problems []Problem
}

// Problem is one thing wrong with a call's arguments. Path names the argument ("city",
// "address.zip", "stops[2]"); it is empty for the arguments as a whole.
type Problem struct {
	Path    string
	Message string
}

func (e *ArgumentError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tool: invalid arguments for %q: ", e.Tool)
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		if p.Path != "" {
			b.WriteString(p.Path)
			b.WriteString(": ")
		}
		b.WriteString(p.Message)
	}
	b.WriteString(". Correct the arguments to match the tool's parameters schema and call it again.")
	return b.String()
}

// Unwrap makes errors.Is(err, ErrInvalidArguments) true.
func (e *ArgumentError) Unwrap() error { return ErrInvalidArguments }

const maxProblems = 8

// explain walks the schema beside the instance and records, for the keywords that models most
// often get wrong, a problem a model can act on. The schema library stays the judge of validity;
// explain only words the answer.
func explain(path string, s *jsonschema.Schema, v any, out *[]Problem) {
	if s == nil || len(*out) >= maxProblems {
		return
	}
	add := func(p, format string, args ...any) {
		*out = append(*out, Problem{Path: p, Message: fmt.Sprintf(format, args...)})
	}
	if s.Not != nil && isEmptySchema(s.Not) {
		add(path, "no value is allowed here")
		return
	}
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	got := jsonTypeOf(v)
	if len(types) > 0 && !typeAllowed(got, types) {
		add(path, "expected %s, got %s %s", describeType(types, s), got, short(v))
		return
	}
	if s.Const != nil && !jsonschema.Equal(v, *s.Const) {
		add(path, "must be exactly %s, got %s", short(*s.Const), short(v))
		return
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return jsonschema.Equal(v, e) }) {
		add(path, "must be one of %s, got %s", listValues(s.Enum), short(v))
		return
	}
	switch v := v.(type) {
	case float64:
		switch {
		case s.Minimum != nil && v < *s.Minimum:
			add(path, "must be at least %v, got %v", *s.Minimum, v)
		case s.Maximum != nil && v > *s.Maximum:
			add(path, "must be at most %v, got %v", *s.Maximum, v)
		case s.ExclusiveMinimum != nil && v <= *s.ExclusiveMinimum:
			add(path, "must be greater than %v, got %v", *s.ExclusiveMinimum, v)
		case s.ExclusiveMaximum != nil && v >= *s.ExclusiveMaximum:
			add(path, "must be less than %v, got %v", *s.ExclusiveMaximum, v)
		}
	case string:
		n := utf8.RuneCountInString(v)
		switch {
		case s.MinLength != nil && n < *s.MinLength:
			add(path, "must be at least %d characters long, got %d", *s.MinLength, n)
		case s.MaxLength != nil && n > *s.MaxLength:
			add(path, "must be at most %d characters long, got %d", *s.MaxLength, n)
		case s.Pattern != "":
			if re, err := regexp.Compile(s.Pattern); err == nil && !re.MatchString(v) {
				add(path, "must match the pattern %s, got %s", s.Pattern, short(v))
			}
		}
	case []any:
		switch {
		case s.MinItems != nil && len(v) < *s.MinItems:
			add(path, "must have at least %d items, got %d", *s.MinItems, len(v))
		case s.MaxItems != nil && len(v) > *s.MaxItems:
			add(path, "must have at most %d items, got %d", *s.MaxItems, len(v))
		}
		for i, item := range v {
			is := s.Items
			if i < len(s.PrefixItems) {
				is = s.PrefixItems[i]
			}
			explain(fmt.Sprintf("%s[%d]", path, i), is, item, out)
		}
	case map[string]any:
		for _, name := range s.Required {
			if _, ok := v[name]; !ok {
				want := "a value"
				if ps := s.Properties[name]; ps != nil {
					want = describeProperty(ps)
				}
				add(join(path, name), "missing required argument; expected %s", want)
			}
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if ps, ok := s.Properties[k]; ok {
				explain(join(path, k), ps, v[k], out)
				continue
			}
			if matchesPatternProperty(s, k) {
				continue
			}
			if ap := s.AdditionalProperties; ap != nil {
				if ap.Not != nil && isEmptySchema(ap.Not) {
					add(join(path, k), "unknown argument; the known arguments are %s", knownNames(s))
					continue
				}
				explain(join(path, k), ap, v[k], out)
			}
		}
	}
	for _, sub := range s.AllOf {
		explain(path, sub, v, out)
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func matchesPatternProperty(s *jsonschema.Schema, k string) bool {
	for p := range s.PatternProperties {
		if re, err := regexp.Compile(p); err == nil && re.MatchString(k) {
			return true
		}
	}
	return false
}

func knownNames(s *jsonschema.Schema) string {
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func isEmptySchema(s *jsonschema.Schema) bool {
	b, err := json.Marshal(s)
	return err == nil && (string(b) == "{}" || string(b) == "true")
}

func typeAllowed(got string, types []string) bool {
	for _, t := range types {
		if t == got || t == "number" && got == "integer" {
			return true
		}
	}
	return false
}

func describeType(types []string, s *jsonschema.Schema) string {
	var ts []string
	for _, t := range types {
		if t == "null" && len(types) > 1 {
			continue
		}
		switch t {
		case "integer", "array", "object":
			ts = append(ts, "an "+t)
		default:
			ts = append(ts, "a "+t)
		}
	}
	d := strings.Join(ts, " or ")
	if len(s.Enum) > 0 {
		d += " (one of " + listValues(s.Enum) + ")"
	}
	return d
}

func describeProperty(s *jsonschema.Schema) string {
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	d := "a value"
	if len(types) > 0 {
		d = describeType(types, s)
	} else if len(s.Enum) > 0 {
		d = "one of " + listValues(s.Enum)
	}
	if s.Description != "" {
		d += ": " + s.Description
	}
	return d
}

func listValues(vs []any) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = short(v)
	}
	return strings.Join(parts, ", ")
}

func jsonTypeOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if _, f := math.Modf(v); f == 0 {
			return "integer"
		}
		return "number"
	case json.Number:
		if _, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return reflect.TypeOf(v).String()
}

func short(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return truncate(string(b), 40)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

var libraryPrefix = regexp.MustCompile(`^(validating [^:]*: )+`)

func cleanLibraryMessage(s string) string {
	return libraryPrefix.ReplaceAllString(s, "")
}
