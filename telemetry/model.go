package telemetry

import (
	"context"
	"iter"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/trellis-go/trellis/agent"
	"github.com/trellis-go/trellis/model"
)

// ScopeName is the instrumentation scope of the spans this package makes.
const ScopeName = "github.com/trellis-go/trellis/telemetry"

// Attribute keys of model and tool spans (OpenTelemetry GenAI semantic conventions).
const (
	AttrOperation     = attribute.Key("gen_ai.operation.name")
	AttrProvider      = attribute.Key("gen_ai.provider.name")
	AttrRequestModel  = attribute.Key("gen_ai.request.model")
	AttrResponseModel = attribute.Key("gen_ai.response.model")
	AttrInputTokens   = attribute.Key("gen_ai.usage.input_tokens")
	AttrOutputTokens  = attribute.Key("gen_ai.usage.output_tokens")
	AttrFinishReasons = attribute.Key("gen_ai.response.finish_reasons")
	AttrMaxTokens     = attribute.Key("gen_ai.request.max_tokens")
	AttrToolName      = attribute.Key("gen_ai.tool.name")
	AttrToolCallID    = attribute.Key("gen_ai.tool.call.id")
	AttrStreaming     = attribute.Key("trellis.model.stream")
	AttrToolCalls     = attribute.Key("trellis.model.tool_calls")
)

// ModelInfo names a model for its spans before it answers (providers name themselves in their
// replies' metadata too, which the span takes when these are empty).
type ModelInfo struct {
	Provider string // "openai", "anthropic", ...
	Name     string // the provider's model name
}

// Model returns m traced and budgeted: each call is a span under the one in its context (see the
// package documentation) and counts against the context's token budget (agent.WithTokenBudget).
// info may be zero; what it leaves empty is taken from m when m is a [model.Identified].
func Model(m model.Model, info ModelInfo) model.Model {
	p, n := model.IdentityOf(m)
	if info.Provider == "" {
		info.Provider = p
	}
	if info.Name == "" {
		info.Name = n
	}
	return &tracedModel{inner: agent.BudgetedModel(m), info: info}
}

type tracedModel struct {
	inner model.Model
	info  ModelInfo
}

// Identity returns the names the model's spans carry.
func (m *tracedModel) Identity() (provider, name string) { return m.info.Provider, m.info.Name }

// Unwrap returns the model the spans are about (with its budget), for model.IsOffline and the like.
func (m *tracedModel) Unwrap() model.Model { return m.inner }

// start opens a call's span when the caller's span records.
func (m *tracedModel) start(ctx context.Context, req *model.Request, stream bool) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, nil
	}
	name := "chat"
	attrs := []attribute.KeyValue{AttrOperation.String("chat"), AttrStreaming.Bool(stream)}
	if m.info.Name != "" {
		name += " " + m.info.Name
		attrs = append(attrs, AttrRequestModel.String(m.info.Name))
	}
	if m.info.Provider != "" {
		attrs = append(attrs, AttrProvider.String(m.info.Provider))
	}
	if req != nil && req.MaxTokens > 0 {
		attrs = append(attrs, AttrMaxTokens.Int(req.MaxTokens))
	}
	return parent.TracerProvider().Tracer(ScopeName).Start(ctx, name,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// finish records what the call produced and ends the span.
func (m *tracedModel) finish(span trace.Span, md map[string]any, usage model.Usage, reason model.FinishReason, calls int, err error) {
	if name, _ := md["model"].(string); name != "" {
		span.SetAttributes(AttrResponseModel.String(name))
		if m.info.Name == "" {
			span.SetName("chat " + name)
		}
	}
	if p, _ := md["provider"].(string); p != "" && m.info.Provider == "" {
		span.SetAttributes(AttrProvider.String(p))
	}
	span.SetAttributes(AttrInputTokens.Int(usage.InputTokens), AttrOutputTokens.Int(usage.OutputTokens))
	if reason != "" {
		span.SetAttributes(AttrFinishReasons.StringSlice([]string{string(reason)}))
	}
	if calls > 0 {
		span.SetAttributes(AttrToolCalls.Int(calls))
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

func (m *tracedModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	ctx, span := m.start(ctx, req, false)
	resp, err := m.inner.Generate(ctx, req)
	if span != nil {
		if resp != nil {
			m.finish(span, resp.Message.Metadata, resp.Usage, resp.FinishReason, len(resp.Message.ToolCalls), err)
		} else {
			m.finish(span, nil, model.Usage{}, "", 0, err)
		}
	}
	return resp, err
}

func (m *tracedModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		ctx, span := m.start(ctx, req, true)
		if span == nil {
			for c, err := range m.inner.Stream(ctx, req) {
				if !yield(c, err) {
					return
				}
			}
			return
		}
		var (
			md     = map[string]any{}
			usage  model.Usage
			reason model.FinishReason
			calls  int
			failed error
		)
		defer func() { m.finish(span, md, usage, reason, calls, failed) }()
		for c, err := range m.inner.Stream(ctx, req) {
			if err != nil {
				failed = err
			} else {
				if c.Usage != nil {
					usage = *c.Usage
				}
				if c.FinishReason != "" {
					reason = c.FinishReason
				}
				if c.ToolCall != nil {
					calls++
				}
				for k, v := range c.Metadata {
					md[k] = v
				}
			}
			if !yield(c, err) {
				return
			}
		}
	}
}
