package sqlcore

import (
	"context"
	"errors"

	"github.com/trellis-go/trellis/checkpoint"
)

// Exec runs a statement and says how many rows it changed.
type Exec func(ctx context.Context, q string, args ...any) (int64, error)

// SetMetadata is a saver's SetMetadata: it replaces the metadata column of the checkpoint ref
// names through exec, in one statement, and reports [checkpoint.ErrNotFound] when no row
// changed. start is the saver's check before any query.
func SetMetadata(ctx context.Context, d Dialect, ref checkpoint.Ref, md map[string]any, start func(context.Context) error, exec Exec) error {
	if ref.CheckpointID == "" {
		return errors.New("the ref has no CheckpointID; name the checkpoint whose metadata to set")
	}
	raw, err := EncodeMetadata(md)
	if err != nil {
		return err
	}
	if err := start(ctx); err != nil {
		return err
	}
	var arg any // NULL for no metadata
	if raw != nil {
		arg = string(raw)
	}
	q := `UPDATE trellis_checkpoints SET metadata = ` + d.Param(1) + ` WHERE id = ` + d.Param(2) + `
AND space = (SELECT id FROM trellis_checkpoint_spaces WHERE thread_id = ` + d.Param(3) + ` AND ns = ` + d.Param(4) + `)`
	n, err := exec(ctx, q, arg, ref.CheckpointID, ref.ThreadID, ref.NS)
	if err != nil {
		return err
	}
	if n == 0 {
		return NotFound("thread %q namespace %q has no checkpoint %q", ref.ThreadID, ref.NS, ref.CheckpointID)
	}
	return nil
}
