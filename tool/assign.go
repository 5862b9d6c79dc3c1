package tool

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"sync"
	"unicode"
)

// Arguments are decoded once: validation needs them as plain JSON values (map[string]any, []any,
// float64, ...), and assign then moves those values into the Args struct directly, instead of
// decoding the text a second time. It does what encoding/json would do for the types tools
// usually take (structs of strings, numbers, booleans, slices, maps, pointers and nested
// structs) and reports false for anything else, or for a value it is not sure about, so that the
// caller falls back to encoding/json and its exact behaviour and errors.

// assignable reports whether assign can handle every field t may contain. Types that decode
// themselves (json.Unmarshaler, encoding.TextUnmarshaler), interfaces other than any, arrays,
// []byte (base64), embedded structs and `,string` options are left to encoding/json.
func assignable(t reflect.Type) bool {
	if ok, seen := assignableCache.Load(t); seen {
		return ok.(bool)
	}
	ok := assignableType(t, map[reflect.Type]bool{})
	assignableCache.Store(t, ok)
	return ok
}

var assignableCache sync.Map // reflect.Type -> bool

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func assignableType(t reflect.Type, visiting map[reflect.Type]bool) bool {
	if visiting[t] {
		return true // a recursive type: the outer call decides
	}
	if t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) ||
		t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return false
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	case reflect.Interface:
		return t.NumMethod() == 0
	case reflect.Pointer:
		return assignableType(t.Elem(), visiting)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return false // base64 text
		}
		return assignableType(t.Elem(), visiting)
	case reflect.Map:
		return t.Key().Kind() == reflect.String && !t.Key().Implements(textUnmarshaler) &&
			!reflect.PointerTo(t.Key()).Implements(textUnmarshaler) && assignableType(t.Elem(), visiting)
	case reflect.Struct:
		visiting[t] = true
		defer delete(visiting, t)
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous {
				return false
			}
			if !f.IsExported() {
				continue
			}
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if strings.Contains(","+opts+",", ",string,") || !plainTagName(name) {
				return false
			}
			if !assignableType(f.Type, visiting) {
				return false
			}
		}
		return true
	}
	return false
}

// structFields lists the fields encoding/json decodes into, by JSON name.
type structFields struct {
	byName map[string]int // field index
	names  []string       // by field index; "" for fields JSON ignores
}

var fieldsCache sync.Map // reflect.Type -> *structFields

func fieldsOf(t reflect.Type) *structFields {
	if f, ok := fieldsCache.Load(t); ok {
		return f.(*structFields)
	}
	sf := &structFields{byName: map[string]int{}, names: make([]string, t.NumField())}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, skip := jsonName(f)
		if skip {
			continue
		}
		if _, dup := sf.byName[name]; dup {
			// encoding/json ignores both fields of a clash at one depth; stay out of it.
			sf.byName[name] = -1
			continue
		}
		sf.byName[name] = i
		sf.names[i] = name
	}
	fieldsCache.Store(t, sf)
	return sf
}

// assign stores v, a value decoded from JSON into an interface, in dst, as json.Unmarshal of
// v's encoding would. It reports false when it cannot be sure to match encoding/json; dst may
// then be partly written.
func assign(dst reflect.Value, v any) bool {
	if v == nil {
		switch dst.Kind() {
		case reflect.Interface, reflect.Pointer, reflect.Map, reflect.Slice:
			dst.SetZero()
		}
		return true
	}
	switch dst.Kind() {
	case reflect.Interface:
		dst.Set(reflect.ValueOf(v))
		return true
	case reflect.Pointer:
		if dst.IsNil() {
			dst.Set(reflect.New(dst.Type().Elem()))
		}
		return assign(dst.Elem(), v)
	}
	switch x := v.(type) {
	case bool:
		if dst.Kind() != reflect.Bool {
			return false
		}
		dst.SetBool(x)
	case string:
		if dst.Kind() != reflect.String {
			return false
		}
		dst.SetString(x)
	case float64:
		return assignNumber(dst, x)
	case []any:
		if dst.Kind() != reflect.Slice {
			return false
		}
		s := reflect.MakeSlice(dst.Type(), len(x), len(x))
		for i, el := range x {
			if !assign(s.Index(i), el) {
				return false
			}
		}
		dst.Set(s)
	case map[string]any:
		switch dst.Kind() {
		case reflect.Map:
			if dst.IsNil() {
				dst.Set(reflect.MakeMapWithSize(dst.Type(), len(x)))
			}
			et, kt := dst.Type().Elem(), dst.Type().Key()
			for k, el := range x {
				ev := reflect.New(et).Elem()
				if !assign(ev, el) {
					return false
				}
				dst.SetMapIndex(reflect.ValueOf(k).Convert(kt), ev)
			}
		case reflect.Struct:
			return assignStruct(dst, x)
		default:
			return false
		}
	default:
		return false
	}
	return true
}

func assignStruct(dst reflect.Value, obj map[string]any) bool {
	fields := fieldsOf(dst.Type())
	var set []bool
	for k, el := range obj {
		i, ok := fields.byName[k]
		if !ok {
			// encoding/json also takes a key that matches a name but for case. Two keys
			// for one field then depend on their order in the text, which a map has lost.
			i = -1
			for j, name := range fields.names {
				if name != "" && strings.EqualFold(name, k) {
					i = j
					break
				}
			}
			if i < 0 {
				continue // unknown keys are ignored, as encoding/json does
			}
		}
		if i < 0 {
			return false
		}
		if set == nil {
			set = make([]bool, dst.NumField())
		}
		if set[i] {
			return false
		}
		set[i] = true
		if !assign(dst.Field(i), el) {
			return false
		}
	}
	return true
}

// assignNumber stores f in an integer or float field. Integers must be whole and in range;
// JSON Schema calls 2.0 an integer, and so does this, as the encoding/json fallback does after
// rewriting such numbers. Integers beyond 2^53 are left to encoding/json, which reads their
// digits exactly where float64 would have rounded them.
func assignNumber(dst reflect.Value, f float64) bool {
	switch dst.Kind() {
	case reflect.Float64:
		dst.SetFloat(f)
	case reflect.Float32:
		if math.Abs(f) > math.MaxFloat32 {
			return false
		}
		dst.SetFloat(f)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if f != math.Trunc(f) || math.Abs(f) >= 1<<53 || dst.OverflowInt(int64(f)) {
			return false
		}
		dst.SetInt(int64(f))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if f != math.Trunc(f) || math.Signbit(f) || f >= 1<<53 || dst.OverflowUint(uint64(f)) {
			return false
		}
		dst.SetUint(uint64(f))
	default:
		return false
	}
	return true
}

// plainTagName reports whether encoding/json takes name as it is: it falls back to the Go
// field's name for a tag name with other characters than these.
func plainTagName(name string) bool {
	for _, c := range name {
		if !strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c) && !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			return false
		}
	}
	return true
}
