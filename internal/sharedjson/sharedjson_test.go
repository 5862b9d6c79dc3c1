package sharedjson

import (
	"errors"
	"testing"
)

func TestExpandJSON(t *testing.T) {
	plain := []byte(`{"a":[1,2]}`)
	if got, err := Expand(plain); err != nil || string(got) != string(plain) {
		t.Fatalf("plain JSON changed: %q, %v", got, err)
	}

	doc := []byte(`{"k":"v"}`)
	list := AppendRef(append(AppendRef([]byte("["), 1), ','), 1)
	list = append(list, ']')
	text := append([]byte(`{"one":`), AppendRef(nil, 1)...)
	text = append(text, `,"two":`...)
	text = append(AppendRef(text, 300), '}')
	parts := []Part{{ID: 1, Text: doc}, {ID: 300, Text: list}}
	blob := Append(nil, parts, text)
	if len(blob) != Size(parts, text) {
		t.Errorf("Size %d, Append wrote %d", Size(parts, text), len(blob))
	}
	got, err := Expand(blob)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"one":{"k":"v"},"two":[{"k":"v"},{"k":"v"}]}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestExpandJSONRejectsCorruptData(t *testing.T) {
	ref := func(id uint64) []byte { return AppendRef(nil, id) }
	for name, data := range map[string][]byte{
		"newer version":         {Header, 9, 0},
		"no count":              {Header, 1},
		"too many parts":        {Header, 1, 100, 1},
		"part past the end":     {Header, 1, 1, 1, 50, '1'},
		"unknown reference":     Append(nil, nil, ref(7)),
		"forward reference":     Append(nil, []Part{{ID: 1, Text: ref(2)}, {ID: 2, Text: []byte("1")}}, ref(1)),
		"self reference":        Append(nil, []Part{{ID: 1, Text: ref(1)}}, ref(1)),
		"duplicate part":        Append(nil, []Part{{ID: 1, Text: []byte("1")}, {ID: 1, Text: []byte("2")}}, ref(1)),
		"truncated reference":   Append(nil, nil, []byte{0x1F, 0x80}),
		"billion laughs":        laughs(40),
		"header only, no count": {Header},
	} {
		if _, err := Expand(data); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: error %v, want ErrCorrupt", name, err)
		}
	}
}

// laughs builds parts that each refer to the previous one twice: 2^n copies of the first.
func laughs(n int) []byte {
	parts := []Part{{ID: 1, Text: []byte(`"lol"`)}}
	for i := 2; i <= n; i++ {
		text := append([]byte("["), AppendRef(nil, uint64(i-1))...)
		text = append(text, ',')
		text = append(AppendRef(text, uint64(i-1)), ']')
		parts = append(parts, Part{ID: uint64(i), Text: text})
	}
	return Append(nil, parts, AppendRef(nil, uint64(n)))
}

// FuzzExpandJSON checks that no input makes Expand panic or return more than its bound.
func FuzzExpandJSON(f *testing.F) {
	f.Add(Append(nil, []Part{{ID: 1, Text: []byte(`{"a":1}`)}}, AppendRef([]byte("["), 1)))
	f.Add(laughs(5))
	f.Add([]byte(`{"plain":true}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := Expand(data)
		if err == nil && len(out) > MaxExpanded {
			t.Fatalf("expanded to %d bytes", len(out))
		}
	})
}
