package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
)

// Checks made at the door: what a request carries is refused with a 400 that says what to send
// before anything of it is stored, so that one bad value cannot break later reads of a tenant's
// data (a NUL that Postgres's jsonb refuses to compare, metadata nested deeper than SQLite's JSON
// functions go).

// MaxJSONDepth is how deeply the JSON of a request may nest (objects and lists).
const MaxJSONDepth = 64

// checkJSON walks a JSON document and refuses NUL characters in its strings and keys and nesting
// deeper than MaxJSONDepth. It names the path of the first offence.
func checkJSON(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	type frame struct {
		object bool
		key    string
		index  int
		inKey  bool // the next string of an object is a key
	}
	var stack []frame
	path := func() string {
		var b strings.Builder
		for _, f := range stack {
			if f.object {
				if f.key != "" {
					if b.Len() > 0 {
						b.WriteByte('.')
					}
					b.WriteString(f.key)
				}
			} else {
				fmt.Fprintf(&b, "[%d]", f.index)
			}
		}
		if b.Len() == 0 {
			return "(the body)"
		}
		return b.String()
	}
	// after a value, an object expects a key next and a list moves to its next index
	afterValue := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].inKey = true
			} else {
				stack[n-1].index++
			}
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return nil // json.Unmarshal reports syntax errors with their offset
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if len(stack) >= MaxJSONDepth {
					return badRequest(fmt.Sprintf("nest objects and lists at most %d deep", MaxJSONDepth), "field %q nests deeper than %d levels", path(), MaxJSONDepth)
				}
				stack = append(stack, frame{object: v == '{', inKey: v == '{'})
			case '}', ']':
				stack = stack[:len(stack)-1]
				afterValue()
			}
		case string:
			top := len(stack) - 1
			if top >= 0 && stack[top].object && stack[top].inKey {
				if strings.IndexByte(v, 0) >= 0 {
					return badRequest("remove the NUL character (\\u0000) from the key", "a key in field %q holds a NUL character", path())
				}
				stack[top].key, stack[top].inKey = v, false
				continue
			}
			if strings.IndexByte(v, 0) >= 0 {
				return badRequest("remove the NUL character (\\u0000); text may not contain it", "field %q holds a NUL character", path())
			}
			afterValue()
		default:
			afterValue()
		}
	}
}

// checkCounts refuses negative limit and offset fields of a decoded request.
func checkCounts(v any) error {
	return checkCountsValue(reflect.ValueOf(v))
}

func checkCountsValue(rv reflect.Value) error {
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return nil
	}
	t := rv.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			if err := checkCountsValue(rv.Field(i)); err != nil {
				return err
			}
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "limit" && name != "offset" {
			continue
		}
		if fv := rv.Field(i); fv.CanInt() && fv.Int() < 0 {
			return badRequest("send 0 or more (0 means the default)", "field %q is %d", name, fv.Int())
		}
	}
	return nil
}

// checkRecursionLimit refuses a config.recursion_limit that is not a whole number of at least 1.
func checkRecursionLimit(config map[string]any) error {
	raw, ok := config["recursion_limit"]
	if !ok || raw == nil {
		return nil
	}
	f, isNum := raw.(float64)
	if !isNum || f < 1 || f != float64(int64(f)) || f > 1e6 {
		return badRequest("give a whole number of supersteps from 1 to 1000000", "field \"config.recursion_limit\" is %v", quoteIfString(raw))
	}
	return nil
}

func quoteIfString(v any) any {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return v
}

// checkURL refuses NUL characters (%00) in a request's path and query: IDs and names never hold
// one, and Postgres refuses to store or compare them.
func checkURL(r *http.Request) error {
	if strings.IndexByte(r.URL.Path, 0) >= 0 {
		return badRequest("remove the NUL character (%00) from the path", "the path holds a NUL character")
	}
	for k, vs := range r.URL.Query() {
		for _, v := range vs {
			if strings.IndexByte(k, 0) >= 0 || strings.IndexByte(v, 0) >= 0 {
				return badRequest("remove the NUL character (%00) from the query", "query parameter %q holds a NUL character", strings.ReplaceAll(k, "\x00", ""))
			}
		}
	}
	return nil
}
