package store

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// Filter is a compiled search filter. The zero Filter (and a nil *Filter) matches every value.
type Filter struct {
	conds []cond
}

type cond struct {
	path    []string
	op      string
	operand any // normalized JSON: float64, string, bool, nil, []any, map[string]any
}

// Operators a filter may use. A field given a plain value means $eq.
var Operators = []string{"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists"}

// CompileFilter checks a search filter and compiles it.
//
// A filter maps field paths (dotted: "author.name") to a value, meaning equality, or to an object
// of operators: {"year": {"$gte": 2020, "$lt": 2024}, "tag": {"$in": ["a", "b"]}}. All conditions
// must hold. $gt, $gte, $lt and $lte compare numbers with numbers and strings with strings (a
// field of another type does not match); $in and $nin take an array; $exists takes a boolean;
// $ne and $nin match a missing field.
func CompileFilter(f map[string]any) (*Filter, error) {
	if len(f) == 0 {
		return nil, nil
	}
	norm, err := normalize(f)
	if err != nil {
		return nil, filterErr("cannot be encoded as JSON: "+err.Error(), "use JSON-compatible values")
	}
	fm := norm.(map[string]any)
	fields := make([]string, 0, len(fm))
	for k := range fm {
		fields = append(fields, k)
	}
	sort.Strings(fields)
	out := &Filter{}
	for _, field := range fields {
		if field == "" || strings.HasPrefix(field, "$") {
			return nil, filterErr(fmt.Sprintf("has %q where a field name belongs", field), "top-level operators such as $and/$or are not supported; list the conditions side by side, they must all hold")
		}
		path := strings.Split(field, ".")
		if slices.Contains(path, "") {
			return nil, filterErr(fmt.Sprintf("field %q has an empty path segment", field), `write paths as "a.b.c"`)
		}
		spec := fm[field]
		ops, isOps := spec.(map[string]any)
		if isOps && !hasOperatorKeys(ops) {
			isOps = false
		}
		if !isOps {
			out.conds = append(out.conds, cond{path: path, op: "$eq", operand: spec})
			continue
		}
		names := make([]string, 0, len(ops))
		for k := range ops {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, op := range names {
			operand := ops[op]
			if err := checkOperand(field, op, operand); err != nil {
				return nil, err
			}
			out.conds = append(out.conds, cond{path: path, op: op, operand: operand})
		}
	}
	return out, nil
}

func hasOperatorKeys(m map[string]any) bool {
	for k := range m {
		if strings.HasPrefix(k, "$") {
			return true
		}
	}
	return false
}

func checkOperand(field, op string, operand any) error {
	switch op {
	case "$eq", "$ne":
		return nil
	case "$gt", "$gte", "$lt", "$lte":
		switch operand.(type) {
		case float64, string:
			return nil
		}
		return filterErr(fmt.Sprintf("field %q: %s needs a number or a string, got %s", field, op, jsonType(operand)), "compare numbers with numbers and strings with strings")
	case "$in", "$nin":
		if _, ok := operand.([]any); !ok {
			return filterErr(fmt.Sprintf("field %q: %s needs an array, got %s", field, op, jsonType(operand)), `write {"$in": ["a", "b"]}`)
		}
		return nil
	case "$exists":
		if _, ok := operand.(bool); !ok {
			return filterErr(fmt.Sprintf("field %q: $exists needs true or false, got %s", field, jsonType(operand)), "")
		}
		return nil
	}
	return filterErr(fmt.Sprintf("field %q: unknown operator %q", field, op), "known operators: "+strings.Join(Operators, " "))
}

func filterErr(problem, hint string) error {
	return &InputError{Op: "search", Field: "filter", Problem: problem, Hint: hint, Kind: ErrInvalidFilter}
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// normalize round-trips v through JSON so numbers are float64 and containers are []any and
// map[string]any, as they are when read back from a database.
func normalize(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(b, &out)
	return out, err
}

// NormalizeValue returns a deep copy of v as it would read back from JSON.
func NormalizeValue(v map[string]any) (map[string]any, error) {
	n, err := normalize(v)
	if err != nil {
		return nil, err
	}
	m, _ := n.(map[string]any)
	return m, nil
}

// Match reports whether a value (as decoded from JSON) satisfies the filter.
func (f *Filter) Match(value map[string]any) bool {
	if f == nil {
		return true
	}
	for _, c := range f.conds {
		got, ok := lookup(value, c.path)
		if !c.match(got, ok) {
			return false
		}
	}
	return true
}

// Equalities returns the conditions of the form field == scalar, which a database backend may
// push down as a pre-filter. The filter must still be checked with Match.
func (f *Filter) Equalities() (paths [][]string, values []any) {
	if f == nil {
		return nil, nil
	}
	for _, c := range f.conds {
		if c.op != "$eq" {
			continue
		}
		switch c.operand.(type) {
		case string, float64, bool:
			paths = append(paths, c.path)
			values = append(values, c.operand)
		}
	}
	return paths, values
}

func lookup(v map[string]any, path []string) (any, bool) {
	var cur any = v
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = m[p]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

func (c cond) match(got any, present bool) bool {
	switch c.op {
	case "$exists":
		return present == c.operand.(bool)
	case "$eq":
		return present && reflect.DeepEqual(got, c.operand)
	case "$ne":
		return !present || !reflect.DeepEqual(got, c.operand)
	case "$in", "$nin":
		in := false
		if present {
			for _, o := range c.operand.([]any) {
				if reflect.DeepEqual(got, o) {
					in = true
					break
				}
			}
		}
		if c.op == "$in" {
			return in
		}
		return !in
	}
	if !present {
		return false
	}
	cmp, ok := compare(got, c.operand)
	if !ok {
		return false
	}
	switch c.op {
	case "$gt":
		return cmp > 0
	case "$gte":
		return cmp >= 0
	case "$lt":
		return cmp < 0
	case "$lte":
		return cmp <= 0
	}
	return false
}

func compare(a, b any) (int, bool) {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		if !ok {
			return 0, false
		}
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	case string:
		y, ok := b.(string)
		if !ok {
			return 0, false
		}
		return strings.Compare(x, y), true
	}
	return 0, false
}
