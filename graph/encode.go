package graph

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// blobEncoder encodes channel values for one checkpoint. Values of dynamic JSON shape
// (map[string]any, []any, and scalars behind interfaces) are encoded here rather than by
// encoding/json, and a map or list met again (the same map, or the same elements of a list) is
// encoded once: states often hold the same document in several keys, or many times in one list,
// and its encoding is then copied instead of computed again. Other values go to encoding/json.
//
// An encoder lives for one checkpoint, while no node runs, so a value cannot change between the
// first encoding and a copy.
type blobEncoder struct {
	// buf holds every encoding of the checkpoint, one after another; memo remembers where.
	buf  []byte
	memo map[memoKey][2]int
}

type memoKey struct {
	ptr   unsafe.Pointer
	n     int
	isMap bool
}

// memoMin is the smallest encoding worth remembering.
const memoMin = 128

// marshal appends v's encoding to the encoder's buffer and returns it. The result stays valid
// after later calls (they may move the buffer, but never write over what was returned).
func (e *blobEncoder) marshal(v any) ([]byte, error) {
	start := len(e.buf)
	var err error
	switch v.(type) {
	case []any, map[string]any:
		e.buf, err = e.appendValue(e.buf, v)
	default:
		var data []byte
		if data, err = json.Marshal(v); err == nil {
			e.buf = append(e.buf, data...)
		}
	}
	if err != nil {
		e.buf = e.buf[:start]
		return nil, err
	}
	return e.buf[start:len(e.buf):len(e.buf)], nil
}

func (e *blobEncoder) appendValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case string:
		return appendJSONString(b, x), nil
	case float64:
		return appendFloat(b, x)
	case float32:
		return appendFloat(b, float64(x))
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case []any:
		if x == nil {
			return append(b, "null"...), nil
		}
		if len(x) == 0 {
			return append(b, "[]"...), nil
		}
		key := memoKey{ptr: unsafe.Pointer(unsafe.SliceData(x)), n: len(x)}
		if at, ok := e.memo[key]; ok {
			return append(b, b[at[0]:at[1]]...), nil
		}
		start := len(b)
		b = append(b, '[')
		for i, el := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = e.appendValue(b, el); err != nil {
				return b, err
			}
		}
		b = append(b, ']')
		e.remember(key, start, len(b))
		return b, nil
	case map[string]any:
		if x == nil {
			return append(b, "null"...), nil
		}
		if len(x) == 0 {
			return append(b, "{}"...), nil
		}
		key := memoKey{ptr: reflect.ValueOf(x).UnsafePointer(), n: len(x), isMap: true}
		if at, ok := e.memo[key]; ok {
			return append(b, b[at[0]:at[1]]...), nil
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		start := len(b)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			var err error
			if b, err = e.appendValue(b, x[k]); err != nil {
				return b, err
			}
		}
		b = append(b, '}')
		e.remember(key, start, len(b))
		return b, nil
	}
	// Everything else, json.Number and json.RawMessage included (encoding/json checks that
	// they hold valid JSON; copying them unchecked would store a blob that cannot be read back).
	data, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, data...), nil
}

func (e *blobEncoder) remember(key memoKey, start, end int) {
	if end-start < memoMin {
		return
	}
	if e.memo == nil {
		e.memo = map[memoKey][2]int{}
	}
	e.memo[key] = [2]int{start, end}
}

func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, fmt.Errorf("unsupported value: %v (JSON has no NaN or infinity)", f)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.AppendFloat(b, f, 'f', -1, 64), nil
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64), nil
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, as encoding/json
// does; HTML characters are left as they are.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
