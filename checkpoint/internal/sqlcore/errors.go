package sqlcore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/trellis-go/trellis/checkpoint"
)

// Error is what a SQL saver returns when an operation fails (each saver's package names it as
// its own Error). It matches [checkpoint.ErrNotFound], [checkpoint.ErrConflict], the saver's own
// sentinels or a context error with errors.Is where one of those is the cause.
type Error struct {
	Saver    string // the package that failed: "pgsaver", "sqlitesaver"
	Op       string // "get", "list", "put", "put writes", "set metadata", "delete threads", "prune", "migrate", "open"
	ThreadID string // empty when the operation is not about one thread
	Err      error
	Hint     string // what to do about it, when the saver knows
}

func (e *Error) Error() string {
	s := e.Saver + ": " + e.Op
	if e.ThreadID != "" {
		s += fmt.Sprintf(" thread %q", e.ThreadID)
	}
	s += ": " + strings.TrimPrefix(e.Err.Error(), e.Saver+": ")
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Classify names what a database error means: hint, what to do (empty when the saver does not
// know), and kind, a sentinel the error will match (nil for none).
type Classify func(err error) (hint string, kind error)

// Wrap turns err into an *Error for op on threadID (nil stays nil). A call cut short by its
// context matches the context's error; the checkpoint sentinels and pass (a saver's own that
// need no hint) are kept as they are; any other error is classified.
func Wrap(ctx context.Context, saver, op, threadID string, err error, classify Classify, pass ...error) error {
	if err == nil {
		return nil
	}
	e := &Error{Saver: saver, Op: op, ThreadID: threadID, Err: err}
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		e.Err = fmt.Errorf("%w (%v)", ctxErr, err)
		return e
	}
	if errors.Is(err, checkpoint.ErrNotFound) || errors.Is(err, checkpoint.ErrConflict) {
		return e
	}
	for _, p := range pass {
		if errors.Is(err, p) {
			return e
		}
	}
	hint, kind := classify(err)
	if kind != nil {
		e.Err = fmt.Errorf("%w: %v", kind, err)
	}
	e.Hint = hint
	return e
}

// Conflict reports a failed head compare-and-swap.
func Conflict(threadID, ns, want, found string) error {
	return fmt.Errorf("%w (thread %q namespace %q: expected head %q, found %q)", checkpoint.ErrConflict, threadID, ns, want, found)
}

// NotFound reports a missing checkpoint or thread.
func NotFound(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{checkpoint.ErrNotFound}, args...)...)
}

// Missing is the error of a Get that found no checkpoint for ref.
func Missing(ref checkpoint.Ref) error {
	if ref.CheckpointID == "" {
		return NotFound("thread %q namespace %q has no checkpoints", ref.ThreadID, ref.NS)
	}
	return NotFound("thread %q namespace %q has no checkpoint %q", ref.ThreadID, ref.NS, ref.CheckpointID)
}

// OneThread is the thread an operation on threadIDs is about, for its errors: the one thread,
// or none when there are several.
func OneThread(threadIDs []string) string {
	if len(threadIDs) == 1 {
		return threadIDs[0]
	}
	return ""
}

// Prepare is the start of every saver's New: the options checked and filled in (defaults), the
// database handle given (isNil says it is missing; what names it and hint says what to pass),
// and the schema migrated (migrate's errors are the saver's own already).
func Prepare[O any](saver string, defaults func() (O, error), isNil bool, what, hint string, migrate func() error) (O, error) {
	o, err := defaults()
	switch {
	case err != nil:
		return o, &Error{Saver: saver, Op: "open", Err: err}
	case isNil:
		return o, &Error{Saver: saver, Op: "open", Err: fmt.Errorf("%s is nil", what), Hint: hint}
	}
	return o, migrate()
}
