package graph

import (
	"encoding/json"
	"testing"
)

// FuzzBlobEncoder checks the checkpoint encoder against encoding/json on any JSON document
// (decoded to map[string]any, []any and scalars, as dynamic state is), placed several times in
// one value so that the encoder's references to repeated maps and lists are exercised too.
func FuzzBlobEncoder(f *testing.F) {
	f.Add([]byte(`{"a":[1,2.5,"x\u2028y",null,true],"b":{"c":"<&>"}}`))
	f.Add([]byte(`["\u0001\"\\", 1e300, -0.000001, 123456789012345678901234]`))
	f.Add([]byte(`"\xff\xfe invalid utf-8"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var doc any
		if json.Unmarshal(data, &doc) != nil {
			return
		}
		v := []any{doc, map[string]any{"again": doc, "list": []any{doc, doc}}, doc}
		var e blobEncoder
		got, err := e.marshal(v)
		want, wantErr := json.Marshal(v)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("encoder error %v, encoding/json error %v", err, wantErr)
		}
		if err != nil {
			return
		}
		assertSameJSON(t, got, want)
	})
}

func TestBlobEncoderRejectsWhatEncodingJSONRejects(t *testing.T) {
	for _, v := range []any{
		[]any{json.RawMessage(`{"unterminated": `)},
		map[string]any{"n": json.Number("twelve")},
	} {
		var e blobEncoder
		got, err := e.marshal(v)
		if _, wantErr := json.Marshal(v); wantErr == nil {
			t.Fatalf("encoding/json accepts %v", v)
		}
		if err == nil {
			t.Errorf("the encoder stored %q, which is not JSON, instead of failing", got)
		}
	}
}
