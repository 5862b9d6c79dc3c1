package graph

import "context"

// Streams reports whether the run that ctx belongs to streams mode, so a node can skip work
// whose only use is an event nobody reads (a summary sent with [Emit] in the custom mode, say).
// Outside a run it reports false.
func Streams(ctx context.Context, mode StreamMode) bool {
	tc := taskFrom(ctx)
	return tc != nil && tc.run.modes.has(mode)
}
