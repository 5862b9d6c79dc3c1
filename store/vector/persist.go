package vector

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
)

// ErrBadGraph is returned by [LoadGraph] for input that is not a graph written by
// [Index.SaveGraph], or that is damaged.
var ErrBadGraph = errors.New("vector: not a saved graph")

const graphMagic = "trellis-hnsw-1\n"

// SaveGraph writes the index's graph to w: its options, every node's id, layers and links,
// which nodes are deleted, and the entry point; not the vectors, which the caller keeps anyway
// (a store has them in its items). A lazy graph not built yet is built first. [LoadGraph]
// reads it back in a fraction of the time building the graph takes, since no distance is
// computed.
func (ix *Index) SaveGraph(w io.Writer) error {
	ix.mu.Lock()
	if ix.graphOff {
		ix.buildGraphLocked()
	}
	ix.mu.Unlock()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString(graphMagic)
	var buf [8]byte
	u32 := func(v uint32) {
		binary.LittleEndian.PutUint32(buf[:4], v)
		bw.Write(buf[:4])
	}
	flat := uint32(0)
	if ix.opt.Flat {
		flat = 1
	}
	for _, v := range []uint32{uint32(ix.dims), uint32(ix.opt.M), uint32(ix.opt.EfConstruction), uint32(ix.opt.EfSearch), flat, uint32(ix.entry), uint32(ix.maxLevel), uint32(len(ix.ids))} {
		u32(v)
	}
	binary.LittleEndian.PutUint64(buf[:], ix.opt.Seed)
	bw.Write(buf[:])
	for n, id := range ix.ids {
		u32(uint32(len(id)))
		bw.WriteString(id)
		del := byte(0)
		if ix.deleted[n] {
			del = 1
		}
		bw.WriteByte(del)
		layers := ix.links[n]
		u32(uint32(len(layers)))
		for _, l := range layers {
			u32(uint32(len(l)))
			for _, m := range l {
				u32(uint32(m))
			}
		}
	}
	return bw.Flush()
}

// LoadGraph reads a graph written by [Index.SaveGraph] and gives each node its vector from
// vectors, by id. A node whose id has no vector there (its item was deleted since the save)
// stays in the graph as a deleted waypoint. Vectors need not be normalized. A damaged or
// foreign input gives ErrBadGraph; a vector of the wrong length gives ErrDimension.
func LoadGraph(r io.Reader, vectors func(id string) ([]float32, bool)) (*Index, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	magic := make([]byte, len(graphMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != graphMagic {
		return nil, fmt.Errorf("%w: the header is missing", ErrBadGraph)
	}
	var buf [8]byte
	var rerr error
	u32 := func() uint32 {
		if rerr != nil {
			return 0
		}
		if _, err := io.ReadFull(br, buf[:4]); err != nil {
			rerr = err
			return 0
		}
		return binary.LittleEndian.Uint32(buf[:4])
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrBadGraph}, args...)...)
	}
	dims, m, efc, efs, flat, entry, maxLevel, count := u32(), u32(), u32(), u32(), u32(), int32(u32()), u32(), u32()
	if rerr == nil {
		if _, err := io.ReadFull(br, buf[:]); err != nil {
			rerr = err
		}
	}
	if rerr != nil {
		return nil, bad("truncated header (%v)", rerr)
	}
	const maxDims, maxNodes = 1 << 16, 1 << 30
	if dims == 0 || dims > maxDims || m == 0 || m > 1024 || count > maxNodes || maxLevel > 16 || entry < -1 || (count > 0 && entry >= int32(count)) {
		return nil, bad("implausible header (dims %d, M %d, %d nodes, entry %d, top layer %d)", dims, m, count, entry, maxLevel)
	}
	// Room for the nodes the header announces, up to a bound: a damaged header must not make
	// a huge allocation; past the bound the slices grow as nodes are read.
	pre := int(min(count, 1<<16))
	o := Options{M: int(m), EfConstruction: int(efc), EfSearch: int(efs), Seed: binary.LittleEndian.Uint64(buf[:]), Flat: flat == 1}.withDefaults()
	ix := &Index{
		dims:     int(dims),
		opt:      o,
		mult:     1 / math.Log(float64(o.M)),
		rng:      rand.New(rand.NewPCG(o.Seed, uint64(count))),
		byID:     make(map[string]int32, pre),
		entry:    entry,
		maxLevel: int(maxLevel),
		cols:     make([][]float32, dims),
		vecs:     make([]float32, 0, pre*int(dims)),
		ids:      make([]string, 0, pre),
		deleted:  make([]bool, 0, pre),
		links:    make([][][]int32, 0, pre),
	}
	for j := range ix.cols {
		ix.cols[j] = make([]float32, 0, pre)
	}
	ix.initSketch()
	if ix.sketcher != nil {
		ix.sketch = make([]uint64, 0, pre*ix.opt.SketchBits/64)
	}
	zero := make([]float32, dims)
	for n := range count {
		idLen := u32()
		if rerr != nil || idLen > 1<<20 {
			return nil, bad("node %d: id length %d (%v)", n, idLen, rerr)
		}
		id := make([]byte, idLen)
		if _, err := io.ReadFull(br, id); err != nil {
			return nil, bad("node %d: truncated id", n)
		}
		del, err := br.ReadByte()
		if err != nil {
			return nil, bad("node %d: truncated", n)
		}
		nl := u32()
		if rerr != nil || nl > 17 || (!o.Flat && nl == 0) {
			return nil, bad("node %d: %d layers", n, nl)
		}
		var layers [][]int32
		if nl > 0 {
			layers = make([][]int32, nl)
		}
		for l := range layers {
			k := u32()
			if rerr != nil || k > uint32(4*o.M) {
				return nil, bad("node %d layer %d: %d links", n, l, k)
			}
			layers[l] = make([]int32, k)
			for i := range layers[l] {
				to := u32()
				if to >= count {
					return nil, bad("node %d links to node %d of %d", n, to, count)
				}
				layers[l][i] = int32(to)
			}
		}
		if rerr != nil {
			return nil, bad("node %d: truncated links", n)
		}
		sid := string(id)
		v, ok := vectors(sid)
		gone := del == 1 || !ok
		q := zero
		if ok {
			if len(v) != int(dims) {
				return nil, fmt.Errorf("%w: the vector of %q has %d dimensions, the saved graph %d", ErrDimension, sid, len(v), dims)
			}
			if nv, err := Normalize(v); err == nil {
				q = nv
			} else {
				gone = true
			}
		}
		ix.appendVec(q)
		ix.ids = append(ix.ids, sid)
		ix.deleted = append(ix.deleted, gone)
		ix.links = append(ix.links, layers)
		if !gone {
			if _, dup := ix.byID[sid]; dup {
				return nil, bad("id %q is live twice", sid)
			}
			ix.byID[sid] = int32(n)
			ix.live++
		}
	}
	// Links must not reach layers their target does not have.
	for n, layers := range ix.links {
		for l, lst := range layers {
			for _, to := range lst {
				if len(ix.links[to]) <= l {
					return nil, bad("node %d links on layer %d to node %d, which has %d layers", n, l, to, len(ix.links[to]))
				}
			}
		}
	}
	if count > 0 && !o.Flat && (entry < 0 || len(ix.links[entry]) != int(maxLevel)+1) {
		return nil, bad("the entry point %d does not reach the top layer %d", entry, maxLevel)
	}
	if count == 0 {
		ix.entry, ix.maxLevel = -1, 0
	}
	return ix, nil
}
