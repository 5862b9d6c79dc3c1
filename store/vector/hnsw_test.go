package vector

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
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
	for _, dense := range []string{"sketch", "graph"} {
		ix.SetDenseScan(dense == "sketch")
		if r := recallAt(t, ix, queries, 10, nil); r < 0.95 {
			t.Fatalf("%s: recall@10 = %.3f, want >= 0.95", dense, r)
		}
	}
}

// nearOrthogonal returns n random unit-variance vectors and queries that are noisy copies of
// some of them (cosine about 0.3 to their source): no clusters, a high intrinsic dimension,
// like hashed n-gram embeddings of short queries against long chunks.
func nearOrthogonal(n, nq, dims int, seed uint64) (vecs, queries [][]float32) {
	r := rand.New(rand.NewPCG(seed, 11))
	gauss := func() []float32 {
		v := make([]float32, dims)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		return v
	}
	for range n {
		vecs = append(vecs, gauss())
	}
	for range nq {
		src, noise := vecs[r.IntN(n)], gauss()
		q := make([]float32, dims)
		for j := range q {
			q[j] = 0.3*src[j] + 0.95*noise[j]
		}
		queries = append(queries, q)
	}
	return vecs, queries
}

// The sketch scan keeps its recall where a graph walk loses it: on near-orthogonal vectors.
func TestSketchRecallNearOrthogonal(t *testing.T) {
	vecs, queries := nearOrthogonal(5000, 100, 128, 3)
	// A small graph, quick to build: it is only the comparison.
	ix, err := New(128, &Options{M: 8, EfConstruction: 32})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		if err := ix.Add(fmt.Sprint(i), v); err != nil {
			t.Fatal(err)
		}
	}
	r := recallAt(t, ix, queries, 10, nil)
	if r < 0.95 {
		t.Fatalf("sketch recall@10 = %.3f, want >= 0.95", r)
	}
	// Fewer candidates must cost recall, or the knob does nothing.
	ix.SetRerank(20)
	low := recallAt(t, ix, queries, 10, nil)
	ix.SetRerank(0)
	if low >= r {
		t.Fatalf("rerank 20 gives recall %.3f, not below the default's %.3f", low, r)
	}
	ix.SetDenseScan(false)
	t.Logf("recall@10 on near-orthogonal vectors: sketch %.3f, sketch with 20 candidates %.3f, graph at ef 96 %.3f", r, low, recallAt(t, ix, queries, 10, nil))
}

func TestDenseGraphFrom(t *testing.T) {
	ix, err := New(16, &Options{DenseGraphFrom: -1})
	if err != nil {
		t.Fatal(err)
	}
	vecs := clustered(300, 16, 5, 2)
	for i, v := range vecs {
		ix.Add(fmt.Sprint(i), v)
	}
	if ix.sketcher != nil || len(ix.sketch) != 0 || ix.sketchOn() {
		t.Fatal("DenseGraphFrom < 0 keeps sketches")
	}
	ix2, _ := New(16, &Options{DenseGraphFrom: 200})
	for i, v := range vecs[:199] {
		ix2.Add(fmt.Sprint(i), v)
	}
	if !ix2.sketchOn() || len(ix2.sketch) != 199*ix2.opt.SketchBits/64 {
		t.Fatalf("below DenseGraphFrom: sketch on %v, %d words", ix2.sketchOn(), len(ix2.sketch))
	}
	ix2.Add("199", vecs[199])
	if ix2.sketchOn() {
		t.Fatal("at DenseGraphFrom vectors dense queries still scan the sketches")
	}
	if o := (Options{SketchBits: 100}).withDefaults(); o.SketchBits != 128 {
		t.Fatalf("SketchBits 100 became %d, want 128", o.SketchBits)
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
	for _, dense := range []string{"sketch", "graph"} {
		ix.SetDenseScan(dense == "sketch")
		if got, _ := ix.Search(vecs[0], 10, accept); len(got) != 5 {
			t.Fatalf("%s: got %d results, want the 5 accepted ids", dense, len(got))
		}
		if r := recallAt(t, ix, clustered(30, 32, 20, 5), 10, func(id string) bool { return len(id)%2 == 0 }); r < 0.9 {
			t.Fatalf("%s: filtered recall@10 = %.3f", dense, r)
		}
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

// A query with few non-zero components is answered by the column scan; it must agree with the
// row scan exactly, also under a filter and after deletes and replacements.
func TestSparseQueryIsExact(t *testing.T) {
	ix, vecs := setup(t, 3000, 64)
	for i := 0; i < 300; i++ {
		ix.Delete(fmt.Sprint(i * 7))
	}
	if err := ix.Add("5", vecs[9]); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 3))
	even := func(id string) bool { return len(id)%2 == 0 }
	for q := 0; q < 50; q++ {
		v := make([]float32, 64)
		for range 1 + r.IntN(15) { // at most 15 of 64 non-zero: below a quarter
			v[r.IntN(64)] = float32(r.NormFloat64())
		}
		if nonzero(v) == 0 {
			continue
		}
		for _, accept := range []func(string) bool{nil, even} {
			got, err := ix.Search(v, 10, accept)
			if err != nil {
				t.Fatal(err)
			}
			want, err := ix.Exact(v, 10, accept)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("query %d: %d results, exact has %d", q, len(got), len(want))
			}
			for i := range got {
				if got[i].ID != want[i].ID && math.Abs(float64(got[i].Similarity-want[i].Similarity)) > 1e-5 {
					t.Fatalf("query %d result %d: %v, exact %v", q, i, got[i], want[i])
				}
				if accept != nil && !accept(got[i].ID) {
					t.Fatalf("query %d: %q passed the filter", q, got[i].ID)
				}
				if n, _ := strconv.Atoi(got[i].ID); n%7 == 0 && n < 2100 {
					t.Fatalf("query %d: deleted %q came back", q, got[i].ID)
				}
			}
		}
	}
}

func TestDotMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for n := 0; n < 40; n++ {
		a, b := make([]float32, n), make([]float32, n)
		var want float64
		for i := range a {
			a[i], b[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
			want += float64(a[i]) * float64(b[i])
		}
		if got := Dot(a, b); math.Abs(float64(got)-want) > 1e-4 {
			t.Fatalf("n=%d: Dot %v, want %v", n, got, want)
		}
	}
}

// With the sparse scan off, a sparse query walks the graph: on clustered data its results are
// still mostly the exact ones.
func TestSparseScanOff(t *testing.T) {
	ix, vecs := setup(t, 2000, 64)
	ix.SetSparseScan(false)
	ix.SetDenseScan(false)
	var queries [][]float32
	for i := range 50 {
		v := make([]float32, 64)
		copy(v[:8], vecs[i][:8]) // 8 of 64 non-zero: sparse
		queries = append(queries, v)
	}
	if r := recallAt(t, ix, queries, 10, nil); r < 0.8 {
		t.Errorf("graph walk recall %.2f on sparse queries", r)
	}
	ix.SetSparseScan(true)
	if r := recallAt(t, ix, queries, 10, nil); r != 1 {
		t.Errorf("column scan recall %.2f, want 1", r)
	}
}

// TestLazyGraph: with LazyGraph the index links nothing while every query takes a scan, builds
// the graph on the Add that reaches DenseGraphFrom (or when a scan is turned off), and answers
// the same before and after.
func TestLazyGraph(t *testing.T) {
	vecs := clustered(400, 32, 10, 5)
	queries := clustered(30, 32, 10, 6)
	ix, err := New(32, &Options{LazyGraph: true, DenseGraphFrom: 300, Rerank: 400})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs[:299] {
		if err := ix.Add(strconv.Itoa(i), v); err != nil {
			t.Fatal(err)
		}
	}
	ix.Delete("3")
	ix.Add("5", vecs[5]) // a replaced vector leaves a tombstone too
	if ix.GraphBuilt() || ix.entry >= 0 {
		t.Fatalf("graph built below DenseGraphFrom (entry %d)", ix.entry)
	}
	for i := range ix.links {
		if ix.links[i] != nil {
			t.Fatalf("node %d has links before the graph is needed", i)
		}
	}
	// Below the threshold dense queries take the sketch scan, which re-scores every vector
	// here (Rerank 400 > 299), so it is exact.
	if r := recallAt(t, ix, queries, 10, nil); r != 1 {
		t.Fatalf("recall %.3f without a graph, want 1", r)
	}
	ix.Add("299", vecs[299]) // live 299: still below
	if ix.GraphBuilt() {
		t.Fatal("graph built at 299 live vectors")
	}
	ix.Add("300", vecs[300])
	if !ix.GraphBuilt() || ix.entry < 0 {
		t.Fatal("graph not built on reaching DenseGraphFrom")
	}
	for i := 301; i < len(vecs); i++ {
		ix.Add(strconv.Itoa(i), vecs[i])
	}
	// Now dense queries walk the graph: it must hold every live node and no deleted one.
	if r := recallAt(t, ix, queries, 10, nil); r < 0.9 {
		t.Fatalf("graph recall %.3f after the lazy build", r)
	}
	for _, q := range queries {
		res, _ := ix.Search(q, 50, nil)
		for _, r := range res {
			if r.ID == "3" {
				t.Fatal("a node deleted before the build came back")
			}
		}
	}
	for i, v := range vecs {
		if i == 3 {
			continue
		}
		res, _ := ix.Search(v, 1, nil)
		if len(res) != 1 || res[0].ID != strconv.Itoa(i) {
			t.Fatalf("vector %d finds %v, not itself", i, res)
		}
	}

	// Turning a scan off needs the graph at once.
	ix2, _ := New(32, &Options{LazyGraph: true})
	for i, v := range vecs[:100] {
		ix2.Add(strconv.Itoa(i), v)
	}
	if ix2.GraphBuilt() {
		t.Fatal("graph built for 100 vectors")
	}
	ix2.SetDenseScan(false)
	if !ix2.GraphBuilt() {
		t.Fatal("SetDenseScan(false) left the graph unbuilt")
	}
	if r := recallAt(t, ix2, queries, 10, nil); r < 0.9 {
		t.Fatalf("graph recall %.3f", r)
	}
	if ix3, _ := New(32, &Options{LazyGraph: true, NoSparseScan: true}); !ix3.GraphBuilt() {
		t.Fatal("NoSparseScan with LazyGraph: the graph should be built from the start")
	}
}
