package checkpoint

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"iter"
	"maps"

	"github.com/trellis-go/trellis/encrypt"
)

// Encrypt returns a saver that stores through s with what a checkpoint holds of the graph's
// state sealed by keys (AES-GCM, see package encrypt): every channel value (blob), every
// pending write, every Send's argument of a scheduled task, and the step's writes the runtime
// records in the metadata ("writes"). The rest of the metadata stays readable, since List
// filters on it; keep secrets out of it. Checkpoints stored before encryption was turned on are
// read as they are. A value sealed with a key the keyring lacks fails the read with an error
// that names the key.
func Encrypt(s Saver, keys *encrypt.Keyring) Saver { return &encrypted{inner: s, keys: keys} }

type encrypted struct {
	inner Saver
	keys  *encrypt.Keyring
}

// sealedWrites is the metadata key that holds the sealed "writes" of a step.
const sealedWrites = "writes_sealed"

func (e *encrypted) seal(b []byte) ([]byte, error) {
	out, err := e.keys.Seal(b)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: sealing: %w", err)
	}
	return out, nil
}

func (e *encrypted) open(b []byte) ([]byte, error) {
	out, err := e.keys.Open(b)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: opening a sealed value: %w", err)
	}
	return out, nil
}

func (e *encrypted) sealTasks(ts []Task) ([]Task, error) {
	if len(ts) == 0 {
		return ts, nil
	}
	out := make([]Task, len(ts))
	for i, t := range ts {
		out[i] = t
		if t.Arg != nil {
			a, err := e.seal(t.Arg)
			if err != nil {
				return nil, err
			}
			out[i].Arg = a
		}
	}
	return out, nil
}

func (e *encrypted) sealMetadata(md map[string]any) (map[string]any, error) {
	w, ok := md["writes"]
	if !ok {
		return md, nil
	}
	raw, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: the step's writes: %w", err)
	}
	sealed, err := e.seal(raw)
	if err != nil {
		return nil, err
	}
	out := maps.Clone(md)
	delete(out, "writes")
	out[sealedWrites] = base64.StdEncoding.EncodeToString(sealed)
	return out, nil
}

func (e *encrypted) openCheckpoint(cp *Checkpoint) error {
	for i := range cp.Next {
		if cp.Next[i].Arg != nil {
			a, err := e.open(cp.Next[i].Arg)
			if err != nil {
				return err
			}
			cp.Next[i].Arg = a
		}
	}
	s, ok := cp.Metadata[sealedWrites].(string)
	if !ok {
		return nil
	}
	sealed, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return fmt.Errorf("checkpoint: the sealed writes in the metadata are not base64: %w", err)
	}
	raw, err := e.open(sealed)
	if err != nil {
		return err
	}
	var w any
	if err := json.Unmarshal(raw, &w); err != nil {
		return fmt.Errorf("checkpoint: the sealed writes: %w", err)
	}
	md := maps.Clone(cp.Metadata)
	delete(md, sealedWrites)
	md["writes"] = w
	cp.Metadata = md
	return nil
}

func (e *encrypted) openTuple(t *Tuple) error {
	if err := e.openCheckpoint(&t.Checkpoint); err != nil {
		return err
	}
	for i := range t.Blobs {
		d, err := e.open(t.Blobs[i].Data)
		if err != nil {
			return fmt.Errorf("%w (channel %s, version %s)", err, t.Blobs[i].Channel, t.Blobs[i].Version)
		}
		t.Blobs[i].Data = d
	}
	for i := range t.Pending {
		v, err := e.open(t.Pending[i].Value)
		if err != nil {
			return fmt.Errorf("%w (pending write of task %s)", err, t.Pending[i].TaskID)
		}
		t.Pending[i].Value = v
	}
	return nil
}

func (e *encrypted) Get(ctx context.Context, ref Ref) (*Tuple, error) {
	t, err := e.inner.Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	if err := e.openTuple(t); err != nil {
		return nil, err
	}
	return t, nil
}

// List lists through the inner saver. A metadata filter on the sealed "writes" is applied here,
// after opening, with the limit (the database cannot see inside a sealed value).
func (e *encrypted) List(ctx context.Context, opts ListOptions) iter.Seq2[*Tuple, error] {
	var onWrites map[string]any
	limit := 0
	if w, ok := opts.Metadata["writes"]; ok {
		onWrites = map[string]any{"writes": w}
		rest := maps.Clone(opts.Metadata)
		delete(rest, "writes")
		limit = opts.Limit
		opts.Metadata, opts.Limit = rest, 0
	}
	return func(yield func(*Tuple, error) bool) {
		n := 0
		for t, err := range e.inner.List(ctx, opts) {
			if err == nil {
				err = e.openTuple(t)
			}
			if err == nil && onWrites != nil && !MetadataMatches(t.Checkpoint.Metadata, onWrites) {
				continue
			}
			if !yield(t, err) || err != nil {
				return
			}
			if n++; limit > 0 && n >= limit {
				return
			}
		}
	}
}

func (e *encrypted) Put(ctx context.Context, req PutRequest) error {
	var err error
	if req.Checkpoint.Next, err = e.sealTasks(req.Checkpoint.Next); err != nil {
		return err
	}
	if req.Checkpoint.Metadata, err = e.sealMetadata(req.Checkpoint.Metadata); err != nil {
		return err
	}
	blobs := make([]Blob, len(req.Blobs))
	for i, b := range req.Blobs {
		blobs[i] = b
		if blobs[i].Data, err = e.seal(b.Data); err != nil {
			return err
		}
	}
	req.Blobs = blobs
	return e.inner.Put(ctx, req)
}

func (e *encrypted) PutWrites(ctx context.Context, req WritesRequest) error {
	ws := make([]PendingWrite, len(req.Writes))
	for i, w := range req.Writes {
		ws[i] = w
		v, err := e.seal(w.Value)
		if err != nil {
			return err
		}
		ws[i].Value = v
	}
	req.Writes = ws
	return e.inner.PutWrites(ctx, req)
}

func (e *encrypted) SetMetadata(ctx context.Context, ref Ref, metadata map[string]any) error {
	md, err := e.sealMetadata(metadata)
	if err != nil {
		return err
	}
	return e.inner.SetMetadata(ctx, ref, md)
}

func (e *encrypted) DeleteThreads(ctx context.Context, threadIDs []string) error {
	return e.inner.DeleteThreads(ctx, threadIDs)
}

func (e *encrypted) Prune(ctx context.Context, req PruneRequest) error {
	return e.inner.Prune(ctx, req)
}
