package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/trellis-go/trellis/tool"
)

type weatherArgs struct {
	City  string   `json:"city" jsonschema:"the city to report on"`
	Units string   `json:"units,omitempty" enum:"metric,imperial" default:"metric"`
	Days  int      `json:"days" minimum:"1" maximum:"14"`
	Tags  []string `json:"tags,omitempty" enum:"rain,wind"`
	Addr  *struct {
		Zip string `json:"zip" pattern:"^[0-9]{5}$"`
	} `json:"addr,omitempty"`
}

type forecast struct {
	City  string `json:"city"`
	Units string `json:"units"`
	Days  int    `json:"days"`
}

func newWeather(t *testing.T) *tool.Func[weatherArgs, forecast] {
	t.Helper()
	w, err := tool.New("weather", "Forecast for a city.", func(ctx context.Context, a weatherArgs) (forecast, error) {
		return forecast{City: a.City, Units: a.Units, Days: a.Days}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestNewSchemaFromTags(t *testing.T) {
	w := newWeather(t)
	var s struct {
		Properties map[string]struct {
			Type        any      `json:"type"`
			Description string   `json:"description"`
			Enum        []any    `json:"enum"`
			Minimum     *float64 `json:"minimum"`
			Maximum     *float64 `json:"maximum"`
			Default     any      `json:"default"`
			Items       *struct {
				Enum []any `json:"enum"`
			} `json:"items"`
		} `json:"properties"`
		Required             []string `json:"required"`
		AdditionalProperties *bool    `json:"additionalProperties"`
	}
	if err := json.Unmarshal(w.Spec().Parameters, &s); err != nil {
		t.Fatal(err)
	}
	p := s.Properties
	if p["city"].Description != "the city to report on" || p["city"].Type != "string" {
		t.Errorf("city = %+v", p["city"])
	}
	if got := p["units"].Enum; len(got) != 2 || got[0] != "metric" || got[1] != "imperial" {
		t.Errorf("units enum = %v", got)
	}
	if p["units"].Default != "metric" {
		t.Errorf("units default = %v", p["units"].Default)
	}
	if p["days"].Minimum == nil || *p["days"].Minimum != 1 || *p["days"].Maximum != 14 {
		t.Errorf("days bounds = %+v", p["days"])
	}
	if p["tags"].Items == nil || len(p["tags"].Items.Enum) != 2 {
		t.Errorf("tags items enum = %+v", p["tags"].Items)
	}
	if strings.Join(s.Required, ",") != "city,days" {
		t.Errorf("required = %v, want city,days (a default makes units optional)", s.Required)
	}
	if s.AdditionalProperties == nil || *s.AdditionalProperties {
		t.Errorf("additionalProperties = %v, want false", s.AdditionalProperties)
	}
	if w.OutputSchema() == nil {
		t.Error("no output schema for a struct result")
	}
}

func TestFuncCall(t *testing.T) {
	w := newWeather(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, args string
		want       string // the structured result, or the wanted error fragments separated by |
		wantErr    bool
	}{
		{name: "valid with default", args: `{"city":"Paris","days":3}`, want: `{"city":"Paris","units":"metric","days":3}`},
		{name: "explicit value beats default", args: `{"city":"Oslo","days":1,"units":"imperial"}`, want: `{"city":"Oslo","units":"imperial","days":1}`},
		{name: "double-encoded object", args: `"{\"city\":\"Rome\",\"days\":2}"`, want: `{"city":"Rome","units":"metric","days":2}`},
		{name: "integer written as float", args: `{"city":"Rome","days":2.0}`, want: `{"city":"Rome","units":"metric","days":2}`},
		{name: "wrong type", args: `{"city":5,"days":3}`, wantErr: true, want: `city: expected a string, got integer 5`},
		{name: "missing, out of range, bad enum, unknown", args: `{"days":30,"units":"kelvin","x":1}`, wantErr: true,
			want: `city: missing required argument; expected a string: the city to report on|days: must be at most 14, got 30|units: must be one of "metric", "imperial", got "kelvin"|x: unknown argument; the known arguments are addr, city, days, tags, units`},
		{name: "fraction for integer", args: `{"city":"a","days":2.5}`, wantErr: true, want: `days: expected an integer, got number 2.5`},
		{name: "nested and array items", args: `{"city":"a","days":2,"tags":["snow"],"addr":{"zip":"x"}}`, wantErr: true,
			want: `addr.zip: must match the pattern ^[0-9]{5}$, got "x"|tags[0]: must be one of "rain", "wind", got "snow"`},
		{name: "array instead of object", args: `[1,2]`, wantErr: true, want: `arguments must be a JSON object of named arguments, got array`},
		{name: "malformed JSON", args: `{"city":`, wantErr: true, want: `arguments are not valid JSON`},
		{name: "empty arguments", args: ``, wantErr: true, want: `city: missing required argument`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := w.Call(ctx, json.RawMessage(tc.args))
			if !tc.wantErr {
				if err != nil {
					t.Fatal(err)
				}
				if string(res.Structured) != tc.want {
					t.Errorf("structured = %s, want %s", res.Structured, tc.want)
				}
				return
			}
			if !errors.Is(err, tool.ErrInvalidArguments) {
				t.Fatalf("err = %v, want ErrInvalidArguments", err)
			}
			var ae *tool.ArgumentError
			if !errors.As(err, &ae) || ae.Tool != "weather" {
				t.Fatalf("err = %#v, want *ArgumentError for weather", err)
			}
			for _, frag := range strings.Split(tc.want, "|") {
				if !strings.Contains(err.Error(), frag) {
					t.Errorf("error %q\ndoes not contain %q", err, frag)
				}
			}
		})
	}
}

func TestNewRejectsBadDefinitions(t *testing.T) {
	echo := func(ctx context.Context, a struct{ X string }) (string, error) { return a.X, nil }
	if _, err := tool.New("bad name!", "", echo); !errors.Is(err, tool.ErrInvalidTool) || !strings.Contains(err.Error(), `"bad_name_"`) {
		t.Errorf("bad name: err = %v, want ErrInvalidTool suggesting bad_name_", err)
	}
	if _, err := tool.New[struct{}, string]("nil_fn", "", nil); !errors.Is(err, tool.ErrInvalidTool) {
		t.Errorf("nil fn: err = %v", err)
	}
	if _, err := tool.New("scalar", "", func(ctx context.Context, n int) (int, error) { return n, nil }); err == nil || !strings.Contains(err.Error(), "not a struct") {
		t.Errorf("scalar args: err = %v", err)
	}
	type badEnum struct {
		N int `json:"n" enum:"one,two"`
	}
	if _, err := tool.New("bad_enum", "", func(ctx context.Context, a badEnum) (string, error) { return "", nil }); err == nil || !strings.Contains(err.Error(), `"one" is not an integer`) {
		t.Errorf("bad enum: err = %v", err)
	}
	type badMin struct {
		N int `json:"n" minimum:"low"`
	}
	if _, err := tool.New("bad_min", "", func(ctx context.Context, a badMin) (string, error) { return "", nil }); err == nil || !strings.Contains(err.Error(), "not a number") {
		t.Errorf("bad minimum: err = %v", err)
	}
	type badPattern struct {
		S string `json:"s" pattern:"("`
	}
	if _, err := tool.New("bad_pattern", "", func(ctx context.Context, a badPattern) (string, error) { return "", nil }); err == nil || !strings.Contains(err.Error(), "pattern") {
		t.Errorf("bad pattern: err = %v", err)
	}
	type withChan struct {
		C chan int `json:"c"`
	}
	if _, err := tool.New("chan_args", "", func(ctx context.Context, a withChan) (string, error) { return "", nil }); !errors.Is(err, tool.ErrInvalidTool) {
		t.Errorf("chan field: err = %v", err)
	}
}

func TestFuncResultShapes(t *testing.T) {
	ctx := context.Background()
	type none struct{}
	cmd := map[string]any{"goto": "review"}
	withCmd := tool.Must(tool.New("with_command", "", func(ctx context.Context, _ none) (*tool.Result, error) {
		return &tool.Result{Content: "done", Command: cmd}, nil
	}))
	res, err := withCmd.Call(ctx, nil)
	if err != nil || res.Content != "done" || res.Command == nil {
		t.Fatalf("command result = %+v, %v", res, err)
	}
	text := tool.Must(tool.New("text", "", func(ctx context.Context, _ none) (string, error) { return "hello", nil }))
	if res, _ := text.Call(ctx, json.RawMessage(`{}`)); res.Text() != "hello" || res.Structured != nil {
		t.Errorf("string result = %+v", res)
	}
	failing := tool.Must(tool.New("failing", "", func(ctx context.Context, _ none) (string, error) { return "", errors.New("backend down") }))
	if _, err := failing.Call(ctx, nil); err == nil || err.Error() != "backend down" {
		t.Errorf("error result: err = %v", err)
	}
}

func TestMustPanicsOnError(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Must did not panic")
		}
	}()
	tool.Must(tool.New("bad name", "", func(ctx context.Context, a struct{}) (string, error) { return "", nil }))
}

func TestCompileSchemaAndNormalize(t *testing.T) {
	if _, err := tool.CompileSchema(json.RawMessage(`{"type":`)); err == nil {
		t.Error("CompileSchema accepted broken JSON")
	}
	s, err := tool.CompileSchema(json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"type":"number"}},"required":["a"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Validate("sum", json.RawMessage(`{"a":"x"}`)); err == nil || !strings.Contains(err.Error(), "a: expected a number, got string") {
		t.Errorf("draft-07 validation: err = %v", err)
	}
	if raw, err := s.Validate("sum", json.RawMessage(` {"a": 1} `)); err != nil || string(raw) != `{"a": 1}` {
		t.Errorf("valid: %s, %v", raw, err)
	}
	if raw, err := tool.NormalizeArguments("x", json.RawMessage(`null`)); err != nil || string(raw) != "{}" {
		t.Errorf("null: %s, %v", raw, err)
	}
	if _, err := tool.NormalizeArguments("x", json.RawMessage(`"just text"`)); err == nil {
		t.Error("a plain string was accepted as arguments")
	}
}

func TestCheckSpec(t *testing.T) {
	for _, tc := range []struct {
		name, params, want string
	}{
		{"ok", `{"type":"object"}`, ""},
		{"", `{"type":"object"}`, "name must be"},
		{"ok", ``, "parameters schema is empty"},
		{"ok", `{"type":"string"}`, `want "object"`},
		{"ok", `[]`, "not a JSON object"},
	} {
		err := tool.CheckSpec(specOf(tc.name, tc.params))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckSpec(%q, %s) = %v, want %q", tc.name, tc.params, err, tc.want)
		}
	}
	if got := tool.SanitizeName("files/read.v2"); got != "files_read_v2" {
		t.Errorf("SanitizeName = %q", got)
	}
	if got := tool.SanitizeName(strings.Repeat("a", 70)); len(got) != 64 {
		t.Errorf("SanitizeName kept %d bytes", len(got))
	}
}

func FuzzValidate(f *testing.F) {
	for _, s := range []string{`{"city":"a","days":1}`, `{"city":5}`, `[]`, `"{\"city\":1}"`, `{"tags":[1,2],"addr":{"zip":3}}`, `{`, ``, `null`, `1e400`} {
		f.Add(s)
	}
	w, err := tool.New("weather", "", func(ctx context.Context, a weatherArgs) (string, error) { return a.City, nil })
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		res, err := w.Call(context.Background(), json.RawMessage(s))
		if err == nil && res == nil {
			t.Fatal("nil result without error")
		}
		if err != nil && !errors.Is(err, tool.ErrInvalidArguments) {
			t.Fatalf("unexpected error kind: %v", err)
		}
	})
}
