// Package scripted provides a chat model for tests that replays responses given in advance, or
// answers by rules, with no network. It records every request it receives.
//
//	m := scripted.New(
//		scripted.ToolCalls(message.ToolCall{ID: "c1", Name: "search", Arguments: json.RawMessage(`{"q":"go"}`)}),
//		scripted.Text("Found it."),
//	)
//
// Each Generate or Stream call takes the next step. When the steps run out the model fails with
// ErrExhausted, so a test notices an unexpected extra call.
package scripted

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"

	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
)

// ErrExhausted is returned when the model is called more often than it has steps.
var ErrExhausted = errors.New("scripted: no more scripted responses")

// Step produces the answer to one call.
type Step func(ctx context.Context, req *model.Request) (*model.Response, error)

// Text returns a step that answers with text.
func Text(s string) Step {
	return func(context.Context, *model.Request) (*model.Response, error) {
		return &model.Response{Message: message.Assistant(s), FinishReason: model.FinishStop}, nil
	}
}

// ToolCalls returns a step that answers with the given tool calls.
func ToolCalls(calls ...message.ToolCall) Step {
	return func(context.Context, *model.Request) (*model.Response, error) {
		return &model.Response{Message: message.Assistant("", calls...), FinishReason: model.FinishToolCalls}, nil
	}
}

// Respond returns a step that answers with a ready response.
func Respond(r *model.Response) Step {
	return func(context.Context, *model.Request) (*model.Response, error) {
		c := *r
		return &c, nil
	}
}

// Fail returns a step that fails with err. When partial is not empty, Stream first yields it as
// text and the error carries it, like a provider cut off mid-reply.
func Fail(partial string, err error) Step {
	return func(context.Context, *model.Request) (*model.Response, error) {
		return &model.Response{Message: message.Assistant(partial)}, &model.ProviderError{Provider: "scripted", Partial: partial, Err: err}
	}
}

// Rule returns a step computed from the request, for tests where the answer depends on input.
func Rule(f func(req *model.Request) *model.Response) Step {
	return func(_ context.Context, req *model.Request) (*model.Response, error) { return f(req), nil }
}

// Model replays steps. It is safe for concurrent use; concurrent calls take steps in arrival order.
type Model struct {
	mu       sync.Mutex
	steps    []Step
	requests []*model.Request
	// Repeat makes the last step answer every call after the script ends instead of failing.
	Repeat bool
	// ChunkSize splits streamed text into pieces of this many bytes; 0 means 4.
	ChunkSize int
}

var (
	_ model.Model      = (*Model)(nil)
	_ model.Identified = (*Model)(nil)
)

// Identity returns "scripted", the provider its replies name, and no model name.
func (m *Model) Identity() (provider, name string) { return "scripted", "" }

// New returns a model that answers with steps, one per call.
func New(steps ...Step) *Model { return &Model{steps: steps} }

// Requests returns copies of the requests received so far.
func (m *Model) Requests() []*model.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*model.Request(nil), m.requests...)
}

// Remaining returns how many steps are left.
func (m *Model) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.steps)
}

func (m *Model) next(req *model.Request) (Step, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := *req
	c.Messages = append([]message.Message(nil), req.Messages...)
	m.requests = append(m.requests, &c)
	if len(m.steps) == 0 {
		return nil, fmt.Errorf("%w (call %d)", ErrExhausted, len(m.requests))
	}
	s := m.steps[0]
	if len(m.steps) > 1 || !m.Repeat {
		m.steps = m.steps[1:]
	}
	return s, nil
}

// Generate answers with the next step. Requests with a Schema are validated like a provider's.
func (m *Model) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return model.GenerateStructured(ctx, req, m.generate)
}

func (m *Model) generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s, err := m.next(req)
	if err != nil {
		return nil, err
	}
	resp, err := s(ctx, req)
	if resp != nil {
		if resp.Message.Role == "" {
			resp.Message.Role = message.RoleAssistant
		}
		if resp.Message.Metadata == nil {
			resp.Message.Metadata = map[string]any{"provider": "scripted"}
		}
	}
	return resp, err
}

// Stream answers with the next step, split into text chunks, then its tool calls, usage and
// finish reason.
func (m *Model) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		if err := req.Validate(); err != nil {
			yield(model.Chunk{}, err)
			return
		}
		resp, err := m.generate(ctx, req)
		if resp == nil && err != nil {
			yield(model.Chunk{}, err)
			return
		}
		size := m.ChunkSize
		if size <= 0 {
			size = 4
		}
		text := resp.Message.Content
		for len(text) > 0 {
			n := min(size, len(text))
			if ctx.Err() != nil {
				yield(model.Chunk{}, &model.ProviderError{Provider: "scripted", Partial: strings.TrimSuffix(resp.Message.Content, text), Err: ctx.Err()})
				return
			}
			if !yield(model.Chunk{Text: text[:n]}, nil) {
				return
			}
			text = text[n:]
		}
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		for i := range resp.Message.ToolCalls {
			tc := resp.Message.ToolCalls[i]
			if !yield(model.Chunk{ToolCall: &tc}, nil) {
				return
			}
		}
		u := resp.Usage
		fr := resp.FinishReason
		if fr == "" {
			fr = model.FinishStop
			if len(resp.Message.ToolCalls) > 0 {
				fr = model.FinishToolCalls
			}
		}
		yield(model.Chunk{Usage: &u, FinishReason: fr, Metadata: resp.Message.Metadata}, nil)
	}
}
