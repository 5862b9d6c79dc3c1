// Package storebench measures store search over a corpus of synthetic chunks: query latency
// (p50, p99) and recall@10 of the HNSW index against exact search.
//
//	go test -run '^$' -bench . -benchtime 2000x ./bench/storebench/
//
// STOREBENCH_N sets the corpus size (default 100000). The corpus is deterministic: chunks of
// 40 to 90 words drawn from a Zipf-distributed vocabulary with topic words, embedded by the
// offline Local embedder (256 dimensions); queries are five words taken from random chunks.
package storebench

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trellis-go/trellis/embed"
	"github.com/trellis-go/trellis/store"
	"github.com/trellis-go/trellis/store/memstore"
	"github.com/trellis-go/trellis/store/pgstore"
	"github.com/trellis-go/trellis/store/sqlitestore"
	"github.com/trellis-go/trellis/store/vector"
)

const dims = 256

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func corpusSize() int {
	if s := os.Getenv("STOREBENCH_N"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	return 100000
}

type corpus struct {
	texts   []string
	vecs    [][]float32
	queries []string
	qvecs   [][]float32
}

var (
	corpusOnce sync.Once
	theCorpus  *corpus
)

func syllables(r *rand.Rand) string {
	parts := []string{"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qu", "de", "fi", "go", "hu", "ja", "xe", "yo", "bri", "str", "an", "el", "or"}
	n := 2 + r.IntN(3)
	var b strings.Builder
	for range n {
		b.WriteString(parts[r.IntN(len(parts))])
	}
	return b.String()
}

func getCorpus(tb testing.TB) *corpus {
	corpusOnce.Do(func() {
		n := corpusSize()
		r := rand.New(rand.NewPCG(42, 1))
		vocab := make([]string, 20000)
		for i := range vocab {
			vocab[i] = syllables(r) + strconv.Itoa(i%7)
		}
		zipf := rand.NewZipf(r, 1.1, 4, uint64(len(vocab)-1))
		topics := make([][]string, 200)
		for i := range topics {
			for range 30 {
				topics[i] = append(topics[i], vocab[r.IntN(len(vocab))])
			}
		}
		c := &corpus{texts: make([]string, n)}
		for i := range n {
			topic := topics[r.IntN(len(topics))]
			words := 40 + r.IntN(50)
			ws := make([]string, words)
			for j := range ws {
				if r.IntN(3) == 0 {
					ws[j] = topic[r.IntN(len(topic))]
				} else {
					ws[j] = vocab[zipf.Uint64()]
				}
			}
			c.texts[i] = strings.Join(ws, " ")
		}
		for range 1000 {
			ws := strings.Fields(c.texts[r.IntN(n)])
			var q []string
			for range 5 {
				q = append(q, ws[r.IntN(len(ws))])
			}
			c.queries = append(c.queries, strings.Join(q, " "))
		}
		e := embed.NewLocal(&embed.LocalOptions{Dims: dims})
		var err error
		if c.vecs, err = e.Embed(context.Background(), c.texts); err != nil {
			panic(err)
		}
		if c.qvecs, err = e.Embed(context.Background(), c.queries); err != nil {
			panic(err)
		}
		theCorpus = c
	})
	return theCorpus
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func report(b *testing.B, lat []time.Duration, recall float64) {
	b.ReportMetric(float64(percentile(lat, 0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(percentile(lat, 0.99).Microseconds())/1000, "p99-ms")
	if recall >= 0 {
		b.ReportMetric(recall, "recall@10")
	}
}

// timeQueries runs query(i) for i = 0, 1, ... once per benchmark iteration and returns the
// latencies. It logs what the slowest queries were and what the loop cost the collector
// (bytes allocated per query, collections and their total pause), to tell a slow query from
// a pause or a descheduled process.
func timeQueries(b *testing.B, queries []string, query func(q string) error) []time.Duration {
	var lat []time.Duration
	var idx []int
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	i := 0
	for b.Loop() {
		q := queries[i%len(queries)]
		t := time.Now()
		if err := query(q); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t))
		idx = append(idx, i%len(queries))
		i++
	}
	runtime.ReadMemStats(&after)
	if len(lat) == 0 {
		return lat
	}
	order := make([]int, len(lat))
	for j := range order {
		order[j] = j
	}
	slices.SortFunc(order, func(x, y int) int { return cmp.Compare(lat[y], lat[x]) })
	var slow []string
	for _, j := range order[:min(5, len(order))] {
		slow = append(slow, fmt.Sprintf("%s %q", lat[j].Round(10*time.Microsecond), queries[idx[j]]))
	}
	b.Logf("%d queries: %d KiB allocated per query, %d GCs pausing %s in all; slowest: %s",
		len(lat), (after.TotalAlloc-before.TotalAlloc)/uint64(len(lat))/1024, after.NumGC-before.NumGC,
		time.Duration(after.PauseTotalNs-before.PauseTotalNs).Round(time.Microsecond), strings.Join(slow, ", "))
	return lat
}

var (
	indexOnce sync.Once
	theIndex  *vector.Index
	buildTime time.Duration
)

func getIndex(c *corpus) *vector.Index {
	indexOnce.Do(func() {
		start := time.Now()
		ix, err := vector.New(dims, &vector.Options{M: envInt("STOREBENCH_M", 0), EfConstruction: envInt("STOREBENCH_EFC", 0)})
		if err != nil {
			panic(err)
		}
		for i, v := range c.vecs {
			if err := ix.Add(strconv.Itoa(i), v); err != nil {
				panic(err)
			}
		}
		buildTime = time.Since(start)
		theIndex = ix
	})
	return theIndex
}

// BenchmarkVectorIndex is one HNSW query per iteration over the whole corpus; recall@10 is
// measured on 1000 queries against the exact scan.
func BenchmarkVectorIndex(b *testing.B) {
	c := getCorpus(b)
	ix := getIndex(c)
	b.Logf("corpus %d vectors of %d dims; HNSW built in %s", len(c.vecs), dims, buildTime.Round(time.Millisecond))
	hit, total := 0, 0
	for i, q := range c.qvecs {
		got, _ := ix.Search(q, 10, nil)
		want, _ := ix.Exact(q, 10, nil)
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
		_ = i
	}
	var lat []time.Duration
	i := 0
	for b.Loop() {
		t := time.Now()
		if _, err := ix.Search(c.qvecs[i%len(c.qvecs)], 10, nil); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t))
		i++
	}
	report(b, lat, float64(hit)/float64(total))
}

// BenchmarkVectorSketchSparse is BenchmarkVectorIndex with the column scan turned off, so the
// sparse queries take the sketch scan that dense ones take: what the sketch costs and loses
// against the exact column scan on the same queries.
func BenchmarkVectorSketchSparse(b *testing.B) {
	c := getCorpus(b)
	ix := getIndex(c)
	ix.SetSparseScan(false)
	defer ix.SetSparseScan(true)
	exact := func(q []float32) []vector.Result { r, _ := ix.Exact(q, 10, nil); return r }
	search := func(q []float32) []vector.Result { r, _ := ix.Search(q, 10, nil); return r }
	recall := recallOf(c.qvecs, search, exact)
	var lat []time.Duration
	i := 0
	for b.Loop() {
		t := time.Now()
		if _, err := ix.Search(c.qvecs[i%len(c.qvecs)], 10, nil); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t))
		i++
	}
	report(b, lat, recall)
}

// BenchmarkVectorEf sweeps the search breadth on one graph: recall@10 against the exact scan
// and latency at each ef, to choose the default.
func BenchmarkVectorEf(b *testing.B) {
	c := getCorpus(b)
	ix := getIndex(c)
	// The benchmark's queries are sparse; without this they would all take the column scan.
	ix.SetSparseScan(false)
	ix.SetDenseScan(false)
	defer ix.SetSparseScan(true)
	defer ix.SetDenseScan(true)
	defer ix.SetEfSearch(0)
	want := make([]map[string]bool, len(c.qvecs))
	for i, q := range c.qvecs {
		res, _ := ix.Exact(q, 10, nil)
		want[i] = map[string]bool{}
		for _, w := range res {
			want[i][w.ID] = true
		}
	}
	for _, ef := range []int{32, 64, 96, 128, 192, 256, 384, 512} {
		b.Run(fmt.Sprint("ef", ef), func(b *testing.B) {
			ix.SetEfSearch(ef)
			hit, total := 0, 0
			for i, q := range c.qvecs {
				got, _ := ix.Search(q, 10, nil)
				for _, g := range got {
					if want[i][g.ID] {
						hit++
					}
				}
				total += len(want[i])
			}
			var lat []time.Duration
			i := 0
			for b.Loop() {
				t := time.Now()
				if _, err := ix.Search(c.qvecs[i%len(c.qvecs)], 10, nil); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
				i++
			}
			report(b, lat, float64(hit)/float64(total))
		})
	}
}

// BenchmarkVectorFlat is one search per iteration on an index without a graph (Options.Flat):
// the benchmark's five-word queries are sparse, so this times the column scan alone, without
// the minutes the graph takes to build.
func BenchmarkVectorFlat(b *testing.B) {
	c := getCorpus(b)
	ix, err := vector.New(dims, &vector.Options{Flat: true})
	if err != nil {
		b.Fatal(err)
	}
	for i, v := range c.vecs {
		if err := ix.Add(strconv.Itoa(i), v); err != nil {
			b.Fatal(err)
		}
	}
	hit, total := 0, 0
	for _, q := range c.qvecs[:200] {
		got, _ := ix.Search(q, 10, nil)
		want, _ := ix.Exact(q, 10, nil)
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
	var lat []time.Duration
	i := 0
	for b.Loop() {
		t := time.Now()
		if _, err := ix.Search(c.qvecs[i%len(c.qvecs)], 10, nil); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t))
		i++
	}
	report(b, lat, float64(hit)/float64(total))
}

// BenchmarkVectorExact is the exact scan the index is measured against.
func BenchmarkVectorExact(b *testing.B) {
	c := getCorpus(b)
	ix := getIndex(c)
	var lat []time.Duration
	i := 0
	for b.Loop() {
		t := time.Now()
		if _, err := ix.Exact(c.qvecs[i%len(c.qvecs)], 10, nil); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t))
		i++
	}
	report(b, lat, -1)
}

// fixedEmbedder returns precomputed vectors for the corpus texts and queries, so loading the
// store measures the store and not the embedder.
type fixedEmbedder struct {
	byText map[string][]float32
	local  *embed.Local
}

func (f *fixedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if v, ok := f.byText[t]; ok {
			out[i] = v
			continue
		}
		v, err := f.local.Embed(ctx, []string{t})
		if err != nil {
			return nil, err
		}
		out[i] = v[0]
	}
	return out, nil
}

var (
	sqliteOnce sync.Once
	sqlitePath string
	sqliteLoad time.Duration
)

func sqliteFile(b *testing.B, c *corpus, emb store.Embedder) string {
	sqliteOnce.Do(func() {
		// STOREBENCH_DB keeps the file between runs: loading 100,000 items and building the
		// graph take minutes, and a file made from the same corpus can be reused. It is made
		// when missing.
		if p := os.Getenv("STOREBENCH_DB"); p != "" {
			sqlitePath = p
			if _, err := os.Stat(p); err == nil {
				return
			}
		} else {
			dir, err := os.MkdirTemp("", "storebench")
			if err != nil {
				panic(err)
			}
			sqlitePath = filepath.Join(dir, "bench.db")
		}
		// Made under another name and renamed when complete, so an interrupted load is never
		// taken for a finished file.
		tmp := sqlitePath + ".loading"
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(tmp + suffix)
		}
		s, err := sqlitestore.Open(context.Background(), tmp, &sqlitestore.Options{Config: store.Config{
			Logger: slog.New(slog.DiscardHandler),
			Index:  &store.IndexConfig{Embedder: emb, Dims: dims, Fields: []string{"text"}},
		}, ExactVectors: true})
		if err != nil {
			panic(err)
		}
		start := time.Now()
		for i, t := range c.texts {
			ns := []string{"kb", "team" + strconv.Itoa(i%4)}
			if err := s.Put(context.Background(), store.PutRequest{Namespace: ns, Key: strconv.Itoa(i), Value: map[string]any{"text": t, "n": i}}); err != nil {
				panic(err)
			}
		}
		sqliteLoad = time.Since(start)
		if err := s.Close(); err != nil {
			panic(err)
		}
		if err := os.Rename(tmp, sqlitePath); err != nil {
			panic(err)
		}
	})
	return sqlitePath
}

// BenchmarkSQLiteSearch is one hybrid query (vector and full text, limit 10, under the "kb"
// prefix) per iteration on a SQLite store of the whole corpus; recall@10 compares its results
// with the same store searching its vectors exactly.
func BenchmarkSQLiteSearch(b *testing.B) {
	c := getCorpus(b)
	emb := &fixedEmbedder{byText: map[string][]float32{}, local: embed.NewLocal(&embed.LocalOptions{Dims: dims})}
	for i, t := range c.texts {
		emb.byText[t] = c.vecs[i]
	}
	for i, q := range c.queries {
		emb.byText[q] = c.qvecs[i]
	}
	path := sqliteFile(b, c, emb)
	open := func(exact bool) *sqlitestore.Store {
		start := time.Now()
		s, err := sqlitestore.Open(context.Background(), path, &sqlitestore.Options{Config: store.Config{
			Logger: slog.New(slog.DiscardHandler), NoRefreshOnRead: true,
			Index: &store.IndexConfig{Embedder: emb, Dims: dims, Fields: []string{"text"}},
		}, ExactVectors: exact})
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("opened %d-item store (exact=%v) in %s", len(c.texts), exact, time.Since(start).Round(time.Millisecond))
		return s
	}
	b.Logf("loaded %d items with 100k puts in %s", len(c.texts), sqliteLoad.Round(time.Millisecond))
	// The first open of the approximate store builds the HNSW graph and saves it in the file;
	// the second loads it (both times are logged).
	open(false).Close()
	approx, exact := open(false), open(true)
	defer approx.Close()
	defer exact.Close()
	ctx := context.Background()
	hit, total := 0, 0
	for _, q := range c.queries[:200] {
		got, err := approx.Search(ctx, store.SearchRequest{NamespacePrefix: []string{"kb"}, Query: q})
		if err != nil {
			b.Fatal(err)
		}
		want, err := exact.Search(ctx, store.SearchRequest{NamespacePrefix: []string{"kb"}, Query: q})
		if err != nil {
			b.Fatal(err)
		}
		in := map[string]bool{}
		for _, w := range want {
			in[fmt.Sprint(w.Namespace, w.Key)] = true
		}
		for _, g := range got {
			if in[fmt.Sprint(g.Namespace, g.Key)] {
				hit++
			}
		}
		total += len(want)
	}
	lat := timeQueries(b, c.queries, func(q string) error {
		_, err := approx.Search(ctx, store.SearchRequest{NamespacePrefix: []string{"kb"}, Query: q})
		return err
	})
	report(b, lat, float64(hit)/float64(total))
}

// BenchmarkSQLiteTextSearch is one full-text Search (no embedder, limit 10, under "kb") per
// iteration on the SQLite store of the corpus. The queries are the vector benchmarks' five
// words, drawn from a Zipf vocabulary, so most hold a word that thousands of chunks share.
func BenchmarkSQLiteTextSearch(b *testing.B) {
	c := getCorpus(b)
	emb := &fixedEmbedder{byText: map[string][]float32{}, local: embed.NewLocal(&embed.LocalOptions{Dims: dims})}
	for i, t := range c.texts {
		emb.byText[t] = c.vecs[i]
	}
	path := sqliteFile(b, c, emb)
	s, err := sqlitestore.Open(context.Background(), path, &sqlitestore.Options{Config: store.Config{
		Logger: slog.New(slog.DiscardHandler), NoRefreshOnRead: true,
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	var lat []time.Duration
	i := 0
	for b.Loop() {
		t := time.Now()
		res, err := s.Search(ctx, store.SearchRequest{NamespacePrefix: []string{"kb"}, Query: c.queries[i%len(c.queries)]})
		if err != nil {
			b.Fatal(err)
		}
		if len(res) == 0 {
			b.Fatalf("no result for %q, taken from a chunk", c.queries[i%len(c.queries)])
		}
		lat = append(lat, time.Since(t))
		i++
	}
	report(b, lat, -1)
}

// The dense corpus: the Local vectors through a fixed random projection, normalized. Every
// component is non-zero, as with a model provider's embeddings, so queries never take the
// sparse column scan; the geometry (near-orthogonal chunks, queries far from every chunk)
// stays that of the hashed vectors, which is the hard case for a graph walk.
var (
	denseOnce           sync.Once
	denseVecs, denseQry [][]float32
)

func project(r []float32, v []float32) []float32 {
	out := make([]float32, dims)
	var norm float64
	for i := range out {
		out[i] = vector.Dot(r[i*dims:(i+1)*dims], v)
		norm += float64(out[i]) * float64(out[i])
	}
	if norm > 0 {
		inv := float32(1 / math.Sqrt(norm))
		for i := range out {
			out[i] *= inv
		}
	}
	return out
}

func getDense(c *corpus) ([][]float32, [][]float32) {
	denseOnce.Do(func() {
		rnd := rand.New(rand.NewPCG(7, 7))
		r := make([]float32, dims*dims)
		for i := range r {
			r[i] = float32(rnd.NormFloat64())
		}
		denseVecs = make([][]float32, len(c.vecs))
		for i, v := range c.vecs {
			denseVecs[i] = project(r, v)
		}
		for _, q := range c.qvecs {
			denseQry = append(denseQry, project(r, q))
		}
	})
	return denseVecs, denseQry
}

// recallOf is recall@10 of search against exact over the queries.
func recallOf(queries [][]float32, search, exact func(q []float32) []vector.Result) float64 {
	hit, total := 0, 0
	for _, q := range queries {
		in := map[string]bool{}
		for _, w := range exact(q) {
			in[w.ID] = true
		}
		for _, g := range search(q) {
			if in[g.ID] {
				hit++
			}
		}
		total += len(in)
	}
	return float64(hit) / float64(total)
}

// BenchmarkVectorDense is one dense query (k=10) per iteration on store/vector over the dense
// corpus: sub-benchmarks for the sketch scan at several rerank sizes and for the graph walk at
// two EfSearch; recall@10 against Exact on 1000 queries.
func BenchmarkVectorDense(b *testing.B) {
	c := getCorpus(b)
	vecs, queries := getDense(c)
	start := time.Now()
	ix, err := vector.New(dims, &vector.Options{M: envInt("STOREBENCH_M", 0), EfConstruction: envInt("STOREBENCH_EFC", 0)})
	if err != nil {
		b.Fatal(err)
	}
	for i, v := range vecs {
		if err := ix.Add(strconv.Itoa(i), v); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("dense index of %d vectors built (graph and sketches) in %s", len(vecs), time.Since(start).Round(time.Millisecond))
	exact := func(q []float32) []vector.Result { r, _ := ix.Exact(q, 10, nil); return r }
	search := func(q []float32) []vector.Result { r, _ := ix.Search(q, 10, nil); return r }
	run := func(b *testing.B) {
		recall := recallOf(queries, search, exact)
		var lat []time.Duration
		i := 0
		for b.Loop() {
			t := time.Now()
			if _, err := ix.Search(queries[i%len(queries)], 10, nil); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t))
			i++
		}
		report(b, lat, recall)
	}
	for _, n := range []int{400, 1600, 3200, 6400} {
		b.Run(fmt.Sprint("sketch-rerank", n), func(b *testing.B) {
			ix.SetRerank(n)
			defer ix.SetRerank(0)
			run(b)
		})
	}
	ix.SetDenseScan(false)
	defer ix.SetDenseScan(true)
	for _, ef := range []int{96, 512} {
		b.Run(fmt.Sprint("graph-ef", ef), func(b *testing.B) {
			ix.SetEfSearch(ef)
			defer ix.SetEfSearch(0)
			run(b)
		})
	}
}

// memStores returns an approximate and an exact in-memory store holding the corpus (under
// kb/team0..3, as the SQLite benchmark), with the embedder given.
func memStores(b *testing.B, c *corpus, emb store.Embedder) (approx, exact *memstore.Store) {
	ctx := context.Background()
	for _, ex := range []bool{false, true} {
		start := time.Now()
		s, err := memstore.New(&memstore.Options{Config: store.Config{
			Logger: slog.New(slog.DiscardHandler), NoRefreshOnRead: true,
			Index: &store.IndexConfig{Embedder: emb, Dims: dims, Fields: []string{"text"}},
		}, ExactVectors: ex})
		if err != nil {
			b.Fatal(err)
		}
		for i, t := range c.texts {
			ns := []string{"kb", "team" + strconv.Itoa(i%4)}
			if err := s.Put(ctx, store.PutRequest{Namespace: ns, Key: strconv.Itoa(i), Value: map[string]any{"text": t, "n": i}}); err != nil {
				b.Fatal(err)
			}
		}
		b.Logf("in-memory store (exact=%v) of %d items loaded in %s", ex, len(c.texts), time.Since(start).Round(time.Millisecond))
		if ex {
			exact = s
		} else {
			approx = s
		}
	}
	return approx, exact
}

// searchBench times store.Search (query, prefix "kb", limit 10) on approx, after measuring
// recall@10 against exact on 200 queries.
func searchBench(b *testing.B, approx, exact store.Store, queries []string) {
	ctx := context.Background()
	hit, total := 0, 0
	for _, q := range queries[:200] {
		got, err := approx.Search(ctx, store.SearchRequest{NamespacePrefix: []string{"kb"}, Query: q})
		if err != nil {
			b.Fatal(err)
		}
		want, err := exact.Search(ctx, store.SearchRequest{NamespacePrefix: []string{"kb"}, Query: q})
		if err != nil {
			b.Fatal(err)
		}
		in := map[string]bool{}
		for _, w := range want {
			in[fmt.Sprint(w.Namespace, w.Key)] = true
		}
		for _, g := range got {
			if in[fmt.Sprint(g.Namespace, g.Key)] {
				hit++
			}
		}
		total += len(want)
	}
	lat := timeQueries(b, queries, func(q string) error {
		_, err := approx.Search(ctx, store.SearchRequest{NamespacePrefix: []string{"kb"}, Query: q})
		return err
	})
	report(b, lat, float64(hit)/float64(total))
}

// BenchmarkMemSearch is one hybrid store.Search per iteration on the in-memory store of the
// corpus: "sparse" with the Local vectors (queries take the column scan), "dense" with the
// projected ones (queries take the sketch scan); recall@10 against the same store with
// ExactVectors. Each sub-benchmark loads its own stores (seconds: the store's graph is lazy,
// and below a million vectors no search needs it).
func BenchmarkMemSearch(b *testing.B) {
	c := getCorpus(b)
	for _, kind := range []string{"sparse", "dense"} {
		b.Run(kind, func(b *testing.B) {
			vecs, qvecs := c.vecs, c.qvecs
			if kind == "dense" {
				vecs, qvecs = getDense(c)
			}
			emb := &fixedEmbedder{byText: map[string][]float32{}, local: embed.NewLocal(&embed.LocalOptions{Dims: dims})}
			for i, t := range c.texts {
				emb.byText[t] = vecs[i]
			}
			for i, q := range c.queries {
				emb.byText[q] = qvecs[i]
			}
			approx, exact := memStores(b, c, emb)
			defer approx.Close()
			defer exact.Close()
			searchBench(b, approx, exact, c.queries)
		})
	}
}

// BenchmarkPGSearch is one hybrid store.Search per iteration on the Postgres store of the
// corpus (pgvector when installed), in schema storebench_<N> of STOREBENCH_PG (default the
// test database), which is kept between runs and reloaded only when it does not hold the
// corpus. One sub-benchmark per hnsw.ef_search in STOREBENCH_PG_EF (default the store's).
// Recall@10 is against the same schema opened with Vector: exact, on 100 queries (an exact
// search reads every vector over the connection). Skips when Postgres is unreachable.
func BenchmarkPGSearch(b *testing.B) {
	c := getCorpus(b)
	ctx := context.Background()
	dsn := os.Getenv("STOREBENCH_PG")
	if dsn == "" {
		dsn = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	admin, err := pgxpool.New(ctx, dsn)
	if err == nil {
		err = admin.Ping(ctx)
	}
	if err != nil {
		b.Skipf("Postgres unreachable: %v (set STOREBENCH_PG)", err)
	}
	defer admin.Close()
	schema := fmt.Sprintf("storebench_%d", len(c.texts))
	emb := &fixedEmbedder{byText: map[string][]float32{}, local: embed.NewLocal(&embed.LocalOptions{Dims: dims})}
	for i, t := range c.texts {
		emb.byText[t] = c.vecs[i]
	}
	for i, q := range c.queries {
		emb.byText[q] = c.qvecs[i]
	}
	open := func(mode pgstore.VectorMode, ef int) *pgstore.Store {
		cfg, err := pgxpool.ParseConfig(dsn)
		if err != nil {
			b.Fatal(err)
		}
		cfg.ConnConfig.RuntimeParams["search_path"] = schema + ",public"
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(pool.Close)
		s, err := pgstore.New(ctx, pool, &pgstore.Options{Config: store.Config{
			Logger: slog.New(slog.DiscardHandler), NoRefreshOnRead: true,
			Index: &store.IndexConfig{Embedder: emb, Dims: dims, Fields: []string{"text"}},
		}, Vector: mode, EfSearch: ef})
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	var have int
	if err := admin.QueryRow(ctx, "SELECT count(*) FROM "+schema+".store_items").Scan(&have); err != nil || have != len(c.texts) {
		start := time.Now()
		if _, err := admin.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE; CREATE SCHEMA "+schema); err != nil {
			b.Fatal(err)
		}
		s := open(pgstore.VectorAuto, 0)
		// Four writers: each put is a few round trips.
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < len(c.texts); i += 4 {
					ns := []string{"kb", "team" + strconv.Itoa(i%4)}
					if err := s.Put(ctx, store.PutRequest{Namespace: ns, Key: strconv.Itoa(i), Value: map[string]any{"text": c.texts[i], "n": i}}); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
		if _, err := admin.Exec(ctx, "ANALYZE "+schema+".store_items"); err != nil {
			b.Fatal(err)
		}
		b.Logf("loaded %d items into Postgres schema %s in %s", len(c.texts), schema, time.Since(start).Round(time.Millisecond))
		s.Close()
	}
	exact := open(pgstore.VectorExact, 0)
	defer exact.Close()
	// The exact answers, once for every ef_search measured.
	const recallQueries = 100
	want := make([]map[string]bool, recallQueries)
	for i, q := range c.queries[:recallQueries] {
		res, err := exact.Search(ctx, store.SearchRequest{NamespacePrefix: []string{"kb"}, Query: q})
		if err != nil {
			b.Fatal(err)
		}
		want[i] = map[string]bool{}
		for _, w := range res {
			want[i][fmt.Sprint(w.Namespace, w.Key)] = true
		}
	}
	// STOREBENCH_PG_EF lists the hnsw.ef_search values to measure (pgstore.Options.EfSearch:
	// 0 the store's default, -1 pgvector's 40).
	efs := []int{0}
	if e := os.Getenv("STOREBENCH_PG_EF"); e != "" {
		efs = nil
		for f := range strings.SplitSeq(e, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				b.Fatalf("STOREBENCH_PG_EF: %v", err)
			}
			efs = append(efs, n)
		}
	}
	for _, ef := range efs {
		b.Run(fmt.Sprintf("ef%d", ef), func(b *testing.B) {
			approx := open(pgstore.VectorAuto, ef)
			defer approx.Close()
			b.Logf("pgvector in use: %v", approx.UsesPGVector())
			hit, total := 0, 0
			for i, q := range c.queries[:recallQueries] {
				got, err := approx.Search(ctx, store.SearchRequest{NamespacePrefix: []string{"kb"}, Query: q})
				if err != nil {
					b.Fatal(err)
				}
				for _, g := range got {
					if want[i][fmt.Sprint(g.Namespace, g.Key)] {
						hit++
					}
				}
				total += len(want[i])
			}
			lat := timeQueries(b, c.queries, func(q string) error {
				_, err := approx.Search(ctx, store.SearchRequest{NamespacePrefix: []string{"kb"}, Query: q})
				return err
			})
			report(b, lat, float64(hit)/float64(total))
		})
	}
}
