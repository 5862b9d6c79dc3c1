package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/trellis-go/trellis/graph"
)

func spanAttr(s sdktrace.ReadOnlySpan, k attribute.Key) string {
	for _, kv := range s.Attributes() {
		if kv.Key == k {
			return kv.Value.Emit()
		}
	}
	return ""
}

func TestRunSpansContinueTheRequestTrace(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	b := looperSetup(t, Config{MaxRunSteps: 2, Tracing: TracingConfig{Provider: tp}})
	tid := b.newThread(nil)
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	hdr := http.Header{"Traceparent": {"00-" + traceID + "-00f067aa0ba902b7-01"}}
	b.stream("POST", "/threads/"+tid+"/runs/stream", map[string]any{"assistant_id": "looper", "input": map[string]any{}}, hdr, nil)
	b.srv.Close() // the run has ended and its spans with it

	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		byName[s.Name()] = append(byName[s.Name()], s)
	}
	runs := byName[SpanServerRun]
	if len(runs) != 1 {
		t.Fatalf("want one %s span, got %d (spans: %v)", SpanServerRun, len(runs), byName)
	}
	run := runs[0]
	if got := run.SpanContext().TraceID().String(); got != traceID {
		t.Errorf("run span trace %s, want the request's %s", got, traceID)
	}
	for k, want := range map[attribute.Key]string{AttrThreadID: tid, AttrAssistantID: AssistantID("looper"), AttrGraphID: "looper",
		AttrTenant: DevPrincipal.Tenant, AttrRunOutcome: "budget_exceeded", AttrMaxSteps: "2", AttrTokensIn: "600"} {
		if got := spanAttr(run, k); got != want {
			t.Errorf("run span %s = %q, want %q", k, got, want)
		}
	}
	if spanAttr(run, AttrRunID) == "" || run.Status().Code != codes.Error || !strings.Contains(run.Status().Description, "step budget") {
		t.Errorf("run span: run_id %q, status %v %q", spanAttr(run, AttrRunID), run.Status().Code, run.Status().Description)
	}
	// The request's own server span is in the trace too, named by its route.
	if reqs := byName["POST /threads/{tid}/runs/stream"]; len(reqs) != 1 || reqs[0].SpanContext().TraceID().String() != traceID {
		t.Errorf("no server span for the request in the trace: %v", byName)
	}
	gr := byName[graph.SpanRun]
	if len(gr) != 1 || gr[0].Parent().SpanID() != run.SpanContext().SpanID() {
		t.Fatalf("the graph's run span is missing or not under the server's run span")
	}
	if n := len(byName[graph.SpanSuperstep]); n != 2 {
		t.Errorf("%d superstep spans, want 2", n)
	}
	nodes := byName[graph.SpanNodePrefix+"think"]
	calls := byName["chat looper-1"]
	if len(nodes) != 2 || len(calls) != 2 {
		t.Fatalf("%d node spans and %d model spans, want 2 each", len(nodes), len(calls))
	}
	for _, c := range calls {
		found := false
		for _, n := range nodes {
			found = found || c.Parent().SpanID() == n.SpanContext().SpanID()
		}
		if !found || c.SpanContext().TraceID().String() != traceID {
			t.Errorf("a model span is not under a node span of the trace")
		}
	}
}

func TestOTLPExport(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []*coltrace.ExportTraceServiceRequest
	var paths []string
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := &coltrace.ExportTraceServiceRequest{}
		if err := proto.Unmarshal(body, req); err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("collector: undecodable request (%s): %v", r.Header.Get("Content-Type"), err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		got, paths = append(got, req), append(paths, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		_, _ = w.Write(out)
	}))
	defer collector.Close()
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL}
	b := looperSetup(t, Config{MaxRunSteps: 1, Tracing: TracingConfig{Getenv: func(k string) string { return env[k] }}})
	tid := b.newThread(nil)
	b.do("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "looper", "input": map[string]any{}}, nil)
	b.srv.Close() // flushes the batch

	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 {
		t.Fatal("the collector received nothing")
	}
	if paths[0] != "/v1/traces" {
		t.Errorf("exported to %s, want /v1/traces", paths[0])
	}
	var service string
	var sawRun bool
	for _, req := range got {
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.Key == "service.name" {
					service = kv.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					if sp.Name != SpanServerRun {
						continue
					}
					for _, kv := range sp.Attributes {
						if kv.Key == string(AttrThreadID) && kv.GetValue().GetStringValue() == tid {
							sawRun = true
						}
					}
				}
			}
		}
	}
	if service != "trellis" || !sawRun {
		t.Fatalf("service.name %q, run span with the thread seen: %v", service, sawRun)
	}
}

func TestOTLPEndpointSettings(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cfg  TracingConfig
		env  map[string]string
		want string
		err  string
	}{
		{env: map[string]string{}, want: ""},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, want: "http://c:4318/v1/traces"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://t:443/custom"}, want: "https://t:443/custom"},
		{cfg: TracingConfig{Endpoint: "http://x:4318/v1/traces"}, env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, want: "http://x:4318/v1/traces"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}, want: ""},
		{cfg: TracingConfig{Disabled: true}, env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, want: ""},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "c:4318"}, err: "not an http(s) URL"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, err: "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"},
	} {
		env := c.env
		c.cfg.Getenv = func(k string) string { return env[k] }
		got, err := c.cfg.otlpEndpoint()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: err %v, want %q", c.env, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%v %q: got %q, %v; want %q", c.env, c.cfg.Endpoint, got, err, c.want)
		}
	}
}
