package research

import (
	"context"
	"errors"
	"iter"
	"log/slog"
	"sync"

	"github.com/trellis-go/trellis/checkpoint"
)

// DegradingSaver is the research graph's checkpoint saver: it passes everything to Inner, but
// when a write fails (the database is down, a disk is full) it logs the failure and goes on
// without checkpoints for that thread, as the specification's Appendix B asks ("Checkpointer
// failure: log, continue without checkpoint"): the job finishes, but can no longer resume. A
// conflict (another process writing the thread) is not swallowed: it is the runtime's guard
// against two writers.
type DegradingSaver struct {
	Inner checkpoint.Saver
	Log   *slog.Logger

	mu       sync.Mutex
	degraded map[string]bool
}

var _ checkpoint.Saver = (*DegradingSaver)(nil)

// Degraded reports whether the thread has gone on without checkpoints.
func (d *DegradingSaver) Degraded(threadID string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.degraded[threadID]
}

func (d *DegradingSaver) failed(ctx context.Context, thread string, err error) error {
	if err == nil || errors.Is(err, checkpoint.ErrConflict) || ctx.Err() != nil {
		return err
	}
	d.mu.Lock()
	if d.degraded == nil {
		d.degraded = map[string]bool{}
	}
	first := !d.degraded[thread]
	d.degraded[thread] = true
	d.mu.Unlock()
	if first && d.Log != nil {
		d.Log.Warn("listforge research: checkpoint write failed; the job continues without checkpoints and cannot resume", "thread", thread, "err", err)
	}
	return nil
}

// Get implements checkpoint.Saver.
func (d *DegradingSaver) Get(ctx context.Context, ref checkpoint.Ref) (*checkpoint.Tuple, error) {
	return d.Inner.Get(ctx, ref)
}

// List implements checkpoint.Saver.
func (d *DegradingSaver) List(ctx context.Context, opts checkpoint.ListOptions) iter.Seq2[*checkpoint.Tuple, error] {
	return d.Inner.List(ctx, opts)
}

// Put implements checkpoint.Saver.
func (d *DegradingSaver) Put(ctx context.Context, req checkpoint.PutRequest) error {
	if d.Degraded(req.ThreadID) {
		return nil
	}
	return d.failed(ctx, req.ThreadID, d.Inner.Put(ctx, req))
}

// PutWrites implements checkpoint.Saver.
func (d *DegradingSaver) PutWrites(ctx context.Context, req checkpoint.WritesRequest) error {
	if d.Degraded(req.Ref.ThreadID) {
		return nil
	}
	return d.failed(ctx, req.Ref.ThreadID, d.Inner.PutWrites(ctx, req))
}

// SetMetadata implements checkpoint.Saver.
func (d *DegradingSaver) SetMetadata(ctx context.Context, ref checkpoint.Ref, metadata map[string]any) error {
	return d.Inner.SetMetadata(ctx, ref, metadata)
}

// DeleteThreads implements checkpoint.Saver. A deleted thread starts again with checkpoints.
func (d *DegradingSaver) DeleteThreads(ctx context.Context, threadIDs []string) error {
	d.mu.Lock()
	for _, id := range threadIDs {
		delete(d.degraded, id)
	}
	d.mu.Unlock()
	return d.Inner.DeleteThreads(ctx, threadIDs)
}

// Prune implements checkpoint.Saver.
func (d *DegradingSaver) Prune(ctx context.Context, req checkpoint.PruneRequest) error {
	return d.Inner.Prune(ctx, req)
}
