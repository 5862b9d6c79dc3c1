package tool

import (
	"context"

	"github.com/trellis-go/trellis/message"
)

// CallObserver is told about each call an [Executor] runs whose context carries it (see
// [WithCallObserver]): ToolStarted before the call's checks and the tool itself, ToolEnded
// with its outcome once the call has ended (returned, failed, or been abandoned at its timeout).
// Both are called on the goroutine that runs the call, concurrently for the calls of one batch,
// and must return quickly.
type CallObserver interface {
	ToolStarted(ctx context.Context, call message.ToolCall)
	ToolEnded(ctx context.Context, o Outcome)
}

type callObserverKey struct{}

// WithCallObserver returns a context whose tool calls obs observes. A server uses it to report
// each call as it starts and ends, without the graph's cooperation.
func WithCallObserver(ctx context.Context, obs CallObserver) context.Context {
	return context.WithValue(ctx, callObserverKey{}, obs)
}

func callObserverFrom(ctx context.Context) CallObserver {
	obs, _ := ctx.Value(callObserverKey{}).(CallObserver)
	return obs
}
