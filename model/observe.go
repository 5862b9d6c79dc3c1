package model

import "context"

// Call names one model call for a [CallObserver]: the ID the answer's message will have, the
// model's provider and name (see [IdentityOf]; empty when unknown), and the request.
type Call struct {
	ID       string
	Provider string
	Name     string
	Request  *Request
}

// CallObserver is told about the model calls that helpers streaming into a graph make under a
// context that carries it (agent.StreamModel; see [WithCallObserver]): ModelStarted before the
// request is sent, ModelEnded once the answer is complete or the call failed. Both are called on
// the calling goroutine and must return quickly; neither may change the request or the answer.
type CallObserver interface {
	ModelStarted(ctx context.Context, call Call)
	ModelEnded(ctx context.Context, call Call, resp *Response, err error)
}

type callObserverKey struct{}

// WithCallObserver returns a context whose model calls obs observes. A server uses it to report
// each call, with its prompt, as it starts and ends.
func WithCallObserver(ctx context.Context, obs CallObserver) context.Context {
	return context.WithValue(ctx, callObserverKey{}, obs)
}

// CallObserverFrom returns the observer ctx carries, or nil.
func CallObserverFrom(ctx context.Context) CallObserver {
	obs, _ := ctx.Value(callObserverKey{}).(CallObserver)
	return obs
}
