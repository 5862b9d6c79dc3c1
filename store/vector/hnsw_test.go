package vector

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// clustered returns n vectors around a few random centres, which is how embeddings of real
// text are spread, plus queries drawn the same way.
func clustered(n, dims, clusters int, seed uint64) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 7))
	centres := make([][]float32, clusters)
	for i := range centres {
		centres[i] = make([]float32, dims)
		for j := range centres[i] {
			centres[i][j] = float32(r.NormFloat64())
		}
	}
	out := make([][]float32, n)
	for i := range out {
		c := centres[r.IntN(clusters)]
		v := make([]float32, dims)
		for j := range v {
			v[j] = c[j] + 0.6*float32(r.NormFloat64())
		}
		out[i] = v
	}
	return out
}

func setup(t testing.TB, n, dims int) (*Index, [][]float32) {
	t.Helper()
	ix, err := New(dims, nil)
	if err != nil {
		t.Fatal(err)
	}
	vecs := clustered(n, dims, 20, 1)
	for i, v := range vecs {
		if err := ix.Add(fmt.Sprint(i), v); err != nil {
			t.Fatal(err)
		}
	}
	return ix, vecs
}

func recallAt(t testing.TB, ix *Index, queries [][]float32, k int, accept func(string) bool) float64 {
	t.Helper()
	hit, total := 0, 0
	for _, q := range queries {
		got, err := ix.Search(q, k, accept)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ix.Exact(q, k, accept)
		if err != nil {
			t.Fatal(err)
		}
		in := map[string]bool{}
		for _, w := range want {
			in[w.ID] = true
		}
		for _, g := range got {
			if in[g.ID] {
				hit++
			}
		}
		total += len(want)
	}
	return float64(hit) / float64(total)
}

func TestRecallAgainstExact(t *testing.T) {
	ix, _ := setup(t, 4000, 64)
	queries := clustered(100, 64, 20, 99)
	if r := recallAt(t, ix, queries, 10, nil); r < 0.95 {
		t.Fatalf("recall@10 = %.3f, want >= 0.95", r)
	}
}

func TestSearchFindsItself(t *testing.T) {
	ix, vecs := setup(t, 2000, 32)
	for i := 0; i < 2000; i += 97 {
		got, err := ix.Search(vecs[i], 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ID != fmt.Sprint(i) || got[0].Similarity < 0.999 {
			t.Fatalf("search for vector %d returned %+v", i, got)
		}
	}
}

func TestFilterFallsBackToExact(t *testing.T) {
	ix, vecs := setup(t, 3000, 32)
	// Only 5 ids are acceptable: the walk rarely meets them all, the fallback must.
	accept := func(id string) bool { return id == "1" || id == "500" || id == "1000" || id == "2000" || id == "2999" }
	got, err := ix.Search(vecs[0], 10, accept)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Fatalf("got %d results, want the 5 accepted ids: %+v", len(got), got)
	}
	for _, g := range got {
		if !accept(g.ID) {
			t.Fatalf("result %q was not accepted", g.ID)
		}
	}
	if r := recallAt(t, ix, clustered(30, 32, 20, 5), 10, func(id string) bool { return len(id)%2 == 0 }); r < 0.9 {
		t.Fatalf("filtered recall@10 = %.3f", r)
	}
}

func TestDeleteReplaceCompact(t *testing.T) {
	ix, vecs := setup(t, 500, 16)
	ix.Delete("3")
	ix.Delete("missing")
	if ix.Len() != 499 {
		t.Fatalf("Len = %d, want 499", ix.Len())
	}
	got, _ := ix.Search(vecs[3], 5, nil)
	for _, g := range got {
		if g.ID == "3" {
			t.Fatal("deleted id returned")
		}
	}
	// Replace 4 by the vector of 7: a search for it finds both.
	if err := ix.Add("4", vecs[7]); err != nil {
		t.Fatal(err)
	}
	got, _ = ix.Search(vecs[7], 2, nil)
	if len(got) != 2 || got[1].Similarity < 0.999 {
		t.Fatalf("after replace: %+v", got)
	}
	if ix.Tombstones() != 2 {
		t.Fatalf("Tombstones = %d, want 2", ix.Tombstones())
	}
	ix.Compact()
	if ix.Tombstones() != 0 || ix.Len() != 499 {
		t.Fatalf("after compact: %d tombstones, %d live", ix.Tombstones(), ix.Len())
	}
	if v, ok := ix.Vector("4"); !ok || Cosine(v, vecs[7]) < 0.999 {
		t.Fatal("vector of 4 lost by compact")
	}
}

func TestBadInput(t *testing.T) {
	if _, err := New(0, nil); err == nil {
		t.Fatal("New(0) accepted")
	}
	ix, _ := New(4, nil)
	if err := ix.Add("a", []float32{1, 2, 3}); !errors.Is(err, ErrDimension) {
		t.Fatalf("3-dim add into 4-dim index: %v", err)
	}
	if err := ix.Add("a", []float32{0, 0, 0, 0}); !errors.Is(err, ErrZeroVector) {
		t.Fatalf("zero vector: %v", err)
	}
	if _, err := ix.Search([]float32{1}, 3, nil); !errors.Is(err, ErrDimension) {
		t.Fatalf("1-dim query: %v", err)
	}
	if got, err := ix.Search([]float32{1, 0, 0, 0}, 3, nil); err != nil || len(got) != 0 {
		t.Fatalf("search of empty index: %v %v", got, err)
	}
}

func BenchmarkSearch10k(b *testing.B) {
	ix, _ := setup(b, 10000, 128)
	qs := clustered(256, 128, 20, 3)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := ix.Search(qs[i%len(qs)], 10, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExact10k(b *testing.B) {
	ix, _ := setup(b, 10000, 128)
	qs := clustered(256, 128, 20, 3)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := ix.Exact(qs[i%len(qs)], 10, nil); err != nil {
			b.Fatal(err)
		}
	}
}
