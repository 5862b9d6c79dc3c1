package store

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParsePathAndIndexText(t *testing.T) {
	v := map[string]any{
		"text":  "hello",
		"meta":  map[string]any{"title": "T", "n": 3.0},
		"items": []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}, map[string]any{"other": 1.0}},
	}
	cases := []struct {
		paths []string
		want  []string
	}{
		{[]string{"text"}, []string{"hello"}},
		{[]string{"meta.title", "meta.n"}, []string{"T", "3"}},
		{[]string{"items[*].name"}, []string{"a", "b"}},
		{[]string{"items[1].name"}, []string{"b"}},
		{[]string{"items[-1]"}, []string{`{"other":1}`}},
		{[]string{"missing", "text.deeper"}, nil},
	}
	for _, c := range cases {
		if got := IndexText(v, c.paths); !reflect.DeepEqual(got, c.want) {
			t.Errorf("IndexText(%v) = %q, want %q", c.paths, got, c.want)
		}
	}
	if got := IndexText(map[string]any{"a": "x"}, nil); len(got) != 1 || got[0] != `{"a":"x"}` {
		t.Errorf("whole value: %q", got)
	}
	for _, bad := range []string{"", "a..b", "a[", "a[x]", "a[1]b"} {
		if _, err := ParsePath(bad); err == nil {
			t.Errorf("ParsePath(%q) accepted", bad)
		}
	}
}

func TestTokenizeAndScore(t *testing.T) {
	if got := Tokenize("The Café's menu: 3 crêpes, and TEA!"); !reflect.DeepEqual(got, []string{"café", "s", "menu", "3", "crêpes", "tea"}) {
		t.Fatalf("Tokenize = %q", got)
	}
	if got := QueryTerms("tea tea coffee the"); !reflect.DeepEqual(got, []string{"tea", "coffee"}) {
		t.Fatalf("QueryTerms = %q", got)
	}
	if s := TextScore([]string{"tea", "coffee"}, []string{"green", "tea"}); s != 0.5 {
		t.Fatalf("TextScore = %v", s)
	}
	// Past eight terms the tokens go through a set; both ways count the same.
	many := []string{"a1", "b2", "c3", "d4", "e5", "f6", "g7", "h8", "i9", "j10"}
	if s := TextScore(many, []string{"c3", "x", "j10", "a1", "c3"}); s != 0.3 {
		t.Fatalf("TextScore over 10 terms = %v, want 0.3", s)
	}
	if s := TextScore(many[:4], []string{"c3", "x", "a1", "c3"}); s != 0.5 {
		t.Fatalf("TextScore over 4 terms = %v, want 0.5", s)
	}
	if s := TextScore(nil, []string{"x"}); s != 0 {
		t.Fatalf("TextScore of no terms = %v", s)
	}
}

func TestConfigDefaultsAndErrors(t *testing.T) {
	c, err := Config{}.WithDefaults()
	if err != nil || c.MaxValueBytes != DefaultMaxValueBytes || c.Now == nil || c.Logger == nil {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	bad := []Config{
		{MaxValueBytes: -1},
		{DefaultTTL: -1},
		{SweepInterval: -1},
		{Index: &IndexConfig{Dims: 3}},
		{Index: &IndexConfig{Embedder: nil, Dims: 0}},
		{Index: &IndexConfig{Embedder: fakeEmbedder{}, Dims: 0}},
		{Index: &IndexConfig{Embedder: fakeEmbedder{}, Dims: 3, Fields: []string{"a["}}},
		{Index: &IndexConfig{Embedder: fakeEmbedder{}, Dims: 3, TextWeight: 2}},
	}
	for _, b := range bad {
		_, err := b.WithDefaults()
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "store: config: ") {
			t.Errorf("%+v: %v", b, err)
		}
	}
	c, _ = Config{Index: &IndexConfig{Embedder: fakeEmbedder{}, Dims: 3, TextWeight: -1}}.WithDefaults()
	if c.Index.TextWeight != 0 || c.Index.Fields[0] != "$" {
		t.Fatalf("index defaults: %+v", c.Index)
	}
}

type fakeEmbedder struct{}

func (fakeEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	return nil, nil
}

// FuzzFilter checks that no filter, however malformed, panics: it compiles or is refused with
// ErrInvalidFilter, and a compiled filter can be matched against any value.
func FuzzFilter(f *testing.F) {
	f.Add(`{"a": 1}`, `{"a": 1}`)
	f.Add(`{"a.b": {"$gt": 2, "$lt": "x"}}`, `{"a": {"b": 3}}`)
	f.Add(`{"a": {"$in": [1, "2", null]}}`, `{"a": [1]}`)
	f.Add(`{"$or": []}`, `{}`)
	f.Add(`{"a": {"$exists": 1}}`, `{"a": null}`)
	f.Fuzz(func(t *testing.T, filter, value string) {
		var fm, vm map[string]any
		if json.Unmarshal([]byte(filter), &fm) != nil || json.Unmarshal([]byte(value), &vm) != nil {
			return
		}
		c, err := CompileFilter(fm)
		if err != nil {
			if !errors.Is(err, ErrInvalidFilter) {
				t.Fatalf("error %v is not ErrInvalidFilter", err)
			}
			return
		}
		c.Match(vm)
	})
}
