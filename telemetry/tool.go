package telemetry

import (
	"context"
	"encoding/json"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/trellis-go/trellis/tool"
)

// Tool returns t with each call traced as a span under the one in its context. The returned tool
// keeps t's policy and output schema.
func Tool(t tool.Tool) tool.Tool { return &tracedTool{Tool: t} }

// Tools wraps each of ts with [Tool].
func Tools(ts []tool.Tool) []tool.Tool {
	out := make([]tool.Tool, len(ts))
	for i, t := range ts {
		out[i] = Tool(t)
	}
	return out
}

type tracedTool struct {
	tool.Tool
}

func (t *tracedTool) Policy() tool.Policy { return tool.PolicyOf(t.Tool) }

func (t *tracedTool) OutputSchema() json.RawMessage {
	if o, ok := t.Tool.(tool.OutputSchemaer); ok {
		return o.OutputSchema()
	}
	return nil
}

func (t *tracedTool) Call(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return t.Tool.Call(ctx, args)
	}
	name := t.Spec().Name
	attrs := []attribute.KeyValue{AttrOperation.String("execute_tool"), AttrToolName.String(name)}
	if info, ok := tool.CallInfoFrom(ctx); ok && info.CallID != "" {
		attrs = append(attrs, AttrToolCallID.String(info.CallID))
	}
	ctx, span := parent.TracerProvider().Tracer(ScopeName).Start(ctx, "execute_tool "+name,
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	defer span.End()
	res, err := t.Tool.Call(ctx, args)
	switch {
	case err != nil:
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	case res != nil && res.IsError:
		// The result's text may hold user data: the span says only that the tool reported a failure.
		span.SetStatus(codes.Error, "the tool returned an error result")
	}
	return res, err
}
