package graph

import (
	"encoding/json"
	"testing"
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
		var a, b any
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatalf("invalid JSON %s: %v", got, err)
		}
		_ = json.Unmarshal(want, &b)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Errorf("encodings differ:\n got %s\nwant %s", ja, jb)
		}
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

func TestBlobEncoderSizeIsExact(t *testing.T) {
	doc := map[string]any{"z": "quote\" back\\ nl\n tab\t ctl\x01 bad\xff sep\u2028 é", "a": []any{1.5, -2.0, 1e300, 0.1, true, false, nil, 7}, "m": map[string]any{}, "l": []any{}}
	for _, v := range []any{[]any{doc, doc, []any{doc}}, doc, []any{"x"}} {
		var e blobEncoder
		n, ok := e.size(v)
		if !ok {
			t.Fatalf("size of %v unknown", v)
		}
		var e2 blobEncoder
		out, err := e2.marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if n != len(out) {
			t.Errorf("size %d, encoding %d bytes: %s", n, len(out), out)
		}
	}
}
