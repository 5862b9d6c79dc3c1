package sqlcore

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"

	"github.com/trellis-go/trellis/checkpoint"
)

// DefaultPageSize is how many checkpoints List reads per query unless told otherwise.
const DefaultPageSize = 256

// Defaults returns a copy of a saver's options (the zero options for nil) with what both savers'
// options have checked and filled in: Options.ListPageSize (pageSize points at it), where zero
// means [DefaultPageSize].
func Defaults[O any](opts *O, pageSize func(*O) *int) (O, error) {
	var o O
	if opts != nil {
		o = *opts
	}
	switch n := pageSize(&o); {
	case *n < 0:
		return o, fmt.Errorf("Options.ListPageSize is %d; use zero for the default of %d or a positive number", *n, DefaultPageSize)
	case *n == 0:
		*n = DefaultPageSize
	}
	return o, nil
}

// Dialect is how a saver's SQL differs where the savers share a query.
type Dialect struct {
	// Param returns the placeholder of the n-th argument (from 1): "$1" or "?".
	Param func(n int) string
	// Collate follows the namespace column where it is compared or sorted, so that keyset paging
	// and ORDER BY agree byte for byte (` COLLATE "C"` on Postgres; empty on SQLite, which
	// compares bytes already).
	Collate string
	// JSONContains, when set, returns the condition that the metadata column contains the JSON
	// object in the argument placeholder p (it may use an index); the savers check the filter
	// in Go as well, so a dialect without it only reads more rows.
	JSONContains func(p string) string
}

// Query runs a listing query; the caller calls done once it has read the rows.
type Query func(ctx context.Context, q string, args []any) (rows Rows, done func(), err error)

// List is a saver's List: it reads pageSize checkpoints per query (keyset paging on the
// checkpoint ID and namespace, newest first), filters by metadata and holds nothing while the
// caller's loop body runs, so the body may call the saver. start is the saver's check before
// any query (a closed saver, a done context); fail wraps an error for the caller.
func List(ctx context.Context, d Dialect, opts checkpoint.ListOptions, pageSize int, start func(context.Context) error, query Query, fail func(error) error) iter.Seq2[*checkpoint.Tuple, error] {
	return func(yield func(*checkpoint.Tuple, error) bool) {
		if err := start(ctx); err != nil {
			yield(nil, fail(err))
			return
		}
		var filter []byte
		if len(opts.Metadata) > 0 && d.JSONContains != nil {
			var err error
			if filter, err = json.Marshal(opts.Metadata); err != nil {
				yield(nil, fail(fmt.Errorf("the metadata filter cannot be encoded as JSON: %w", err)))
				return
			}
		}
		var (
			cursorID, cursorNS string // the last checkpoint read, for keyset paging
			first              = true
			listed             int
		)
		for {
			q := `SELECT s.ns, c.id, c.parent_id, c.step, c.source, c.created_at, c.state, c.metadata
FROM trellis_checkpoint_spaces s JOIN trellis_checkpoints c ON c.space = s.id
WHERE s.thread_id = ` + d.Param(1)
			args := []any{opts.ThreadID}
			arg := func(v any) string {
				args = append(args, v)
				return d.Param(len(args))
			}
			if !opts.AllNS {
				ns := ""
				if opts.NS != nil {
					ns = *opts.NS
				}
				q += " AND s.ns = " + arg(ns)
			}
			if opts.Before != "" {
				q += " AND c.id < " + arg(opts.Before)
			}
			if filter != nil {
				q += " AND " + d.JSONContains(arg(string(filter)))
			}
			if !first {
				q += fmt.Sprintf(" AND (c.id, s.ns) < (%s, %s%s)", arg(cursorID), arg(cursorNS), d.Collate)
			}
			n := pageSize
			if opts.Limit > 0 && len(opts.Metadata) == 0 && opts.Limit-listed < n {
				n = opts.Limit - listed
			}
			q += " ORDER BY c.id DESC, s.ns" + d.Collate + " DESC LIMIT " + arg(n)

			tuples, err := listPage(ctx, query, q, args, opts.ThreadID)
			if err != nil {
				yield(nil, fail(err))
				return
			}
			for _, t := range tuples {
				cursorID, cursorNS = t.Checkpoint.ID, t.Ref.NS
				if !checkpoint.MetadataMatches(t.Checkpoint.Metadata, opts.Metadata) {
					continue
				}
				if !yield(t, nil) {
					return
				}
				listed++
				if opts.Limit > 0 && listed >= opts.Limit {
					return
				}
			}
			if len(tuples) < n {
				return
			}
			first = false
		}
	}
}

func listPage(ctx context.Context, query Query, q string, args []any, threadID string) ([]*checkpoint.Tuple, error) {
	rows, done, err := query(ctx, q, args)
	if err != nil {
		return nil, err
	}
	defer done()
	return ScanTuples(rows, threadID)
}
