package server

import (
	"context"
	"sync/atomic"

	"github.com/trellis-go/trellis/checkpoint"
)

// newThreadSaver is the server's checkpoint saver as its graphs see it: the saver itself, except
// that the first look for the newest checkpoint of a thread the run's context says is new (a
// stateless run's temporary thread, on the run's first attempt) finds none without asking the
// database. A graph run starts with that look; on Postgres it was a round trip of every
// stateless run.
type newThreadSaver struct{ checkpoint.Saver }

// newThreadKey is the context key of a *newThread.
type newThreadKey struct{}

// newThread marks a run's context: its thread has no checkpoint yet. The mark holds until the
// first look at that thread's newest root checkpoint, or the first write of any checkpoint
// through the context, whichever comes first: after either the database knows better.
type newThread struct {
	threadID string
	fresh    atomic.Bool
}

// withNewThread marks ctx: threadID has no checkpoint yet.
func withNewThread(ctx context.Context, threadID string) context.Context {
	n := &newThread{threadID: threadID}
	n.fresh.Store(true)
	return context.WithValue(ctx, newThreadKey{}, n)
}

// spend ends ctx's mark, if it has one.
func spend(ctx context.Context) {
	if n, ok := ctx.Value(newThreadKey{}).(*newThread); ok {
		n.fresh.Store(false)
	}
}

func (s newThreadSaver) Get(ctx context.Context, ref checkpoint.Ref) (*checkpoint.Tuple, error) {
	if n, ok := ctx.Value(newThreadKey{}).(*newThread); ok && ref.ThreadID == n.threadID && ref.NS == "" && ref.CheckpointID == "" && n.fresh.CompareAndSwap(true, false) {
		return nil, checkpoint.ErrNotFound
	}
	return s.Saver.Get(ctx, ref)
}

func (s newThreadSaver) Put(ctx context.Context, req checkpoint.PutRequest) error {
	spend(ctx)
	return s.Saver.Put(ctx, req)
}

func (s newThreadSaver) PutWrites(ctx context.Context, req checkpoint.WritesRequest) error {
	spend(ctx)
	return s.Saver.PutWrites(ctx, req)
}
