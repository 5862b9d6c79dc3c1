package tool

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

type assignInner struct {
	Name  string   `json:"name"`
	Score *float64 `json:"score,omitempty"`
	Tags  []string `json:"tags"`
}

type assignArgs struct {
	City    string              `json:"city"`
	Days    int                 `json:"days"`
	Small   int8                `json:"small"`
	Count   uint16              `json:"count"`
	Ratio   float32             `json:"ratio"`
	Exact   float64             `json:"exact"`
	OK      bool                `json:"ok"`
	Any     any                 `json:"any"`
	Inner   assignInner         `json:"inner"`
	Ptr     *assignInner        `json:"ptr"`
	List    []assignInner       `json:"list"`
	ByName  map[string]int      `json:"by_name"`
	Nested  map[string][]bool   `json:"nested"`
	Opt     *string             `json:"opt,omitempty"`
	Untag   string              //nolint: a field without a tag is named as in Go
	Skipped string              `json:"-"`
	Big     int64               `json:"big"`
	Named   namedString         `json:"named"`
	Objects []map[string]any    `json:"objects"`
	Deep    map[string]*assign2 `json:"deep"`
}

type namedString string

type assign2 struct {
	Level int           `json:"level"`
	Next  *assign2      `json:"next"`
	Items []namedString `json:"items"`
}

func TestAssignable(t *testing.T) {
	for _, c := range []struct {
		typ  reflect.Type
		want bool
	}{
		{reflect.TypeFor[assignArgs](), true},
		{reflect.TypeFor[map[string]any](), true},
		{reflect.TypeFor[struct{ When time.Time }](), false},
		{reflect.TypeFor[struct{ Raw json.RawMessage }](), false},
		{reflect.TypeFor[struct{ Data []byte }](), false},
		{reflect.TypeFor[struct{ Pair [2]int }](), false},
		{reflect.TypeFor[struct {
			N int `json:"n,string"`
		}](), false},
		{reflect.TypeFor[struct{ assignInner }](), false},
		{reflect.TypeFor[struct{ S fmtStringer }](), false},
	} {
		if got := assignable(c.typ); got != c.want {
			t.Errorf("assignable(%v) = %v, want %v", c.typ, got, c.want)
		}
	}
}

type fmtStringer interface{ String() string }

func TestAssignTakesUsualArguments(t *testing.T) {
	for _, s := range []string{
		`{"city":"Lisbon","days":3,"small":-7,"count":9,"ratio":0.5,"exact":1e-7,"ok":true,"days":2.0}`,
		`{"any":{"a":[1,"x",null]},"inner":{"name":"n","score":2.5,"tags":["a","b"]},"ptr":{"name":"p"}}`,
		`{"list":[{"name":"a"},{"tags":null}],"by_name":{"x":1,"y":2},"nested":{"k":[true,false]},"CITY":"c"}`,
		`{"objects":[{"a":1},{}],"deep":{"x":{"level":1,"next":{"level":2,"items":["i"]}},"y":null}}`,
	} {
		var instance any
		if err := json.Unmarshal([]byte(s), &instance); err != nil {
			t.Fatal(err)
		}
		var got assignArgs
		if !assign(reflect.ValueOf(&got).Elem(), instance) {
			t.Errorf("assign gave up on %s", s)
		}
	}
}

// FuzzAssign checks assign against encoding/json: whenever assign says it could, the result is
// what json.Unmarshal of the same text gives.
func FuzzAssign(f *testing.F) {
	for _, s := range []string{
		`{"city":"Lisbon","days":3,"small":-7,"count":9,"ratio":0.5,"exact":1e-7,"ok":true}`,
		`{"any":{"a":[1,"x",null]},"inner":{"name":"n","score":2.5,"tags":["a","b"]},"ptr":{"name":"p"}}`,
		`{"list":[{"name":"a"},{"tags":null}],"by_name":{"x":1,"y":2},"nested":{"k":[true,false]}}`,
		`{"opt":"o","Untag":"u","untag":"lower","Skipped":"s","big":9007199254740993,"named":"nm"}`,
		`{"CITY":"upper","City":"title","days":2.0,"small":300,"count":-1,"ratio":1e39}`,
		`{"objects":[{"a":1},{}],"deep":{"x":{"level":1,"next":{"level":2,"items":["i"]}},"y":null}}`,
		`{"city":null,"ptr":null,"list":null,"days":1.5,"ok":"yes","inner":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var instance any
		if json.Unmarshal(data, &instance) != nil {
			return
		}
		// Call's fallback: encoding/json, once more with whole numbers written as integers.
		var want assignArgs
		wantErr := json.Unmarshal(data, &want)
		if fixed, ok := integralNumbers(data); wantErr != nil && ok {
			want = assignArgs{}
			wantErr = json.Unmarshal(fixed, &want)
		}
		var got assignArgs
		if !assign(reflect.ValueOf(&got).Elem(), instance) {
			return // the caller falls back to encoding/json
		}
		if wantErr != nil {
			t.Fatalf("assign took %s, which encoding/json rejects: %v", data, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\nassign   %+v\nencoding %+v", data, got, want)
		}
	})
}
