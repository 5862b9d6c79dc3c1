// Package sqlcore is what the SQL checkpoint savers (sqlitesaver, pgsaver) share, so that each
// keeps only what its database does differently: how a checkpoint is laid out in a Row, the
// checks on a put and on what is read back (row.go), the error type and its hints and the start
// of New (errors.go), the paged listing with its SQL dialect and the options' defaults
// (list.go), SetMetadata (metadata.go), and the schema, written once in each database's types,
// with the migration runner (migrate.go).
package sqlcore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/trellis-go/trellis/checkpoint"
)

// State is the part of a checkpoint row that no query looks inside, except for the channel
// versions that the savers' blob-chain and prune queries read from the JSON (key "v").
type State struct {
	Versions map[string]string   `json:"v"`
	Next     []checkpoint.Task   `json:"n,omitempty"`
	Barriers map[string][]string `json:"b,omitempty"`
}

// Row is a checkpoint as stored: the indexed columns plus the encoded state and metadata.
type Row struct {
	ID        string
	ParentID  string
	Step      int64
	Source    string
	CreatedAt *int64 // Unix nanoseconds; nil for a zero time
	State     []byte // JSON text of a state
	Metadata  []byte // JSON object, or nil for no metadata
}

// Unix nanoseconds cover these years; CreatedAt outside them cannot be stored.
var (
	minTime = time.Unix(0, -1<<63)
	maxTime = time.Unix(0, 1<<63-1)
)

// Encode turns a checkpoint into the Row stored for it.
func Encode(cp checkpoint.Checkpoint) (Row, error) {
	r := Row{ID: cp.ID, ParentID: cp.ParentID, Step: int64(cp.Step), Source: string(cp.Source)}
	if !cp.CreatedAt.IsZero() {
		if cp.CreatedAt.Before(minTime) || cp.CreatedAt.After(maxTime) {
			return Row{}, fmt.Errorf("CreatedAt %v is outside the years 1678 to 2262 that the saver can store", cp.CreatedAt)
		}
		ns := cp.CreatedAt.UnixNano()
		r.CreatedAt = &ns
	}
	versions := cp.Versions
	if versions == nil {
		versions = map[string]string{}
	}
	var err error
	r.State, err = json.Marshal(State{Versions: versions, Next: cp.Next, Barriers: cp.Barriers})
	if err != nil {
		return Row{}, fmt.Errorf("encoding the checkpoint's versions, tasks and barriers: %w", err)
	}
	if r.Metadata, err = EncodeMetadata(cp.Metadata); err != nil {
		return Row{}, err
	}
	return r, nil
}

// EncodeMetadata is the stored form of a checkpoint's metadata: a JSON object, or nil (NULL)
// for none.
func EncodeMetadata(md map[string]any) ([]byte, error) {
	if len(md) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(md)
	if err != nil {
		return nil, fmt.Errorf("metadata cannot be encoded as JSON (%w); keep metadata to JSON values", err)
	}
	return b, nil
}

// Decode turns a stored Row back into a checkpoint. It never panics on malformed
// input; it returns an error that says which part is damaged.
func Decode(r Row) (checkpoint.Checkpoint, error) {
	cp := checkpoint.Checkpoint{ID: r.ID, ParentID: r.ParentID, Step: int(r.Step), Source: checkpoint.Source(r.Source)}
	if r.CreatedAt != nil {
		cp.CreatedAt = time.Unix(0, *r.CreatedAt)
	}
	var st State
	if err := json.Unmarshal(r.State, &st); err != nil {
		return checkpoint.Checkpoint{}, fmt.Errorf("checkpoint %q: stored state is damaged: %w", r.ID, err)
	}
	for ch, v := range st.Versions {
		if v == "" {
			return checkpoint.Checkpoint{}, fmt.Errorf("checkpoint %q: stored state is damaged: channel %q has an empty version", r.ID, ch)
		}
	}
	for i, task := range st.Next {
		if task.ID == "" {
			return checkpoint.Checkpoint{}, fmt.Errorf("checkpoint %q: stored state is damaged: task %d has no ID", r.ID, i)
		}
	}
	if st.Versions == nil {
		st.Versions = map[string]string{}
	}
	cp.Versions, cp.Next, cp.Barriers = st.Versions, st.Next, st.Barriers
	if len(r.Metadata) > 0 && !bytes.Equal(r.Metadata, []byte("null")) {
		if err := json.Unmarshal(r.Metadata, &cp.Metadata); err != nil {
			return checkpoint.Checkpoint{}, fmt.Errorf("checkpoint %q: stored metadata is damaged: %w", r.ID, err)
		}
	}
	return cp, nil
}

// Found decodes the row a Get read: err is the read's error, and noRows the driver's error for
// no row, which becomes [checkpoint.ErrNotFound] (see [Missing]).
func Found(ref checkpoint.Ref, r Row, err, noRows error) (checkpoint.Checkpoint, error) {
	if errors.Is(err, noRows) {
		return checkpoint.Checkpoint{}, Missing(ref)
	}
	if err != nil {
		return checkpoint.Checkpoint{}, err
	}
	return Decode(r)
}

// CheckChains verifies that blobs hold, for every channel in versions, the blob at that version
// and every base below it down to a full blob, and nothing else is needed. Extra blobs are
// dropped. It returns the blobs in chain order and fails on a missing link or a cycle.
func CheckChains(threadID, cpID string, versions map[string]string, blobs []checkpoint.Blob) ([]checkpoint.Blob, error) {
	type key struct{ ch, v string }
	byKey := make(map[key]checkpoint.Blob, len(blobs))
	for _, b := range blobs {
		byKey[key{b.Channel, b.Version}] = b
	}
	out := make([]checkpoint.Blob, 0, len(blobs))
	for ch, v := range versions {
		for depth := 0; v != ""; depth++ {
			b, ok := byKey[key{ch, v}]
			if !ok {
				return nil, fmt.Errorf("thread %q checkpoint %q: blob %s@%s is missing (the database was edited by hand, or a put stored a delta whose base was never stored)", threadID, cpID, ch, v)
			}
			if depth > len(blobs) {
				return nil, fmt.Errorf("thread %q checkpoint %q: the blob chain of channel %q loops at version %s", threadID, cpID, ch, v)
			}
			out = append(out, b)
			v = b.Base
		}
	}
	return out, nil
}

// EncodePut checks a put request (see [checkpoint.PutRequest.Validate]) and encodes its
// checkpoint: what both savers do before they talk to the database.
func EncodePut(req checkpoint.PutRequest) (Row, error) {
	if err := req.Validate(); err != nil {
		return Row{}, err
	}
	return Encode(req.Checkpoint)
}

// Rows is what database/sql's *sql.Rows and pgx's Rows have in common.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// ScanTuples reads the rows of a list query, whose columns are the namespace, then the columns
// of [Row] in order, into tuples of threadID (without blobs or pending writes).
func ScanTuples(rows Rows, threadID string) ([]*checkpoint.Tuple, error) {
	var out []*checkpoint.Tuple
	for rows.Next() {
		var (
			ns string
			r  Row
		)
		if err := rows.Scan(&ns, &r.ID, &r.ParentID, &r.Step, &r.Source, &r.CreatedAt, &r.State, &r.Metadata); err != nil {
			return nil, err
		}
		cp, err := Decode(r)
		if err != nil {
			return nil, err
		}
		out = append(out, &checkpoint.Tuple{Ref: checkpoint.Ref{ThreadID: threadID, NS: ns, CheckpointID: cp.ID}, Checkpoint: cp})
	}
	return out, rows.Err()
}
