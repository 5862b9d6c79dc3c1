package graph

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/internal/sharedjson"
)

func BenchmarkBlobEncoderShared(b *testing.B) {
	doc := map[string]any{}
	for i := range 25 {
		doc[string(rune('a'+i))+"key"] = []any{"hi?hi?hi?hi?hi?", true, 1.0, 6327816386138.0, nil}
	}
	list := make([]any, 600)
	for i := range list {
		list[i] = doc
	}
	b.Run("memo", func(b *testing.B) {
		for b.Loop() {
			var e blobEncoder
			if _, err := e.marshal(list); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(list); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestBlobEncoderMatchesEncodingJSON(t *testing.T) {
	doc := map[string]any{"z": "quote\" back\\ nl\n tab\t ctl\x01 bad\xff sep\u2028 é", "a": []any{1.5, -2.0, 1e300, 0.1, true, false, nil, json.Number("12")}, "m": map[string]any{}}
	shared := []any{doc, doc, map[string]any{"k": doc}, []any{}, []any{doc}}
	for _, v := range []any{shared, doc, []any(nil), map[string]any(nil)} {
		var e blobEncoder
		got, err := e.marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(v)
		assertSameJSON(t, got, want)
	}
	var e blobEncoder
	if _, err := e.marshal([]any{doc, doc}); err != nil {
		t.Fatal(err)
	}
	if len(e.memo) == 0 {
		t.Error("a map met twice was not remembered")
	}
	if _, err := e.marshal([]any{map[string]any{"x": nan()}}); err == nil {
		t.Error("NaN encoded without an error")
	}
}

func nan() float64 { var z float64; return z / z }

func TestBlobEncoderWritesASharedDocumentOnce(t *testing.T) {
	doc := map[string]any{"text": strings.Repeat("a document worth sharing ", 20), "n": 1.0}
	list := make([]any, 1000)
	for i := range list {
		list[i] = doc
	}
	state := map[string]any{"list": list, "again": []any{doc, list}, "inner": map[string]any{"doc": doc}}
	var e blobEncoder
	blob, err := e.marshal(state)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := json.Marshal(state)
	if len(blob) > len(plain)/50 {
		t.Errorf("the blob is %d bytes, the plain JSON %d: the shared document was copied", len(blob), len(plain))
	}
	assertSameJSON(t, blob, plain)

	// A second blob of the same checkpoint refers to parts the first one wrote: it must carry
	// them itself, and the parts those parts refer to.
	second, err := e.marshal([]any{map[string]any{"x": list}, state})
	if err != nil {
		t.Fatal(err)
	}
	plain2, _ := json.Marshal([]any{map[string]any{"x": list}, state})
	assertSameJSON(t, second, plain2)

	// A delta of several updates is one blob with the parts of all of them.
	delta, err := e.marshalList([]reflect.Value{reflect.ValueOf(any(list)), reflect.ValueOf(any(doc)), reflect.ValueOf("plain")})
	if err != nil {
		t.Fatal(err)
	}
	plain3, _ := json.Marshal([]any{list, doc, "plain"})
	assertSameJSON(t, delta, plain3)
}

// assertSameJSON checks that blob, once expanded, is the JSON value want.
func assertSameJSON(t *testing.T, blob, want []byte) {
	t.Helper()
	got, err := sharedjson.Expand(blob)
	if err != nil {
		t.Fatalf("expanding %q: %v", blob, err)
	}
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatalf("invalid JSON %q: %v", got, err)
	}
	if err := json.Unmarshal(want, &b); err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Fatalf("encodings differ:\n got %s\nwant %s", ja, jb)
	}
}
