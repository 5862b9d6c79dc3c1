package telemetry_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/trellis-go/trellis/agent"
	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/message"
	"github.com/trellis-go/trellis/model"
	"github.com/trellis-go/trellis/model/scripted"
	"github.com/trellis-go/trellis/telemetry"
	"github.com/trellis-go/trellis/tool"
)

func setup(t *testing.T) (trace.Tracer, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp.Tracer("test"), rec
}

func attr(s sdktrace.ReadOnlySpan, k attribute.Key) attribute.Value {
	for _, kv := range s.Attributes() {
		if kv.Key == k {
			return kv.Value
		}
	}
	return attribute.Value{}
}

func find(t *testing.T, rec *tracetest.SpanRecorder, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	var names []string
	for _, s := range rec.Ended() {
		if s.Name() == name {
			return s
		}
		names = append(names, s.Name())
	}
	t.Fatalf("no span %q among %v", name, names)
	return nil
}

func reply(text string, in, out int) *model.Response {
	msg := message.Assistant(text)
	msg.Metadata = map[string]any{"provider": "scripted", "model": "tiny-1"}
	return &model.Response{Message: msg, Usage: model.Usage{InputTokens: in, OutputTokens: out}, FinishReason: model.FinishStop}
}

func TestModelSpanGenerateAndStream(t *testing.T) {
	tracer, rec := setup(t)
	m := telemetry.Model(scripted.New(scripted.Respond(reply("hello", 12, 3)), scripted.Respond(reply("again", 20, 5))), telemetry.ModelInfo{})
	ctx, parent := tracer.Start(context.Background(), "parent")
	if _, err := m.Generate(ctx, &model.Request{Messages: []message.Message{message.User("hi")}, MaxTokens: 50}); err != nil {
		t.Fatal(err)
	}
	for _, err := range m.Stream(ctx, &model.Request{Messages: []message.Message{message.User("hi")}}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	parent.End()
	var spans []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == "chat tiny-1" {
			spans = append(spans, s)
		}
	}
	if len(spans) != 2 {
		t.Fatalf("want 2 spans named after the model, got %d", len(spans))
	}
	for i, want := range []struct{ in, out int64 }{{12, 3}, {20, 5}} {
		s := spans[i]
		if s.Parent().SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("call %d span is not a child of the caller's span", i)
		}
		if attr(s, telemetry.AttrInputTokens).AsInt64() != want.in || attr(s, telemetry.AttrOutputTokens).AsInt64() != want.out {
			t.Errorf("call %d usage = %d/%d, want %d/%d", i, attr(s, telemetry.AttrInputTokens).AsInt64(), attr(s, telemetry.AttrOutputTokens).AsInt64(), want.in, want.out)
		}
		if got := attr(s, telemetry.AttrFinishReasons).AsStringSlice(); len(got) != 1 || got[0] != "stop" {
			t.Errorf("call %d finish reasons = %v", i, got)
		}
		if attr(s, telemetry.AttrProvider).AsString() != "scripted" || attr(s, telemetry.AttrResponseModel).AsString() != "tiny-1" {
			t.Errorf("call %d provider/model = %q/%q", i, attr(s, telemetry.AttrProvider).AsString(), attr(s, telemetry.AttrResponseModel).AsString())
		}
		if s.SpanKind() != trace.SpanKindClient {
			t.Errorf("call %d kind = %v", i, s.SpanKind())
		}
	}
	if attr(spans[0], telemetry.AttrMaxTokens).AsInt64() != 50 || attr(spans[1], telemetry.AttrStreaming).AsBool() != true {
		t.Errorf("request attributes missing: max_tokens %d, stream %v", attr(spans[0], telemetry.AttrMaxTokens).AsInt64(), attr(spans[1], telemetry.AttrStreaming).AsBool())
	}
}

func TestModelWithoutParentMakesNoSpan(t *testing.T) {
	_, rec := setup(t)
	m := telemetry.Model(scripted.New(scripted.Respond(reply("x", 1, 1))), telemetry.ModelInfo{Provider: "p", Name: "n"})
	if _, err := m.Generate(context.Background(), &model.Request{Messages: []message.Message{message.User("hi")}}); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Ended()); n != 0 {
		t.Fatalf("%d spans without a parent span", n)
	}
}

func TestModelBudgetRefusalIsAnErrorSpan(t *testing.T) {
	tracer, rec := setup(t)
	m := telemetry.Model(scripted.New(scripted.Respond(reply("a", 600, 100)), scripted.Respond(reply("b", 600, 100))), telemetry.ModelInfo{Provider: "scripted", Name: "tiny-1"})
	b := agent.NewTokenBudget(700, nil)
	ctx, parent := tracer.Start(agent.WithTokenBudget(context.Background(), b), "parent")
	req := &model.Request{Messages: []message.Message{message.User("hi")}}
	if _, err := m.Generate(ctx, req); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(ctx, req); !errors.Is(err, agent.ErrBudgetExceeded) {
		t.Fatalf("second call err = %v, want the budget refused", err)
	}
	parent.End()
	if b.Used().Total() != 700 {
		t.Errorf("budget counted %d tokens, want 700", b.Used().Total())
	}
	var errored int
	for _, s := range rec.Ended() {
		if s.Name() == "chat tiny-1" && s.Status().Code == codes.Error {
			errored++
		}
	}
	if errored != 1 {
		t.Errorf("want the refused call's span in error, got %d error spans", errored)
	}
}

func TestToolSpans(t *testing.T) {
	tracer, rec := setup(t)
	ok, _ := tool.NewRaw(model.ToolSpec{Name: "ok", Description: "fine", Parameters: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, args json.RawMessage) (*tool.Result, error) { return tool.Text("fine"), nil })
	bad, _ := tool.NewRaw(model.ToolSpec{Name: "bad", Description: "fails", Parameters: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
			return nil, errors.New("disk on fire")
		})
	soft, _ := tool.NewRaw(model.ToolSpec{Name: "soft", Description: "error result", Parameters: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
			return tool.Errorf("no such city"), nil
		})
	tools := telemetry.Tools([]tool.Tool{tool.WithPolicy(ok, tool.Policy{Permissions: []string{"read"}}), bad, soft})
	if p := tool.PolicyOf(tools[0]); len(p.Permissions) != 1 || p.Permissions[0] != "read" {
		t.Fatalf("the wrapper lost the tool's policy: %+v", p)
	}
	ex, err := tool.NewExecutor(tools, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, parent := tracer.Start(tool.WithCallInfo(context.Background(), tool.CallInfo{Permissions: []string{"*"}}), "node")
	if _, err := ex.Run(ctx, []message.ToolCall{{ID: "c1", Name: "ok", Arguments: json.RawMessage(`{}`)}, {ID: "c2", Name: "bad", Arguments: json.RawMessage(`{}`)}, {ID: "c3", Name: "soft", Arguments: json.RawMessage(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	parent.End()
	for name, want := range map[string]struct {
		id   string
		code codes.Code
	}{"ok": {"c1", codes.Unset}, "bad": {"c2", codes.Error}, "soft": {"c3", codes.Error}} {
		s := find(t, rec, "execute_tool "+name)
		if s.Parent().SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("%s span is not under the caller's span", name)
		}
		if attr(s, telemetry.AttrToolName).AsString() != name || attr(s, telemetry.AttrToolCallID).AsString() != want.id {
			t.Errorf("%s span attributes: %v", name, s.Attributes())
		}
		if s.Status().Code != want.code {
			t.Errorf("%s span status = %v, want %v", name, s.Status().Code, want.code)
		}
	}
	if d := find(t, rec, "execute_tool bad").Status().Description; d != "disk on fire" {
		t.Errorf("bad tool's status description = %q", d)
	}
}

// In a traced graph run, a model call made by a node is a child of the node's span.
func TestModelSpanUnderNodeSpan(t *testing.T) {
	tracer, rec := setup(t)
	m := telemetry.Model(scripted.New(scripted.Respond(reply("hi", 1, 1))), telemetry.ModelInfo{Provider: "scripted", Name: "tiny-1"})
	type st struct {
		Answer string `json:"answer"`
	}
	g := graph.New[st]()
	g.AddNode("ask", func(ctx context.Context, s st) (st, error) {
		resp, err := m.Generate(ctx, &model.Request{Messages: []message.Message{message.User("hi")}})
		if err != nil {
			return st{}, err
		}
		return st{Answer: resp.Message.Content}, nil
	})
	g.AddEdge(graph.START, "ask").AddEdge("ask", graph.END)
	app, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.Invoke(context.Background(), st{}, graph.WithTracer(tracer)); err != nil {
		t.Fatal(err)
	}
	node := find(t, rec, graph.SpanNodePrefix+"ask")
	call := find(t, rec, "chat tiny-1")
	if call.Parent().SpanID() != node.SpanContext().SpanID() {
		t.Fatal("the model call's span is not a child of the node's span")
	}
}
