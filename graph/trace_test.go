package graph_test

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/trellis-go/trellis/checkpoint"
	"github.com/trellis-go/trellis/graph"
)

// recorder returns a tracer whose finished spans land in the returned recorder.
func recorder(t *testing.T) (trace.Tracer, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp.Tracer("graph_test"), rec
}

func attrOf(s sdktrace.ReadOnlySpan, key attribute.Key) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func spansNamed(spans []sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

func one(t *testing.T, spans []sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	got := spansNamed(spans, name)
	if len(got) != 1 {
		t.Fatalf("want one span %q, got %d", name, len(got))
	}
	return got[0]
}

func TestTracerSpansRunSuperstepsAndNodes(t *testing.T) {
	tracer, rec := recorder(t)
	g := graph.New[S]()
	g.AddNode("a", note("a"))
	g.AddNode("b", note("b"))
	g.AddNode("c", note("c"))
	g.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("a", "c").AddJoin([]string{"b", "c"}, graph.END)
	app := compile(t, g, graph.CompileOptions{Name: "fan", Saver: checkpoint.NewMemorySaver()})
	if _, err := app.Invoke(context.Background(), S{}, graph.WithThread("t1"), graph.WithTracer(tracer)); err != nil {
		t.Fatal(err)
	}
	spans := rec.Ended()
	run := one(t, spans, graph.SpanRun)
	if v, _ := attrOf(run, graph.AttrGraph); v.AsString() != "fan" {
		t.Errorf("run span graph = %q, want fan", v.AsString())
	}
	if v, _ := attrOf(run, graph.AttrThread); v.AsString() != "t1" {
		t.Errorf("run span thread = %q, want t1", v.AsString())
	}
	if v, _ := attrOf(run, graph.AttrSupersteps); v.AsInt64() != 2 {
		t.Errorf("run span supersteps = %d, want 2", v.AsInt64())
	}
	if run.Status().Code == codes.Error {
		t.Errorf("run span has error status %q", run.Status().Description)
	}
	steps := spansNamed(spans, graph.SpanSuperstep)
	if len(steps) != 2 {
		t.Fatalf("want 2 superstep spans, got %d", len(steps))
	}
	stepByNum := map[int64]sdktrace.ReadOnlySpan{}
	for _, s := range steps {
		if s.Parent().SpanID() != run.SpanContext().SpanID() {
			t.Errorf("superstep span is not a child of the run span")
		}
		n, _ := attrOf(s, graph.AttrStep)
		stepByNum[n.AsInt64()] = s
	}
	if v, _ := attrOf(stepByNum[2], graph.AttrTasks); v.AsInt64() != 2 {
		t.Errorf("superstep 2 tasks = %d, want 2 (b and c)", v.AsInt64())
	}
	for node, step := range map[string]int64{"a": 1, "b": 2, "c": 2} {
		s := one(t, spans, graph.SpanNodePrefix+node)
		if s.Parent().SpanID() != stepByNum[step].SpanContext().SpanID() {
			t.Errorf("node %s span is not a child of superstep %d", node, step)
		}
		if v, _ := attrOf(s, graph.AttrNode); v.AsString() != node {
			t.Errorf("node span attribute = %q, want %q", v.AsString(), node)
		}
		if v, _ := attrOf(s, graph.AttrAttempt); v.AsInt64() != 1 {
			t.Errorf("node %s attempt = %d, want 1", node, v.AsInt64())
		}
		if s.SpanContext().TraceID() != run.SpanContext().TraceID() {
			t.Errorf("node %s span is in another trace", node)
		}
	}
}

func TestTracerFailingNodeAndRetries(t *testing.T) {
	tracer, rec := recorder(t)
	g := graph.New[S]()
	boom := errors.New("boom")
	g.AddNode("bad", func(ctx context.Context, s S) (S, error) { return S{}, boom },
		graph.WithRetry(graph.RetryPolicy{MaxAttempts: 2, InitialInterval: 1}))
	g.AddEdge(graph.START, "bad").AddEdge("bad", graph.END)
	app := compile(t, g)
	if _, err := app.Invoke(context.Background(), S{}, graph.WithTracer(tracer)); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	spans := rec.Ended()
	attempts := spansNamed(spans, graph.SpanNodePrefix+"bad")
	if len(attempts) != 2 {
		t.Fatalf("want a span per attempt (2), got %d", len(attempts))
	}
	for i, s := range attempts {
		if v, _ := attrOf(s, graph.AttrAttempt); v.AsInt64() != int64(i+1) {
			t.Errorf("attempt span %d has attempt %d", i, v.AsInt64())
		}
		if s.Status().Code != codes.Error || s.Status().Description != "boom" {
			t.Errorf("attempt %d status = %v %q, want error boom", i+1, s.Status().Code, s.Status().Description)
		}
		if len(s.Events()) == 0 || s.Events()[0].Name != "exception" {
			t.Errorf("attempt %d has no exception event", i+1)
		}
	}
	for _, name := range []string{graph.SpanSuperstep, graph.SpanRun} {
		s := one(t, spans, name)
		if s.Status().Code != codes.Error {
			t.Errorf("%s status = %v, want error", name, s.Status().Code)
		}
	}
}

func TestTracerSubgraphNestsUnderItsNode(t *testing.T) {
	tracer, rec := recorder(t)
	calls := newCounter()
	app, _ := parentGraph(t, childGraph(t, calls, false), calls)
	if _, err := app.Invoke(context.Background(), parentState{Topic: "bees"}, graph.WithThread("sub"), graph.WithTracer(tracer)); err != nil {
		t.Fatal(err)
	}
	spans := rec.Ended()
	runs := spansNamed(spans, graph.SpanRun)
	if len(runs) != 2 {
		t.Fatalf("want a run span for the parent and one for the subgraph, got %d", len(runs))
	}
	team := one(t, spans, graph.SpanNodePrefix+"team")
	var child sdktrace.ReadOnlySpan
	for _, r := range runs {
		if v, _ := attrOf(r, graph.AttrGraph); v.AsString() == "writer" {
			child = r
		}
	}
	if child == nil {
		t.Fatal("no run span for the writer subgraph")
	}
	if child.Parent().SpanID() != team.SpanContext().SpanID() {
		t.Errorf("the subgraph's run span is not a child of the team node's span")
	}
	if v, ok := attrOf(child, graph.AttrNS); !ok || v.AsString() == "" {
		t.Errorf("the subgraph's run span has no namespace")
	}
	if v, _ := attrOf(child, graph.AttrThread); v.AsString() != "sub" {
		t.Errorf("the subgraph's run span thread = %q, want sub", v.AsString())
	}
	research := one(t, spans, graph.SpanNodePrefix+"research")
	var childStepIDs []trace.SpanID
	for _, s := range spansNamed(spans, graph.SpanSuperstep) {
		if s.Parent().SpanID() == child.SpanContext().SpanID() {
			childStepIDs = append(childStepIDs, s.SpanContext().SpanID())
		}
	}
	found := false
	for _, id := range childStepIDs {
		found = found || research.Parent().SpanID() == id
	}
	if !found {
		t.Errorf("the subgraph's node span is not under one of the subgraph's supersteps")
	}
}

func TestTracerInterruptIsNotAnError(t *testing.T) {
	tracer, rec := recorder(t)
	g := graph.New[S]()
	g.AddNode("ask", func(ctx context.Context, s S) (S, error) {
		v, err := graph.Interrupt(ctx, "ok?")
		if err != nil {
			return S{}, err
		}
		return S{Answer: v.(string)}, nil
	})
	g.AddEdge(graph.START, "ask").AddEdge("ask", graph.END)
	app := compile(t, g, graph.CompileOptions{Saver: checkpoint.NewMemorySaver()})
	_, err := app.Invoke(context.Background(), S{}, graph.WithThread("i"), graph.WithTracer(tracer))
	var ie *graph.InterruptedError
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v, want an interrupt", err)
	}
	for _, name := range []string{graph.SpanRun, graph.SpanNodePrefix + "ask"} {
		s := one(t, rec.Ended(), name)
		if s.Status().Code == codes.Error {
			t.Errorf("%s has error status after an interrupt", name)
		}
		if v, _ := attrOf(s, graph.AttrInterrupted); !v.AsBool() {
			t.Errorf("%s is not marked interrupted", name)
		}
	}
}
