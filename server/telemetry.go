package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/trellis-go/trellis/graph"
	"github.com/trellis-go/trellis/server/internal/engine"
)

// TracingConfig turns on OpenTelemetry traces: a span per run (with its run, thread, assistant
// and tenant), the runtime's superstep and node spans under it, and model and tool calls under
// those (for graphs whose models and tools are wrapped by package telemetry). A run's span
// continues the trace of the request that created it (its traceparent header).
//
// The zero value traces nothing unless the standard variables OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// or OTEL_EXPORTER_OTLP_ENDPOINT name an OTLP collector.
type TracingConfig struct {
	// Provider, when set, receives the spans; the caller owns it (the server does not shut it
	// down). It takes precedence over Endpoint.
	Provider trace.TracerProvider
	// Endpoint is an OTLP/HTTP (protobuf) collector: a base URL (http://collector:4318, to which
	// /v1/traces is added) or the full traces URL (ending in /v1/traces). Empty means the
	// standard variables. The exporter reads the other OTEL_EXPORTER_OTLP_* variables (headers,
	// timeout, compression) itself. Its batches are flushed when the server closes.
	Endpoint string
	// ServiceName names the service on the spans; empty means OTEL_SERVICE_NAME, or "trellis".
	ServiceName string
	// Getenv reads the standard variables; nil means os.Getenv.
	Getenv func(string) string
	// Disabled turns tracing off, whatever the variables say.
	Disabled bool
}

// Span and attribute names of the server's run span.
const (
	SpanServerRun   = "trellis.run"
	AttrRunID       = attribute.Key("trellis.run_id")
	AttrThreadID    = attribute.Key("trellis.thread_id")
	AttrAssistantID = attribute.Key("trellis.assistant_id")
	AttrGraphID     = attribute.Key("trellis.graph_id")
	AttrTenant      = attribute.Key("trellis.tenant")
	AttrRunOutcome  = attribute.Key("trellis.run.outcome")
	AttrMaxSteps    = attribute.Key("trellis.budget.max_steps")
	AttrMaxTokens   = attribute.Key("trellis.budget.max_tokens")
	AttrTokensIn    = attribute.Key("gen_ai.usage.input_tokens")
	AttrTokensOut   = attribute.Key("gen_ai.usage.output_tokens")
)

// observability is the server's tracing and token accounting.
type observability struct {
	tracer      trace.Tracer // nil when tracing is off
	graphTracer trace.Tracer
	prop        propagation.TextMapPropagator
	tokens      *prometheus.CounterVec
	shutdown    func(context.Context) error
}

// otlpEndpoint resolves the OTLP traces URL from the config and the standard variables; "" means
// none is configured.
func (c TracingConfig) otlpEndpoint() (string, error) {
	getenv := c.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if c.Disabled || strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return "", nil
	}
	for _, p := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if v := strings.TrimSpace(getenv(p)); v != "" {
			if v != "http/protobuf" {
				return "", &ConfigError{Field: "Tracing", Problem: fmt.Sprintf("cannot use %s=%s", p, v), Hint: "trellis exports OTLP over HTTP with protobuf; set http/protobuf and the collector's HTTP port (4318)"}
			}
			break
		}
	}
	raw, field := strings.TrimSpace(c.Endpoint), "Tracing.Endpoint"
	full := strings.HasSuffix(strings.TrimRight(raw, "/"), "/v1/traces")
	if raw == "" {
		if raw, field = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"; raw != "" {
			full = true // the traces variable is the whole URL, as the specification says
		} else {
			raw, field = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")), "OTEL_EXPORTER_OTLP_ENDPOINT"
		}
	}
	if raw == "" {
		return "", nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", &ConfigError{Field: "Tracing", Problem: fmt.Sprintf("has %s %q, which is not an http(s) URL", field, raw), Hint: "use e.g. http://localhost:4318"}
	}
	if !full {
		u.Path = strings.TrimRight(u.Path, "/") + "/v1/traces"
	}
	return u.String(), nil
}

// newObservability sets up tracing (when configured) and the token counter.
func newObservability(cfg Config, reg *prometheus.Registry) (*observability, error) {
	o := &observability{
		prop:     propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
		tokens:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "trellis_model_tokens_total", Help: "Model tokens used by runs, by kind (input, output)."}, []string{"kind"}),
		shutdown: func(context.Context) error { return nil },
	}
	reg.MustRegister(o.tokens)
	tc := cfg.Tracing
	tp := tc.Provider
	if tp == nil {
		endpoint, err := tc.otlpEndpoint()
		if err != nil || endpoint == "" {
			return o, err
		}
		exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(endpoint))
		if err != nil {
			return nil, &ConfigError{Field: "Tracing", Problem: fmt.Sprintf("cannot export to %s: %v", endpoint, err), Hint: "check OTEL_EXPORTER_OTLP_* settings"}
		}
		name := tc.ServiceName
		if name == "" {
			getenv := tc.Getenv
			if getenv == nil {
				getenv = os.Getenv
			}
			name = strings.TrimSpace(getenv("OTEL_SERVICE_NAME"))
		}
		if name == "" {
			name = "trellis"
		}
		res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", name)))
		if err != nil {
			res = resource.NewSchemaless(attribute.String("service.name", name))
		}
		sdk := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		tp = sdk
		o.shutdown = sdk.Shutdown
		cfg.Logger.Info("tracing: exporting spans over OTLP/HTTP", "endpoint", endpoint, "service", name)
	}
	o.tracer = tp.Tracer("github.com/trellis-go/trellis/server")
	o.graphTracer = tp.Tracer("github.com/trellis-go/trellis/graph")
	return o, nil
}

// close flushes and stops the exporter the server made.
func (o *observability) close() {
	if o == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = o.shutdown(ctx)
}

// traceRequests continues the caller's trace (traceparent) in a server span per request, when
// tracing is on.
func (s *Server) traceRequests(h http.Handler) http.Handler {
	if s.obs == nil || s.obs.tracer == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := s.obs.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := s.obs.tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("url.path", r.URL.Path)))
		defer span.End()
		sw := &statusWriter{ResponseWriter: w}
		r = r.WithContext(ctx)
		h.ServeHTTP(sw, r)
		if r.Pattern != "" {
			span.SetName(r.Pattern)
			span.SetAttributes(attribute.String("http.route", r.Pattern))
		}
		span.SetAttributes(attribute.Int("http.response.status_code", sw.code))
		if sw.code >= 500 {
			span.SetStatus(codes.Error, http.StatusText(sw.code))
		}
	})
}

// runTelemetry is the runner's runObserver: the server's traces and token accounting, its
// budget limits, and its assistants (for a run's graph ID).
type runTelemetry struct {
	obs        *observability // nil: none
	limits     runBudget
	assistants assistantSource
}

// streamMetadata is the metadata a run's message chunks and callback events carry (convert.go).
func (t runTelemetry) streamMetadata(run *Run) (map[string]any, []string) {
	return streamMetadata(run, t.assistants)
}

// traceContextOf returns the trace context of the request creating a run, kept with the run so
// that its span joins the request's trace even when another process executes it.
func (t runTelemetry) traceContextOf(ctx context.Context) map[string]string {
	if t.obs == nil || t.obs.tracer == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	carrier := propagation.MapCarrier{}
	t.obs.prop.Inject(ctx, carrier)
	return carrier
}

// observeRun starts a run's span and applies its budget; done ends the span with the run's
// outcome, counts its tokens, and turns a budget's stop into a *BudgetError.
func (t runTelemetry) observeRun(ctx context.Context, run *Run, opts []graph.RunOption) (context.Context, []graph.RunOption, func(error) error) {
	ctx, opts, b, tb, stepsBind := budgetRun(ctx, run, opts, t.limits)
	var span trace.Span
	if t.obs != nil && t.obs.tracer != nil {
		if len(run.Kwargs.TraceContext) > 0 {
			ctx = t.obs.prop.Extract(ctx, propagation.MapCarrier(run.Kwargs.TraceContext))
		}
		graphID := ""
		if a, err := t.assistants.assistant(run.AssistantID); err == nil {
			graphID = a.GraphID
		}
		attrs := []attribute.KeyValue{AttrRunID.String(run.RunID), AttrThreadID.String(run.ThreadID),
			AttrAssistantID.String(run.AssistantID), AttrGraphID.String(graphID), AttrTenant.String(run.tenant)}
		if b.steps > 0 {
			attrs = append(attrs, AttrMaxSteps.Int(b.steps))
		}
		if b.tokens > 0 {
			attrs = append(attrs, AttrMaxTokens.Int(b.tokens))
		}
		ctx, span = t.obs.tracer.Start(ctx, SpanServerRun, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
		opts = append(opts, graph.WithTracer(t.obs.graphTracer))
	}
	done := func(err error) error {
		err = budgetError(err, b, stepsBind)
		used := tb.Used()
		if t.obs != nil {
			t.obs.tokens.WithLabelValues("input").Add(float64(used.InputTokens))
			t.obs.tokens.WithLabelValues("output").Add(float64(used.OutputTokens))
		}
		if span == nil {
			return err
		}
		span.SetAttributes(AttrTokensIn.Int(used.InputTokens), AttrTokensOut.Int(used.OutputTokens))
		var ie *graph.InterruptedError
		switch cause := context.Cause(ctx); {
		case err == nil:
			span.SetAttributes(AttrRunOutcome.String("success"))
		case errors.As(err, &ie):
			span.SetAttributes(AttrRunOutcome.String("interrupted"))
		case engine.Stopped(cause):
			span.SetAttributes(AttrRunOutcome.String("cancelled"), attribute.String("trellis.run.cancel_cause", cause.Error()))
		default:
			outcome := "error"
			var be *BudgetError
			if errors.As(err, &be) {
				outcome = "budget_exceeded"
			}
			span.SetAttributes(AttrRunOutcome.String(outcome))
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
		return err
	}
	return ctx, opts, done
}
