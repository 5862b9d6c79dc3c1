package backend_test

import (
	"reflect"
	"testing"

	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/internal/backend"
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
		if got := backend.IndexText(v, c.paths); !reflect.DeepEqual(got, c.want) {
			t.Errorf("backend.IndexText(%v) = %q, want %q", c.paths, got, c.want)
		}
	}
	if got := backend.IndexText(map[string]any{"a": "x"}, nil); len(got) != 1 || got[0] != `{"a":"x"}` {
		t.Errorf("whole value: %q", got)
	}
	for _, bad := range []string{"", "a..b", "a[", "a[x]", "a[1]b"} {
		if _, err := store.ParsePath(bad); err == nil {
			t.Errorf("store.ParsePath(%q) accepted", bad)
		}
	}
}

func TestTokenizeAndScore(t *testing.T) {
	if got := backend.Tokenize("The Café's menu: 3 crêpes, and TEA!"); !reflect.DeepEqual(got, []string{"café", "s", "menu", "3", "crêpes", "tea"}) {
		t.Fatalf("Tokenize = %q", got)
	}
	if got := backend.QueryTerms("tea tea coffee the"); !reflect.DeepEqual(got, []string{"tea", "coffee"}) {
		t.Fatalf("QueryTerms = %q", got)
	}
	if s := backend.TextScore([]string{"tea", "coffee"}, []string{"green", "tea"}); s != 0.5 {
		t.Fatalf("TextScore = %v", s)
	}
	// Past eight terms the tokens go through a set; both ways count the same.
	many := []string{"a1", "b2", "c3", "d4", "e5", "f6", "g7", "h8", "i9", "j10"}
	if s := backend.TextScore(many, []string{"c3", "x", "j10", "a1", "c3"}); s != 0.3 {
		t.Fatalf("TextScore over 10 terms = %v, want 0.3", s)
	}
	if s := backend.TextScore(many[:4], []string{"c3", "x", "a1", "c3"}); s != 0.5 {
		t.Fatalf("TextScore over 4 terms = %v, want 0.5", s)
	}
	if s := backend.TextScore(nil, []string{"x"}); s != 0 {
		t.Fatalf("TextScore of no terms = %v", s)
	}
}
