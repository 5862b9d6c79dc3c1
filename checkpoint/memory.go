package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"slices"
	"sort"
	"sync"

	"github.com/klauspost/compress/s2"

	"github.com/trellis-go/trellis/internal/bufkeep"
)

// MemorySaver keeps checkpoints in memory. It is the saver for tests, examples and short-lived
// processes; everything is lost when the process ends. Blobs of 16 KiB or more are kept
// compressed with S2 when that makes them smaller. The zero value is not usable: call
// [NewMemorySaver].
type MemorySaver struct {
	mu      sync.RWMutex
	threads map[string]*memThread
}

type memThread struct {
	spaces map[string]*memSpace
}

type memSpace struct {
	checkpoints []Checkpoint // sorted by ID, oldest first
	// blobs are the space's blobs, one per channel and version; index finds them once there
	// are more than a few. A thread of a few checkpoints (most of them, in a process that runs
	// many short threads) then keeps its blobs in one small slice rather than in a map, whose
	// smallest table holds eight blobs: less memory per thread, and less for the collector to
	// scan.
	blobs  []memBlob
	index  map[blobKey]int
	writes map[string][]PendingWrite // checkpoint ID -> writes in put order; nil until a put
}

// indexAbove is the number of blobs from which a space indexes them.
const indexAbove = 8

// blob returns the blob of a channel's version.
func (s *memSpace) blob(k blobKey) (memBlob, bool) {
	if s.index != nil {
		i, ok := s.index[k]
		if !ok {
			return memBlob{}, false
		}
		return s.blobs[i], true
	}
	for _, b := range s.blobs {
		if b.Channel == k.channel && b.Version == k.version {
			return b, true
		}
	}
	return memBlob{}, false
}

// setBlob stores b, replacing the blob of the same channel and version.
func (s *memSpace) setBlob(b memBlob) {
	k := blobKey{b.Channel, b.Version}
	if s.index != nil {
		if i, ok := s.index[k]; ok {
			s.blobs[i] = b
			return
		}
		s.index[k] = len(s.blobs)
		s.blobs = append(s.blobs, b)
		return
	}
	for i := range s.blobs {
		if s.blobs[i].Channel == k.channel && s.blobs[i].Version == k.version {
			s.blobs[i] = b
			return
		}
	}
	s.blobs = append(s.blobs, b)
	if len(s.blobs) > indexAbove {
		s.reindex()
	}
}

// reindex rebuilds the index after blobs were added past indexAbove or removed.
func (s *memSpace) reindex() {
	if len(s.blobs) <= indexAbove {
		s.index = nil
		return
	}
	s.index = make(map[blobKey]int, len(s.blobs))
	for i, b := range s.blobs {
		s.index[blobKey{b.Channel, b.Version}] = i
	}
}

// memBlob is a blob as the saver keeps it: a large one compressed with S2 (conversations and
// documents are text that compresses well, and a process that keeps many threads in memory is
// bounded by its memory), a small one as it came.
type memBlob struct {
	Blob
	compressed bool
}

// compressAbove is the size from which blobs are kept compressed. S2 compresses text at well
// over a gigabyte a second, so this costs less than the memory it saves.
const compressAbove = 16 << 10

// packBlob returns the blob as the saver keeps it, in memory of its own: Put must not keep the
// caller's bytes (see [Saver]).
func packBlob(b Blob) memBlob {
	if len(b.Data) < compressAbove {
		b.Data = bytes.Clone(b.Data)
		return memBlob{Blob: b}
	}
	n := s2.MaxEncodedLen(len(b.Data))
	scratch := packScratch.Get(n)
	defer packScratch.Put(scratch)
	packed := s2.Encode((*scratch)[:n], b.Data)
	if len(packed) >= len(b.Data)*7/8 {
		b.Data = bytes.Clone(b.Data) // does not compress: keep it as it is
		return memBlob{Blob: b}
	}
	b.Data = bytes.Clone(packed)
	return memBlob{Blob: b, compressed: true}
}

// packScratch keeps buffers to compress into, so that only the compressed size is allocated:
// a bufkeep.Keeper rather than a sync.Pool, which would drop them at the next collections.
var packScratch = bufkeep.New(4, 32<<20)

func (b memBlob) unpack() (Blob, error) {
	if !b.compressed {
		return b.Blob, nil
	}
	data, err := s2.Decode(nil, b.Data)
	if err != nil {
		return Blob{}, fmt.Errorf("checkpoint: in-memory blob %s@%s: %w", b.Channel, b.Version, err)
	}
	out := b.Blob
	out.Data = data
	return out, nil
}

type blobKey struct{ channel, version string }

var _ Saver = (*MemorySaver)(nil)

// NewMemorySaver returns an empty in-memory saver.
func NewMemorySaver() *MemorySaver {
	return &MemorySaver{threads: map[string]*memThread{}}
}

func (m *MemorySaver) space(thread, ns string, create bool) *memSpace {
	t := m.threads[thread]
	if t == nil {
		if !create {
			return nil
		}
		t = &memThread{spaces: map[string]*memSpace{}}
		m.threads[thread] = t
	}
	s := t.spaces[ns]
	if s == nil && create {
		s = &memSpace{}
		t.spaces[ns] = s
	}
	return s
}

func (s *memSpace) find(id string) (int, bool) {
	i := sort.Search(len(s.checkpoints), func(i int) bool { return s.checkpoints[i].ID >= id })
	return i, i < len(s.checkpoints) && s.checkpoints[i].ID == id
}

// Get implements [Saver].
func (m *MemorySaver) Get(ctx context.Context, ref Ref) (*Tuple, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	s := m.space(ref.ThreadID, ref.NS, false)
	if s == nil || len(s.checkpoints) == 0 {
		return nil, fmt.Errorf("%w: thread %q namespace %q has no checkpoints", ErrNotFound, ref.ThreadID, ref.NS)
	}
	var cp Checkpoint
	if ref.CheckpointID == "" {
		cp = s.checkpoints[len(s.checkpoints)-1]
	} else {
		i, ok := s.find(ref.CheckpointID)
		if !ok {
			return nil, fmt.Errorf("%w: thread %q has no checkpoint %q", ErrNotFound, ref.ThreadID, ref.CheckpointID)
		}
		cp = s.checkpoints[i]
	}
	t := &Tuple{Ref: Ref{ThreadID: ref.ThreadID, NS: ref.NS, CheckpointID: cp.ID}, Checkpoint: cp}
	for ch, v := range cp.Versions {
		for n := 0; v != ""; n++ {
			b, ok := s.blob(blobKey{ch, v})
			if !ok {
				return nil, fmt.Errorf("checkpoint: thread %q checkpoint %q: blob %s@%s is missing", ref.ThreadID, cp.ID, ch, v)
			}
			if n > len(s.blobs) {
				return nil, fmt.Errorf("checkpoint: thread %q checkpoint %q: the blobs of %s form a loop at version %s", ref.ThreadID, cp.ID, ch, v)
			}
			blob, err := b.unpack()
			if err != nil {
				return nil, err
			}
			t.Blobs = append(t.Blobs, blob)
			v = b.Base
		}
	}
	t.Pending = slices.Clone(s.writes[cp.ID])
	return t, nil
}

// List implements [Saver].
func (m *MemorySaver) List(ctx context.Context, opts ListOptions) iter.Seq2[*Tuple, error] {
	return func(yield func(*Tuple, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(nil, err)
			return
		}
		m.mu.RLock()
		var out []*Tuple
		if t := m.threads[opts.ThreadID]; t != nil {
			for ns, s := range t.spaces {
				if !opts.AllNS && ns != deref(opts.NS) {
					continue
				}
				for _, cp := range s.checkpoints {
					if opts.Before != "" && cp.ID >= opts.Before {
						continue
					}
					if !MetadataMatches(cp.Metadata, opts.Metadata) {
						continue
					}
					out = append(out, &Tuple{Ref: Ref{ThreadID: opts.ThreadID, NS: ns, CheckpointID: cp.ID}, Checkpoint: cp})
				}
			}
		}
		m.mu.RUnlock()
		sort.Slice(out, func(i, j int) bool { return out[i].Checkpoint.ID > out[j].Checkpoint.ID })
		if opts.Limit > 0 && len(out) > opts.Limit {
			out = out[:opts.Limit]
		}
		for _, t := range out {
			if !yield(t, nil) {
				return
			}
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// MetadataMatches reports whether metadata has every key of filter with an equal value, comparing
// values by their JSON encoding. Savers that filter in Go use it.
func MetadataMatches(metadata, filter map[string]any) bool {
	for k, want := range filter {
		got, ok := metadata[k]
		if !ok {
			return false
		}
		a, err1 := json.Marshal(got)
		b, err2 := json.Marshal(want)
		if err1 != nil || err2 != nil || string(a) != string(b) {
			return false
		}
	}
	return true
}

// Put implements [Saver].
func (m *MemorySaver) Put(ctx context.Context, req PutRequest) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return fmt.Errorf("checkpoint: put on thread %q: %w", req.ThreadID, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.space(req.ThreadID, req.NS, true)
	head := ""
	if n := len(s.checkpoints); n > 0 {
		head = s.checkpoints[n-1].ID
	}
	if head == req.Checkpoint.ID {
		return nil // a retry of a put that already landed
	}
	if head != req.Head {
		return fmt.Errorf("%w (thread %q: expected head %q, found %q)", ErrConflict, req.ThreadID, req.Head, head)
	}
	for _, b := range req.Blobs {
		s.setBlob(packBlob(b))
	}
	cp := req.Checkpoint
	cp.Versions = maps.Clone(cp.Versions)
	s.checkpoints = append(s.checkpoints, cp)
	return nil
}

// PutWrites implements [Saver].
func (m *MemorySaver) PutWrites(ctx context.Context, req WritesRequest) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.space(req.Ref.ThreadID, req.Ref.NS, false)
	if s == nil {
		return fmt.Errorf("%w: thread %q namespace %q", ErrNotFound, req.Ref.ThreadID, req.Ref.NS)
	}
	if _, ok := s.find(req.Ref.CheckpointID); !ok {
		return fmt.Errorf("%w: thread %q has no checkpoint %q", ErrNotFound, req.Ref.ThreadID, req.Ref.CheckpointID)
	}
	kept := s.writes[req.Ref.CheckpointID][:0:0]
	for _, w := range s.writes[req.Ref.CheckpointID] {
		if w.TaskID != req.TaskID {
			kept = append(kept, w)
		}
	}
	for _, w := range req.Writes {
		w.TaskID = req.TaskID
		kept = append(kept, w)
	}
	if s.writes == nil {
		s.writes = map[string][]PendingWrite{}
	}
	s.writes[req.Ref.CheckpointID] = kept
	return nil
}

// SetMetadata implements [Saver].
func (m *MemorySaver) SetMetadata(ctx context.Context, ref Ref, metadata map[string]any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if ref.CheckpointID == "" {
		return fmt.Errorf("checkpoint: set metadata on thread %q: the ref has no CheckpointID", ref.ThreadID)
	}
	if _, err := json.Marshal(metadata); err != nil {
		return fmt.Errorf("checkpoint: set metadata on thread %q: metadata cannot be encoded as JSON (%w); keep metadata to JSON values", ref.ThreadID, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.space(ref.ThreadID, ref.NS, false)
	if s == nil {
		return fmt.Errorf("%w: thread %q namespace %q has no checkpoints", ErrNotFound, ref.ThreadID, ref.NS)
	}
	i, ok := s.find(ref.CheckpointID)
	if !ok {
		return fmt.Errorf("%w: thread %q has no checkpoint %q", ErrNotFound, ref.ThreadID, ref.CheckpointID)
	}
	// A new map: a Tuple handed out earlier keeps the metadata it was read with.
	if len(metadata) == 0 {
		s.checkpoints[i].Metadata = nil
	} else {
		s.checkpoints[i].Metadata = maps.Clone(metadata)
	}
	return nil
}

// DeleteThreads implements [Saver].
func (m *MemorySaver) DeleteThreads(ctx context.Context, threadIDs []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range threadIDs {
		delete(m.threads, id)
	}
	return nil
}

// Prune implements [Saver].
func (m *MemorySaver) Prune(ctx context.Context, req PruneRequest) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if req.Keep < 1 {
		return fmt.Errorf("checkpoint: prune thread %q: Keep must be at least 1, got %d", req.ThreadID, req.Keep)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[req.ThreadID]
	if t == nil {
		return nil
	}
	for _, s := range t.spaces {
		if len(s.checkpoints) <= req.Keep {
			continue
		}
		drop := s.checkpoints[:len(s.checkpoints)-req.Keep]
		for _, cp := range drop {
			delete(s.writes, cp.ID)
		}
		s.checkpoints = slices.Clone(s.checkpoints[len(s.checkpoints)-req.Keep:])
		needed := map[blobKey]bool{}
		for _, cp := range s.checkpoints {
			for ch, v := range cp.Versions {
				for v != "" && !needed[blobKey{ch, v}] {
					needed[blobKey{ch, v}] = true
					b, _ := s.blob(blobKey{ch, v})
					v = b.Base
				}
			}
		}
		s.blobs = slices.DeleteFunc(s.blobs, func(b memBlob) bool { return !needed[blobKey{b.Channel, b.Version}] })
		s.reindex()
	}
	return nil
}
