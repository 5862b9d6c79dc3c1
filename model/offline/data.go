package offline

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/trellis-go/trellis/fold"
	"github.com/trellis-go/trellis/message"
)

// Structured output draws on data as well as words: the JSON of the tool results since the
// user's last message (newest first) and any JSON object the user pasted. A property not found
// in the user's words takes the value of the same-named key in that data (case, "_" and "-"
// ignored, found at any depth), converted to the property's type. With Request.Schema every
// required property is then filled, with a plausible default when neither words nor data give
// one, so the answer always validates.

// dataFrom decodes the JSON values the structured answer may read.
func dataFrom(msgs []message.Message) []any {
	var out []any
	add := func(text string) {
		text = strings.TrimSpace(text)
		if text == "" || (text[0] != '{' && text[0] != '[') {
			if i := strings.IndexAny(text, "{["); i > 0 {
				text = text[i:]
			} else {
				return
			}
		}
		var v any
		if json.Unmarshal([]byte(text), &v) == nil {
			out = append(out, v)
		}
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role == message.RoleUser {
			add(m.Text())
			break
		}
		if m.Role == message.RoleTool && !m.IsError {
			add(m.Text())
		}
	}
	return out
}

func normKey(s string) string {
	return strings.Join(words(s), "")
}

// findKey looks for key (normalised) in v at any depth, breadth first.
func findKey(v any, key string) (any, bool) {
	level := []any{v}
	for depth := 0; depth < 6 && len(level) > 0; depth++ {
		var next []any
		for _, x := range level {
			switch t := x.(type) {
			case map[string]any:
				for k, val := range t {
					if nk := normKey(k); nk == key || nk+"s" == key || nk == key+"s" {
						return val, true
					}
				}
				for _, val := range t {
					next = append(next, val)
				}
			case []any:
				next = append(next, t...)
			}
		}
		level = next
	}
	return nil, false
}

// fromData fills a property from the data, converted to its schema.
func (f *filler) fromData(name string, s map[string]any) (any, bool) {
	key := normKey(name)
	if key == "" {
		return nil, false
	}
	for _, d := range f.data {
		if v, ok := findKey(d, key); ok {
			if c, ok := f.coerce(v, s); ok {
				return c, true
			}
		}
	}
	return nil, false
}

// coerce converts a JSON value from the data to what schema s takes; ok is false when it cannot.
func (f *filler) coerce(v any, s map[string]any) (any, bool) {
	s = f.deref(s)
	if v == nil {
		_, nullable := schemaType(s)
		return nil, nullable
	}
	if enum := asSlice(s["enum"]); len(enum) > 0 {
		str := strings.Join(words(toString(v)), " ")
		for _, e := range enum {
			if es, ok := e.(string); ok && strings.Join(words(es), " ") == str {
				return e, true
			}
			if en, ok := e.(float64); ok {
				if n, ok := v.(float64); ok && n == en {
					return e, true
				}
			}
		}
		for _, e := range enum {
			if es, ok := e.(string); ok && closeName(words(toString(v)), strings.Join(words(es), " ")) {
				return e, true
			}
		}
		return nil, false
	}
	typ, _ := schemaType(s)
	switch typ {
	case "string":
		str := toString(v)
		if _, isObj := v.(map[string]any); isObj {
			return nil, false
		}
		if _, isArr := v.([]any); isArr {
			return nil, false
		}
		if isFormat(s, "date") {
			if len(str) >= 10 {
				if _, err := time.Parse(time.DateOnly, str[:10]); err == nil {
					return str[:10], true
				}
			}
			return nil, false
		}
		if isFormat(s, "date-time") {
			if t, err := time.Parse(time.RFC3339, str); err == nil {
				return t.Format(time.RFC3339), true
			}
			if t, err := time.Parse(time.DateOnly, str); err == nil {
				return t.Format(time.RFC3339), true
			}
			return nil, false
		}
		return str, true
	case "integer", "number":
		var n float64
		switch t := v.(type) {
		case float64:
			n = t
		case string:
			x, _, ok := parseAmount(t, "")
			if !ok {
				return nil, false
			}
			n = x
		case bool:
			return nil, false
		default:
			return nil, false
		}
		if lo, ok := s["minimum"].(float64); ok && n < lo {
			return nil, false
		}
		if hi, ok := s["maximum"].(float64); ok && n > hi {
			return nil, false
		}
		if typ == "integer" {
			return int64(math.Round(n)), true
		}
		return n, true
	case "boolean":
		switch t := v.(type) {
		case bool:
			return t, true
		case string:
			switch fold.String(t) {
			case "true", "yes", "sim", "si", "oui", "ja", "1":
				return true, true
			case "false", "no", "nao", "non", "nein", "0":
				return false, true
			}
		case float64:
			return t != 0, true
		}
		return nil, false
	case "array":
		arr, ok := v.([]any)
		if !ok {
			arr = []any{v}
		}
		items, _ := s["items"].(map[string]any)
		out := []any{}
		for _, x := range arr {
			if items == nil {
				out = append(out, x)
			} else if c, ok := f.coerce(x, items); ok {
				out = append(out, c)
			}
		}
		if n, ok := s["maxItems"].(float64); ok && len(out) > int(n) {
			out = out[:int(n)]
		}
		if n, ok := s["minItems"].(float64); ok && len(out) < int(n) {
			return nil, false
		}
		if len(out) == 0 && len(arr) > 0 {
			return nil, false
		}
		return out, true
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if _, hasProps := s["properties"]; !hasProps {
			return obj, true
		}
		g := *f
		g.data = []any{obj}
		g.dataFirst = true
		o, missing := g.object(s)
		return o, len(missing) == 0
	case "":
		return v, true
	}
	return nil, false
}

func toString(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(t)
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// plausible is a value valid for s when neither the words nor the data give one: the first
// neutral enum value, today for dates, the minimum for numbers, placeholders for links and
// addresses, the user's words (within the length bounds) for free text, minItems such values
// for arrays, and every required property for objects.
func (f *filler) plausible(name string, s map[string]any) any {
	s = f.deref(s)
	if c, ok := s["const"]; ok {
		return c
	}
	if d, ok := s["default"]; ok {
		return d
	}
	if enum := asSlice(s["enum"]); len(enum) > 0 {
		for _, e := range enum {
			if str, ok := e.(string); ok && neutral[fold.String(str)] {
				return e
			}
		}
		return enum[0]
	}
	typ, nullable := schemaType(s)
	switch typ {
	case "string":
		var str string
		switch {
		case isFormat(s, "date-time"):
			return f.now.UTC().Truncate(time.Second).Format(time.RFC3339)
		case isFormat(s, "date") || isDateField(name, s):
			return f.now.Format(time.DateOnly)
		case isFormat(s, "time"):
			return f.now.UTC().Format("15:04:05Z")
		case isFormat(s, "uri", "url"):
			return "https://example.com/"
		case isFormat(s, "email"):
			return "unknown@example.com"
		case isFormat(s, "uuid"):
			return "00000000-0000-0000-0000-000000000000"
		case f.v.isIDField(name, s):
			str = "unknown"
		default:
			str = truncate(strings.TrimSpace(f.primary), 200)
			if str == "" {
				str = "unknown"
			}
		}
		if n, ok := s["maxLength"].(float64); ok && len([]rune(str)) > int(n) {
			str = string([]rune(str)[:int(n)])
		}
		if n, ok := s["minLength"].(float64); ok {
			for len([]rune(str)) < int(n) {
				str += "."
			}
		}
		return str
	case "integer", "number":
		n := 0.0
		if lo, ok := s["minimum"].(float64); ok {
			n = lo
		} else if lo, ok := s["exclusiveMinimum"].(float64); ok {
			n = math.Floor(lo) + 1
		}
		if hi, ok := s["maximum"].(float64); ok && n > hi {
			n = hi
		}
		if typ == "integer" {
			return int64(math.Ceil(n))
		}
		return n
	case "boolean":
		return false
	case "array":
		out := []any{}
		items, _ := s["items"].(map[string]any)
		if n, ok := s["minItems"].(float64); ok {
			for range int(n) {
				out = append(out, f.plausible(name, items))
			}
		}
		return out
	case "object":
		o, _ := f.object(s)
		return o
	case "null":
		return nil
	}
	if nullable {
		return nil
	}
	return truncate(f.primary, 200)
}
