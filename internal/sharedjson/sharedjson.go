// Package sharedjson is the encoding of checkpoint blob data with shared parts: JSON in which a
// document that a state holds many times is written once and referred to elsewhere. The graph
// runtime writes it (Append, AppendRef) and reads it back (Expand); savers store it as opaque
// bytes, so it is internal to trellis.
package sharedjson

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// Blob data is JSON, or JSON with shared parts: when a state holds the same document in many
// places (one map appended to a list a thousand times, or put in several keys), the graph
// writes the document once and refers to it everywhere else, instead of writing a thousand
// copies. Such data starts with Header, which no JSON text can start with:
//
//	0x1E 0x01                       header and format version
//	uvarint n                       number of parts
//	n × (uvarint id, uvarint len, len bytes of text)
//	text                            the value itself
//
// A text is JSON in which a reference (the byte 0x1F and a uvarint part ID) may stand wherever
// a value may. JSON never contains those bytes outside strings, and inside strings they must be
// escaped, so a reference cannot be mistaken for data. A part refers only to parts listed
// before it. Expand turns such data back into plain JSON.
const (
	Header        = 0x1E
	sharedVersion = 1
	sharedRef     = 0x1F
)

// MaxExpanded bounds what Expand produces, so that a corrupt or hostile blob whose
// parts refer to each other many times over cannot exhaust memory.
const MaxExpanded = 1 << 30

// ErrCorrupt reports blob data whose shared-parts encoding is corrupt.
var ErrCorrupt = errors.New("sharedjson: corrupt blob with shared parts")

// Part is a part that texts refer to by ID.
type Part struct {
	ID   uint64
	Text []byte
}

// AppendRef appends a reference to part id.
func AppendRef(b []byte, id uint64) []byte {
	return binary.AppendUvarint(append(b, sharedRef), id)
}

// Refs calls fn with the ID of each reference in text, in order.
func Refs(text []byte, fn func(id uint64)) error {
	for {
		i := indexRef(text)
		if i < 0 {
			return nil
		}
		id, n := binary.Uvarint(text[i+1:])
		if n <= 0 {
			return fmt.Errorf("%w: a reference at byte %d has no valid part ID", ErrCorrupt, i)
		}
		fn(id)
		text = text[i+1+n:]
	}
}

// Append appends data made of parts (sorted by ID, each referring only to earlier ones)
// and text.
func Append(dst []byte, parts []Part, text []byte) []byte {
	dst = append(dst, Header, sharedVersion)
	dst = binary.AppendUvarint(dst, uint64(len(parts)))
	for _, p := range parts {
		dst = binary.AppendUvarint(dst, p.ID)
		dst = binary.AppendUvarint(dst, uint64(len(p.Text)))
		dst = append(dst, p.Text...)
	}
	return append(dst, text...)
}

// Size is the length of Append's output for parts and text.
func Size(parts []Part, text []byte) int {
	n := 2 + uvarintLen(uint64(len(parts))) + len(text)
	for _, p := range parts {
		n += uvarintLen(p.ID) + uvarintLen(uint64(len(p.Text))) + len(p.Text)
	}
	return n
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// Expand returns blob data as plain JSON: data itself when it has no shared parts, or a
// new buffer with every reference replaced by the part's text. It fails with ErrCorrupt on
// a corrupt encoding, and when the expansion would pass MaxExpanded.
func Expand(data []byte) ([]byte, error) {
	if len(data) == 0 || data[0] != Header {
		return data, nil
	}
	if len(data) < 2 || data[1] != sharedVersion {
		return nil, fmt.Errorf("%w: unknown format version (written by a newer trellis?)", ErrCorrupt)
	}
	p := data[2:]
	next := func(what string) (uint64, error) {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			return 0, fmt.Errorf("%w: truncated %s", ErrCorrupt, what)
		}
		p = p[n:]
		return v, nil
	}
	count, err := next("part count")
	if err != nil {
		return nil, err
	}
	if count > uint64(len(p))/2 { // every part takes at least two bytes
		return nil, fmt.Errorf("%w: %d parts cannot fit in %d bytes", ErrCorrupt, count, len(p))
	}
	parts := make(map[uint64]part, count)
	for range count {
		id, err := next("part ID")
		if err != nil {
			return nil, err
		}
		n, err := next("part length")
		if err != nil {
			return nil, err
		}
		if n > uint64(len(p)) {
			return nil, fmt.Errorf("%w: part %d is longer than the data", ErrCorrupt, id)
		}
		if _, dup := parts[id]; dup {
			return nil, fmt.Errorf("%w: part %d is listed twice", ErrCorrupt, id)
		}
		size, err := expandedSize(p[:n], parts)
		if err != nil {
			return nil, err
		}
		parts[id] = part{text: p[:n], size: size}
		p = p[n:]
	}
	size, err := expandedSize(p, parts)
	if err != nil {
		return nil, err
	}
	return expandInto(make([]byte, 0, size), p, parts), nil
}

// part is a part's text, with its references, and the length of its expansion.
type part struct {
	text []byte
	size int
}

// expandedSize is the length of text with its references expanded, from parts listed before.
func expandedSize(text []byte, parts map[uint64]part) (int, error) {
	size := 0
	var bad error
	err := Refs(text, func(id uint64) {
		p, ok := parts[id]
		if !ok && bad == nil {
			bad = fmt.Errorf("%w: a reference to part %d, which is not listed before it", ErrCorrupt, id)
		}
		size += p.size
		if size > MaxExpanded && bad == nil {
			bad = fmt.Errorf("%w: it expands to more than %d bytes", ErrCorrupt, MaxExpanded)
		}
	})
	if err == nil {
		err = bad
	}
	return size + len(text), err
}

// expandInto appends text to out with its references expanded.
func expandInto(out, text []byte, parts map[uint64]part) []byte {
	for {
		i := indexRef(text)
		if i < 0 {
			return append(out, text...)
		}
		out = append(out, text[:i]...)
		id, n := binary.Uvarint(text[i+1:])
		out = expandInto(out, parts[id].text, parts)
		text = text[i+1+n:]
	}
}

func indexRef(b []byte) int { return bytes.IndexByte(b, sharedRef) }
