package server

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/trellis-go/trellis/checkpoint"
)

// newThreadSaver is the server's checkpoint saver as its graphs see it: the saver itself, except
// for a thread made for a run (a stateless run's temporary thread, on the run's first attempt)
// while the run executes (watch):
//
//   - the first look through the run's context for its newest checkpoint finds none without
//     asking the database (a graph run starts with that look; on Postgres it was a round trip
//     of every stateless run);
//   - what is written to it goes to the database and is kept in memory too (a mirror), and reads
//     of it through the run's contexts are answered from the mirror: the thread was made for the
//     run and is written only through this saver, so the mirror holds what the database does.
//     The run's output (its thread's final state, which a waiter gets) is then not read back
//     from the database, another round trip of every stateless run on Postgres.
//
// The mirror gives up, for good, on anything it cannot follow: a write that failed, a change of
// metadata, a prune or a delete, or more than mirrorMaxBytes of blobs and writes; reads then go
// to the database.
type newThreadSaver struct {
	checkpoint.Saver
	watched *sync.Map // thread ID -> *newThread
}

// wrapSaver returns s as the server's graphs see it.
func wrapSaver(s checkpoint.Saver) newThreadSaver {
	return newThreadSaver{Saver: s, watched: &sync.Map{}}
}

// newThreadKey is the context key of a *newThread.
type newThreadKey struct{}

// mirrorMaxBytes bounds the bytes of blobs and pending writes a run's mirror keeps.
const mirrorMaxBytes = 1 << 20

// newThread is a watched thread: fresh until the first look at its newest root checkpoint or
// the first write of any of its checkpoints, whichever comes first (after either the database
// knows better), and its mirror.
type newThread struct {
	threadID string
	fresh    atomic.Bool

	mu     sync.Mutex
	mirror *checkpoint.MemorySaver // nil once given up
	bytes  int
}

// watch marks threadID, which has no checkpoint yet, as made for the run whose context is ctx,
// and returns the run's context; stop ends the watch (reads through the context then keep the
// mirror as it was).
func (s newThreadSaver) watch(ctx context.Context, threadID string) (_ context.Context, stop func()) {
	n := &newThread{threadID: threadID, mirror: checkpoint.NewMemorySaver()}
	n.fresh.Store(true)
	s.watched.Store(threadID, n)
	return context.WithValue(ctx, newThreadKey{}, n), func() { s.watched.CompareAndDelete(threadID, n) }
}

// withThreadOf gives ctx the mark of from, if from has one: reads through ctx use the mirror.
func withThreadOf(ctx, from context.Context) context.Context {
	if n, ok := from.Value(newThreadKey{}).(*newThread); ok {
		return context.WithValue(ctx, newThreadKey{}, n)
	}
	return ctx
}

// of returns the watched thread threadID, or nil.
func (s newThreadSaver) of(threadID string) *newThread {
	if s.watched == nil {
		return nil
	}
	if v, ok := s.watched.Load(threadID); ok {
		return v.(*newThread)
	}
	return nil
}

// mirrored returns the mirror when it still follows the thread.
func (n *newThread) mirrored() *checkpoint.MemorySaver {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.mirror
}

// keep applies a write the database took to the mirror (size is its bytes); the mirror gives up
// when it cannot follow.
func (n *newThread) keep(size int, write func(*checkpoint.MemorySaver) error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.mirror == nil {
		return
	}
	n.bytes += size
	if n.bytes > mirrorMaxBytes || write(n.mirror) != nil {
		n.mirror = nil
	}
}

// giveUp stops the mirror.
func (n *newThread) giveUp() {
	n.mu.Lock()
	n.mirror = nil
	n.mu.Unlock()
}

func (s newThreadSaver) Get(ctx context.Context, ref checkpoint.Ref) (*checkpoint.Tuple, error) {
	n, ok := ctx.Value(newThreadKey{}).(*newThread)
	if !ok || n.threadID != ref.ThreadID {
		return s.Saver.Get(ctx, ref)
	}
	if ref.NS == "" && ref.CheckpointID == "" && n.fresh.CompareAndSwap(true, false) {
		return nil, checkpoint.ErrNotFound
	}
	if m := n.mirrored(); m != nil {
		return m.Get(context.WithoutCancel(ctx), ref)
	}
	return s.Saver.Get(ctx, ref)
}

func (s newThreadSaver) Put(ctx context.Context, req checkpoint.PutRequest) error {
	n := s.of(req.ThreadID)
	if n == nil {
		return s.Saver.Put(ctx, req)
	}
	n.fresh.Store(false)
	if err := s.Saver.Put(ctx, req); err != nil {
		n.giveUp()
		return err
	}
	size := 0
	for _, b := range req.Blobs {
		size += len(b.Data)
	}
	n.keep(size, func(m *checkpoint.MemorySaver) error { return m.Put(context.Background(), req) })
	return nil
}

func (s newThreadSaver) PutWrites(ctx context.Context, req checkpoint.WritesRequest) error {
	n := s.of(req.Ref.ThreadID)
	if n == nil {
		return s.Saver.PutWrites(ctx, req)
	}
	n.fresh.Store(false)
	if err := s.Saver.PutWrites(ctx, req); err != nil {
		n.giveUp()
		return err
	}
	size := 0
	for _, w := range req.Writes {
		size += len(w.Value)
	}
	n.keep(size, func(m *checkpoint.MemorySaver) error { return m.PutWrites(context.Background(), req) })
	return nil
}

func (s newThreadSaver) SetMetadata(ctx context.Context, ref checkpoint.Ref, metadata map[string]any) error {
	if n := s.of(ref.ThreadID); n != nil {
		n.giveUp()
	}
	return s.Saver.SetMetadata(ctx, ref, metadata)
}

func (s newThreadSaver) Prune(ctx context.Context, req checkpoint.PruneRequest) error {
	if n := s.of(req.ThreadID); n != nil {
		n.giveUp()
	}
	return s.Saver.Prune(ctx, req)
}

func (s newThreadSaver) DeleteThreads(ctx context.Context, threadIDs []string) error {
	for _, id := range threadIDs {
		if n := s.of(id); n != nil {
			n.giveUp()
		}
	}
	return s.Saver.DeleteThreads(ctx, threadIDs)
}
