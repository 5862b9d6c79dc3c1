package graph

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/trellis-go/trellis/internal/bufkeep"
	"github.com/trellis-go/trellis/internal/fastjson"
	"github.com/trellis-go/trellis/internal/sharedjson"
	"github.com/trellis-go/trellis/message"
)

// blobEncoder encodes channel values for one checkpoint. Values of dynamic JSON shape
// (map[string]any, []any, and scalars behind interfaces) are encoded here rather than by
// encoding/json, and a map or list met again (the same map, or the same elements of a list) is
// written once: states often hold the same document in several keys, or many times in one list.
// The first time such a value is met it is written out; every later time the blob refers to it
// (the shared-parts form of sharedjson.Expand), so a list holding one document a thousand
// times costs one document and a thousand references, to encode and to store.
//
// An encoder lives for one checkpoint, while no node runs, so a value cannot change between its
// first encoding and a reference to it.
type blobEncoder struct {
	// buf is where encodings are appended. Bytes once written are never written again (append
	// may move on to a new array; the old one is left as it is), so parts can point into it.
	buf  []byte
	memo map[memoKey]*sharedPart
	// parts are the memoised encodings that some blob refers to, by ID-1.
	parts []*sharedPart
	// used are the parts the blob being built refers to; gen tells blobs apart.
	used []*sharedPart
	gen  int
	// reuse makes the encoder write into buffers taken from blobBuffers (and encodeBuffers),
	// listed in held and handed back by release once the blobs are no longer needed: a saver
	// does not keep Put's bytes (checkpoint.Saver), so a checkpoint's encoding need not be
	// allocated afresh for every checkpoint of a long conversation.
	reuse   bool
	held    []*[]byte
	heldEnc []*bytes.Buffer
}

// blobBuffers holds the small buffers checkpoints are encoded into, between two checkpoints;
// largeBlobs the large ones (a conversation's messages), which a run uses once at durability
// "exit" and a sync.Pool would drop at the next collections (internal/bufkeep).
var (
	blobBuffers = sync.Pool{New: func() any { return new([]byte) }}
	largeBlobs  = bufkeep.New(4, 32<<20)
)

// largeBlob is the capacity from which a buffer is kept by largeBlobs.
const largeBlob = 64 << 10

// scratch returns an empty buffer of capacity n or more: a reused one when e.reuse is set.
// When an encoding outgrows it, keep records the grown array instead.
func (e *blobEncoder) scratch(n int) []byte {
	if !e.reuse {
		return make([]byte, 0, n)
	}
	var p *[]byte
	if n >= largeBlob {
		p = largeBlobs.Get(n)
	} else if p = blobBuffers.Get().(*[]byte); cap(*p) < n {
		*p = make([]byte, 0, n)
	}
	e.held = append(e.held, p)
	return (*p)[:0]
}

// keep records the array b was written into as the last scratch buffer's.
func (e *blobEncoder) keep(b []byte) {
	if e.reuse && len(e.held) > 0 {
		*e.held[len(e.held)-1] = b[:0]
	}
}

// release hands the encoder's buffers back for the next checkpoint. Every blob the encoder
// returned is invalid afterwards.
func (e *blobEncoder) release() {
	for _, p := range e.held {
		switch {
		case cap(*p) >= largeBlob:
			largeBlobs.Put(p)
		case cap(*p) > 0:
			blobBuffers.Put(p)
		}
	}
	for _, b := range e.heldEnc {
		if b.Cap() <= maxPooledBuffer {
			b.Reset()
			encodeBuffers.Put(b)
		}
	}
	e.held, e.heldEnc, e.buf, e.memo, e.parts = nil, nil, nil, nil, nil
}

type memoKey struct {
	ptr   unsafe.Pointer
	n     int
	isMap bool
}

type sharedPart struct {
	text []byte
	id   uint64 // 0 until something refers to it
	gen  int    // the last blob that listed it
}

// memoMin is the smallest encoding worth remembering.
const memoMin = 128

// marshal returns v's blob. The result stays valid after later calls: they never write over
// what was returned.
func (e *blobEncoder) marshal(v any) ([]byte, error) {
	switch x := v.(type) {
	case []any, map[string]any:
	case []message.Message:
		e.begin()
		out, err := e.appendMessages(e.scratch(messagesSize(x)), x)
		e.keep(out)
		if err != nil {
			return nil, err
		}
		return e.finish(out[:len(out):len(out)])
	default:
		if e.reuse {
			return e.marshalHeld(v)
		}
		return marshalPooled(v)
	}
	e.begin()
	e.startBuf()
	start := len(e.buf)
	out, err := e.appendValue(e.buf, v)
	if err != nil {
		e.buf = nil // never reuse bytes that memo may point to
		return nil, err
	}
	e.buf = out
	return e.finish(out[start:len(out):len(out)])
}

// marshalList returns the blob of a JSON array of vs.
func (e *blobEncoder) marshalList(vs []reflect.Value) ([]byte, error) {
	e.begin()
	e.startBuf()
	b := e.buf
	start := len(b)
	b = append(b, '[')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = e.appendValue(b, v.Interface()); err != nil {
			e.buf = nil
			return nil, err
		}
	}
	b = append(b, ']')
	e.buf = b
	return e.finish(b[start:len(b):len(b)])
}

// startBuf gives e.buf a reused array to start from. Parts may point into e.buf, so the array
// is only released with the encoder; one that append outgrows is left to the collector.
func (e *blobEncoder) startBuf() {
	if e.reuse && e.buf == nil {
		e.buf = e.scratch(4096)
	}
}

func (e *blobEncoder) begin() {
	e.gen++
	e.used = e.used[:0]
}

// finish returns text as a blob: text itself when it refers to no part, or text with the parts
// it needs, directly or through other parts.
func (e *blobEncoder) finish(text []byte) ([]byte, error) {
	if len(e.used) == 0 {
		return text, nil
	}
	for i := 0; i < len(e.used); i++ {
		err := sharedjson.Refs(e.used[i].text, func(id uint64) {
			if p := e.parts[id-1]; p.gen != e.gen {
				p.gen = e.gen
				e.used = append(e.used, p)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(e.used, func(a, b *sharedPart) int { return cmp.Compare(a.id, b.id) })
	parts := make([]sharedjson.Part, len(e.used))
	for i, p := range e.used {
		parts[i] = sharedjson.Part{ID: p.id, Text: p.text}
	}
	out := make([]byte, 0, sharedjson.Size(parts, text))
	return sharedjson.Append(out, parts, text), nil
}

// appendRef appends a reference to a part met before.
func (e *blobEncoder) appendRef(b []byte, p *sharedPart) []byte {
	if p.id == 0 {
		e.parts = append(e.parts, p)
		p.id = uint64(len(e.parts))
	}
	if p.gen != e.gen {
		p.gen = e.gen
		e.used = append(e.used, p)
	}
	return sharedjson.AppendRef(b, p.id)
}

// encodeBuffers holds scratch buffers for encoding/json: a large value is encoded into memory
// that is already in use rather than into a buffer grown from nothing, then copied out once.
var encodeBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuffer bounds the scratch buffers kept for reuse.
const maxPooledBuffer = 64 << 20

// marshalHeld encodes v with encoding/json into a reused buffer, kept until release.
func (e *blobEncoder) marshalHeld(v any) ([]byte, error) {
	buf := encodeBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	e.heldEnc = append(e.heldEnc, buf)
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return data[: len(data)-1 : len(data)-1], nil // Encode ends with a newline
}

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
	case []message.Message:
		return e.appendMessages(b, x)
	case message.Message:
		return e.appendMessage(b, &x)
	case []any:
		if x == nil {
			return append(b, "null"...), nil
		}
		if len(x) == 0 {
			return append(b, "[]"...), nil
		}
		key := memoKey{ptr: unsafe.Pointer(unsafe.SliceData(x)), n: len(x)}
		if p, ok := e.memo[key]; ok {
			return e.appendRef(b, p), nil
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
		if p, ok := e.memo[key]; ok {
			return e.appendRef(b, p), nil
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

func (e *blobEncoder) remember(key memoKey, enc []byte) {
	if len(enc) < memoMin {
		return
	}
	if e.memo == nil {
		e.memo = map[memoKey]*sharedPart{}
	}
	e.memo[key] = &sharedPart{text: enc}
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
		i += fastjson.PlainRun(s[i:])
		if i == len(s) {
			break
		}
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
