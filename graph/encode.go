package graph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"sync"
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
	// buf is where encodings are appended. Bytes once written are never written again (a
	// buffer that is full is replaced, not reused), so memo and the blobs can point into it.
	buf  []byte
	memo map[memoKey][]byte
	// sizes remembers the encoded size of maps and lists, so that the buffer can be sized once.
	sizes map[memoKey]int
}

type memoKey struct {
	ptr   unsafe.Pointer
	n     int
	isMap bool
}

// memoMin is the smallest encoding worth remembering.
const memoMin = 128

// marshal returns v's encoding. The result stays valid after later calls: they never write over
// what was returned.
func (e *blobEncoder) marshal(v any) ([]byte, error) {
	switch v.(type) {
	case []any, map[string]any:
	default:
		return marshalPooled(v)
	}
	if n, ok := e.size(v); ok && cap(e.buf)-len(e.buf) < n {
		// A fresh buffer of the exact size: the old one stays as it is, for what points into it.
		e.buf = make([]byte, 0, max(n, 64<<10))
	}
	start := len(e.buf)
	out, err := e.appendValue(e.buf, v)
	if err != nil {
		e.buf = nil // never reuse bytes that memo may point to
		return nil, err
	}
	e.buf = out
	return out[start:len(out):len(out)], nil
}

// encodeBuffers holds scratch buffers for encoding/json: a large value is encoded into memory
// that is already in use rather than into a buffer grown from nothing, then copied out once.
var encodeBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuffer bounds the scratch buffers kept for reuse.
const maxPooledBuffer = 64 << 20

func marshalPooled(v any) ([]byte, error) {
	buf := encodeBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBuffer {
			buf.Reset()
			encodeBuffers.Put(buf)
		}
	}()
	buf.Reset()
	enc := json.NewEncoder(buf)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	data = data[:len(data)-1] // Encode ends with a newline
	return append(make([]byte, 0, len(data)), data...), nil
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
		if enc, ok := e.memo[key]; ok {
			return append(b, enc...), nil
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
		e.remember(key, b[start:len(b):len(b)])
		return b, nil
	case map[string]any:
		if x == nil {
			return append(b, "null"...), nil
		}
		if len(x) == 0 {
			return append(b, "{}"...), nil
		}
		key := memoKey{ptr: reflect.ValueOf(x).UnsafePointer(), n: len(x), isMap: true}
		if enc, ok := e.memo[key]; ok {
			return append(b, enc...), nil
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
		e.remember(key, b[start:len(b):len(b)])
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

// size returns the length of v's encoding, or false when it cannot tell without encoding (a
// value of another type than the dynamic JSON ones, or a number JSON cannot hold).
func (e *blobEncoder) size(v any) (int, bool) {
	switch x := v.(type) {
	case nil:
		return 4, true
	case bool:
		if x {
			return 4, true
		}
		return 5, true
	case string:
		return jsonStringLen(x), true
	case float64:
		var buf [32]byte
		b, err := appendFloat(buf[:0], x)
		return len(b), err == nil
	case int:
		var buf [24]byte
		return len(strconv.AppendInt(buf[:0], int64(x), 10)), true
	case []any:
		if x == nil {
			return 4, true
		}
		if len(x) == 0 {
			return 2, true
		}
		key := memoKey{ptr: unsafe.Pointer(unsafe.SliceData(x)), n: len(x)}
		if n, ok := e.sizes[key]; ok {
			return n, true
		}
		n := 1 + len(x) // brackets and commas
		for _, el := range x {
			m, ok := e.size(el)
			if !ok {
				return 0, false
			}
			n += m
		}
		e.rememberSize(key, n)
		return n, true
	case map[string]any:
		if x == nil {
			return 4, true
		}
		if len(x) == 0 {
			return 2, true
		}
		key := memoKey{ptr: reflect.ValueOf(x).UnsafePointer(), n: len(x), isMap: true}
		if n, ok := e.sizes[key]; ok {
			return n, true
		}
		n := 1 + 2*len(x) // braces, colons and commas
		for k, el := range x {
			m, ok := e.size(el)
			if !ok {
				return 0, false
			}
			n += jsonStringLen(k) + m
		}
		e.rememberSize(key, n)
		return n, true
	}
	return 0, false
}

func (e *blobEncoder) rememberSize(key memoKey, n int) {
	if n < memoMin {
		return
	}
	if e.sizes == nil {
		e.sizes = map[memoKey]int{}
	}
	e.sizes[key] = n
}

// jsonStringLen is the length of appendJSONString's encoding of s.
func jsonStringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 6
		case r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

func (e *blobEncoder) remember(key memoKey, enc []byte) {
	if len(enc) < memoMin {
		return
	}
	if e.memo == nil {
		e.memo = map[memoKey][]byte{}
	}
	e.memo[key] = enc
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
