package checkpoint_test

import (
	"errors"
	"testing"

	"github.com/trellis-go/trellis/checkpoint"
)

func TestExpandJSON(t *testing.T) {
	plain := []byte(`{"a":[1,2]}`)
	if got, err := checkpoint.ExpandJSON(plain); err != nil || string(got) != string(plain) {
		t.Fatalf("plain JSON changed: %q, %v", got, err)
	}

	doc := []byte(`{"k":"v"}`)
	list := checkpoint.AppendSharedRef(append(checkpoint.AppendSharedRef([]byte("["), 1), ','), 1)
	list = append(list, ']')
	text := append([]byte(`{"one":`), checkpoint.AppendSharedRef(nil, 1)...)
	text = append(text, `,"two":`...)
	text = append(checkpoint.AppendSharedRef(text, 300), '}')
	parts := []checkpoint.SharedPart{{ID: 1, Text: doc}, {ID: 300, Text: list}}
	blob := checkpoint.AppendShared(nil, parts, text)
	if len(blob) != checkpoint.SharedSize(parts, text) {
		t.Errorf("SharedSize %d, AppendShared wrote %d", checkpoint.SharedSize(parts, text), len(blob))
	}
	got, err := checkpoint.ExpandJSON(blob)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"one":{"k":"v"},"two":[{"k":"v"},{"k":"v"}]}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestExpandJSONRejectsCorruptData(t *testing.T) {
	ref := func(id uint64) []byte { return checkpoint.AppendSharedRef(nil, id) }
	for name, data := range map[string][]byte{
		"newer version":         {checkpoint.SharedHeader, 9, 0},
		"no count":              {checkpoint.SharedHeader, 1},
		"too many parts":        {checkpoint.SharedHeader, 1, 100, 1},
		"part past the end":     {checkpoint.SharedHeader, 1, 1, 1, 50, '1'},
		"unknown reference":     checkpoint.AppendShared(nil, nil, ref(7)),
		"forward reference":     checkpoint.AppendShared(nil, []checkpoint.SharedPart{{ID: 1, Text: ref(2)}, {ID: 2, Text: []byte("1")}}, ref(1)),
		"self reference":        checkpoint.AppendShared(nil, []checkpoint.SharedPart{{ID: 1, Text: ref(1)}}, ref(1)),
		"duplicate part":        checkpoint.AppendShared(nil, []checkpoint.SharedPart{{ID: 1, Text: []byte("1")}, {ID: 1, Text: []byte("2")}}, ref(1)),
		"truncated reference":   checkpoint.AppendShared(nil, nil, []byte{0x1F, 0x80}),
		"billion laughs":        laughs(40),
		"header only, no count": {checkpoint.SharedHeader},
	} {
		if _, err := checkpoint.ExpandJSON(data); !errors.Is(err, checkpoint.ErrSharedJSON) {
			t.Errorf("%s: error %v, want ErrSharedJSON", name, err)
		}
	}
}

// laughs builds parts that each refer to the previous one twice: 2^n copies of the first.
func laughs(n int) []byte {
	parts := []checkpoint.SharedPart{{ID: 1, Text: []byte(`"lol"`)}}
	for i := 2; i <= n; i++ {
		text := append([]byte("["), checkpoint.AppendSharedRef(nil, uint64(i-1))...)
		text = append(text, ',')
		text = append(checkpoint.AppendSharedRef(text, uint64(i-1)), ']')
		parts = append(parts, checkpoint.SharedPart{ID: uint64(i), Text: text})
	}
	return checkpoint.AppendShared(nil, parts, checkpoint.AppendSharedRef(nil, uint64(n)))
}

// FuzzExpandJSON checks that no input makes ExpandJSON panic or return more than its bound.
func FuzzExpandJSON(f *testing.F) {
	f.Add(checkpoint.AppendShared(nil, []checkpoint.SharedPart{{ID: 1, Text: []byte(`{"a":1}`)}}, checkpoint.AppendSharedRef([]byte("["), 1)))
	f.Add(laughs(5))
	f.Add([]byte(`{"plain":true}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := checkpoint.ExpandJSON(data)
		if err == nil && len(out) > checkpoint.MaxExpandedJSON {
			t.Fatalf("expanded to %d bytes", len(out))
		}
	})
}
