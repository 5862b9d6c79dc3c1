// Package fastjson reads JSON in one pass, for the two places where trellis reads much of it on
// every call: tool arguments, decoded on every tool call (models often send long strings in
// them), and the raw JSON inside messages, checked each time a conversation is checkpointed.
// Runs of plain ASCII in strings are skipped eight bytes at a time. Anything unusual is left to
// encoding/json: both functions answer "not sure" rather than differ from it.
package fastjson

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// Parse decodes data as json.Unmarshal into an interface{} would (map[string]any, []any,
// string, float64, bool and nil), in one pass over the text instead of encoding/json's two (it
// checks the whole text first, then decodes it). It reports false for anything it does not
// handle itself, invalid JSON included: the caller then asks encoding/json, for the value or for
// its error message.
func Parse(data []byte) (any, bool) {
	p := parser{data: data}
	v, ok := p.value()
	if !ok {
		return nil, false
	}
	p.space()
	return v, p.i == len(p.data)
}

// Compact reports whether data is valid JSON with no space between its tokens, so that it can
// be copied where json.Compact would copy it. False means invalid, not compact, or not sure: use
// json.Compact.
func Compact(data []byte) bool {
	p := parser{data: data, check: true}
	if _, ok := p.value(); !ok {
		return false
	}
	return p.i == len(p.data) && !p.spaced
}

type parser struct {
	data  []byte
	i     int
	depth int
	// check only validates: no values are built, and spaced records whether any whitespace
	// was met between tokens.
	check, spaced bool
}

// maxParseDepth is where Parse leaves nesting to encoding/json, which has a limit of its own.
const maxParseDepth = 1000

func (p *parser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
			p.spaced = true
		default:
			return
		}
	}
}

func (p *parser) value() (any, bool) {
	p.space()
	if p.i >= len(p.data) {
		return nil, false
	}
	switch c := p.data[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.string()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return nil, false
}

func (p *parser) literal(word string) bool {
	if len(p.data)-p.i < len(word) || string(p.data[p.i:p.i+len(word)]) != word {
		return false
	}
	p.i += len(word)
	return true
}

func (p *parser) object() (any, bool) {
	if p.depth++; p.depth > maxParseDepth {
		return nil, false
	}
	defer func() { p.depth-- }()
	p.i++ // {
	var m map[string]any
	if !p.check {
		m = map[string]any{}
	}
	p.space()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return m, true
	}
	for {
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return nil, false
		}
		k, ok := p.string()
		if !ok {
			return nil, false
		}
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return nil, false
		}
		p.i++
		v, ok := p.value()
		if !ok {
			return nil, false
		}
		if !p.check {
			m[k.(string)] = v
		}
		p.space()
		if p.i >= len(p.data) {
			return nil, false
		}
		switch p.data[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return m, true
		default:
			return nil, false
		}
	}
}

func (p *parser) array() (any, bool) {
	if p.depth++; p.depth > maxParseDepth {
		return nil, false
	}
	defer func() { p.depth-- }()
	p.i++ // [
	var list []any
	if !p.check {
		list = []any{}
	}
	p.space()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return list, true
	}
	for {
		v, ok := p.value()
		if !ok {
			return nil, false
		}
		if !p.check {
			list = append(list, v)
		}
		p.space()
		if p.i >= len(p.data) {
			return nil, false
		}
		switch p.data[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return list, true
		default:
			return nil, false
		}
	}
}

// string decodes a string at p.i. Text without escapes is copied as it is (after checking that
// it is UTF-8, as encoding/json keeps valid UTF-8 unchanged); a string with escapes goes to
// encoding/json, whose rules for odd escapes and broken surrogates then apply exactly.
func (p *parser) string() (any, bool) {
	start := p.i + 1
	i := start
	ascii := true
	for {
		i += PlainRun(p.data[i:])
		if i >= len(p.data) {
			return nil, false
		}
		c := p.data[i]
		switch {
		case c == '"':
			p.i = i + 1
			if p.check {
				return nil, true // encoding/json's scanner takes any bytes above 0x1F
			}
			text := p.data[start:i]
			if !ascii && !utf8.Valid(text) {
				return p.slowString(start-1, i+1)
			}
			return string(text), true
		case c == '\\':
			if p.check {
				n := escapeLen(p.data[i:])
				if n == 0 {
					return nil, false
				}
				i += n
				continue
			}
			end, ok := stringEnd(p.data, i)
			if !ok {
				return nil, false
			}
			p.i = end
			return p.slowString(start-1, end)
		case c < 0x20:
			return nil, false
		case c >= 0x80:
			ascii = false
		}
		i++
	}
}

// escapeLen is the length of the valid escape sequence b starts with, or 0.
func escapeLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(b) < 6 {
			return 0
		}
		for _, h := range b[2:6] {
			if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
				return 0
			}
		}
		return 6
	}
	return 0
}

// stringEnd returns the index just past the closing quote of the string containing i.
func stringEnd(data []byte, i int) (int, bool) {
	for i < len(data) {
		switch data[i] {
		case '\\':
			i += 2
		case '"':
			return i + 1, true
		default:
			i++
		}
	}
	return 0, false
}

func (p *parser) slowString(from, to int) (any, bool) {
	var s string
	if json.Unmarshal(p.data[from:to], &s) != nil {
		return nil, false
	}
	return s, true
}

func (p *parser) number() (any, bool) {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.data) && p.data[p.i] >= '0' && p.data[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.data[p.i] == '-' {
		p.i++
	}
	if p.i < len(p.data) && p.data[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return nil, false
	}
	if p.i < len(p.data) && p.data[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, false
		}
	}
	if p.i < len(p.data) && (p.data[p.i] == 'e' || p.data[p.i] == 'E') {
		p.i++
		if p.i < len(p.data) && (p.data[p.i] == '+' || p.data[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	if p.check {
		return nil, true
	}
	f, err := strconv.ParseFloat(string(p.data[start:p.i]), 64)
	if err != nil {
		return nil, false // out of range: encoding/json says so
	}
	return f, true
}

// Plain8 reports whether the first eight bytes of b are ASCII that a JSON string holds as they
// are (no control character, quote or backslash), testing all eight at once.
func Plain8[T ~string | ~[]byte](b T) bool { return notPlain(load8(b)) == 0 }

// PlainRun returns the length of the longest prefix of b made of whole eight-byte blocks that
// are plain (see [Plain8]). It tests 32 bytes at a time while it can: long runs of plain text are
// the rule in what models and tools write, and a checkpoint of a conversation scans all of it.
func PlainRun[T ~string | ~[]byte](b T) int {
	// A string and a slice both start with their data pointer and length: read b as a string
	// header, whichever it is, and load words without bounds checks.
	s := *(*string)(unsafe.Pointer(&b))
	n := len(s)
	if n < 8 {
		return 0
	}
	p := unsafe.Pointer(unsafe.StringData(s))
	i := 0
	for ; i+32 <= n; i += 32 {
		w0 := *(*uint64)(unsafe.Add(p, i))
		w1 := *(*uint64)(unsafe.Add(p, i+8))
		w2 := *(*uint64)(unsafe.Add(p, i+16))
		w3 := *(*uint64)(unsafe.Add(p, i+24))
		if (w0|w1|w2|w3)&hiBits != 0 || plainASCII(w0)&plainASCII(w1)&plainASCII(w2)&plainASCII(w3)&hiBits != hiBits {
			break
		}
	}
	for ; i+8 <= n; i += 8 {
		w := *(*uint64)(unsafe.Add(p, i))
		if w&hiBits != 0 || plainASCII(w)&hiBits != hiBits {
			break
		}
	}
	return i
}

const loBits, hiBits = 0x0101010101010101, 0x8080808080808080

// plainASCII has the high bit set in each byte of x that is plain, provided every byte of x is
// ASCII (the caller checks x&hiBits == 0): with bytes below 0x80, adding 0x60 sets the high bit
// of those at or above 0x20, and adding 0x7F sets it in those not zero (of x^'"' and x^'\\'),
// without a carry into the next byte. The byte order does not matter.
func plainASCII(x uint64) uint64 {
	return (x + 0x60*loBits) & ((x ^ 0x22*loBits) + 0x7F*loBits) & ((x ^ 0x5C*loBits) + 0x7F*loBits)
}

// load8 reads the first eight bytes of b as a little-endian word (one load on amd64 and arm64).
func load8[T ~string | ~[]byte](b T) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// notPlain has the high bit set in each byte of x that is not plain: non-ASCII, a control
// character, '"' or '\\' (and possibly in a byte above one that is: only zero is exact).
func notPlain(x uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	less := func(v, n uint64) uint64 { return (v - n*lo) &^ v & hi } // some byte < n
	return x&hi | less(x, 0x20) | less(x^0x22*lo, 1) | less(x^0x5C*lo, 1)
}
