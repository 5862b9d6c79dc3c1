package fastjson

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

var parseSeeds = []string{
	`{"query":"plain text","n":3,"f":-0.5e-3,"ok":true,"no":false,"nil":null}`,
	`{"nested":{"list":[1,[2,[3]],{"a":"b"}],"empty":{},"none":[]}}`,
	`  {"spaces" : [ 1 , 2 ] }  `,
	`{"esc":"quote\" back\\ nl\n tab\t uni\u00e9 surrogate\ud83d\ude00 lone\ud800 end"}`,
	`{"utf8":"héllo wörld ✓ 😀","bad":"` + "\xff\xfe" + `"}`,
	`{"dup":1,"dup":2}`,
	`{"big":1e400}`, `{"num":01}`, `{"num":1.}`, `{"num":-}`, `{"t":tru}`, `{"a":1,}`, `[1,2,]`,
	`{"ctl":"` + "\x01" + `"}`, `{"a":1}x`, `{"a" 1}`, `{1:2}`, `"just a string"`, `12.5`, `null`, ``,
	`{"long":"` + strings.Repeat("0123456789abcdef", 300) + `"}`,
}

func TestParseMatchesEncodingJSON(t *testing.T) {
	for _, s := range parseSeeds {
		checkParse(t, []byte(s))
	}
	// The usual arguments must take the fast path, or it is not worth having.
	for _, s := range parseSeeds[:3] {
		if _, ok := Parse([]byte(s)); !ok {
			t.Errorf("parseJSON gave up on %s", s)
		}
	}
	// Random documents built from pieces, escapes and non-ASCII text among them.
	rng := rand.New(rand.NewPCG(3, 4))
	var gen func(depth int) string
	gen = func(depth int) string {
		switch k := rng.IntN(9); {
		case k == 0 && depth < 4:
			parts := make([]string, rng.IntN(4))
			for i := range parts {
				parts[i] = gen(depth + 1)
			}
			return "[" + strings.Join(parts, ",") + "]"
		case k == 1 && depth < 4:
			parts := make([]string, rng.IntN(4))
			for i := range parts {
				parts[i] = `"k` + string(rune('a'+rng.IntN(3))) + `":` + gen(depth+1)
			}
			return "{" + strings.Join(parts, ",") + "}"
		case k == 2:
			return []string{`"a\"b"`, `"\u0041\n"`, `"é"`, `"\ud800"`, `"x\/y"`}[rng.IntN(5)]
		case k == 3:
			return []string{"0", "-1", "3.25", "1e5", "-2.5E-3", "123456789012345678901234"}[rng.IntN(6)]
		case k == 4:
			return []string{"true", "false", "null"}[rng.IntN(3)]
		}
		return `"` + strings.Repeat("word ", rng.IntN(6)) + `"`
	}
	for range 3000 {
		doc := gen(0)
		checkParse(t, []byte(doc))
		checkCompact(t, []byte(doc))
		if !Compact([]byte(doc)) {
			t.Fatalf("Compact refused %s", doc)
		}
	}
}

// checkParse fails when parseJSON accepts data that encoding/json rejects or decodes otherwise.
func checkParse(t *testing.T, data []byte) {
	t.Helper()
	got, ok := Parse(data)
	var want any
	err := json.Unmarshal(data, &want)
	if !ok {
		return // encoding/json decides
	}
	if err != nil {
		t.Fatalf("parseJSON accepted %q, which encoding/json rejects: %v", data, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\nparseJSON %#v\nencoding  %#v", data, got, want)
	}
}

// checkCompact fails when Compact calls data compact JSON but json.Compact disagrees.
func checkCompact(t *testing.T, data []byte) {
	t.Helper()
	if !Compact(data) {
		return
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		t.Fatalf("Compact accepted %q, which encoding/json rejects: %v", data, err)
	}
	if !bytes.Equal(buf.Bytes(), data) {
		t.Fatalf("Compact calls %q compact; json.Compact gives %q", data, buf.Bytes())
	}
}

func TestCompact(t *testing.T) {
	for _, s := range parseSeeds {
		checkCompact(t, []byte(s))
	}
	for _, s := range []string{`{"a":[1,2],"b":"x\u00e9\n"}`, `"` + "\xff" + `"`, `[]`, `-0.5e+7`} {
		if !Compact([]byte(s)) {
			t.Errorf("Compact refused %s", s)
		}
	}
	for _, s := range []string{`{"a": 1}`, ` 1`, `{"a":"\x"}`, `{"a":"\u12"}`, `[1,]`, `"` + "\x01" + `"`} {
		if Compact([]byte(s)) {
			t.Errorf("Compact took %q", s)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParse(t, data)
		checkCompact(t, data)
	})
}

func TestPlainBytes8(t *testing.T) {
	for c := range 256 {
		want := c >= 0x20 && c < 0x80 && c != '"' && c != '\\'
		for pos := range 8 {
			b := []byte("abcdefgh")
			b[pos] = byte(c)
			if Plain8(b) != want {
				t.Fatalf("byte %#x at %d", c, pos)
			}
		}
	}
}

func TestPlain8Random(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var b [8]byte
	for range 1_000_000 {
		want := true
		for i := range b {
			// Mostly printable ASCII, so that runs of plain bytes with one or two others are common.
			b[i] = byte(0x20 + rng.IntN(0x60))
			if rng.IntN(6) == 0 {
				b[i] = byte(rng.IntN(256))
			}
			if c := b[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
				want = false
			}
		}
		if Plain8(b[:]) != want || Plain8(string(b[:])) != want {
			t.Fatalf("%q: Plain8 %v", b, !want)
		}
	}
}

func TestPlainRun(t *testing.T) {
	plain := func(c byte) bool { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' }
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200_000 {
		b := make([]byte, rng.IntN(80))
		for i := range b {
			b[i] = byte(0x20 + rng.IntN(0x60))
			if rng.IntN(40) == 0 {
				b[i] = byte(rng.IntN(256))
			}
		}
		want := 0
		for want+8 <= len(b) && plain(b[want]) && plain(b[want+1]) && plain(b[want+2]) && plain(b[want+3]) &&
			plain(b[want+4]) && plain(b[want+5]) && plain(b[want+6]) && plain(b[want+7]) {
			want += 8
		}
		if got := PlainRun(b); got != want || PlainRun(string(b)) != want {
			t.Fatalf("%q: PlainRun %d, want %d", b, got, want)
		}
	}
}

func BenchmarkPlainRun(b *testing.B) {
	s := strings.Repeat("result for query: 0123456789abcdef", 1000)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if PlainRun(s) != len(s)/8*8 {
			b.Fatal("not plain")
		}
	}
}

// TestPlainRunEveryByte puts each byte value at each position of plain text: PlainRun stops at
// the block holding it exactly when the byte is not plain.
func TestPlainRunEveryByte(t *testing.T) {
	plain := func(c byte) bool { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' }
	base := strings.Repeat("plain ~ text!", 4)[:48]
	for c := range 256 {
		for pos := range len(base) {
			b := []byte(base)
			b[pos] = byte(c)
			want := len(b)
			if !plain(byte(c)) {
				want = pos / 8 * 8
			}
			if got := PlainRun(b); got != want || PlainRun(string(b)) != want {
				t.Fatalf("byte %#x at %d: PlainRun %d (string %d), want %d", c, pos, got, PlainRun(string(b)), want)
			}
		}
	}
}
