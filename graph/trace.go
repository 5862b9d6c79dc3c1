package graph

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Span names and attribute keys of a traced run (see [WithTracer]).
const (
	SpanRun       = "graph.run"
	SpanSuperstep = "graph.superstep"
	// A node task's span is named "graph.node " followed by the node's name.
	SpanNodePrefix = "graph.node "

	AttrGraph       = attribute.Key("trellis.graph")
	AttrThread      = attribute.Key("trellis.thread_id")
	AttrNS          = attribute.Key("trellis.checkpoint_ns")
	AttrStep        = attribute.Key("trellis.step")
	AttrTasks       = attribute.Key("trellis.tasks")
	AttrNode        = attribute.Key("trellis.node")
	AttrTaskID      = attribute.Key("trellis.task_id")
	AttrAttempt     = attribute.Key("trellis.attempt")
	AttrInterrupted = attribute.Key("trellis.interrupted")
	AttrSupersteps  = attribute.Key("trellis.supersteps")
)

// WithTracer traces the run with t: a span for the run, a child span for each superstep and, under
// it, one for each attempt of each node task. A subgraph's run nests under the span of the node
// that runs it. A node's context carries its span, so model and tool calls made in the node (see
// package telemetry) become its children. A run that pauses at an interrupt is not an error; a
// failing node marks its span, its superstep's and the run's with the error.
//
// Without this option a run makes no spans and pays nothing for tracing.
func WithTracer(t trace.Tracer) RunOption { return func(o *runOptions) { o.tracer = t } }

// tracing is a traced run's state; runs without a tracer have none.
type tracing struct {
	tracer trace.Tracer
	ctx    context.Context // holds the run's span
	run    trace.Span
	step   trace.Span // the open superstep's span, or nil
	steps  int
}

// startRun opens the run's span when the run (or, for a subgraph, its parent) has a tracer,
// and returns the context the run should use.
func (r *run) startRun(ctx context.Context, o *runOptions, graphName string, link *parentLink) context.Context {
	t := o.tracer
	if link != nil && link.run.tr != nil {
		t = link.run.tr.tracer
	}
	if t == nil {
		return ctx
	}
	attrs := []attribute.KeyValue{AttrGraph.String(graphName)}
	threadID := o.threadID
	if link != nil {
		threadID = link.run.threadID
		attrs = append(attrs, AttrNS.String(link.name+":"+link.task.id))
	}
	if threadID != "" {
		attrs = append(attrs, AttrThread.String(threadID))
	}
	ctx, span := t.Start(ctx, SpanRun, trace.WithAttributes(attrs...))
	r.tr = &tracing{tracer: t, ctx: ctx, run: span}
	return ctx
}

// endRun closes the open superstep's span and the run's, with the run's outcome.
func (r *run) endRun(errp *error) {
	tr := r.tr
	if tr == nil {
		return
	}
	var err error
	if errp != nil {
		err = *errp
	}
	if tr.step != nil {
		endSpan(tr.step, err)
		tr.step = nil
	}
	tr.run.SetAttributes(AttrSupersteps.Int(tr.steps))
	endSpan(tr.run, err)
}

// traceStep closes the previous superstep's span and opens one for the superstep about to run.
func (r *run) traceStep(tasks []*task) {
	tr := r.tr
	if tr == nil {
		return
	}
	if tr.step != nil {
		tr.step.End()
	}
	tr.steps++
	_, tr.step = tr.tracer.Start(tr.ctx, SpanSuperstep, trace.WithAttributes(
		AttrStep.Int(r.step), AttrTasks.Int(len(tasks))))
}

// tracedCall runs one attempt of a task, in a span of its own when the run is traced.
func (l *loop[S]) tracedCall(ctx context.Context, t *task, attempt int) (result, error) {
	tr := l.tr
	if tr == nil {
		return l.call(ctx, t)
	}
	parent := tr.run
	if tr.step != nil {
		parent = tr.step
	}
	ctx, span := tr.tracer.Start(trace.ContextWithSpan(ctx, parent), SpanNodePrefix+t.node.name,
		trace.WithAttributes(AttrNode.String(t.node.name), AttrTaskID.String(t.id),
			AttrStep.Int(l.step), AttrAttempt.Int(attempt)))
	res, err := l.call(ctx, t)
	if tc := taskFrom(ctx); err == nil && tc != nil && len(tc.interrupts) > 0 {
		span.SetAttributes(AttrInterrupted.Bool(true))
	}
	endSpan(span, err)
	return res, err
}

// endSpan ends span, marking it with err unless err is a pause at an interrupt.
func endSpan(span trace.Span, err error) {
	var ie *InterruptedError
	switch {
	case err == nil:
	case errors.As(err, &ie):
		span.SetAttributes(AttrInterrupted.Bool(true))
	default:
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
