package tool

import (
	"math"
	"reflect"
	"regexp"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// quickCheck is a validator compiled from the common subset of JSON Schema that schemas inferred
// from Go types use: types, properties, required, additionalProperties, items, enums of scalars,
// bounds and patterns. It accepts decoded JSON (as [fastjson.Parse] returns it) and reports
// whether the value is valid, without allocating. It is only ever trusted to say yes: a value it
// rejects goes to the schema library, which decides and explains. A schema using any keyword
// outside the subset gets no quickCheck at all (see compileQuick).
type quickCheck struct {
	types    uint8 // bit set of jsonType; 0 allows every type
	enum     []any // scalars only
	min, max *float64
	xmin     *float64 // exclusive bounds
	xmax     *float64
	minLen   int
	maxLen   int // -1: no limit
	pattern  *regexp.Regexp
	minItems int
	maxItems int // -1: no limit
	items    *quickCheck
	props    map[string]*quickCheck
	required []string
	// extra validates properties not in props; nil allows them, and noExtra refuses them.
	extra   *quickCheck
	noExtra bool
}

type jsonType uint8

const (
	typeNull jsonType = 1 << iota
	typeBoolean
	typeInteger
	typeNumber
	typeString
	typeArray
	typeObject
)

var typeBits = map[string]jsonType{
	"null": typeNull, "boolean": typeBoolean, "integer": typeInteger, "number": typeNumber,
	"string": typeString, "array": typeArray, "object": typeObject,
}

// compileQuick returns the quick check of s, or nil when s uses anything it does not handle.
func compileQuick(s *jsonschema.Schema) *quickCheck {
	if s == nil {
		return &quickCheck{maxLen: -1, maxItems: -1}
	}
	// Clear every keyword handled here; whatever is left is a reason to leave s to the library.
	// Annotations (title, description, default, examples, ...) do not affect validity.
	rest := *s
	rest.Schema, rest.Comment, rest.Title, rest.Description = "", "", "", ""
	rest.Default, rest.Deprecated, rest.ReadOnly, rest.WriteOnly, rest.Examples = nil, false, false, false, nil
	rest.Type, rest.Types, rest.Enum = "", nil, nil
	rest.Minimum, rest.Maximum, rest.ExclusiveMinimum, rest.ExclusiveMaximum = nil, nil, nil, nil
	rest.MinLength, rest.MaxLength, rest.Pattern = nil, nil, ""
	rest.Items, rest.MinItems, rest.MaxItems = nil, nil, nil
	rest.Properties, rest.Required, rest.AdditionalProperties = nil, nil, nil
	rest.PropertyOrder = nil
	if !reflect.ValueOf(rest).IsZero() {
		return nil
	}

	q := &quickCheck{maxLen: -1, maxItems: -1}
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	for _, t := range types {
		bit, ok := typeBits[t]
		if !ok {
			return nil
		}
		q.types |= uint8(bit)
	}
	for _, e := range s.Enum {
		switch e.(type) {
		case nil, bool, float64, string:
		default:
			return nil // objects, arrays and other number types: the library compares those
		}
	}
	q.enum = s.Enum
	q.min, q.max, q.xmin, q.xmax = s.Minimum, s.Maximum, s.ExclusiveMinimum, s.ExclusiveMaximum
	if s.MinLength != nil {
		q.minLen = *s.MinLength
	}
	if s.MaxLength != nil {
		q.maxLen = *s.MaxLength
	}
	if s.Pattern != "" {
		re, err := regexp.Compile(s.Pattern)
		if err != nil {
			return nil
		}
		q.pattern = re
	}
	if s.MinItems != nil {
		q.minItems = *s.MinItems
	}
	if s.MaxItems != nil {
		q.maxItems = *s.MaxItems
	}
	if s.Items != nil {
		if q.items = compileQuick(s.Items); q.items == nil {
			return nil
		}
	}
	if len(s.Properties) > 0 {
		q.props = make(map[string]*quickCheck, len(s.Properties))
		for name, ps := range s.Properties {
			if q.props[name] = compileQuick(ps); q.props[name] == nil {
				return nil
			}
		}
	}
	q.required = s.Required
	if ap := s.AdditionalProperties; ap != nil {
		switch {
		case ap.Not != nil && reflect.ValueOf(*ap.Not).IsZero() && isOnlyNot(ap):
			q.noExtra = true // false
		default:
			if q.extra = compileQuick(ap); q.extra == nil {
				return nil
			}
		}
	}
	return q
}

// isOnlyNot reports whether s is {"not": ...} and nothing else.
func isOnlyNot(s *jsonschema.Schema) bool {
	rest := *s
	rest.Not = nil
	return reflect.ValueOf(rest).IsZero()
}

// valid reports whether v certainly satisfies the schema.
func (q *quickCheck) valid(v any) bool {
	switch v := v.(type) {
	case nil:
		return q.allows(typeNull) && q.inEnum(nil)
	case bool:
		return q.allows(typeBoolean) && q.inEnum(v)
	case float64:
		if !q.allows(typeNumber) && !(q.allows(typeInteger) && v == math.Trunc(v) && !math.IsInf(v, 0)) {
			return false
		}
		switch {
		case q.min != nil && v < *q.min, q.max != nil && v > *q.max,
			q.xmin != nil && v <= *q.xmin, q.xmax != nil && v >= *q.xmax:
			return false
		}
		return q.inEnum(v)
	case string:
		if !q.allows(typeString) {
			return false
		}
		if q.minLen > 0 || q.maxLen >= 0 {
			n := utf8.RuneCountInString(v)
			if n < q.minLen || (q.maxLen >= 0 && n > q.maxLen) {
				return false
			}
		}
		if q.pattern != nil && !q.pattern.MatchString(v) {
			return false
		}
		return q.inEnum(v)
	case []any:
		if !q.allows(typeArray) || len(q.enum) > 0 || len(v) < q.minItems || (q.maxItems >= 0 && len(v) > q.maxItems) {
			return false
		}
		if q.items != nil {
			for _, item := range v {
				if !q.items.valid(item) {
					return false
				}
			}
		}
		return true
	case map[string]any:
		if !q.allows(typeObject) || len(q.enum) > 0 {
			return false
		}
		for _, name := range q.required {
			if _, ok := v[name]; !ok {
				return false
			}
		}
		for k, val := range v {
			if ps, ok := q.props[k]; ok {
				if !ps.valid(val) {
					return false
				}
				continue
			}
			if q.noExtra || (q.extra != nil && !q.extra.valid(val)) {
				return false
			}
		}
		return true
	}
	return false // not decoded JSON: let the library say what it is
}

func (q *quickCheck) allows(t jsonType) bool { return q.types == 0 || q.types&uint8(t) != 0 }

func (q *quickCheck) inEnum(v any) bool {
	if len(q.enum) == 0 {
		return true
	}
	for _, e := range q.enum {
		if e == v {
			return true
		}
	}
	return false
}
