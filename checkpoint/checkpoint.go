// Package checkpoint defines how the graph runtime records a thread's progress: a [Checkpoint]
// after every superstep, the channel values it references ([Blob]), and the writes of tasks that
// finished inside a superstep that has not completed yet ([PendingWrite]).
//
// A [Saver] stores them. This package holds the interface, the in-memory saver, and the shared
// types; the SQLite and Postgres savers live in subpackages, and every saver passes the exported
// conformance suite in package checkpointtest.
//
// # What a checkpoint stores
//
// A checkpoint does not copy the whole state. Each state key is a channel with a version; a
// checkpoint lists the version of every channel, and only the channels whose version changed in
// that superstep bring a new [Blob]. A blob either holds the channel's full value, or, for a key
// with a reducer (append, add-messages, ...), only the updates that superstep applied on top of an
// earlier version (its Base). Appending one message to a list of a thousand therefore stores one
// message. The runtime rebuilds a value by starting from the nearest full blob and replaying the
// deltas above it; a saver only has to return that chain (see [Tuple.Blobs]).
//
// # Concurrency
//
// Every method may be called from several goroutines at once. Writers to one thread are serialised
// by [PutRequest.Head]: a put whose expected head is no longer the thread's newest checkpoint fails
// with [ErrConflict], so two processes running the same thread cannot fork its history silently.
package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"
)

// Errors every saver returns (wrapped or as is), so callers can test them with errors.Is.
var (
	// ErrNotFound: no thread, namespace or checkpoint matches the request.
	ErrNotFound = errors.New("checkpoint: not found")
	// ErrConflict: another writer moved the thread's head since this writer last read it.
	ErrConflict = errors.New("checkpoint: conflicting write: the thread's newest checkpoint changed underneath this writer (is another process running the same thread?)")
)

// Source says how a checkpoint came to be.
type Source string

// Checkpoint sources.
const (
	SourceInput  Source = "input"  // the run's input was applied
	SourceLoop   Source = "loop"   // a superstep finished
	SourceUpdate Source = "update" // state was updated from outside (update-state)
	SourceFork   Source = "fork"   // a copy of another checkpoint
)

// Checkpoint is the state of one thread namespace between two supersteps.
type Checkpoint struct {
	// ID is unique and sortable: a later checkpoint of a thread has a greater ID (see [NewID]).
	ID string `json:"id"`
	// ParentID is the checkpoint this one was made from; empty for a thread's first.
	ParentID string `json:"parent_id,omitempty"`
	// Step counts supersteps: -1 for the input checkpoint, then 0, 1, ...
	Step   int    `json:"step"`
	Source Source `json:"source"`
	// Versions maps every channel that has a value to its current version. Versions of one
	// channel are unique within a thread and compare as strings in the order they were made.
	Versions map[string]string `json:"versions"`
	// Next lists the tasks the next superstep runs.
	Next []Task `json:"next,omitempty"`
	// Barriers records joins in progress: for a node that waits on several sources, the sources
	// that have finished so far.
	Barriers map[string][]string `json:"barriers,omitempty"`
	// Metadata is free-form: the runtime records the writes of the step, the run ID and the
	// caller's metadata; savers filter [List] on it.
	Metadata  map[string]any `json:"metadata,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
}

// Task is a node scheduled to run in a superstep.
type Task struct {
	// ID is stable across retries and resumes of the same superstep.
	ID   string `json:"id"`
	Node string `json:"node"`
	// Arg, when set, is the JSON payload a Send gave this task instead of the graph state.
	Arg []byte `json:"arg,omitempty"`
}

// Blob is one version of one channel's value, JSON-encoded. Data may hold shared parts (a
// document the value holds many times is written once; see docs/checkpoints.md): a saver stores
// it as opaque bytes, and the graph's state readers turn it back into plain JSON.
type Blob struct {
	Channel string `json:"channel"`
	Version string `json:"version"`
	// Base is empty when Data is the full value. Otherwise Data is a JSON array of updates that
	// the channel's reducer applies, in order, to the value at version Base.
	Base string `json:"base,omitempty"`
	Data []byte `json:"data"`
}

// PendingWrite is a value a task wrote in a superstep that has not completed: kept so that, when
// the superstep runs again after an interrupt or a crash, tasks that had finished do not run twice.
type PendingWrite struct {
	TaskID  string `json:"task_id"`
	Channel string `json:"channel"`
	Value   []byte `json:"value"`
}

// Ref names a checkpoint: a thread, a namespace within it ("" for the root graph; subgraphs have
// their own), and a checkpoint ID, empty for the newest.
type Ref struct {
	ThreadID     string `json:"thread_id"`
	NS           string `json:"checkpoint_ns,omitempty"`
	CheckpointID string `json:"checkpoint_id,omitempty"`
}

// Tuple is a checkpoint with what is needed to resume from it.
type Tuple struct {
	Ref        Ref
	Checkpoint Checkpoint
	// Blobs holds, for each channel in Checkpoint.Versions, the blob at that version and, if it
	// is a delta, the chain of blobs it builds on down to the nearest full one. Order does not
	// matter. [Saver.List] leaves it empty.
	Blobs []Blob
	// Pending holds the writes recorded against this checkpoint with [Saver.PutWrites], in the
	// order they were put.
	Pending []PendingWrite
}

// PutRequest stores a checkpoint and the blobs new in it.
type PutRequest struct {
	ThreadID   string
	NS         string
	Checkpoint Checkpoint
	Blobs      []Blob
	// Head is the ID of the thread namespace's newest checkpoint as the writer last saw it (""
	// for a namespace with none). If the newest checkpoint is now another one, Put fails with
	// ErrConflict and stores nothing. A put repeated after a lost reply (the newest checkpoint is
	// already Checkpoint.ID) succeeds without storing a duplicate.
	Head string
}

// Validate reports what makes req a put no saver stores: a checkpoint without an ID, an ID that
// does not sort after Head, or a blob without a Channel or Version or that names itself as its
// Base. Every saver checks it before anything else; a saver of your own can call it too.
func (req PutRequest) Validate() error {
	if req.Checkpoint.ID == "" {
		return errors.New("the checkpoint has no ID; set Checkpoint.ID with checkpoint.NewID")
	}
	if req.Head != "" && req.Checkpoint.ID <= req.Head {
		return fmt.Errorf("checkpoint ID %q does not sort after the head %q; make IDs with checkpoint.NewID", req.Checkpoint.ID, req.Head)
	}
	for i, b := range req.Blobs {
		switch {
		case b.Channel == "":
			return fmt.Errorf("blob %d has no Channel", i)
		case b.Version == "":
			return fmt.Errorf("blob %d (channel %q) has no Version", i, b.Channel)
		case b.Base == b.Version:
			return fmt.Errorf("blob %s@%s names itself as its Base; a delta builds on an earlier version", b.Channel, b.Version)
		}
	}
	return nil
}

// WritesRequest records pending writes of one task against a checkpoint. Repeating it replaces
// that task's earlier writes for the same checkpoint rather than adding to them.
type WritesRequest struct {
	Ref    Ref // CheckpointID is required
	TaskID string
	Writes []PendingWrite
}

// ListOptions selects checkpoints of a thread, newest first.
type ListOptions struct {
	ThreadID string
	// NS selects a namespace; nil lists the root namespace only, and AllNS lists every one.
	NS    *string
	AllNS bool
	// Before, when set, lists only checkpoints older than this ID.
	Before string
	// Limit caps the number listed; zero means no limit.
	Limit int
	// Metadata keeps checkpoints whose metadata has each of these keys with an equal value
	// (compared as JSON).
	Metadata map[string]any
}

// PruneRequest deletes old checkpoints of a thread.
type PruneRequest struct {
	ThreadID string
	// Keep is how many of the newest checkpoints of each namespace survive; at least 1.
	Keep int
}

// Saver stores checkpoints. All methods are safe for concurrent use.
type Saver interface {
	// Get returns the checkpoint ref names (the newest when ref.CheckpointID is empty) with its
	// blob chains and pending writes, or ErrNotFound.
	Get(ctx context.Context, ref Ref) (*Tuple, error)
	// List returns checkpoints without blobs or pending writes, newest first.
	List(ctx context.Context, opts ListOptions) iter.Seq2[*Tuple, error]
	// Put stores a checkpoint and its new blobs atomically (see PutRequest.Head). Put must not
	// keep the bytes of req.Blobs after it returns (as io.Writer must not keep p): the runtime
	// encodes blobs into buffers it reuses for the next checkpoint, so a saver that holds blobs
	// in memory stores a copy (or a compressed form) of them.
	Put(ctx context.Context, req PutRequest) error
	// PutWrites records a task's pending writes against a stored checkpoint.
	PutWrites(ctx context.Context, req WritesRequest) error
	// SetMetadata replaces the metadata of the stored checkpoint ref names (ref.CheckpointID is
	// required), or fails with ErrNotFound. Nil or empty metadata clears it. Nothing else of the
	// checkpoint changes, and the thread's head does not move.
	SetMetadata(ctx context.Context, ref Ref, metadata map[string]any) error
	// DeleteThreads removes every checkpoint, blob and pending write of each thread, in all
	// namespaces, at once: a SQL saver does it in one transaction whatever the number of threads.
	// Unknown threads are not an error, and an empty list does nothing. (To delete one thread,
	// pass a list of one.)
	DeleteThreads(ctx context.Context, threadIDs []string) error
	// Prune deletes all but the newest req.Keep checkpoints of each namespace of a thread, their
	// pending writes, and the blobs no remaining checkpoint needs.
	Prune(ctx context.Context, req PruneRequest) error
}
