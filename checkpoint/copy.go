package checkpoint

import (
	"cmp"
	"context"
	"fmt"
	"slices"
)

// ThreadCopier is a [Saver] that copies threads itself (in one statement, say) rather than
// through Get and Put. [CopyThread] uses it when a saver has it.
type ThreadCopier interface {
	CopyThread(ctx context.Context, from, to string) error
}

// CopyThread copies every checkpoint of thread from, in every namespace, with the blobs it
// needs and its pending writes, to thread to, which must have no checkpoint yet. The copies keep
// their IDs, parents, metadata and creation times, so the new thread has the same history (forks
// included) and any checkpoint of it is named by its original's ID. A thread without checkpoints
// copies as nothing.
//
// Copying goes checkpoint by checkpoint, oldest first, through s's own methods; a failure part
// way leaves the older part of the history copied, and repeating the copy then fails because to
// is no longer empty: delete it ([Saver.DeleteThreads]) first.
func CopyThread(ctx context.Context, s Saver, from, to string) error {
	if from == to {
		return fmt.Errorf("checkpoint: copying thread %q onto itself", from)
	}
	for _, err := range s.List(ctx, ListOptions{ThreadID: to, AllNS: true, Limit: 1}) {
		if err != nil {
			return fmt.Errorf("checkpoint: copying thread %q: %w", from, err)
		}
		return fmt.Errorf("checkpoint: copying thread %q to %q: the target already has checkpoints; give a new thread ID", from, to)
	}
	if c, ok := s.(ThreadCopier); ok {
		return c.CopyThread(ctx, from, to)
	}
	var refs []Ref
	for tup, err := range s.List(ctx, ListOptions{ThreadID: from, AllNS: true}) {
		if err != nil {
			return fmt.Errorf("checkpoint: copying thread %q: %w", from, err)
		}
		refs = append(refs, tup.Ref)
	}
	// IDs sort in the order the checkpoints were made, within a namespace: putting them in that
	// order makes each one's head the one put before it, as when they were first stored.
	slices.SortStableFunc(refs, func(a, b Ref) int { return cmp.Compare(a.CheckpointID, b.CheckpointID) })
	type blobKey struct{ ns, channel, version string }
	stored := map[blobKey]bool{}
	heads := map[string]string{}
	for _, ref := range refs {
		tup, err := s.Get(ctx, ref)
		if err != nil {
			return fmt.Errorf("checkpoint: copying checkpoint %s of thread %q: %w", ref.CheckpointID, from, err)
		}
		var blobs []Blob
		for _, b := range tup.Blobs {
			k := blobKey{ref.NS, b.Channel, b.Version}
			if !stored[k] {
				stored[k] = true
				blobs = append(blobs, b)
			}
		}
		cp := tup.Checkpoint
		if id, ok := cp.Metadata["thread_id"].(string); ok && id == from {
			md := make(map[string]any, len(cp.Metadata))
			for k, v := range cp.Metadata {
				md[k] = v
			}
			md["thread_id"] = to
			cp.Metadata = md
		}
		if err := s.Put(ctx, PutRequest{ThreadID: to, NS: ref.NS, Checkpoint: cp, Blobs: blobs, Head: heads[ref.NS]}); err != nil {
			return fmt.Errorf("checkpoint: copying checkpoint %s of thread %q: %w", ref.CheckpointID, from, err)
		}
		heads[ref.NS] = cp.ID
		// Writes are put task by task, in the order of each task's first write; a task's
		// writes keep their order.
		var tasks []string
		byTask := map[string][]PendingWrite{}
		for _, w := range tup.Pending {
			if _, ok := byTask[w.TaskID]; !ok {
				tasks = append(tasks, w.TaskID)
			}
			byTask[w.TaskID] = append(byTask[w.TaskID], w)
		}
		for _, task := range tasks {
			req := WritesRequest{Ref: Ref{ThreadID: to, NS: ref.NS, CheckpointID: cp.ID}, TaskID: task, Writes: byTask[task]}
			if err := s.PutWrites(ctx, req); err != nil {
				return fmt.Errorf("checkpoint: copying the pending writes of checkpoint %s of thread %q: %w", ref.CheckpointID, from, err)
			}
		}
	}
	return nil
}
