package server

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/server/internal/metadb"
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
//
// On Postgres (a saver that batches its puts, pgsaver) a root checkpoint the run's graph puts
// through the run's context is also held back, when at most one task follows it, to go to the
// database with the run's next event (the values after a superstep) in one round trip and one
// transaction (runAttempt.WriteEventsWith): every stateless short run saved a round trip per
// checkpoint. What is held is sent before the graph goes on: with the event that follows it, or
// else after the graph's next event of any kind (streamGraph; a run's single next task is run
// on the graph's goroutine and announces itself with a tasks event before it starts), before
// any other write or database read of the thread, and when the graph returns (Execute). So no
// node starts before the checkpoint it follows is written, as without holding. A held put that
// fails fails the run: the graph's next write returns its error, and so does the run.
//
// On SQLite (a saver that writes several puts in one transaction, sqlitesaver) such checkpoints
// are held too, and written together in one transaction (putAller): SQLite writes no event of
// a run that is not resumable, so there is no event to send them with, and each put was a
// transaction of its own, most of a short run's calls into SQLite. When they are written
// depends on what a crash may lose (holdRule): with sync durability (the default) a checkpoint
// that follows a finished node goes before the graph's next event, as on Postgres, so that no
// node starts before it is written; the input's checkpoint and __start__'s, which follow no
// node, wait for the first node's. With async durability everything held waits for the graph's
// end. Whatever is held is written before any other write or database read of the thread, and
// when the graph returns; a held put that fails fails the run, as on Postgres.
type newThreadSaver struct {
	checkpoint.Saver
	watched *sync.Map  // thread ID -> *newThread
	batcher putBatcher // nil: puts are not held in batches
	putAll  putAller   // nil: puts are not held for one transaction
}

// putAller is a saver that writes several puts in one transaction (sqlitesaver.Saver).
type putAller interface {
	PutAll(ctx context.Context, reqs []checkpoint.PutRequest) error
}

// holdRule says when held puts of a run on a saver without events to send them with (putAller)
// must be written.
type holdRule int

const (
	// holdUntilNode: a put that follows a finished node is written before the graph's next
	// event (sync durability: no finished node runs again after a crash); the input's and
	// __start__'s wait for the next such put.
	holdUntilNode holdRule = iota
	// holdUntilEvent: every put is written before the graph's next event (a resumable stream:
	// an event shown after a checkpoint is never in the database before it).
	holdUntilEvent
	// holdUntilEnd: puts wait for the graph's end (async durability: a crash may lose the
	// checkpoints not written yet).
	holdUntilEnd
)

// putBatcher is a saver that queues puts on a batch of statements sent in one round trip
// (pgsaver.Saver).
type putBatcher interface {
	Pool() *pgxpool.Pool
	QueuePut(ctx context.Context, b *pgx.Batch, req checkpoint.PutRequest) (func(ctx context.Context, batchErr error) error, error)
	QueueDeleteThreads(ctx context.Context, b *pgx.Batch, threadIDs []string) error
}

// wrapSaver returns s as the server's graphs see it.
func wrapSaver(s checkpoint.Saver) newThreadSaver {
	b, _ := s.(putBatcher)
	a, _ := s.(putAller)
	if b != nil {
		a = nil
	}
	return newThreadSaver{Saver: s, watched: &sync.Map{}, batcher: b, putAll: a}
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

	batcher putBatcher // nil: puts are not held in batches
	putAll  putAller   // nil: puts are not held for one transaction
	rule    holdRule   // with putAll: when held puts are due
	// send serializes sending what is held, so that puts reach the database in order.
	send    sync.Mutex
	held    []checkpoint.PutRequest // puts not sent yet (under mu)
	due     bool                    // a held put must go before the graph's next event (under mu)
	heldErr error                   // a held put that failed: the run fails with it (under mu)
}

// holds reports whether n holds puts back.
func (n *newThread) holds() bool { return n.batcher != nil || n.putAll != nil }

// watch marks threadID, which has no checkpoint yet, as made for the run whose context is ctx,
// and returns the run's context; stop ends the watch (reads through the context then keep the
// mirror as it was). rule says when held puts are due on a putAller.
func (s newThreadSaver) watch(ctx context.Context, threadID string, rule holdRule) (_ context.Context, stop func()) {
	n := &newThread{threadID: threadID, mirror: checkpoint.NewMemorySaver(), batcher: s.batcher, putAll: s.putAll, rule: rule}
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

// hold keeps req to send later, unless a held put failed. It keeps a copy of the blobs' bytes:
// the runtime reuses them once Put returns (checkpoint.Saver's Put contract).
func (n *newThread) hold(req checkpoint.PutRequest) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.heldErr != nil {
		return n.heldErr
	}
	size := 0
	for _, b := range req.Blobs {
		size += len(b.Data)
	}
	blobs, data := make([]checkpoint.Blob, len(req.Blobs)), make([]byte, 0, size)
	for i, b := range req.Blobs {
		start := len(data)
		data = append(data, b.Data...)
		b.Data = data[start:len(data):len(data)]
		blobs[i] = b
	}
	req.Blobs = blobs
	if n.putAll == nil || n.rule == holdUntilEvent || (n.rule == holdUntilNode && !n.followsNoNode(req)) {
		n.due = true
	}
	n.held = append(n.held, req)
	return nil
}

// followsNoNode reports whether req, on the thread made for the run, follows no node: it is the
// input's checkpoint, or the one after it, which only the __start__ task (the input's writes)
// makes (graph: runStart). Under n.mu.
func (n *newThread) followsNoNode(req checkpoint.PutRequest) bool {
	if req.Checkpoint.Source == checkpoint.SourceInput {
		return true
	}
	for _, h := range n.held {
		if h.Checkpoint.ID == req.Checkpoint.ParentID {
			return h.Checkpoint.Source == checkpoint.SourceInput
		}
	}
	return false
}

// holding reports whether held puts are due before the graph's next event.
func (n *newThread) holding() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.held) > 0 && n.due
}

// flush sends the held puts and then what more queues on the batch (nil: nothing), in one
// round trip, or, on a putAller, writes the held puts in one transaction (more must be nil). It
// returns the error of a held put, now or earlier, or the batch's (when a statement of more
// fails, nothing of the batch was written).
func (n *newThread) flush(ctx context.Context, more func(*pgx.Batch)) error {
	n.send.Lock()
	defer n.send.Unlock()
	n.mu.Lock()
	held, err := n.held, n.heldErr
	n.held, n.due = nil, false
	n.mu.Unlock()
	if err != nil || (len(held) == 0 && more == nil) {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	if n.batcher == nil {
		if more != nil {
			return errors.New("server: a saver without batches cannot send statements with its held checkpoints")
		}
		if err := n.putAll.PutAll(ctx, held); err != nil {
			return n.failed(err)
		}
		return nil
	}
	b := &pgx.Batch{}
	checks := make([]func(context.Context, error) error, 0, len(held))
	for _, req := range held {
		check, err := n.batcher.QueuePut(ctx, b, req)
		if err != nil {
			return n.failed(err)
		}
		checks = append(checks, check)
	}
	if more != nil {
		more(b)
	}
	batchErr := n.batcher.Pool().SendBatch(ctx, b).Close()
	for _, check := range checks {
		if err := check(ctx, batchErr); err != nil {
			return n.failed(err)
		}
	}
	return batchErr
}

// failed records a held put's error: the mirror gives up, and the run fails with err.
func (n *newThread) failed(err error) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.mirror, n.held = nil, nil
	if n.heldErr == nil {
		n.heldErr = err
	}
	return n.heldErr
}

// sendHeld sends what ctx's watched thread holds, if anything.
func sendHeld(ctx context.Context) error {
	if n, ok := ctx.Value(newThreadKey{}).(*newThread); ok && n.holds() {
		return n.flush(ctx, nil)
	}
	return nil
}

// sendDue sends what ctx's watched thread holds when it is due before the graph goes on
// (holdRule; on Postgres whatever is held).
func sendDue(ctx context.Context) error {
	if n, ok := ctx.Value(newThreadKey{}).(*newThread); ok && n.holding() {
		return n.flush(ctx, nil)
	}
	return nil
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
	if err := n.sent(ctx); err != nil {
		return nil, err
	}
	return s.Saver.Get(ctx, ref)
}

// sent sends what n holds before another write or a read of the database.
func (n *newThread) sent(ctx context.Context) error {
	if !n.holds() {
		return nil
	}
	return n.flush(ctx, nil)
}

func (s newThreadSaver) Put(ctx context.Context, req checkpoint.PutRequest) error {
	n := s.of(req.ThreadID)
	if n == nil {
		return s.Saver.Put(ctx, req)
	}
	n.fresh.Store(false)
	size := 0
	for _, b := range req.Blobs {
		size += len(b.Data)
	}
	// The run's own puts are held; with async durability on SQLite, the graph's background
	// writer's too (it has a context of its own, and the graph waits for it before it returns).
	mark, _ := ctx.Value(newThreadKey{}).(*newThread)
	if (mark == n || (n.putAll != nil && n.rule == holdUntilEnd)) && n.holds() && req.NS == "" && len(req.Checkpoint.Next) <= 1 {
		if err := n.hold(req); err != nil {
			return err
		}
		n.keep(size, func(m *checkpoint.MemorySaver) error { return m.Put(context.Background(), req) })
		return nil
	}
	if err := n.sent(ctx); err != nil {
		return err
	}
	if err := s.Saver.Put(ctx, req); err != nil {
		n.giveUp()
		return err
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
	if err := n.sent(ctx); err != nil {
		return err
	}
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
		if err := n.sent(ctx); err != nil {
			return err
		}
	}
	return s.Saver.SetMetadata(ctx, ref, metadata)
}

func (s newThreadSaver) Prune(ctx context.Context, req checkpoint.PruneRequest) error {
	if n := s.of(req.ThreadID); n != nil {
		n.giveUp()
		if err := n.sent(ctx); err != nil {
			return err
		}
	}
	return s.Saver.Prune(ctx, req)
}

func (s newThreadSaver) DeleteThreads(ctx context.Context, threadIDs []string) error {
	for _, id := range threadIDs {
		if n := s.of(id); n != nil {
			n.giveUp()
			_ = n.sent(ctx) // the thread goes: what was held only has to precede the delete
		}
	}
	return s.Saver.DeleteThreads(ctx, threadIDs)
}

// deleteWithRecords deletes finished stateless runs' threads, their checkpoints first and then
// their records, as removeThreads does, in one round trip and one transaction (Postgres): the
// sweeper's two statements were two round trips.
func (s newThreadSaver) deleteWithRecords(ctx context.Context, keys []metadb.ThreadKey) error {
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = k.ID
		if n := s.of(k.ID); n != nil {
			n.giveUp()
			_ = n.sent(ctx)
		}
	}
	b := &pgx.Batch{}
	if err := s.batcher.QueueDeleteThreads(ctx, b, ids); err != nil {
		return err
	}
	metadb.QueueDeleteThreads(b, keys)
	return s.batcher.Pool().SendBatch(ctx, b).Close()
}
