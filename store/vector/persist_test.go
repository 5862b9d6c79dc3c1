package vector

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

func vectorsOf(vecs [][]float32, except map[int]bool) func(string) ([]float32, bool) {
	return func(id string) ([]float32, bool) {
		var n int
		if _, err := fmt.Sscan(id, &n); err != nil || n < 0 || n >= len(vecs) || except[n] {
			return nil, false
		}
		return vecs[n], true
	}
}

func TestSaveLoadGraph(t *testing.T) {
	ix, vecs := setup(t, 2000, 32)
	ix.Delete("7")
	var buf bytes.Buffer
	if err := ix.SaveGraph(&buf); err != nil {
		t.Fatal(err)
	}
	// Item 11 was deleted from the store after the save: its node becomes a waypoint.
	back, err := LoadGraph(bytes.NewReader(buf.Bytes()), vectorsOf(vecs, map[int]bool{11: true}))
	if err != nil {
		t.Fatal(err)
	}
	if back.Len() != ix.Len()-1 || back.Dims() != 32 {
		t.Fatalf("loaded %d live vectors of %d dims, want %d of 32", back.Len(), back.Dims(), ix.Len()-1)
	}
	queries := clustered(50, 32, 20, 9)
	for _, dense := range []string{"sketch", "graph"} {
		ix.SetDenseScan(dense == "sketch")
		back.SetDenseScan(dense == "sketch")
		for _, q := range queries {
			a, _ := ix.Search(q, 10, func(id string) bool { return id != "11" })
			b, _ := back.Search(q, 10, nil)
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatalf("%s: after loading the graph a search differs:\n got %v\nwant %v", dense, b, a)
			}
		}
	}
	if _, ok := back.Vector("7"); ok {
		t.Error("a node deleted before the save is live after loading")
	}
	// The loaded index keeps working: adds, deletes, compaction.
	if err := back.Add("new", queries[0]); err != nil {
		t.Fatal(err)
	}
	if res, _ := back.Search(queries[0], 1, nil); len(res) != 1 || res[0].ID != "new" {
		t.Fatalf("search for an added vector after loading: %v", res)
	}
	back.Compact()
	if back.Tombstones() != 0 {
		t.Errorf("%d tombstones after Compact", back.Tombstones())
	}
}

func TestLoadGraphRejectsDamage(t *testing.T) {
	ix, vecs := setup(t, 300, 16)
	var buf bytes.Buffer
	if err := ix.SaveGraph(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	vs := vectorsOf(vecs, nil)
	// Every truncation fails cleanly.
	for n := 0; n < len(good); n += 1 + n/50 {
		if _, err := LoadGraph(bytes.NewReader(good[:n]), vs); !errors.Is(err, ErrBadGraph) {
			t.Fatalf("truncated to %d of %d bytes: %v, want ErrBadGraph", n, len(good), err)
		}
	}
	// Flipped bytes never panic; they give an error or a usable index.
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		bad := bytes.Clone(good)
		for range 1 + r.IntN(4) {
			bad[r.IntN(len(bad))] ^= byte(1 + r.IntN(255))
		}
		back, err := LoadGraph(bytes.NewReader(bad), vs)
		if err == nil {
			if _, err := back.Search(vecs[0], 5, nil); err != nil && !errors.Is(err, ErrDimension) {
				t.Fatalf("search on a loaded damaged graph: %v", err)
			}
		}
	}
	// Vectors of another length are refused.
	_, err := LoadGraph(bytes.NewReader(good), func(string) ([]float32, bool) { return make([]float32, 8), true })
	if !errors.Is(err, ErrDimension) {
		t.Errorf("vectors of 8 dims for a 16-dim graph: %v, want ErrDimension", err)
	}
	if _, err := LoadGraph(bytes.NewReader([]byte("hello")), vs); !errors.Is(err, ErrBadGraph) {
		t.Errorf("foreign input: %v", err)
	}
}

// TestSaveLazyGraph: saving a lazy index that has no graph yet builds it, and the saved
// graph loads and answers like the index.
func TestSaveLazyGraph(t *testing.T) {
	vecs := clustered(500, 16, 8, 3)
	ix, _ := New(16, &Options{LazyGraph: true})
	for i, v := range vecs {
		ix.Add(fmt.Sprint(i), v)
	}
	ix.Delete("0")
	var buf bytes.Buffer
	if err := ix.SaveGraph(&buf); err != nil {
		t.Fatal(err)
	}
	if !ix.GraphBuilt() {
		t.Fatal("SaveGraph did not build the lazy graph")
	}
	back, err := LoadGraph(bytes.NewReader(buf.Bytes()), vectorsOf(vecs, map[int]bool{0: true}))
	if err != nil {
		t.Fatal(err)
	}
	back.SetDenseScan(false)
	ix.SetDenseScan(false)
	for _, q := range clustered(20, 16, 8, 4) {
		a, _ := ix.Search(q, 10, nil)
		b, _ := back.Search(q, 10, nil)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("loaded graph answers %v, the index %v", b, a)
		}
	}
}
