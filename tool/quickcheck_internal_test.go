package tool

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/trellis-go/trellis/internal/fastjson"
)

var quickSchemas = []string{
	`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"],"additionalProperties":false}`,
	`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":10},"x":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1}}}`,
	`{"type":"object","properties":{"unit":{"type":"string","enum":["km","mi"]},"flag":{"type":["boolean","null"]}},"additionalProperties":{"type":"string"}}`,
	`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","minLength":2,"maxLength":4},"minItems":1,"maxItems":3}}}`,
	`{"type":"object","properties":{"code":{"type":"string","pattern":"^[A-Z]{3}$"},"any":{}}}`,
	`{"type":"object","properties":{"deep":{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"b":{"type":"integer"}},"required":["b"]}}}}}}`,
	`{"type":"object","properties":{"v":{"enum":[1,"one",true,null]}}}`,
	`{"type":"object","properties":{"s":{"type":"string","description":"annotated","title":"S","default":"x","examples":["y"]}}}`,
	// Keywords outside the subset: no quick check, the library alone decides.
	`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}`,
	`{"type":"object","properties":{"n":{"type":"number","multipleOf":2}}}`,
	`{"type":"object","properties":{"v":{"enum":[[1],{"a":1}]}}}`,
	`{"type":"object","$defs":{"x":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/x"}}}`,
}

var quickInstances = []string{
	`{}`, `{"query":"hi"}`, `{"query":1}`, `{"query":"hi","extra":1}`, `{"query":null}`,
	`{"n":1}`, `{"n":1.0}`, `{"n":1.5}`, `{"n":0}`, `{"n":11}`, `{"x":0}`, `{"x":0.5}`, `{"x":1}`,
	`{"unit":"km"}`, `{"unit":"yd"}`, `{"flag":null}`, `{"flag":"no"}`, `{"other":"s"}`, `{"other":2}`,
	`{"tags":[]}`, `{"tags":["ab"]}`, `{"tags":["a"]}`, `{"tags":["abcde"]}`, `{"tags":["ab","cd","ef","gh"]}`, `{"tags":["é€😀"]}`,
	`{"code":"ABC"}`, `{"code":"abc"}`, `{"any":[1,{"x":null}]}`,
	`{"deep":{"a":[{"b":1},{"b":2}]}}`, `{"deep":{"a":[{"b":"1"}]}}`, `{"deep":{"a":[{}]}}`,
	`{"v":1}`, `{"v":"one"}`, `{"v":true}`, `{"v":null}`, `{"v":2}`, `{"v":[1]}`, `{"v":{"a":1}}`,
	`{"s":"x"}`, `{"s":5}`, `{"a":"s"}`, `{"a":3}`, `{"a":true}`, `{"n":4}`, `{"n":3}`,
	`[]`, `"text"`, `null`,
}

func checkQuickAgrees(t *testing.T, schemaText, instanceText string, both bool) {
	t.Helper()
	s, err := CompileSchema(json.RawMessage(schemaText))
	if err != nil {
		return
	}
	v, ok := fastjson.Parse([]byte(instanceText))
	if !ok {
		return
	}
	want := s.resolved.Validate(v) == nil
	if s.quick == nil {
		return
	}
	got := s.quick.valid(v)
	if got && !want {
		t.Fatalf("quick check accepts %s for %s; the schema library rejects it", instanceText, schemaText)
	}
	if both && want && !got {
		t.Errorf("quick check rejects %s for %s; the schema library accepts it", instanceText, schemaText)
	}
}

// TestQuickCheckAgreesWithTheLibrary checks the quick validator against the schema library in both
// directions on common schemas, and that it exists for the schemas it is meant for.
func TestQuickCheckAgreesWithTheLibrary(t *testing.T) {
	for i, sch := range quickSchemas {
		s, err := CompileSchema(json.RawMessage(sch))
		if err != nil {
			t.Fatal(err)
		}
		if wantQuick := i < 8; (s.quick != nil) != wantQuick {
			t.Errorf("schema %s: quick check %v, want %v", sch, s.quick != nil, wantQuick)
		}
		for _, in := range quickInstances {
			checkQuickAgrees(t, sch, in, true)
		}
	}
}

// TestQuickCheckOfInferredSchemas checks that schemas inferred from Go types get a quick check.
func TestQuickCheckOfInferredSchemas(t *testing.T) {
	type inner struct {
		B int `json:"b"`
	}
	type args struct {
		Query string   `json:"query" jsonschema:"what to look for"`
		Limit int      `json:"limit,omitempty"`
		Tags  []string `json:"tags,omitempty"`
		Deep  []inner  `json:"deep,omitempty"`
		Ratio float64  `json:"ratio,omitempty"`
		On    *bool    `json:"on,omitempty"`
	}
	f, err := New("inferred", "", func(_ context.Context, a args) (string, error) { return a.Query, nil })
	if err != nil {
		t.Fatal(err)
	}
	if f.schema.quick == nil {
		t.Fatalf("no quick check for %s", f.schema.JSON())
	}
	for _, in := range []string{`{"query":"x"}`, `{"query":"x","limit":2,"tags":["a"],"deep":[{"b":1}],"ratio":0.5,"on":true}`, `{"limit":2}`, `{"query":"x","deep":[{"b":"no"}]}`, `{"query":"x","nope":1}`} {
		checkQuickAgrees(t, string(f.schema.JSON()), in, true)
	}
}

func FuzzQuickCheck(f *testing.F) {
	for _, s := range quickSchemas {
		for _, in := range quickInstances {
			f.Add(s, in)
		}
	}
	f.Fuzz(func(t *testing.T, schemaText, instanceText string) {
		checkQuickAgrees(t, schemaText, instanceText, false)
	})
}
