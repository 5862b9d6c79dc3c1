package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

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
