package vector

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
)

// ErrDimension is returned for a vector whose length is not the index's dimension.
var ErrDimension = errors.New("vector: wrong dimension")

// ErrZeroVector is returned for a vector of length zero (all components 0), which has no
// direction and so no cosine similarity.
var ErrZeroVector = errors.New("vector: zero vector")

// Options tune the HNSW graph. The zero Options are the documented defaults.
type Options struct {
	// M is the number of links per node on the upper layers (twice that on the bottom layer).
	// Zero means 16.
	M int
	// EfConstruction is the breadth of the search that links a new node. Zero means 128.
	EfConstruction int
	// EfSearch is the breadth of a query's search; it is raised to k when k is larger. Higher
	// means better recall and slower queries. Zero means 96.
	EfSearch int
	// Seed makes the layer assignment reproducible. Zero means 1.
	Seed uint64
	// Flat keeps the vectors without building the graph: every search is exact. Use it when
	// only exact search is wanted, to save the graph's build time and memory.
	Flat bool
	// NoSparseScan makes sparse queries walk the graph too, instead of the exact column scan
	// (see the package guide). Useful to measure the graph; rarely otherwise.
	NoSparseScan bool
	// DenseGraphFrom is the number of live vectors from which dense queries walk the graph;
	// on a smaller index they take the sketch scan (see the package guide). Zero means
	// 1,000,000; a negative value means always the graph (and no sketches are kept).
	DenseGraphFrom int
	// SketchBits is the length of each vector's sign sketch, rounded up to a multiple of 64
	// and at most 1024. Zero means 512.
	SketchBits int
	// Rerank is how many vectors, nearest by sketch, a dense query re-scores exactly. More
	// means better recall and slower queries. Zero means the largest of 1000, 16*k and a 64th
	// of the live vectors.
	Rerank int
	// LazyGraph keeps the vectors without linking them into the graph until a search could
	// walk it: when the live vectors reach DenseGraphFrom, or a scan is turned off
	// (NoSparseScan, SetSparseScan, SetDenseScan). Below that every query takes the column or
	// the sketch scan, so an index of 100,000 vectors is ready in seconds instead of the
	// minutes the graph takes; the Add that crosses the threshold builds the whole graph.
	// [Index.SaveGraph] builds it first. Ignored when DenseGraphFrom is negative.
	LazyGraph bool
}

func (o Options) withDefaults() Options {
	if o.M <= 0 {
		o.M = 16
	}
	if o.EfConstruction <= 0 {
		o.EfConstruction = 128
	}
	if o.EfSearch <= 0 {
		o.EfSearch = 96
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.DenseGraphFrom == 0 {
		o.DenseGraphFrom = defaultDenseGraphFrom
	}
	if o.SketchBits <= 0 {
		o.SketchBits = defaultSketchBits
	}
	o.SketchBits = min(1024, (o.SketchBits+63)/64*64)
	return o
}

// Result is one neighbour found by a search.
type Result struct {
	ID string
	// Similarity is the cosine similarity to the query, from -1 to 1.
	Similarity float32
}

// Index is an approximate nearest-neighbour index under cosine similarity: a hierarchical
// navigable small world graph (Malkov and Yashunin, 2016) over normalized vectors, with exact
// search beside it for small or heavily filtered sets.
//
// All methods may be called concurrently; Add and Delete serialize with each other and with
// searches.
type Index struct {
	mu       sync.RWMutex
	dims     int
	opt      Options
	mult     float64
	rng      *rand.Rand
	vecs     []float32   // node i at vecs[i*dims:(i+1)*dims], normalized
	cols     [][]float32 // cols[j][i] is component j of node i: the same vectors by dimension
	ids      []string
	links    [][][]int32 // links[node][layer]
	deleted  []bool
	byID     map[string]int32
	entry    int32
	maxLevel int
	live     int
	visited  sync.Pool
	scores   sync.Pool // *[]float32 for sparse scans
	// sketcher makes the sign sketches (nil when DenseGraphFrom is negative); sketch holds
	// SketchBits/64 words per node.
	sketcher    *sketcher
	sketch      []uint64
	hamming     sync.Pool // *[]uint16 for sketch scans
	noDenseScan bool
	// graphOff says the graph is not built yet (Options.LazyGraph): nodes have no links and
	// entry is -1 until graphNeeded.
	graphOff bool
}

// New returns an empty index for vectors of dims dimensions. opts may be nil.
func New(dims int, opts *Options) (*Index, error) {
	if dims <= 0 {
		return nil, fmt.Errorf("vector: dimension must be positive, got %d", dims)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	o = o.withDefaults()
	ix := &Index{
		dims:  dims,
		opt:   o,
		mult:  1 / math.Log(float64(o.M)),
		rng:   rand.New(rand.NewPCG(o.Seed, 0x5eed)),
		byID:  map[string]int32{},
		entry: -1,
		cols:  make([][]float32, dims),
	}
	ix.initSketch()
	ix.graphOff = o.LazyGraph && !o.Flat
	ix.syncGraphLocked()
	return ix, nil
}

// graphNeeded reports whether some search could walk the graph: a scan is off, or dense
// queries walk it at this size.
func (ix *Index) graphNeeded() bool {
	return !ix.opt.Flat && (ix.opt.NoSparseScan || ix.noDenseScan || ix.sketcher == nil || ix.live >= ix.opt.DenseGraphFrom)
}

// syncGraphLocked builds a lazy graph once it is needed; the caller holds the write lock.
func (ix *Index) syncGraphLocked() {
	if ix.graphOff && ix.graphNeeded() {
		ix.buildGraphLocked()
	}
}

// buildGraphLocked links every live node into the graph, in the order they were added.
// Deleted nodes get an empty bottom layer: nothing links to them, so no walk reaches them.
func (ix *Index) buildGraphLocked() {
	ix.graphOff = false
	for n := range ix.ids {
		if ix.deleted[n] {
			ix.links[n] = [][]int32{nil}
			continue
		}
		ix.linkNode(int32(n))
	}
}

// GraphBuilt reports whether the graph is built: always, unless [Options].LazyGraph and no
// search has needed it yet (or the index is Flat).
func (ix *Index) GraphBuilt() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return !ix.opt.Flat && !ix.graphOff
}

// initSketch prepares the sketches unless dense queries always walk the graph.
func (ix *Index) initSketch() {
	if ix.opt.DenseGraphFrom >= 0 && !ix.opt.Flat {
		ix.sketcher = newSketcher(ix.opt.SketchBits, ix.dims)
	}
}

// appendVec stores the normalized vector of a new node: by node, by dimension, and its sketch.
func (ix *Index) appendVec(q []float32) {
	ix.vecs = append(ix.vecs, q...)
	for j, x := range q {
		ix.cols[j] = append(ix.cols[j], x)
	}
	if ix.sketcher != nil {
		ix.sketch = ix.sketchOf(ix.sketch, q)
	}
}

// SetEfSearch changes the breadth of later searches (see [Options].EfSearch); ef <= 0 restores
// the default. It lets a caller trade recall for speed without rebuilding the graph.
func (ix *Index) SetEfSearch(ef int) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.opt.EfSearch = ef
	ix.opt = ix.opt.withDefaults()
}

// SetDenseScan turns the sketch scan for dense queries on (the default, below
// [Options].DenseGraphFrom vectors) or off; off, dense queries walk the graph.
func (ix *Index) SetDenseScan(on bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.noDenseScan = !on
	ix.syncGraphLocked()
}

// SetRerank changes how many sketch candidates a dense query re-scores (see
// [Options].Rerank); n <= 0 restores the default.
func (ix *Index) SetRerank(n int) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.opt.Rerank = max(0, n)
}

// SetSparseScan turns the exact column scan for sparse queries on (the default) or off; off,
// every query walks the graph.
func (ix *Index) SetSparseScan(on bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.opt.NoSparseScan = !on
	ix.syncGraphLocked()
}

// Dims returns the dimension of the index.
func (ix *Index) Dims() int { return ix.dims }

// Len returns the number of live vectors.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.live
}

func (ix *Index) checkVec(v []float32) error {
	if len(v) != ix.dims {
		return fmt.Errorf("%w: got %d dimensions, the index has %d", ErrDimension, len(v), ix.dims)
	}
	return nil
}

// Normalize returns v scaled to unit length, or ErrZeroVector.
func Normalize(v []float32) ([]float32, error) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return nil, ErrZeroVector
	}
	inv := float32(1 / math.Sqrt(s))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * inv
	}
	return out, nil
}

// Dot returns the dot product of two vectors of the same length.
//
// The loop keeps eight independent sums so the CPU can overlap the multiplications, and slices
// both inputs to the same length up front so the compiler drops the bounds checks inside it.
func Dot(a, b []float32) float32 {
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for len(a) >= 8 && len(b) >= 8 {
		a8, b8 := a[:8:8], b[:8:8]
		s0 += a8[0] * b8[0]
		s1 += a8[1] * b8[1]
		s2 += a8[2] * b8[2]
		s3 += a8[3] * b8[3]
		s4 += a8[4] * b8[4]
		s5 += a8[5] * b8[5]
		s6 += a8[6] * b8[6]
		s7 += a8[7] * b8[7]
		a, b = a[8:], b[8:]
	}
	for i := range min(len(a), len(b)) {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
}

// Cosine returns the cosine similarity of two vectors, 0 when either is zero.
func Cosine(a, b []float32) float32 {
	na, nb := Dot(a, a), Dot(b, b)
	if na == 0 || nb == 0 {
		return 0
	}
	return Dot(a, b) / float32(math.Sqrt(float64(na))*math.Sqrt(float64(nb)))
}

func (ix *Index) vec(n int32) []float32 {
	return ix.vecs[int(n)*ix.dims : int(n+1)*ix.dims]
}

func (ix *Index) dist(q []float32, n int32) float32 { return 1 - Dot(q, ix.vec(n)) }

// Add inserts or replaces the vector of id.
func (ix *Index) Add(id string, v []float32) error {
	if err := ix.checkVec(v); err != nil {
		return err
	}
	q, err := Normalize(v)
	if err != nil {
		return fmt.Errorf("%w (id %q)", err, id)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if old, ok := ix.byID[id]; ok {
		ix.deleted[old] = true
		ix.live--
	}
	ix.insert(id, q)
	ix.syncGraphLocked()
	return nil
}

// Delete removes id; deleting an absent id does nothing. The node stays in the graph as a
// waypoint until [Index.Compact].
func (ix *Index) Delete(id string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if n, ok := ix.byID[id]; ok {
		ix.deleted[n] = true
		delete(ix.byID, id)
		ix.live--
	}
}

// Tombstones returns how many deleted nodes still sit in the graph.
func (ix *Index) Tombstones() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.ids) - ix.live
}

// Compact rebuilds the graph without its deleted nodes.
func (ix *Index) Compact() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	oldVecs, oldIDs, oldDeleted := ix.vecs, ix.ids, ix.deleted
	ix.vecs, ix.ids, ix.links, ix.deleted, ix.sketch = nil, nil, nil, nil, nil
	ix.cols = make([][]float32, ix.dims)
	ix.byID = map[string]int32{}
	ix.entry, ix.maxLevel, ix.live = -1, 0, 0
	for n := range oldIDs {
		if !oldDeleted[n] {
			ix.insert(oldIDs[n], oldVecs[n*ix.dims:(n+1)*ix.dims])
		}
	}
}

func (ix *Index) randomLevel() int {
	r := ix.rng.Float64()
	if r == 0 {
		r = math.SmallestNonzeroFloat64
	}
	return min(int(-math.Log(r)*ix.mult), 16)
}

func (ix *Index) maxLinks(layer int) int {
	if layer == 0 {
		return 2 * ix.opt.M
	}
	return ix.opt.M
}

// insert adds a normalized vector, and links it into the graph unless there is none (Flat,
// or a lazy graph not built yet); the caller holds the write lock.
func (ix *Index) insert(id string, q []float32) {
	n := int32(len(ix.ids))
	ix.appendVec(q)
	ix.ids = append(ix.ids, id)
	ix.deleted = append(ix.deleted, false)
	ix.byID[id] = n
	ix.live++
	ix.links = append(ix.links, nil)
	if ix.opt.Flat || ix.graphOff {
		return
	}
	ix.linkNode(n)
}

// linkNode links node n, whose vector is stored, into the graph at a random level.
func (ix *Index) linkNode(n int32) {
	level := ix.randomLevel()
	q := ix.vec(n)
	ix.links[n] = make([][]int32, level+1)
	if ix.entry < 0 {
		ix.entry, ix.maxLevel = n, level
		return
	}
	ep := ix.entry
	epDist := ix.dist(q, ep)
	for l := ix.maxLevel; l > level; l-- {
		ep, epDist = ix.greedy(q, ep, epDist, l)
	}
	eps := []cand{{ep, epDist}}
	for l := min(level, ix.maxLevel); l >= 0; l-- {
		w := ix.searchLayer(q, eps, ix.opt.EfConstruction, l, nil)
		nb := ix.selectNeighbors(w, ix.opt.M)
		ix.links[n][l] = ids(nb)
		for _, c := range nb {
			ix.link(c.n, n, c.d, l)
		}
		eps = w
	}
	if level > ix.maxLevel {
		ix.entry, ix.maxLevel = n, level
	}
}

func ids(cs []cand) []int32 {
	out := make([]int32, len(cs))
	for i, c := range cs {
		out[i] = c.n
	}
	return out
}

// link adds the edge from -> to at a layer. A list may grow half again past its size before it
// is pruned back with the heuristic: pruning costs O(M²) distances, and amortizing it over
// many additions keeps build time low at no loss of recall.
func (ix *Index) link(from, to int32, d float32, l int) {
	lst := append(ix.links[from][l], to)
	ix.links[from][l] = lst
	m := ix.maxLinks(l)
	if len(lst) <= m+m/2 {
		return
	}
	fv := ix.vec(from)
	cs := make([]cand, len(lst))
	for i, n := range lst {
		cs[i] = cand{n, ix.dist(fv, n)}
	}
	slices.SortFunc(cs, cmpCand)
	ix.links[from][l] = ids(ix.selectNeighbors(cs, m))
}

// selectNeighbors applies the HNSW heuristic to candidates sorted by distance: keep a candidate
// only if it is closer to the base than to every neighbour kept so far, so links spread out in
// every direction; then fill up with the nearest of the rest.
func (ix *Index) selectNeighbors(sorted []cand, m int) []cand {
	if len(sorted) <= m {
		return slices.Clone(sorted)
	}
	out := make([]cand, 0, m)
	var skipped []cand
	for _, c := range sorted {
		if len(out) >= m {
			break
		}
		cv := ix.vec(c.n)
		good := true
		for _, r := range out {
			if 1-Dot(cv, ix.vec(r.n)) < c.d {
				good = false
				break
			}
		}
		if good {
			out = append(out, c)
		} else {
			skipped = append(skipped, c)
		}
	}
	for _, c := range skipped {
		if len(out) >= m {
			break
		}
		out = append(out, c)
	}
	return out
}

func (ix *Index) greedy(q []float32, ep int32, epDist float32, l int) (int32, float32) {
	for changed := true; changed; {
		changed = false
		for _, m := range ix.links[ep][l] {
			if d := ix.dist(q, m); d < epDist {
				ep, epDist, changed = m, d, true
			}
		}
	}
	return ep, epDist
}

type cand struct {
	n int32
	d float32
}

func cmpCand(a, b cand) int {
	switch {
	case a.d < b.d:
		return -1
	case a.d > b.d:
		return 1
	}
	return int(a.n - b.n)
}

type visitSet struct {
	mark []uint32
	gen  uint32
}

func (ix *Index) getVisited() *visitSet {
	v, _ := ix.visited.Get().(*visitSet)
	if v == nil {
		v = &visitSet{}
	}
	if len(v.mark) < len(ix.ids) {
		v.mark = make([]uint32, len(ix.ids)+len(ix.ids)/4+16)
		v.gen = 0
	}
	v.gen++
	if v.gen == 0 {
		clear(v.mark)
		v.gen = 1
	}
	return v
}

// searchLayer is the beam search of one layer. accept, when not nil, limits which nodes enter
// the result (all nodes are still walked through); deleted nodes never enter it when accept is
// not nil. The result is sorted nearest first.
func (ix *Index) searchLayer(q []float32, eps []cand, ef, l int, accept func(int32) bool) []cand {
	vis := ix.getVisited()
	defer ix.visited.Put(vis)
	var cands minHeap
	var res maxHeap
	for _, e := range eps {
		vis.mark[e.n] = vis.gen
		cands.push(e)
		if accept == nil || accept(e.n) {
			res.push(e)
		}
	}
	for len(cands) > 0 {
		c := cands.pop()
		if len(res) >= ef && c.d > res[0].d {
			break
		}
		for _, m := range ix.links[c.n][l] {
			if vis.mark[m] == vis.gen {
				continue
			}
			vis.mark[m] = vis.gen
			d := ix.dist(q, m)
			if len(res) < ef || d < res[0].d {
				cands.push(cand{m, d})
				if accept == nil || accept(m) {
					res.push(cand{m, d})
					if len(res) > ef {
						res.pop()
					}
				}
			}
		}
	}
	out := []cand(res)
	slices.SortFunc(out, cmpCand)
	return out
}

// Search returns up to k live vectors most similar to q, most similar first. accept, when not
// nil, keeps only the ids it returns true for; when the graph walk finds fewer than k accepted
// vectors, Search falls back to an exact scan so a selective filter never loses results.
func (ix *Index) Search(q []float32, k int, accept func(id string) bool) ([]Result, error) {
	if err := ix.checkVec(q); err != nil {
		return nil, err
	}
	if k <= 0 {
		return nil, nil
	}
	qn, err := Normalize(q)
	if err != nil {
		return nil, err
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.live == 0 {
		return nil, nil
	}
	ok := func(n int32) bool { return !ix.deleted[n] && (accept == nil || accept(ix.ids[n])) }
	if nz := nonzero(qn); !ix.opt.NoSparseScan && nz*sparseShare <= ix.dims {
		return ix.sparseLocked(qn, k, ok), nil
	}
	if ix.sketchOn() {
		return ix.sketchLocked(qn, k, ok), nil
	}
	if ix.opt.Flat || ix.entry < 0 {
		return ix.exactLocked(qn, k, ok), nil
	}
	ep := ix.entry
	epDist := ix.dist(qn, ep)
	for l := ix.maxLevel; l > 0; l-- {
		ep, epDist = ix.greedy(qn, ep, epDist, l)
	}
	w := ix.searchLayer(qn, []cand{{ep, epDist}}, max(ix.opt.EfSearch, k), 0, ok)
	if len(w) < k && len(w) < ix.live {
		return ix.exactLocked(qn, k, ok), nil
	}
	if len(w) > k {
		w = w[:k]
	}
	return ix.results(w), nil
}

func (ix *Index) results(w []cand) []Result {
	out := make([]Result, len(w))
	for i, c := range w {
		out[i] = Result{ID: ix.ids[c.n], Similarity: 1 - c.d}
	}
	return out
}

// sparseShare decides when a query is sparse enough for a column scan: at most one in
// sparseShare of its components is non-zero.
const sparseShare = 4

func nonzero(q []float32) int {
	n := 0
	for _, x := range q {
		if x != 0 {
			n++
		}
	}
	return n
}

// sparseLocked is an exact search for a query with few non-zero components, such as a short
// text embedded by hashing: it adds up, dimension by dimension, the query's weight times that
// dimension's column, so it reads nz columns instead of every whole vector. Its cost is nz*N
// multiply-adds over contiguous memory, against dims*N for the row scan, and it is exact, so
// its recall is 1. The caller counted the non-zero components.
func (ix *Index) sparseLocked(qn []float32, k int, ok func(int32) bool) []Result {
	n := len(ix.ids)
	// The non-zero components, once.
	var dimBuf [64]int32
	dimsNZ := dimBuf[:0]
	for j, w := range qn {
		if w != 0 {
			dimsNZ = append(dimsNZ, int32(j))
		}
	}
	sp, _ := ix.scores.Get().(*[]float32)
	if sp == nil {
		sp = new([]float32)
		*sp = make([]float32, sparseBlock)
	}
	defer ix.scores.Put(sp)
	var res maxHeap
	// Nodes go by blocks small enough for their sums to stay in the first-level cache while
	// every column adds to them; only the columns stream from memory.
	for lo := 0; lo < n; lo += sparseBlock {
		hi := min(lo+sparseBlock, n)
		sc := (*sp)[:hi-lo]
		clear(sc)
		for _, j := range dimsNZ {
			w := qn[j]
			col := ix.cols[j][lo:hi]
			axpy(w, col, sc)
		}
		for i, sim := range sc {
			d := 1 - sim
			if len(res) >= k && d >= res[0].d {
				continue
			}
			node := int32(lo + i)
			if !ok(node) {
				continue
			}
			if len(res) >= k {
				res.pop()
			}
			res.push(cand{node, d})
		}
	}
	out := []cand(res)
	slices.SortFunc(out, cmpCand)
	return ix.results(out)
}

// axpy adds w*x to y, element by element, over the shorter of the two.
func axpy(w float32, x, y []float32) {
	for len(x) >= 4 && len(y) >= 4 {
		x4, y4 := x[:4:4], y[:4:4]
		y4[0] += w * x4[0]
		y4[1] += w * x4[1]
		y4[2] += w * x4[2]
		y4[3] += w * x4[3]
		x, y = x[4:], y[4:]
	}
	for i := range min(len(x), len(y)) {
		y[i] += w * x[i]
	}
}

// sparseBlock is how many nodes a sparse scan sums at a time (16 KiB of sums).
const sparseBlock = 4096

// Exact returns the k live vectors most similar to q by scanning them all.
func (ix *Index) Exact(q []float32, k int, accept func(id string) bool) ([]Result, error) {
	if err := ix.checkVec(q); err != nil {
		return nil, err
	}
	if k <= 0 {
		return nil, nil
	}
	qn, err := Normalize(q)
	if err != nil {
		return nil, err
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.exactLocked(qn, k, func(n int32) bool { return !ix.deleted[n] && (accept == nil || accept(ix.ids[n])) }), nil
}

func (ix *Index) exactLocked(qn []float32, k int, ok func(int32) bool) []Result {
	var res maxHeap
	for n := range ix.ids {
		if !ok(int32(n)) {
			continue
		}
		d := ix.dist(qn, int32(n))
		if len(res) < k {
			res.push(cand{int32(n), d})
		} else if d < res[0].d {
			res.pop()
			res.push(cand{int32(n), d})
		}
	}
	out := []cand(res)
	slices.SortFunc(out, cmpCand)
	return ix.results(out)
}

// Vector returns a copy of the normalized vector of id.
func (ix *Index) Vector(id string) ([]float32, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	n, ok := ix.byID[id]
	if !ok {
		return nil, false
	}
	return slices.Clone(ix.vec(n)), true
}

type minHeap []cand

func (h *minHeap) push(c cand) {
	*h = append(*h, c)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].d <= s[i].d {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *minHeap) pop() cand {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && s[l].d < s[m].d {
			m = l
		}
		if r < len(s) && s[r].d < s[m].d {
			m = r
		}
		if m == i {
			break
		}
		s[m], s[i] = s[i], s[m]
		i = m
	}
	*h = s
	return top
}

type maxHeap []cand

func (h *maxHeap) push(c cand) {
	*h = append(*h, c)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].d >= s[i].d {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *maxHeap) pop() cand {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && s[l].d > s[m].d {
			m = l
		}
		if r < len(s) && s[r].d > s[m].d {
			m = r
		}
		if m == i {
			break
		}
		s[m], s[i] = s[i], s[m]
		i = m
	}
	*h = s
	return top
}
