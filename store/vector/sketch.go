package vector

import (
	"math/bits"
	"math/rand/v2"
	"slices"
)

// The sign sketch: each vector also keeps one bit per random hyperplane, set when the vector
// lies on the plane's positive side (Charikar's similarity hash). Two vectors at angle θ
// differ in a bit with probability θ/π, so the number of differing bits (a Hamming distance,
// a few XORs and popcounts per vector) estimates the angle; a dense query counts it against
// every vector, re-scores exactly the few hundred nearest by that count, and returns the best.
// The scan is linear but cheap (64 bytes per vector at 512 bits), and unlike a graph walk its
// recall does not depend on how the data is spread: vectors close to orthogonal, with a high
// intrinsic dimension (hashed n-grams, or any projection of them), are where HNSW needs a
// walk as wide as the whole set.

// defaultSketchBits is the sketch length unless Options.SketchBits says otherwise.
const defaultSketchBits = 512

// defaultDenseGraphFrom is the index size from which dense queries walk the graph instead of
// scanning the sketches.
const defaultDenseGraphFrom = 1_000_000

// sketchSeed fixes the rotations: the same dimension always gets the same ones, so a sketch
// never needs saving.
const sketchSeed = 0x736b65746368

// sketcher draws the hyperplanes as the rows of fast pseudo-random rotations, not as a dense
// matrix: a rotation is three rounds of random sign flips each followed by a Walsh-Hadamard
// transform (Ailon and Chazelle's HD construction), O(d log d) per vector instead of
// O(bits × d), so sketching 100,000 vectors takes a fraction of a second. Vectors are padded
// with zeros to a power of two; each rotation gives that many bits.
type sketcher struct {
	pd    int         // padded dimension, a power of two
	nbits int         // bits per sketch
	signs [][]float32 // 3 per rotation, each of pd ±1
}

func newSketcher(nbits, dims int) *sketcher {
	pd := 1
	for pd < dims {
		pd *= 2
	}
	sk := &sketcher{pd: pd, nbits: nbits}
	r := rand.New(rand.NewPCG(sketchSeed, uint64(dims)))
	for range 3 * ((nbits + pd - 1) / pd) {
		s := make([]float32, pd)
		for i := range s {
			s[i] = 1
			if r.IntN(2) == 0 {
				s[i] = -1
			}
		}
		sk.signs = append(sk.signs, s)
	}
	return sk
}

// fwht is the in-place, unnormalized Walsh-Hadamard transform of a (len a power of two).
func fwht(a []float32) {
	for h := 1; h < len(a); h *= 2 {
		for i := 0; i < len(a); i += 2 * h {
			x, y := a[i:i+h], a[i+h:i+2*h]
			for j := range x {
				x[j], y[j] = x[j]+y[j], x[j]-y[j]
			}
		}
	}
}

// sketchOf appends the sketch of q to dst (SketchBits/64 words).
func (ix *Index) sketchOf(dst []uint64, q []float32) []uint64 {
	sk := ix.sketcher
	buf := make([]float32, sk.pd)
	var word uint64
	bit := 0
	for r := 0; bit < sk.nbits; r++ {
		clear(buf)
		copy(buf, q)
		for t := range 3 {
			for i, s := range sk.signs[3*r+t] {
				buf[i] *= s
			}
			fwht(buf)
		}
		for _, x := range buf {
			if bit == sk.nbits {
				break
			}
			if x >= 0 {
				word |= 1 << (bit % 64)
			}
			bit++
			if bit%64 == 0 {
				dst = append(dst, word)
				word = 0
			}
		}
	}
	return dst
}

// sketchOn reports whether dense queries take the sketch scan at the index's current size.
func (ix *Index) sketchOn() bool {
	return ix.sketcher != nil && !ix.noDenseScan && ix.live < ix.opt.DenseGraphFrom
}

// rerank is how many sketch candidates a dense query re-scores exactly. Recall depends on the
// share of the index re-scored, so the default grows with it: on the 100,000-vector benchmark
// corpus, 400 candidates gave recall@10 0.934, 1,600 (a 64th) 0.992, 3,200 0.998.
func (ix *Index) rerank(k int) int {
	if ix.opt.Rerank > 0 {
		return max(ix.opt.Rerank, k)
	}
	return max(1000, 16*k, ix.live/64)
}

// sketchLocked answers a dense query: the Hamming distance of every sketch to the query's,
// then the exact similarity of the rerank(k) nearest by it. The caller holds the read lock.
// When the filter leaves fewer than k among them, it falls back to the exact scan.
func (ix *Index) sketchLocked(qn []float32, k int, ok func(int32) bool) []Result {
	n := len(ix.ids)
	words := ix.opt.SketchBits / 64
	var qbuf [16]uint64
	qs := ix.sketchOf(qbuf[:0], qn)
	dp, _ := ix.hamming.Get().(*[]uint16)
	if dp == nil {
		dp = new([]uint16)
	}
	defer ix.hamming.Put(dp)
	if cap(*dp) < n {
		*dp = make([]uint16, n)
	}
	dist := (*dp)[:n]
	hist := make([]int32, ix.opt.SketchBits+1)
	sk := ix.sketch[:n*words]
	switch words {
	case 8:
		q0, q1, q2, q3, q4, q5, q6, q7 := qs[0], qs[1], qs[2], qs[3], qs[4], qs[5], qs[6], qs[7]
		for i := range dist {
			s := sk[i*8 : i*8+8 : i*8+8]
			d := bits.OnesCount64(s[0]^q0) + bits.OnesCount64(s[1]^q1) + bits.OnesCount64(s[2]^q2) + bits.OnesCount64(s[3]^q3) +
				bits.OnesCount64(s[4]^q4) + bits.OnesCount64(s[5]^q5) + bits.OnesCount64(s[6]^q6) + bits.OnesCount64(s[7]^q7)
			dist[i] = uint16(d)
			hist[d]++
		}
	default:
		for i := range dist {
			s := sk[i*words : (i+1)*words]
			d := 0
			for w, x := range s {
				d += bits.OnesCount64(x ^ qs[w])
			}
			dist[i] = uint16(d)
			hist[d]++
		}
	}
	// The threshold that lets in at least rerank(k) vectors (more on a tie).
	want := int32(ix.rerank(k))
	thr, cum := 0, int32(0)
	for ; thr < len(hist)-1; thr++ {
		cum += hist[thr]
		if cum >= want {
			break
		}
	}
	var res maxHeap
	for i, h := range dist {
		if int(h) > thr {
			continue
		}
		node := int32(i)
		if !ok(node) {
			continue
		}
		d := ix.dist(qn, node)
		if len(res) < k {
			res.push(cand{node, d})
		} else if d < res[0].d {
			res.pop()
			res.push(cand{node, d})
		}
	}
	if len(res) < k && len(res) < ix.live {
		return ix.exactLocked(qn, k, ok)
	}
	out := []cand(res)
	slices.SortFunc(out, cmpCand)
	return ix.results(out)
}
